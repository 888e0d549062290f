/* tokviz.engine._native: the optional native core: the engine's hot loops in C.
 *
 * 1. The BPE merge loop over a pair table: (left id, right id) -> (rank, merged id). Both BPE
 *    modes reduce to it: in merges mode a pair's rank is its line in the merges list, in rank
 *    mode (tiktoken) it is the rank of the merged token, and the table holds every split of a
 *    token into two tokens. The rule is the one of tokviz.engine.models.bpe: repeatedly merge
 *    the adjacent pair with the lowest rank, the leftmost one on ties. Short pieces use a flat
 *    array scanned for the minimum (O(n*m), cheap and cache-friendly for the usual word-sized
 *    chunk); long pieces a binary heap of (rank, position) keys over a linked list
 *    (O(n log n)). Both give the same result; the choice is speed only.
 * 2. The Unigram Viterbi of one text over the model's character trie, in SentencePiece's
 *    float32 (``Unigram._dp_sp``: path scores stored as C floats, ties kept by the earlier
 *    start, re-basing at +-1e5) or HF's float64 (``Unigram._viterbi_f64``). The Python
 *    functions are the reference; this file mirrors them statement by statement.
 *
 * 3. SentencePiece ``.model`` kernels: the precompiled-charsmap normalization with its
 *    alignment, the SentencePiece BPE merge loop and the unknown-run / byte-fallback step
 *    (section "SentencePiece" below).
 * 4. The pipeline's column loop (`emit`: a block of chunk cache entries -> ids, tokens, char and
 *    byte offsets, word ids appended to the encode's lists) and its cache entries (`entry`,
 *    `bpe_utf8_entry`), twins of `emit_columns`, `entry_of` (tokviz/engine/chunk_cache.py, whose slot
 *    constants give the entry layout) and `Tokenizer._mapped_entry` (tokviz/engine/tokenizer.py).
 *
 * Traces (merge history, lattices), dropout and everything else stay in Python. Tables are
 * opaque capsules built once per model from the Python model's own data.
 *
 * Performance notes: a flat scan for pieces up to FLAT_LIMIT symbols (as tiktoken does for
 * short pieces; above it the heap wins); one open-addressing table type (64-bit keys,
 * splitmix64 hash) serves pairs, single characters, the Unigram trie's rare code points and the
 * SentencePiece tables (rank mode's content table is its own slot layout, below); the
 * Unigram trie itself is arrays over dense symbols (a hashed probe per step of the walk, as the
 * trie first had, cost more than the DP around it), and fresh int objects for every id, start
 * and end cost as much as the DP, so the output columns share them; a branch-free candidate
 * update in the float32 DP bought nothing and was dropped; the GIL is released around
 * the loops of long inputs (they read only this module's memory and an immutable str). Rank
 * mode looks a pair up by its text, so a table also keeps a small memo of recent pairs by id
 * (one atomic word per slot); a larger memo bought little more, nor did a smaller one. The
 * content table (rank mode, ignore_merges) keeps hash, id and arena offset in one slot, the
 * tokens' code points in one arena: a lookup reads a slot and, on a hash match, one arena run
 * (it used to chase a key array, a value array, a token pointer and the token's str). The flat
 * scan's minimum is taken without branches. A byte-level chunk of up to FLAT_LIMIT bytes
 * merges in a stack scratch, its UTF-8 encoded there too (no allocation per chunk). Tried and
 * dropped: a two-pass minimum over a 32-bit rank column (vectorized, but slower on the usual
 * short piece and one more column to move), one record per symbol so that a merge moves one
 * array, a fast-call `bpe_utf8_entry`, and prefetching the first pairs of a scan (none
 * measurable: the memo answers most pairs); prefetching slots while the content table fills
 * is kept.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define FLAT_LIMIT 128
#define NOGIL_MIN 4096
#define EMPTY UINT64_MAX
#define NO_RANK INT64_MAX

/* ------------------------------------------------------------------ hash table */
typedef struct {
    uint64_t *keys;
    int64_t *vals;
    size_t mask; /* capacity - 1, capacity a power of two */
    size_t used;
} Table;

static inline uint64_t mix(uint64_t x) {
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static int table_init(Table *t, size_t expected) {
    size_t cap = 16;
    while (cap < expected * 2 + 1) cap <<= 1;
    t->keys = PyMem_RawMalloc(cap * sizeof(uint64_t));
    t->vals = PyMem_RawMalloc(cap * sizeof(int64_t));
    if (!t->keys || !t->vals) {
        PyMem_RawFree(t->keys); PyMem_RawFree(t->vals);
        t->keys = NULL; t->vals = NULL;
        PyErr_NoMemory();
        return -1;
    }
    memset(t->keys, 0xff, cap * sizeof(uint64_t));
    t->mask = cap - 1;
    t->used = 0;
    return 0;
}

static void table_free(Table *t) {
    PyMem_RawFree(t->keys); PyMem_RawFree(t->vals);
    t->keys = NULL; t->vals = NULL;
}

/* Insert or overwrite (a later entry wins, as a Python dict built in order). The table is
 * sized for the expected count; it grows when it fills past half. */
static int table_put(Table *t, uint64_t key, int64_t val) {
    if ((t->used + 1) * 2 > t->mask + 1) {
        Table bigger;
        if (table_init(&bigger, t->used + 1) < 0) return -1;
        for (size_t k = 0; k <= t->mask; k++)
            if (t->keys[k] != EMPTY) table_put(&bigger, t->keys[k], t->vals[k]);
        table_free(t);
        *t = bigger;
    }
    size_t h = mix(key) & t->mask;
    while (t->keys[h] != EMPTY && t->keys[h] != key) h = (h + 1) & t->mask;
    if (t->keys[h] == EMPTY) { t->keys[h] = key; t->used++; }
    t->vals[h] = val;
    return 0;
}

static inline int table_get(const Table *t, uint64_t key, int64_t *val) {
    size_t h = mix(key) & t->mask;
    for (;;) {
        uint64_t k = t->keys[h];
        if (k == key) { *val = t->vals[h]; return 1; }
        if (k == EMPTY) return 0;
        h = (h + 1) & t->mask;
    }
}

/* ------------------------------------------------------------------ helpers */
static int read_ints(PyObject *seq, const char *what, int64_t **out, Py_ssize_t *n) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    int64_t *buf = PyMem_RawMalloc((len ? len : 1) * sizeof(int64_t));
    if (!buf) { Py_DECREF(fast); PyErr_NoMemory(); return -1; }
    PyObject **items = PySequence_Fast_ITEMS(fast);
    for (Py_ssize_t k = 0; k < len; k++) {
        long long v = PyLong_AsLongLong(items[k]);
        if (v == -1 && PyErr_Occurred()) { PyMem_RawFree(buf); Py_DECREF(fast); return -1; }
        buf[k] = v;
    }
    Py_DECREF(fast);
    *out = buf;
    *n = len;
    return 0;
}

static int check_id(int64_t v, const char *what) {
    if (v < 0 || v > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "%s %lld is outside 0..2**31-1", what, (long long)v);
        return -1;
    }
    return 0;
}

static inline uint64_t pair_key(int64_t left, int64_t right) {
    return ((uint64_t)left << 32) | (uint64_t)right;
}

/* Polynomial hash of code points (+1, so that U+0000 counts): H(s) = sum (s[i]+1) * POLY^(n-1-i)
 * mod 2**64, so the hash of any span of a text comes from its prefix hashes. */
#define POLY 0x100000001b3ULL

static uint64_t str_hash(int kind, const void *data, Py_ssize_t a, Py_ssize_t b) {
    uint64_t h = 0;
    for (Py_ssize_t i = a; i < b; i++) h = h * POLY + PyUnicode_READ(kind, data, i) + 1;
    return h;
}

/* ------------------------------------------------------------------ BPE tables */
/* A content hash as a table key (EMPTY marks a free slot). */
static inline uint64_t as_key(uint64_t h) { return h == EMPTY ? EMPTY - 1 : h; }

/* The tokens by content (rank mode, ignore_merges): an open-addressing table whose slot holds
 * all a probe needs (the content hash, the id, where the code points are), so a lookup reads
 * one slot and, on a hash match, one run of the arena; equal hashes probe on (every token keeps
 * its own slot). ``arena[off]`` is a token's length, its code points follow. */
typedef struct { uint64_t key; uint32_t id; uint32_t off; } Slot;
typedef struct {
    Slot *slots;      /* NULL: no content table */
    size_t mask;
    uint32_t *arena;
    int64_t top;      /* the largest id */
} Content;

typedef struct {
    int rank_mode;
    int whole;          /* ignore_merges: a chunk that is a token is that token */
    Table pairs;        /* merges mode: pair_key(left id, right id) -> rank << 32 | merged id */
    Table chars;        /* code point -> id of the one-char token */
    Content content;    /* rank mode or whole: the tokens by content */
    uint64_t *memo;     /* rank mode: recent pairs by id (see `pair_of`), or NULL */
} Bpe;

/* The rank-mode pair memo: MEMO_SIZE slots, each one 64-bit word ``left << 42 | right << 21 |
 * (merged id + 1, or 0: they never merge)``, written and read whole (relaxed atomics: merge
 * loops run without the GIL, in several threads at once, and a slot is only ever a complete
 * answer or a miss). Two tokens' concatenation is determined by their ids in rank mode (every
 * id is one token), so the answer for a pair of ids never changes. */
#define MEMO_BITS 21
#define MEMO_IDS ((int64_t)1 << MEMO_BITS)
#define MEMO_SIZE ((size_t)1 << 16)
#if defined(__GNUC__) || defined(__clang__)
#define MEMO_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define MEMO_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#else
#define MEMO_LOAD(p) (*(volatile uint64_t *)(p))
#define MEMO_STORE(p, v) (*(volatile uint64_t *)(p) = (v))
#endif

static void bpe_free(Bpe *b) {
    if (!b) return;
    table_free(&b->pairs);
    table_free(&b->chars);
    PyMem_RawFree(b->content.slots);
    PyMem_RawFree(b->content.arena);
    PyMem_RawFree(b->memo);
    PyMem_RawFree(b);
}

static void bpe_destroy(PyObject *capsule) { bpe_free(PyCapsule_GetPointer(capsule, "tokviz.bpe")); }

static Bpe *bpe_new(int rank_mode, int whole, size_t pairs) {
    Bpe *b = PyMem_RawCalloc(1, sizeof(Bpe));
    if (!b) { PyErr_NoMemory(); return NULL; }
    b->rank_mode = rank_mode;
    b->whole = whole;
    if (table_init(&b->pairs, pairs) < 0 || table_init(&b->chars, 256) < 0) {
        bpe_free(b);
        return NULL;
    }
    return b;
}

static PyObject *bpe_capsule(Bpe *b) {
    PyObject *cap = PyCapsule_New(b, "tokviz.bpe", bpe_destroy);
    if (!cap) bpe_free(b);
    return cap;
}

/* vocab[key] as an id, or -1 with an exception set. */
static int64_t vocab_id(PyObject *vocab, PyObject *key) {
    PyObject *v = PyDict_GetItemWithError(vocab, key);
    if (!v) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_KeyError, "%R is not in the vocab", key);
        return -1;
    }
    int64_t id = PyLong_AsLongLong(v);
    if (id == -1 && PyErr_Occurred()) return -1;
    return check_id(id, "id") < 0 ? -1 : id;
}

/* The one-char tokens of ``vocab`` into the char table. */
static int fill_chars(Bpe *b, PyObject *vocab) {
    PyObject *key, *val;
    Py_ssize_t pos = 0;
    while (PyDict_Next(vocab, &pos, &key, &val)) {
        if (!PyUnicode_Check(key)) { PyErr_SetString(PyExc_TypeError, "vocab keys must be str"); return -1; }
        if (PyUnicode_GET_LENGTH(key) != 1) continue;
        int64_t id = PyLong_AsLongLong(val);
        if ((id == -1 && PyErr_Occurred()) || check_id(id, "id") < 0) return -1;
        if (table_put(&b->chars, PyUnicode_READ_CHAR(key, 0), id) < 0) return -1;
    }
    return 0;
}

static int fill_content(Bpe *b, PyObject *vocab);

/* bpe_table(ranks, merged, vocab, ignore_merges): merges mode, from the model's own dicts
 * ``{(left, right): rank}``, ``{(left, right): merged string}`` and ``{token: id}``. */
static PyObject *py_bpe_table(PyObject *self, PyObject *args) {
    PyObject *ranks, *merged, *vocab;
    int whole;
    if (!PyArg_ParseTuple(args, "O!O!O!p", &PyDict_Type, &ranks, &PyDict_Type, &merged, &PyDict_Type, &vocab,
                          &whole))
        return NULL;
    Bpe *b = bpe_new(0, whole, (size_t)PyDict_GET_SIZE(ranks));
    if (!b) return NULL;
    PyObject *pair, *rank;
    Py_ssize_t pos = 0;
    while (PyDict_Next(ranks, &pos, &pair, &rank)) {
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "merge keys must be (left, right) tuples");
            goto fail;
        }
        PyObject *new = PyDict_GetItemWithError(merged, pair);
        if (!new) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "a merge has no merged string");
            goto fail;
        }
        int64_t l = vocab_id(vocab, PyTuple_GET_ITEM(pair, 0)), r = vocab_id(vocab, PyTuple_GET_ITEM(pair, 1));
        int64_t m = vocab_id(vocab, new), k = PyLong_AsLongLong(rank);
        if (l < 0 || r < 0 || m < 0 || (k == -1 && PyErr_Occurred()) || check_id(k, "rank") < 0) goto fail;
        if (table_put(&b->pairs, pair_key(l, r), (k << 32) | m) < 0) goto fail;
    }
    if (fill_chars(b, vocab) < 0 || (whole && fill_content(b, vocab) < 0)) goto fail;
    return bpe_capsule(b);
fail:
    bpe_free(b);
    return NULL;
}

/* Does the arena run ``u`` (length first) hold exactly text[a:e]? */
static inline int same_chars(const uint32_t *u, int kind, const void *data, Py_ssize_t a, Py_ssize_t e) {
    if (u[0] != (uint32_t)(e - a)) return 0;
    if (kind == PyUnicode_4BYTE_KIND) return memcmp(u + 1, (const Py_UCS4 *)data + a, (size_t)(e - a) * 4) == 0;
    for (Py_ssize_t i = a; i < e; i++)
        if (u[1 + i - a] != PyUnicode_READ(kind, data, i)) return 0;
    return 1;
}

/* The id of the token equal to ``text[a:e]`` (content hash ``h``), or -1. */
static inline int64_t find_span(const Bpe *b, uint64_t h, int kind, const void *data, Py_ssize_t a, Py_ssize_t e) {
    const Content *c = &b->content;
    h = as_key(h);
    for (size_t s = mix(h) & c->mask;; s = (s + 1) & c->mask) {
        const Slot *x = &c->slots[s];
        if (x->key == EMPTY) return -1;
        if (x->key == h && same_chars(c->arena + x->off, kind, data, a, e)) return x->id;
    }
}

/* Linear probing past equal hashes: every token keeps its own slot. */
static inline void content_put(Content *c, Slot x) {
    size_t slot = mix(x.key) & c->mask;
    while (c->slots[slot].key != EMPTY) slot = (slot + 1) & c->mask;
    c->slots[slot] = x;
}

#define FILL_AHEAD 16

/* Every token of ``vocab`` into the content table. */
static int fill_content(Bpe *b, PyObject *vocab) {
    Content *c = &b->content;
    size_t n = (size_t)PyDict_GET_SIZE(vocab), cap = 16, size = 0;
    PyObject *key, *val;
    Py_ssize_t pos = 0;
    while (PyDict_Next(vocab, &pos, &key, &val)) {
        if (!PyUnicode_Check(key)) { PyErr_SetString(PyExc_TypeError, "vocab keys must be str"); return -1; }
        size += 1 + (size_t)PyUnicode_GET_LENGTH(key);
    }
    if (size >= UINT32_MAX) { PyErr_SetString(PyExc_OverflowError, "the vocab's tokens are too long"); return -1; }
    while (cap < n * 2 + 1) cap <<= 1;
    c->slots = PyMem_RawMalloc(cap * sizeof(Slot));
    c->arena = PyMem_RawMalloc((size + 1) * sizeof(uint32_t));
    if (!c->slots || !c->arena) { PyErr_NoMemory(); return -1; }
    memset(c->slots, 0xff, cap * sizeof(Slot));
    c->mask = cap - 1;
    c->top = -1;
    size_t off = 0, k = 0;
    Slot ahead[FILL_AHEAD];
    pos = 0;
    while (PyDict_Next(vocab, &pos, &key, &val)) {
        int64_t id = PyLong_AsLongLong(val);
        if ((id == -1 && PyErr_Occurred()) || check_id(id, "id") < 0) return -1;
        int kind = PyUnicode_KIND(key);
        const void *data = PyUnicode_DATA(key);
        Py_ssize_t len = PyUnicode_GET_LENGTH(key);
        c->arena[off] = (uint32_t)len;
        for (Py_ssize_t i = 0; i < len; i++) c->arena[off + 1 + i] = PyUnicode_READ(kind, data, i);
        uint64_t h = as_key(str_hash(kind, data, 0, len));
        /* the slot is asked for now and written FILL_AHEAD tokens later: the cache misses of
         * the (random) slots overlap */
        Slot *q = &ahead[k++ % FILL_AHEAD];
        if (k > FILL_AHEAD) content_put(c, *q);
        *q = (Slot){h, (uint32_t)id, (uint32_t)off};
#if defined(__GNUC__) || defined(__clang__)
        __builtin_prefetch(&c->slots[mix(h) & c->mask], 1);
#endif
        c->top = id > c->top ? id : c->top;
        off += 1 + (size_t)len;
    }
    for (size_t j = k > FILL_AHEAD ? k - FILL_AHEAD : 0; j < k; j++) content_put(c, ahead[j % FILL_AHEAD]);
    return 0;
}

/* bpe_rank_table(vocab): rank mode (tiktoken), from ``{token: rank}``. Two adjacent parts merge
 * when their concatenation is a token, with its rank: looked up by content, as tiktoken does.
 * A chunk that is itself a token is that token (``ignore_merges``, as encode_ordinary). */
static PyObject *py_bpe_rank_table(PyObject *self, PyObject *args) {
    PyObject *vocab;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &vocab)) return NULL;
    Bpe *b = bpe_new(1, 1, 0);
    if (!b) return NULL;
    if (fill_content(b, vocab) < 0 || fill_chars(b, vocab) < 0) {
        bpe_free(b);
        return NULL;
    }
    if (b->content.top + 1 < MEMO_IDS && !(b->memo = PyMem_RawCalloc(MEMO_SIZE, sizeof(uint64_t)))) { /* (else no memo) */
        bpe_free(b);
        return PyErr_NoMemory();
    }
    return bpe_capsule(b);
}

/* ------------------------------------------------------------------ the merge loop */
static PyObject *triple(int64_t a, int64_t b, int64_t c) {
    PyObject *x = PyLong_FromLongLong(a), *y = PyLong_FromLongLong(b), *z = PyLong_FromLongLong(c);
    PyObject *t = (x && y && z) ? PyTuple_Pack(3, x, y, z) : NULL;
    Py_XDECREF(x); Py_XDECREF(y); Py_XDECREF(z);
    return t;
}

/* One merge run: the table, and in rank mode the chunk's text with its prefix hashes. */
typedef struct {
    const Bpe *b;
    int kind;
    const void *data;
    uint64_t *pre; /* pre[i]: hash of text[:i] */
    uint64_t *pw;  /* pw[k]: POLY^k */
} Run;

#define RANK(v) ((v) >> 32)
#define MERGED(v) ((v) & 0xffffffff)

/* The pair of the symbols ``left`` (initial symbols s..m) and ``right`` (m..e): rank << 32 |
 * merged id, or -1 when they never merge. Merges mode looks up the ids, rank mode the text. */
static inline int64_t pair_of(const Run *run, int64_t left, int64_t right, Py_ssize_t s, Py_ssize_t e) {
    int64_t v;
    if (!run->b->rank_mode) return table_get(&run->b->pairs, pair_key(left, right), &v) ? v : -1;
    uint64_t *slot = NULL, tag = 0;
    if (run->b->memo) {
        tag = (uint64_t)left << MEMO_BITS | (uint64_t)right;
        slot = run->b->memo + (mix(tag) & (MEMO_SIZE - 1));
        uint64_t got = MEMO_LOAD(slot);
        if (got && got >> MEMO_BITS == tag) {
            int64_t r = (int64_t)(got & (MEMO_IDS - 1)) - 1;
            return r < 0 ? -1 : (r << 32) | r;
        }
    }
    uint64_t h = run->pre[e] - run->pre[s] * run->pw[e - s];
    int64_t r = find_span(run->b, h, run->kind, run->data, s, e);
    if (slot) MEMO_STORE(slot, tag << MEMO_BITS | (uint64_t)(r + 1));
    return r < 0 ? -1 : (r << 32) | r;
}

/* Flat scan: ``id``/``pos`` hold the symbols and the index of each one's first initial symbol;
 * ``val[i]`` is the pair at i. ``total`` initial symbols; returns the final count. */
static Py_ssize_t merge_flat(const Run *run, int64_t *id, int64_t *pos, int64_t *val, Py_ssize_t n) {
    const Py_ssize_t total = n;
#define END_OF_PAIR(i) ((i) + 2 < n ? pos[(i) + 2] : total)
    for (Py_ssize_t i = 0; i + 1 < n; i++) val[i] = pair_of(run, id[i], id[i + 1], pos[i], END_OF_PAIR(i));
    while (n > 1) {
        /* As unsigned, "never" (-1) is above every pair, and equal ranks mean equal pairs (one
         * merge line, or one merged token), so the strict < keeps the leftmost of equal ranks;
         * written without branches (the comparison's outcome is unpredictable). */
        uint64_t best = UINT64_MAX;
        Py_ssize_t at = 0;
        for (Py_ssize_t i = 0; i + 1 < n; i++) {
            uint64_t v = (uint64_t)val[i];
            int lt = v < best;
            best = lt ? v : best;
            at = lt ? i : at;
        }
        if (best == UINT64_MAX) break;
        id[at] = MERGED(val[at]);
        memmove(id + at + 1, id + at + 2, (n - at - 2) * sizeof(int64_t));
        memmove(pos + at + 1, pos + at + 2, (n - at - 2) * sizeof(int64_t));
        memmove(val + at, val + at + 1, (n - at - 2) * sizeof(int64_t));
        n--;
        if (at + 1 < n) val[at] = pair_of(run, id[at], id[at + 1], pos[at], END_OF_PAIR(at));
        if (at > 0) val[at - 1] = pair_of(run, id[at - 1], id[at], pos[at - 1], END_OF_PAIR(at - 1));
    }
#undef END_OF_PAIR
    return n;
}

typedef struct { uint64_t *a; Py_ssize_t n; } Heap;

static inline void heap_push(Heap *h, uint64_t x) {
    Py_ssize_t i = h->n++;
    while (i > 0) {
        Py_ssize_t p = (i - 1) / 2;
        if (h->a[p] <= x) break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = x;
}

static inline void heap_sift_down(Heap *h, Py_ssize_t i, uint64_t x) {
    Py_ssize_t n = h->n;
    for (;;) {
        Py_ssize_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h->a[c + 1] < h->a[c]) c++;
        if (x <= h->a[c]) break;
        h->a[i] = h->a[c];
        i = c;
    }
    h->a[i] = x;
}

static inline uint64_t heap_pop(Heap *h) {
    uint64_t top = h->a[0], last = h->a[--h->n];
    if (h->n) heap_sift_down(h, 0, last);
    return top;
}

/* Heap of keys rank << 32 | position over a linked list (``nxt``/``prv``); ``val[i]`` is the
 * current pair at i, so an entry whose rank differs from it is stale. Positions never move,
 * so the smallest key is the lowest rank, leftmost. Leaves the survivors linked from 0. */
static int merge_heap(const Run *run, int64_t *id, int64_t *val, int64_t *nxt, int64_t *prv, Py_ssize_t n) {
    /* each merge pushes at most two entries: never more than 3n */
    Heap h = {PyMem_RawMalloc((size_t)(3 * n + 1) * sizeof(uint64_t)), 0};
    if (!h.a) return -1;
#define END_OF_PAIR(i) (nxt[nxt[i]] >= 0 ? nxt[nxt[i]] : n)
    for (Py_ssize_t i = 0; i < n; i++) {
        nxt[i] = i + 1 < n ? i + 1 : -1;
        prv[i] = i - 1;
    }
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        val[i] = pair_of(run, id[i], id[i + 1], i, END_OF_PAIR(i));
        if (val[i] >= 0) h.a[h.n++] = ((uint64_t)RANK(val[i]) << 32) | (uint64_t)i;
    }
    val[n - 1] = -1;
    for (Py_ssize_t i = h.n / 2 - 1; i >= 0; i--) heap_sift_down(&h, i, h.a[i]);
    while (h.n) {
        uint64_t key = heap_pop(&h);
        int64_t i = (int64_t)(key & 0xffffffff);
        if (val[i] < 0 || (uint64_t)RANK(val[i]) != key >> 32) continue; /* stale */
        int64_t j = nxt[i];
        id[i] = MERGED(val[i]);
        val[j] = -1;
        int64_t k = nxt[j];
        nxt[i] = k;
        if (k >= 0) {
            prv[k] = i;
            val[i] = pair_of(run, id[i], id[k], i, END_OF_PAIR(i));
            if (val[i] >= 0) heap_push(&h, ((uint64_t)RANK(val[i]) << 32) | (uint64_t)i);
        } else {
            val[i] = -1;
        }
        int64_t p = prv[i];
        if (p >= 0) {
            val[p] = pair_of(run, id[p], id[i], p, END_OF_PAIR(p));
            if (val[p] >= 0) heap_push(&h, ((uint64_t)RANK(val[p]) << 32) | (uint64_t)p);
        }
    }
#undef END_OF_PAIR
    PyMem_RawFree(h.a);
    return 0;
}

/* The merged symbols as (id, first, end) triples (``first``/``end``: indexes of initial
 * symbols), or as three lists when ``columns``. ``ids``/``firsts`` hold m symbols; the last
 * one ends at n. */
static PyObject *pack(const int64_t *ids, const int64_t *firsts, Py_ssize_t m, Py_ssize_t n, int columns) {
    if (!columns) {
        PyObject *out = PyTuple_New(m);
        if (!out) return NULL;
        for (Py_ssize_t i = 0; i < m; i++) {
            PyObject *t = triple(ids[i], firsts[i], i + 1 < m ? firsts[i + 1] : n);
            if (!t) { Py_DECREF(out); return NULL; }
            PyTuple_SET_ITEM(out, i, t);
        }
        return out;
    }
    PyObject *a = PyList_New(m), *b = PyList_New(m), *c = PyList_New(m);
    if (!a || !b || !c) goto fail;
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *x = PyLong_FromLongLong(ids[i]), *y = PyLong_FromLongLong(firsts[i]);
        PyObject *z = PyLong_FromLongLong(i + 1 < m ? firsts[i + 1] : n);
        if (!x || !y || !z) { Py_XDECREF(x); Py_XDECREF(y); Py_XDECREF(z); goto fail; }
        PyList_SET_ITEM(a, i, x);
        PyList_SET_ITEM(b, i, y);
        PyList_SET_ITEM(c, i, z);
    }
    PyObject *out = PyTuple_Pack(3, a, b, c);
    Py_DECREF(a); Py_DECREF(b); Py_DECREF(c);
    return out;
fail:
    Py_XDECREF(a); Py_XDECREF(b); Py_XDECREF(c);
    return NULL;
}

/* Merge n symbols (``id`` initial ids, at least one): afterwards id[0..m) are the merged
 * symbols and firsts[0..m) the index of each one's first initial symbol. Returns m, or -1
 * (no memory). */
static Py_ssize_t merge_run_in(const Run *run, int64_t *id, int64_t *firsts, Py_ssize_t n, int64_t *scratch) {
    int64_t *work = scratch ? scratch : PyMem_RawMalloc((size_t)(3 * n + 1) * sizeof(int64_t));
    if (!work) return -1;
    int64_t *b = work, *c = work + n, *d = work + 2 * n;
    Py_ssize_t m = 0;
    if (n <= FLAT_LIMIT) {
        for (Py_ssize_t i = 0; i < n; i++) firsts[i] = i;
        m = merge_flat(run, id, firsts, b, n);
    } else {
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = merge_heap(run, id, b, c, d, n);
        Py_END_ALLOW_THREADS
        if (rc < 0) { if (!scratch) PyMem_RawFree(work); return -1; }
        /* gather the survivors (linked from 0 through c) in order */
        for (int64_t i = 0; i >= 0; i = c[i], m++) {
            id[m] = id[i];
            firsts[m] = i;
        }
    }
    if (!scratch) PyMem_RawFree(work);
    return m;
}

static Py_ssize_t merge_run(const Run *run, int64_t *id, int64_t *firsts, Py_ssize_t n) {
    return merge_run_in(run, id, firsts, n, NULL);
}

/* The whole chunk's id when ``ignore_merges`` applies and it is a token, else -1. */
static int64_t whole_token(const Run *run, Py_ssize_t n) {
    if (!run->b->whole || n == 0) return -1;
    uint64_t h = run->pre ? run->pre[n] : str_hash(run->kind, run->data, 0, n);
    return find_span(run->b, h, run->kind, run->data, 0, n);
}

/* Merge n symbols (``id`` initial ids) and pack the result (see `pack`). */
static PyObject *merge_and_pack(const Run *run, int64_t *id, Py_ssize_t n, int columns) {
    if (n >= ((Py_ssize_t)1 << 31)) {
        PyErr_SetString(PyExc_OverflowError, "a chunk of 2**31 symbols or more");
        return NULL;
    }
    int64_t zero = 0, whole = run->data ? whole_token(run, n) : -1; /* (ids alone: no text) */
    if (whole >= 0) return pack(&whole, &zero, 1, n, columns);
    if (n == 0) return pack(id, id, 0, 0, columns);
    int64_t *firsts = PyMem_RawMalloc((size_t)n * sizeof(int64_t));
    if (!firsts) return PyErr_NoMemory();
    Py_ssize_t m = merge_run(run, id, firsts, n);
    PyObject *out = m < 0 ? PyErr_NoMemory() : pack(id, firsts, m, n, columns);
    PyMem_RawFree(firsts);
    return out;
}

/* Prefix hashes of the run's text (rank mode looks spans up by content), in ``buf`` (2n + 2
 * words) or, when NULL, in memory the caller frees (run->pre). */
static int run_hashes_in(Run *run, Py_ssize_t n, uint64_t *buf) {
    run->pre = buf ? buf : PyMem_RawMalloc((size_t)(n + 1) * 2 * sizeof(uint64_t));
    if (!run->pre) { PyErr_NoMemory(); return -1; }
    run->pw = run->pre + n + 1;
    run->pre[0] = 0;
    run->pw[0] = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        run->pre[i + 1] = run->pre[i] * POLY + PyUnicode_READ(run->kind, run->data, i) + 1;
        run->pw[i + 1] = run->pw[i] * POLY;
    }
    return 0;
}

static int run_hashes(Run *run, Py_ssize_t n) { return run_hashes_in(run, n, NULL); }

/* bpe_merge_text(table, text, columns=False): the tokens of a chunk whose every char is a
 * one-char token, as (id, start, end) char spans (or three lists: ids, starts, ends); None
 * when some char is not one. */
static PyObject *py_bpe_merge_text(PyObject *self, PyObject *args) {
    PyObject *cap, *text;
    int columns = 0;
    if (!PyArg_ParseTuple(args, "OU|p", &cap, &text, &columns)) return NULL;
    Bpe *b = PyCapsule_GetPointer(cap, "tokviz.bpe");
    if (!b) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Run run = {b, PyUnicode_KIND(text), PyUnicode_DATA(text), NULL, NULL};
    int64_t *id = PyMem_RawMalloc((size_t)(n + 1) * sizeof(int64_t));
    if (!id) return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!table_get(&b->chars, PyUnicode_READ(run.kind, run.data, i), &id[i])) {
            PyMem_RawFree(id);
            Py_RETURN_NONE;
        }
    }
    PyObject *out = NULL;
    if (!b->rank_mode || run_hashes(&run, n) == 0) out = merge_and_pack(&run, id, n, columns);
    PyMem_RawFree(run.pre);
    PyMem_RawFree(id);
    return out;
}

static PyObject *list_of(const int64_t *v, Py_ssize_t m) {
    PyObject *out = PyList_New(m);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (!x) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, i, x);
    }
    return out;
}

/* The merge of a byte-level chunk given as its original text: its UTF-8 bytes, each shown as
 * ``proxies[byte]`` (GPT-2's byte alphabet), are the initial symbols. ``m`` tokens: ids, byte
 * spans, and char spans (from the char holding a token's first byte to the one holding its
 * last byte). The columns live in the caller's ``Utf8Scratch`` when the chunk is short (no
 * allocation per chunk), else in memory that `utf8_merge_free` releases. */
typedef struct {
    Py_ssize_t n, m, chars; /* bytes, tokens, chars */
    int64_t *id, *bs, *be, *cs, *ce;
    int owned;              /* id was allocated */
} Utf8Merge;

/* Scratch of a short chunk: up to SCRATCH_BYTES bytes (the flat scan's range). Per byte: six
 * columns, two prefix-hash words, three work words of the merge, a code point. */
#define SCRATCH_BYTES FLAT_LIMIT
typedef struct {
    int64_t cols[6 * (SCRATCH_BYTES + 1)];
    uint64_t hashes[2 * (SCRATCH_BYTES + 1)];
    int64_t work[3 * SCRATCH_BYTES + 1];
    Py_UCS4 cps[SCRATCH_BYTES + 1];
    unsigned char u8[SCRATCH_BYTES];
} Utf8Scratch;

static void utf8_merge_free(Utf8Merge *r) {
    if (r->owned) PyMem_RawFree(r->id);
    r->id = NULL;
    r->owned = 0;
}

/* The UTF-8 of ``text`` into ``out`` (room for ``cap`` bytes): its length, or -1 when it does
 * not fit or holds a surrogate (the caller then asks Python, which encodes or raises). */
static Py_ssize_t utf8_into(PyObject *text, unsigned char *out, Py_ssize_t cap) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t len = PyUnicode_GET_LENGTH(text), k = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < 0x80) {
            if (k + 1 > cap) return -1;
            out[k++] = (unsigned char)c;
        } else if (c < 0x800) {
            if (k + 2 > cap) return -1;
            out[k++] = (unsigned char)(0xC0 | c >> 6);
            out[k++] = (unsigned char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            if ((c >= 0xD800 && c <= 0xDFFF) || k + 3 > cap) return -1;
            out[k++] = (unsigned char)(0xE0 | c >> 12);
            out[k++] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
            out[k++] = (unsigned char)(0x80 | (c & 0x3F));
        } else {
            if (k + 4 > cap) return -1;
            out[k++] = (unsigned char)(0xF0 | c >> 18);
            out[k++] = (unsigned char)(0x80 | (c >> 12 & 0x3F));
            out[k++] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
            out[k++] = (unsigned char)(0x80 | (c & 0x3F));
        }
    }
    return k;
}

/* 0: done (free with utf8_merge_free); 1: a proxy is not a one-char token; -1: an error. */
static int utf8_merge(const Bpe *b, PyObject *text, PyObject *proxies, Utf8Merge *r, Utf8Scratch *sc) {
    memset(r, 0, sizeof(*r));
    if (PyUnicode_GET_LENGTH(proxies) != 256) {
        PyErr_SetString(PyExc_ValueError, "proxies must be 256 chars");
        return -1;
    }
    /* ASCII text is its own UTF-8; short text is encoded into the scratch; other text into a
     * temporary bytes object (not PyUnicode_AsUTF8, which would keep a UTF-8 copy in every
     * cached chunk text) */
    PyObject *data = NULL;
    const unsigned char *u;
    Py_ssize_t n;
    if (PyUnicode_IS_ASCII(text)) {
        u = PyUnicode_DATA(text);
        n = PyUnicode_GET_LENGTH(text);
    } else if ((n = utf8_into(text, sc->u8, SCRATCH_BYTES)) >= 0) {
        u = sc->u8;
    } else {
        if (!(data = PyUnicode_AsUTF8String(text))) return -1;
        u = (const unsigned char *)PyBytes_AS_STRING(data);
        n = PyBytes_GET_SIZE(data);
    }
    int status = -1, small = n <= SCRATCH_BYTES;
    Py_UCS4 *cps = small ? sc->cps : PyMem_RawMalloc((size_t)(n + 1) * sizeof(Py_UCS4));
    int64_t *id = small ? sc->cols : PyMem_RawMalloc((size_t)(n + 1) * 6 * sizeof(int64_t));
    if (!cps || !id) { PyErr_NoMemory(); goto done; }
    int64_t *firsts = id + n + 1, *ends = id + 2 * (n + 1), *char_of = id + 3 * (n + 1);
    int pkind = PyUnicode_KIND(proxies);
    const void *pdata = PyUnicode_DATA(proxies);
    Py_ssize_t chars = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        cps[i] = PyUnicode_READ(pkind, pdata, u[i]);
        if (!table_get(&b->chars, cps[i], &id[i])) { status = 1; goto done; }
        if ((u[i] & 0xC0) != 0x80) chars++; /* a lead byte starts the next char */
        char_of[i] = chars;
    }
    Run run = {b, PyUnicode_4BYTE_KIND, cps, NULL, NULL};
    if (b->rank_mode && run_hashes_in(&run, n, small ? sc->hashes : NULL) < 0) goto done;
    Py_ssize_t m;
    int64_t whole = whole_token(&run, n);
    if (n == 0) {
        m = 0;
    } else if (whole >= 0) {
        id[0] = whole;
        firsts[0] = 0;
        m = 1;
    } else {
        m = merge_run_in(&run, id, firsts, n, small ? sc->work : NULL);
    }
    if (!small) PyMem_RawFree(run.pre);
    if (m < 0) { PyErr_NoMemory(); goto done; }
    int64_t *cs = id + 4 * (n + 1), *ce = id + 5 * (n + 1);
    for (Py_ssize_t i = 0; i < m; i++) {
        ends[i] = i + 1 < m ? firsts[i + 1] : n;
        cs[i] = char_of[firsts[i]];
        ce[i] = char_of[ends[i] - 1] + 1;
    }
    *r = (Utf8Merge){n, m, chars + 1, id, firsts, ends, cs, ce, !small};
    id = NULL;
    status = 0;
done:
    if (!small) {
        PyMem_RawFree(cps);
        PyMem_RawFree(id);
    }
    Py_XDECREF(data);
    return status;
}

/* bpe_merge_utf8(table, text, proxies): `utf8_merge` as (ids, byte starts, byte ends, char
 * starts, char ends, byte count) lists (the char lists are the byte lists for ASCII). None when
 * a proxy is not a one-char token. */
static PyObject *py_bpe_merge_utf8(PyObject *self, PyObject *args) {
    PyObject *cap, *text, *proxies;
    if (!PyArg_ParseTuple(args, "OUU", &cap, &text, &proxies)) return NULL;
    Bpe *b = PyCapsule_GetPointer(cap, "tokviz.bpe");
    if (!b) return NULL;
    Utf8Merge r;
    Utf8Scratch sc;
    int status = utf8_merge(b, text, proxies, &r, &sc);
    if (status) return status > 0 ? Py_NewRef(Py_None) : NULL;
    PyObject *out = NULL, *o_ids = list_of(r.id, r.m), *bs = list_of(r.bs, r.m), *be = list_of(r.be, r.m);
    PyObject *cs = NULL, *ce = NULL;
    if (o_ids && bs && be) {
        if (r.chars == r.n) { /* ASCII: one byte per char */
            cs = Py_NewRef(bs);
            ce = Py_NewRef(be);
        } else {
            cs = list_of(r.cs, r.m);
            ce = list_of(r.ce, r.m);
        }
    }
    if (cs && ce) out = Py_BuildValue("(OOOOOn)", o_ids, bs, be, cs, ce, r.n);
    Py_XDECREF(o_ids); Py_XDECREF(bs); Py_XDECREF(be); Py_XDECREF(cs); Py_XDECREF(ce);
    utf8_merge_free(&r);
    return out;
}

/* bpe_merge_ids(table, ids): merge given initial symbol ids (merges mode); (id, first, end)
 * over symbol indexes (the caller maps them to char spans). */
static PyObject *py_bpe_merge_ids(PyObject *self, PyObject *args) {
    PyObject *cap, *seq;
    if (!PyArg_ParseTuple(args, "OO", &cap, &seq)) return NULL;
    Bpe *b = PyCapsule_GetPointer(cap, "tokviz.bpe");
    if (!b) return NULL;
    if (b->rank_mode) {
        PyErr_SetString(PyExc_ValueError, "bpe_merge_ids needs a merges-mode table");
        return NULL;
    }
    int64_t *id;
    Py_ssize_t n;
    if (read_ints(seq, "ids must be a sequence", &id, &n) < 0) return NULL;
    Run run = {b, 0, NULL, NULL, NULL};
    PyObject *out = merge_and_pack(&run, id, n, 0);
    PyMem_RawFree(id);
    return out;
}

/* ------------------------------------------------------------------ Unigram trie + Viterbi */
/* The trie as arrays. Characters are renumbered as dense symbols 1..alpha (0: a character no
 * edge carries), so a text is mapped to symbols once per call and every step of a walk is an
 * array read: a node with many children (the root, "▁", ...) has a dense row of alpha + 1
 * child slots, the others a short run of (symbol, child) edges sorted by symbol, scanned in
 * order. sentencepiece walks a double-array trie over the UTF-8 bytes for the same reason.
 * The output lists share their int objects: an end is the next token's start, and an id's int
 * is made once per trie and kept. */
#define DENSE_MIN 16          /* a node with more children than this gets a dense row ... */
#define DENSE_CAP (1 << 20)   /* ... while all rows together stay under this many slots (4 MB) */
#define BMP_SPAN 0x10000      /* code points below this map to symbols through an array */

typedef struct { int32_t sym, child; } Edge;

typedef struct {
    double score;          /* score of the piece ending at the node */
    int32_t id;            /* its id; -1: no candidate ends here */
    int32_t row;           /* dense row, or -1: the edges first .. first + count */
    int32_t first, count;
} TNode;

typedef struct {
    TNode *node;
    Py_ssize_t nodes;
    Edge *edges;
    int32_t *dense;        /* rows of alpha + 1 children (-1: none); slot 0 is symbol 0 */
    int32_t alpha;
    uint32_t *bmp;         /* symbol of a code point below bmp_n */
    uint32_t bmp_n;
    Table syms;            /* code point -> symbol, for the others (astral) */
    PyObject **id_obj;     /* int objects of ids 0 .. nid - 1, made on first use */
    Py_ssize_t nid;
} Trie;

static void trie_free(Trie *t) {
    if (!t) return;
    if (t->id_obj)
        for (Py_ssize_t k = 0; k < t->nid; k++) Py_XDECREF(t->id_obj[k]);
    table_free(&t->syms);
    PyMem_RawFree(t->node); PyMem_RawFree(t->edges); PyMem_RawFree(t->dense);
    PyMem_RawFree(t->bmp); PyMem_RawFree(t->id_obj);
    PyMem_RawFree(t);
}

static void trie_destroy(PyObject *capsule) { trie_free(PyCapsule_GetPointer(capsule, "tokviz.trie")); }

static int edge_cmp(const void *a, const void *b) {
    int32_t x = ((const Edge *)a)->sym, y = ((const Edge *)b)->sym;
    return (x > y) - (x < y);
}

static inline int32_t trie_child(const Trie *t, int32_t node, int32_t sym) {
    const TNode *nd = &t->node[node];
    if (nd->row >= 0) return t->dense[(size_t)nd->row * (size_t)(t->alpha + 1) + (size_t)sym];
    for (const Edge *e = t->edges + nd->first, *end = e + nd->count; e < end; e++)
        if (e->sym >= sym) return e->sym == sym ? e->child : -1;
    return -1;
}

/* The nodes' scores and ids, and every edge of ``kids`` with its code point's symbol. */
static int trie_fill(Trie *t, PyObject *kids, PyObject *scores, PyObject *ids) {
    Py_ssize_t n = t->nodes, total = 0;
    int64_t max_id = -1;
    uint32_t max_bmp = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *d = PyList_GET_ITEM(kids, k), *s = PyList_GET_ITEM(scores, k);
        if (!PyDict_Check(d)) { PyErr_SetString(PyExc_TypeError, "kids must be dicts"); return -1; }
        TNode *nd = &t->node[k];
        nd->row = -1;
        nd->first = (int32_t)total;
        nd->count = (int32_t)PyDict_GET_SIZE(d);
        total += nd->count;
        if (s == Py_None) { nd->id = -1; nd->score = 0.0; continue; }
        nd->score = PyFloat_AsDouble(s);
        long long id = PyLong_AsLongLong(PyList_GET_ITEM(ids, k));
        if (PyErr_Occurred()) return -1;
        if (check_id(id, "piece id") < 0) return -1;
        nd->id = (int32_t)id;
        if (id > max_id) max_id = id;
    }
    if (total >= INT32_MAX) { PyErr_SetString(PyExc_ValueError, "trie too large"); return -1; }
    t->edges = PyMem_RawMalloc((size_t)(total + 1) * sizeof(Edge));
    t->nid = (Py_ssize_t)(max_id + 1);
    t->id_obj = PyMem_RawCalloc((size_t)t->nid + 1, sizeof(PyObject *));
    /* (symbols of BMP code points go to the array from the start; it is trimmed to bmp_n at the end) */
    t->bmp = PyMem_RawCalloc(BMP_SPAN, sizeof(uint32_t));
    if (!t->edges || !t->id_obj || !t->bmp || table_init(&t->syms, 64) < 0) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *key, *val;
        Py_ssize_t pos = 0;
        Edge *e = t->edges + t->node[k].first;
        while (PyDict_Next(PyList_GET_ITEM(kids, k), &pos, &key, &val)) {
            if (!PyUnicode_Check(key) || PyUnicode_GET_LENGTH(key) != 1) {
                PyErr_SetString(PyExc_TypeError, "trie edges must be one char");
                return -1;
            }
            long long child = PyLong_AsLongLong(val);
            if (child == -1 && PyErr_Occurred()) return -1;
            if (child <= 0 || child >= n) { PyErr_SetString(PyExc_ValueError, "trie child out of range"); return -1; }
            Py_UCS4 c = PyUnicode_READ_CHAR(key, 0);
            int64_t sym;
            if (c < BMP_SPAN) {
                if (!t->bmp[c]) t->bmp[c] = (uint32_t)++t->alpha;
                if (c >= max_bmp) max_bmp = c + 1;
                sym = t->bmp[c];
            } else if (!table_get(&t->syms, c, &sym)) {
                sym = ++t->alpha;
                if (table_put(&t->syms, c, sym) < 0) return -1;
            }
            e->sym = (int32_t)sym;
            e->child = (int32_t)child;
            e++;
        }
        if (t->node[k].count > 1) qsort(t->edges + t->node[k].first, (size_t)t->node[k].count, sizeof(Edge), edge_cmp);
    }
    t->bmp_n = max_bmp;
    uint32_t *bmp = PyMem_RawRealloc(t->bmp, ((size_t)max_bmp + 1) * sizeof(uint32_t));
    if (bmp) t->bmp = bmp; /* (a failed shrink keeps the big array) */
    return 0;
}

/* Dense rows for the root and for the nodes with many children, within DENSE_CAP slots. */
static int trie_rows(Trie *t) {
    size_t width = (size_t)t->alpha + 1, rows = 0;
    for (Py_ssize_t k = 0; k < t->nodes; k++)
        if ((k == 0 || t->node[k].count > DENSE_MIN) && (rows + 1) * width <= DENSE_CAP) t->node[k].row = (int32_t)rows++;
    t->dense = PyMem_RawMalloc((rows ? rows : 1) * width * sizeof(int32_t));
    if (!t->dense) { PyErr_NoMemory(); return -1; }
    memset(t->dense, 0xff, (rows ? rows : 1) * width * sizeof(int32_t));
    for (Py_ssize_t k = 0; k < t->nodes; k++) {
        const TNode *nd = &t->node[k];
        if (nd->row < 0) continue;
        int32_t *row = t->dense + (size_t)nd->row * width;
        for (int32_t j = 0; j < nd->count; j++) row[t->edges[nd->first + j].sym] = t->edges[nd->first + j].child;
    }
    return 0;
}

/* unigram_trie(kids, node_score, node_id): the model's trie (``kids[n]``: {char: child},
 * ``node_score[n]``: float or None for no candidate, ``node_id[n]``: the piece's id). */
static PyObject *py_unigram_trie(PyObject *self, PyObject *args) {
    PyObject *kids, *scores, *ids;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyList_Type, &kids, &PyList_Type, &scores, &PyList_Type, &ids))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(kids);
    if (PyList_GET_SIZE(scores) != n || PyList_GET_SIZE(ids) != n || n < 1 || n >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "trie columns differ in length or are empty");
        return NULL;
    }
    Trie *t = PyMem_RawCalloc(1, sizeof(Trie));
    if (!t) return PyErr_NoMemory();
    t->nodes = n;
    t->node = PyMem_RawMalloc((size_t)n * sizeof(TNode));
    if (!t->node) { trie_free(t); return PyErr_NoMemory(); }
    if (trie_fill(t, kids, scores, ids) < 0 || trie_rows(t) < 0) { trie_free(t); return NULL; }
    PyObject *cap = PyCapsule_New(t, "tokviz.trie", trie_destroy);
    if (!cap) trie_free(t);
    return cap;
}

/* The symbol of every character of the text (0: no edge carries it), and a 0 after the last:
 * every walk stops there, so the DP's walks need no end-of-text test. */
static void trie_symbols(const Trie *t, int kind, const void *data, Py_ssize_t n, int32_t *sym) {
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        int64_t v;
        sym[i] = c < t->bmp_n ? (int32_t)t->bmp[c] : table_get(&t->syms, c, &v) ? (int32_t)v : 0;
    }
    sym[n] = 0;
}

#define RESET 100000.0 /* sentencepiece's kScoreResetThreshold */

/* Offer a candidate ending at e (from s, exact double score ``cand``) to the float32 DP: the
 * first one is stored; a later one wins only when its score beats the stored float and does not
 * round down to it (float32(cand) > best  <=>  cand > best and the stored value changes). */
static inline void offer_f32(float *best, int32_t *starts, int32_t *ids, Py_ssize_t s, Py_ssize_t e, double cand,
                             int32_t id) {
    if (starts[e] == -1) {
        best[e] = (float)cand;
        starts[e] = (int32_t)s;
        ids[e] = id;
    } else if (cand > best[e]) {
        float old = best[e];
        best[e] = (float)cand;
        if (best[e] != old) { starts[e] = (int32_t)s; ids[e] = id; }
    }
}

/* The float32 DP of ``Unigram._dp_sp``: ``best`` holds C floats; ``cand`` is the exact double
 * sum, rounded when stored; a better double that rounds to the stored float changes nothing.
 * Returns 0, or 1 when a position has no candidate and there is no unk id. */
static int viterbi_f32(const Trie *t, const int32_t *sym, Py_ssize_t n, double start,
                       double unk_score, int32_t unk_id, int32_t *starts, int32_t *ids, double *end_score) {
    float *best = PyMem_RawCalloc((size_t)n + 1, sizeof(float));
    if (!best) return -1;
    best[0] = (float)start;
    for (Py_ssize_t i = 0; i <= n; i++) starts[i] = -1;
    Py_ssize_t frontier = 0;
    for (Py_ssize_t s = 0; s < n; s++) {
        double base = best[s];
        if (base < -RESET || base > RESET) {
            for (Py_ssize_t i = s; i <= frontier; i++)
                if (i == s || starts[i] != -1) best[i] = (float)((double)best[i] - base);
            base = 0.0;
        }
        int32_t node = 0, child;
        Py_ssize_t e = s;
        int single = 0;
        while ((child = trie_child(t, node, sym[e])) >= 0) {
            e++;
            node = child;
            const TNode *nd = &t->node[node];
            if (nd->id < 0) continue;
            if (e > frontier) frontier = e;
            offer_f32(best, starts, ids, s, e, base + nd->score, nd->id);
            if (e == s + 1) single = 1;
        }
        if (!single) {
            if (unk_id < 0) { PyMem_RawFree(best); return 1; }
            e = s + 1;
            if (e > frontier) frontier = e;
            offer_f32(best, starts, ids, s, e, base + unk_score, unk_id);
        }
    }
    *end_score = best[n];
    PyMem_RawFree(best);
    return 0;
}

/* The float64 DP of ``Unigram._viterbi_f64`` (HF): the later of two equal scores loses. */
static int viterbi_f64(const Trie *t, const int32_t *sym, Py_ssize_t n, double start,
                       double unk_score, int32_t unk_id, int32_t *starts, int32_t *ids, double *end_score) {
    double *best = PyMem_RawCalloc((size_t)n + 1, sizeof(double));
    if (!best) return -1;
    best[0] = start;
    for (Py_ssize_t i = 0; i <= n; i++) starts[i] = -1;
    for (Py_ssize_t s = 0; s < n; s++) {
        double base = best[s];
        int32_t node = 0, child;
        Py_ssize_t e = s;
        int single = 0;
        while ((child = trie_child(t, node, sym[e])) >= 0) {
            e++;
            node = child;
            const TNode *nd = &t->node[node];
            if (nd->id < 0) continue;
            double cand = base + nd->score;
            if (starts[e] < 0 || cand > best[e]) { best[e] = cand; starts[e] = (int32_t)s; ids[e] = nd->id; }
            if (e == s + 1) single = 1;
        }
        if (!single) {
            if (unk_id < 0) { PyMem_RawFree(best); return 1; }
            e = s + 1;
            double cand = base + unk_score;
            if (starts[e] < 0 || cand > best[e]) { best[e] = cand; starts[e] = (int32_t)s; ids[e] = unk_id; }
        }
    }
    *end_score = best[n];
    PyMem_RawFree(best);
    return 0;
}

/* The int object of a piece id: one per id for the trie's lifetime (new reference). */
static PyObject *trie_id_object(Trie *t, int64_t id) {
    if (id < 0 || id >= t->nid) return PyLong_FromLongLong(id);
    if (!t->id_obj[id] && !(t->id_obj[id] = PyLong_FromLongLong(id))) return NULL;
    return Py_NewRef(t->id_obj[id]);
}

/* The path ending at n as columns (ids, starts, ends); with ``merge_unk`` every run of unknown
 * pieces is one piece spanning the run (`merge_unknown_runs`). ``bnd`` has room for the path's
 * boundaries, ``pid`` for its ids. An end is the same int object as the next start. */
static PyObject *path_columns(Trie *t, const int32_t *starts, const int32_t *ids, Py_ssize_t n, int32_t unk_id,
                              int merge_unk, int32_t *bnd, int32_t *pid) {
    Py_ssize_t m = 0;
    for (Py_ssize_t e = n; e > 0; e = starts[e]) m++;
    bnd[m] = (int32_t)n;
    Py_ssize_t k = m;
    for (Py_ssize_t e = n; e > 0; e = starts[e]) { k--; pid[k] = ids[e]; bnd[k] = starts[e]; }
    Py_ssize_t w = 0; /* tokens kept; token j spans bnd[j] .. bnd[j + 1] */
    for (k = 0; k < m; k++) {
        if (merge_unk && pid[k] == unk_id && w > 0 && pid[w - 1] == unk_id) { bnd[w] = bnd[k + 1]; continue; }
        pid[w] = pid[k];
        bnd[w + 1] = bnd[k + 1]; /* (bnd[w] already is bnd[k]: the previous token's end) */
        w++;
    }
    PyObject *o_ids = PyList_New(w), *o_starts = PyList_New(w), *o_ends = PyList_New(w), *result = NULL;
    if (!o_ids || !o_starts || !o_ends) goto done;
    PyObject *prev = NULL; /* the int of bnd[j] */
    if (w && !(prev = PyLong_FromLongLong(bnd[0]))) goto done;
    for (Py_ssize_t j = 0; j < w; j++) {
        PyObject *id = trie_id_object(t, pid[j]), *end = PyLong_FromLongLong(bnd[j + 1]);
        if (!id || !end) { Py_XDECREF(id); Py_XDECREF(end); Py_DECREF(prev); goto done; }
        PyList_SET_ITEM(o_ids, j, id);
        PyList_SET_ITEM(o_starts, j, prev);
        PyList_SET_ITEM(o_ends, j, Py_NewRef(end));
        prev = end;
    }
    Py_XDECREF(prev);
    result = PyTuple_Pack(3, o_ids, o_starts, o_ends);
done:
    Py_XDECREF(o_ids); Py_XDECREF(o_starts); Py_XDECREF(o_ends);
    return result;
}

/* unigram_viterbi(trie, text, start_score, unk_score, unk_id, f32[, merge_unk]): the best path
 * as columns (ids, starts, ends) and the score at the end; None when a char has no candidate
 * and unk_id is negative (the caller raises its own error). */
static PyObject *py_unigram_viterbi(PyObject *self, PyObject *args) {
    PyObject *cap, *text;
    double start, unk_score;
    long long unk_id;
    int f32, merge_unk = 0;
    if (!PyArg_ParseTuple(args, "OUddLp|p", &cap, &text, &start, &unk_score, &unk_id, &f32, &merge_unk)) return NULL;
    Trie *t = PyCapsule_GetPointer(cap, "tokviz.trie");
    if (!t) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (n >= INT32_MAX || unk_id >= INT32_MAX || unk_id < -1) {
        PyErr_SetString(PyExc_ValueError, "unigram_viterbi: text or unk_id out of range");
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    /* one block: starts and ids of the DP (n + 1 each), the symbols of the text (the path's
     * ids once the DP is done) and the path's boundaries */
    int32_t *buf = PyMem_RawMalloc((size_t)(4 * n + 4) * sizeof(int32_t));
    PyObject *result = NULL, *cols = NULL;
    if (!buf) { PyErr_NoMemory(); goto done; }
    int32_t *starts = buf, *ids = buf + n + 1, *sym = buf + 2 * n + 2, *bnd = buf + 3 * n + 3;
    double end_score = start;
    int rc;
    if (n >= NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        trie_symbols(t, kind, data, n, sym);
        rc = (f32 ? viterbi_f32 : viterbi_f64)(t, sym, n, start, unk_score, (int32_t)unk_id, starts, ids, &end_score);
        Py_END_ALLOW_THREADS
    } else {
        trie_symbols(t, kind, data, n, sym);
        rc = (f32 ? viterbi_f32 : viterbi_f64)(t, sym, n, start, unk_score, (int32_t)unk_id, starts, ids, &end_score);
    }
    if (rc < 0) { PyErr_NoMemory(); goto done; }
    if (rc > 0) { result = Py_NewRef(Py_None); goto done; }
    cols = path_columns(t, starts, ids, n, (int32_t)unk_id, merge_unk, bnd, sym);
    if (!cols) goto done;
    result = Py_BuildValue("(OOOd)", PyTuple_GET_ITEM(cols, 0), PyTuple_GET_ITEM(cols, 1), PyTuple_GET_ITEM(cols, 2),
                           end_score);
done:
    Py_XDECREF(cols);
    PyMem_RawFree(buf);
    return result;
}

/* ================================================================== SentencePiece
 * Two kernels of SentencePiece ``.model`` files, each the statement-by-statement mirror of its
 * pure-Python reference (which stays the fallback and the oracle of the tests):
 *
 * 1. ``spm_normalize``: `SentencePieceNormalizer.normalize_with_map`
 *    (tokviz/engine/normalizers/precompiled.py): user-defined symbols copied verbatim (longest
 *    first), else the longest precompiled-charsmap rule that ends on a character boundary (a
 *    Darts-clone common-prefix walk over the text's UTF-8), else the character itself; then
 *    the whitespace rules, with ``norm_to_orig`` per normalized character.
 * 2. ``spm_bpe_encode``: `SentencePieceBPE._encode` (bpe_model.cc): characters (a user-defined
 *    piece is one frozen symbol), then repeatedly the adjacent pair whose concatenation is a
 *    mergeable piece with the highest score, leftmost on ties.
 * 3. The processor's last step (models/_spm.py) and the unknown token values: ``spm_merge_unknown``
 *    (`merge_unknown_runs`), ``spm_byte_fallback`` (`SentencePieceVocab.finish_columns`) and
 *    ``spm_unknown_values`` (`Unigram.token_values_columns`).
 *
 * Both decline (return None) where the Python does something this code does not reproduce, so
 * that Python runs and gives its result or its error: a charsmap whose full decoding would fail
 * or exceed the Python walk's step budget (checked once, when the table is built), text that is
 * not UTF-8 encodable, and a merge that forms an UNUSED piece (resegmentation stays in Python).
 *
 * Performance notes: the charsmap is walked in place (no decoded rule table); symbols are
 * spans of the text, pieces found by a polynomial hash of the span (prefix hashes) in one
 * open-addressing table; the heap keys pack the float32 score (order-preserving bits) and the
 * position into one 64-bit word.
 */

/* ---- user-defined symbols: longest match at a position (shared by both kernels) */
typedef struct {
    Py_UCS4 *chars;     /* every symbol, concatenated */
    Py_ssize_t *off;    /* symbol k is chars[off[k] .. off[k + 1]) */
    Py_ssize_t n;
    Table first;        /* first char -> start << 32 | count of the symbols starting with it */
} SpmUd;

static void spm_ud_free(SpmUd *u) {
    PyMem_RawFree(u->chars); PyMem_RawFree(u->off);
    if (u->first.keys) table_free(&u->first);
    u->chars = NULL; u->off = NULL; u->n = 0;
}

typedef struct { Py_UCS4 first; Py_ssize_t len; PyObject *s; } SpmUdItem;

static int spm_ud_cmp(const void *a, const void *b) {
    const SpmUdItem *x = a, *y = b;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return x->len > y->len ? -1 : x->len < y->len ? 1 : 0; /* longer first */
}

/* From a sequence of str (empty ones skipped, as the Python does). */
static int spm_ud_init(SpmUd *u, PyObject *seq) {
    memset(u, 0, sizeof(*u));
    PyObject *fast = PySequence_Fast(seq, "user-defined symbols must be a sequence");
    if (!fast) return -1;
    Py_ssize_t m = PySequence_Fast_GET_SIZE(fast), total = 0, k = 0;
    SpmUdItem *items = PyMem_RawMalloc((size_t)(m + 1) * sizeof(SpmUdItem));
    if (!items) { Py_DECREF(fast); PyErr_NoMemory(); return -1; }
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *s = PySequence_Fast_GET_ITEM(fast, j);
        if (!PyUnicode_Check(s)) { PyErr_SetString(PyExc_TypeError, "user-defined symbols must be str"); goto fail; }
        Py_ssize_t len = PyUnicode_GET_LENGTH(s);
        if (!len) continue;
        items[k].first = PyUnicode_READ_CHAR(s, 0);
        items[k].len = len;
        items[k].s = s;
        total += len;
        k++;
    }
    qsort(items, (size_t)k, sizeof(SpmUdItem), spm_ud_cmp);
    u->chars = PyMem_RawMalloc((size_t)(total + 1) * sizeof(Py_UCS4));
    u->off = PyMem_RawMalloc((size_t)(k + 1) * sizeof(Py_ssize_t));
    if (!u->chars || !u->off || table_init(&u->first, (size_t)k) < 0) { PyErr_NoMemory(); goto fail; }
    Py_ssize_t at = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        u->off[j] = at;
        if (!PyUnicode_AsUCS4(items[j].s, u->chars + at, items[j].len, 0)) goto fail;
        at += items[j].len;
        int64_t got;
        if (table_get(&u->first, items[j].first, &got)) {
            if (table_put(&u->first, items[j].first, got + 1) < 0) goto fail;
        } else if (table_put(&u->first, items[j].first, ((int64_t)j << 32) | 1) < 0) {
            goto fail;
        }
    }
    u->off[k] = at;
    u->n = k;
    PyMem_RawFree(items);
    Py_DECREF(fast);
    return 0;
fail:
    PyMem_RawFree(items);
    Py_DECREF(fast);
    spm_ud_free(u);
    return -1;
}

/* Length of the longest symbol matching text[i:], or 0. */
static inline Py_ssize_t spm_ud_match(const SpmUd *u, int kind, const void *data, Py_ssize_t i, Py_ssize_t n) {
    int64_t got;
    if (!u->n || !table_get(&u->first, PyUnicode_READ(kind, data, i), &got)) return 0;
    for (Py_ssize_t k = got >> 32, end = k + (got & 0xffffffff); k < end; k++) {
        Py_ssize_t len = u->off[k + 1] - u->off[k], j = 1;
        if (len > n - i) continue;
        const Py_UCS4 *c = u->chars + u->off[k];
        while (j < len && c[j] == PyUnicode_READ(kind, data, i + j)) j++;
        if (j == len) return len;
    }
    return 0;
}

/* ---- the precompiled charsmap (a Darts-clone double array) */
#define DZ_LEAF (1u << 31)
#define DZ_MAX_KEY 256 /* precompiled.py _MAX_KEY_BYTES */
static inline uint32_t dz_offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }
static inline int dz_has_leaf(uint32_t u) { return (u >> 8) & 1; }

/* Length of the valid (strict: no overlong, surrogate or > U+10FFFF) UTF-8 sequence at s[0..n)
 * that ends at n, or -1 (Python's ``bytes.decode("utf-8")`` succeeds iff this is >= 0). */
static int utf8_valid(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        int len;
        uint32_t cp;
        if (c < 0x80) { i++; continue; }
        if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
        else return -1;
        if (i + len > n) return -1;
        for (int k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return -1;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
            return -1;
        i += len;
    }
    return 0;
}

typedef struct {
    uint32_t *units;          /* NULL: no charsmap */
    Py_ssize_t nunits;
    unsigned char *repl;      /* the NUL-terminated replacement strings */
    Py_ssize_t nrepl;
    SpmUd ud;
    int dummy, remove, escape, suffix;
} Spn;

static void spn_free(Spn *z) {
    if (!z) return;
    PyMem_RawFree(z->units);
    PyMem_RawFree(z->repl);
    spm_ud_free(&z->ud);
    PyMem_RawFree(z);
}

static void spn_destroy(PyObject *capsule) { spn_free(PyCapsule_GetPointer(capsule, "tokviz.spm_norm")); }

/* Would `CharsMap` decode every rule of this trie without an error and within ``budget`` trie
 * steps? Walks every path from the root (a superset of the Python's walks from the first
 * characters) and checks what `CharsMap._rules_under` checks: key depth, value slot, and that
 * a rule with a UTF-8 key has a UTF-8 replacement. 1 yes, 0 no, -1 out of memory. */
static int spn_check(const Spn *z, long long budget) {
    Py_ssize_t n = z->nunits;
    Table first_child;          /* base -> first unit answering to it (+1) */
    int64_t *sibling = PyMem_RawMalloc((size_t)(n + 1) * sizeof(int64_t));
    if (!sibling || table_init(&first_child, (size_t)n) < 0) { PyMem_RawFree(sibling); return -1; }
    for (Py_ssize_t p = 0; p < n; p++) {
        uint32_t u = z->units[p], label = u & 0xFF;
        sibling[p] = -1;
        if ((u & DZ_LEAF) || label == 0) continue;
        uint64_t base = (uint64_t)(p ^ label);
        int64_t head;
        if (table_get(&first_child, base, &head)) sibling[p] = head;
        if (table_put(&first_child, base, p) < 0) { table_free(&first_child); PyMem_RawFree(sibling); return -1; }
    }
    Py_ssize_t cap = 1024, top = 0;
    int64_t *stack = PyMem_RawMalloc((size_t)cap * 2 * sizeof(int64_t)); /* (unit, depth) */
    unsigned char key[DZ_MAX_KEY + 2];
    int ok = stack != NULL ? 1 : -1;
    long long steps = 0;
    int64_t q;
    if (ok == 1 && table_get(&first_child, dz_offset(z->units[0]), &q))
        for (; q >= 0; q = sibling[q]) { stack[2 * top] = q; stack[2 * top + 1] = 1; top++; if (top == cap) break; }
    while (ok == 1 && top > 0) {
        top--;
        int64_t p = stack[2 * top], depth = stack[2 * top + 1];
        if (++steps > budget || depth > DZ_MAX_KEY) { ok = 0; break; }
        uint32_t u = z->units[p];
        key[depth - 1] = (unsigned char)(u & 0xFF);
        uint64_t base = (uint64_t)p ^ dz_offset(u);
        if (dz_has_leaf(u)) {
            if (base >= (uint64_t)n || (z->units[base] & 0x7FFFFFFF) >= (uint64_t)z->nrepl) { ok = 0; break; }
            if (utf8_valid(key, depth) == 0) {
                Py_ssize_t v = z->units[base] & 0x7FFFFFFF, e = v;
                while (e < z->nrepl && z->repl[e]) e++;
                if (utf8_valid(z->repl + v, e - v) < 0) { ok = 0; break; }
            }
        }
        if (!table_get(&first_child, base, &q)) continue;
        for (; q >= 0; q = sibling[q]) {
            if (top == cap) {
                int64_t *bigger = PyMem_RawRealloc(stack, (size_t)cap * 4 * sizeof(int64_t));
                if (!bigger) { ok = -1; break; }
                stack = bigger;
                cap *= 2;
            }
            stack[2 * top] = q;
            stack[2 * top + 1] = depth + 1;
            top++;
        }
    }
    PyMem_RawFree(stack);
    PyMem_RawFree(sibling);
    table_free(&first_child);
    return ok;
}

/* spm_normalizer(blob, user_defined, add_dummy_prefix, remove_extra_whitespaces,
 * escape_whitespaces, treat_whitespace_as_suffix, budget) -> table, or None when the charsmap
 * ``blob`` (None: none) fails `spn_check` (the Python then runs and reports the problem). */
static PyObject *py_spm_normalizer(PyObject *self, PyObject *args) {
    PyObject *blob, *ud;
    int dummy, remove, escape, suffix;
    long long budget;
    if (!PyArg_ParseTuple(args, "OOppppL", &blob, &ud, &dummy, &remove, &escape, &suffix, &budget)) return NULL;
    Spn *z = PyMem_RawCalloc(1, sizeof(Spn));
    if (!z) return PyErr_NoMemory();
    z->dummy = dummy; z->remove = remove; z->escape = escape; z->suffix = suffix;
    if (spm_ud_init(&z->ud, ud) < 0) { PyMem_RawFree(z); return NULL; }
    if (blob != Py_None) {
        char *raw;
        Py_ssize_t len;
        if (PyBytes_AsStringAndSize(blob, &raw, &len) < 0) { spn_free(z); return NULL; }
        uint32_t size = 0;
        if (len > 4) memcpy(&size, raw, 4); /* little-endian hosts only (as the .model files) */
        if (len <= 4 || size == 0 || size % 4 || (Py_ssize_t)size + 4 > len) {
            spn_free(z);
            Py_RETURN_NONE;
        }
        z->nunits = size / 4;
        z->nrepl = len - 4 - size;
        z->units = PyMem_RawMalloc(size);
        z->repl = PyMem_RawMalloc((size_t)z->nrepl + 1);
        if (!z->units || !z->repl) { spn_free(z); return PyErr_NoMemory(); }
        memcpy(z->units, raw + 4, size);
        memcpy(z->repl, raw + 4 + size, (size_t)z->nrepl);
        z->repl[z->nrepl] = 0;
        int ok = spn_check(z, budget);
        if (ok <= 0) {
            spn_free(z);
            if (ok < 0) return PyErr_NoMemory();
            Py_RETURN_NONE;
        }
    }
    PyObject *cap = PyCapsule_New(z, "tokviz.spm_norm", spn_destroy);
    if (!cap) spn_free(z);
    return cap;
}

/* The longest rule at UTF-8 position b that ends on a character boundary: its length in
 * characters (0: none) and the offset of its replacement in *repl. */
static Py_ssize_t spn_rule(const Spn *z, const unsigned char *u8, Py_ssize_t nb, Py_ssize_t b, Py_ssize_t *repl) {
    const uint32_t *units = z->units;
    uint64_t pos = dz_offset(units[0]);
    Py_ssize_t chars = 0, best = 0;
    for (Py_ssize_t j = b; j < nb && u8[j]; j++) {
        pos ^= u8[j];
        if (pos >= (uint64_t)z->nunits) break;
        uint32_t unit = units[pos];
        if ((unit & (DZ_LEAF | 0xFF)) != u8[j]) break;
        pos ^= dz_offset(unit);
        int boundary = j + 1 == nb || (u8[j + 1] & 0xC0) != 0x80;
        if (boundary) chars++;
        if (boundary && dz_has_leaf(unit) && pos < (uint64_t)z->nunits) {
            best = chars;
            *repl = units[pos] & 0x7FFFFFFF;
        }
    }
    return best;
}

typedef struct { Py_UCS4 *c; int64_t *o; Py_ssize_t n, cap; } SpnOut;

static int spn_reserve(SpnOut *w, Py_ssize_t extra) {
    if (w->n + extra <= w->cap) return 0;
    Py_ssize_t cap = w->cap * 2 + extra + 16;
    Py_UCS4 *c = PyMem_RawRealloc(w->c, (size_t)cap * sizeof(Py_UCS4));
    if (c) w->c = c;
    int64_t *o = c ? PyMem_RawRealloc(w->o, (size_t)(cap + 1) * sizeof(int64_t)) : NULL;
    if (o) w->o = o;
    if (!c || !o) return -1;
    w->cap = cap;
    return 0;
}

/* One character of a rule's output at origin ``at``: leading spaces are dropped while *strip
 * (they follow an emitted space), a space is escaped to U+2581 when asked. */
static inline int spn_put(SpnOut *w, Py_UCS4 ch, int64_t at, int *strip, int escape) {
    if (*strip && ch == ' ') return 0;
    *strip = 0;
    if (spn_reserve(w, 1) < 0) return -1;
    w->c[w->n] = escape && ch == ' ' ? 0x2581 : ch;
    w->o[w->n++] = at;
    return 0;
}

/* Decode one UTF-8 character at s (valid: checked by `spn_check`); advances *s. */
static inline Py_UCS4 utf8_next(const unsigned char **s) {
    const unsigned char *p = *s;
    Py_UCS4 c = p[0];
    int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (len > 1) {
        c &= 0x3F >> (len - 1);
        for (int k = 1; k < len; k++) c = (c << 6) | (p[k] & 0x3F);
    }
    *s = p + len;
    return c;
}

static inline Py_ssize_t utf8_len(Py_UCS4 c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

/* `SentencePieceNormalizer._prefix` at char i (UTF-8 position b): the characters consumed;
 * the replacement is text[i:i+k] itself (*repl = -1) or the charsmap string at *repl. */
static inline Py_ssize_t spn_prefix(const Spn *z, int kind, const void *data, Py_ssize_t i, Py_ssize_t n,
                                    const unsigned char *u8, Py_ssize_t nb, Py_ssize_t b, Py_ssize_t *repl) {
    *repl = -1;
    Py_ssize_t k = spm_ud_match(&z->ud, kind, data, i, n);
    if (k) return k;
    if (z->units) {
        k = spn_rule(z, u8, nb, b, repl);
        if (k) return k;
    }
    return 1;
}

/* Emit the replacement of `spn_prefix`: 1 when a character was emitted (*last: the last one,
 * before escaping), 0 when none was, -1 out of memory. */
static int spn_emit(const Spn *z, SpnOut *w, int kind, const void *data, Py_ssize_t i, Py_ssize_t k,
                    Py_ssize_t repl, int strip, Py_UCS4 *last) {
    Py_ssize_t before = w->n;
    Py_UCS4 ch = 0;
    if (repl < 0) {
        for (Py_ssize_t j = i; j < i + k; j++) {
            ch = PyUnicode_READ(kind, data, j);
            if (spn_put(w, ch, i, &strip, z->escape) < 0) return -1;
        }
    } else {
        const unsigned char *s = z->repl + repl;
        while (*s) {
            ch = utf8_next(&s);
            if (spn_put(w, ch, i, &strip, z->escape) < 0) return -1;
        }
    }
    *last = ch;
    return w->n > before;
}

/* spm_normalize(table, text, base) -> (normalized, norm_to_orig as int64 bytes, each + base),
 * or None when ``text`` has no UTF-8 form (the Python runs). */
static PyObject *py_spm_normalize(PyObject *self, PyObject *args) {
    PyObject *cap, *text;
    long long base;
    if (!PyArg_ParseTuple(args, "OUL", &cap, &text, &base)) return NULL;
    const Spn *z = PyCapsule_GetPointer(cap, "tokviz.spm_norm");
    if (!z) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), nb = 0;
    if (n == 0) return Py_BuildValue("(sy#)", "", "", (Py_ssize_t)0);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const unsigned char *u8 = NULL;
    /* (ASCII text is its own UTF-8; other text goes into a temporary bytes object, not
     * PyUnicode_AsUTF8, which would keep a UTF-8 copy inside the caller's text for its life) */
    PyObject *u8_bytes = NULL;
    if (z->units) {
        if (PyUnicode_IS_ASCII(text)) {
            u8 = (const unsigned char *)PyUnicode_DATA(text);
            nb = n;
        } else {
            u8_bytes = PyUnicode_AsUTF8String(text);
            if (!u8_bytes) { PyErr_Clear(); Py_RETURN_NONE; }
            u8 = (const unsigned char *)PyBytes_AS_STRING(u8_bytes);
            nb = PyBytes_GET_SIZE(u8_bytes);
        }
    }
    SpnOut w = {NULL, NULL, 0, 0};
    PyObject *result = NULL;
    Py_ssize_t i = 0, b = 0, k, repl;
    const Py_UCS4 ws = z->escape ? 0x2581 : ' ';
#define ADVANCE(k) do { for (Py_ssize_t a_ = 0; a_ < (k); a_++) b += utf8_len(PyUnicode_READ(kind, data, i + a_)); i += (k); } while (0)
    if (z->remove) { /* leading whitespace: every prefix whose replacement is exactly " " */
        while (i < n) {
            k = spn_prefix(z, kind, data, i, n, u8, nb, b, &repl);
            int space = repl < 0 ? k == 1 && PyUnicode_READ(kind, data, i) == ' '
                                 : z->repl[repl] == ' ' && z->repl[repl + 1] == 0;
            if (!space) break;
            ADVANCE(k);
        }
        if (i == n) { result = Py_BuildValue("(sy#)", "", "", (Py_ssize_t)0); goto done; }
    }
    if (spn_reserve(&w, n + 2) < 0) goto nomem;
    if (z->dummy && !z->suffix) { w.c[w.n] = ws; w.o[w.n++] = i; }
    int prev_space = z->remove;
    while (i < n) {
        k = spn_prefix(z, kind, data, i, n, u8, nb, b, &repl);
        Py_UCS4 last;
        int emitted = spn_emit(z, &w, kind, data, i, k, repl, prev_space, &last);
        if (emitted < 0) goto nomem;
        if (emitted) prev_space = last == ' ';
        if (!z->remove) prev_space = 0;
        ADVANCE(k);
    }
#undef ADVANCE
    int64_t consumed = n;
    if (z->remove) { /* trailing whitespace goes; the end maps to where the removed run began */
        while (w.n > 0 && w.c[w.n - 1] == ws) consumed = w.o[--w.n];
    }
    if (spn_reserve(&w, 2) < 0) goto nomem;
    if (z->dummy && z->suffix) { w.c[w.n] = ws; w.o[w.n++] = consumed; }
    w.o[w.n] = consumed;
    for (Py_ssize_t j = 0; j <= w.n; j++) w.o[j] += base;
    PyObject *s = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, w.c, w.n);
    PyObject *o = s ? PyBytes_FromStringAndSize((const char *)w.o, (Py_ssize_t)((w.n + 1) * sizeof(int64_t))) : NULL;
    if (o) result = PyTuple_Pack(2, s, o);
    Py_XDECREF(s);
    Py_XDECREF(o);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    PyMem_RawFree(w.c);
    PyMem_RawFree(w.o);
    Py_XDECREF(u8_bytes);
    return result;
}

/* ---- SentencePiece BPE */
#define SPB_MERGE 1  /* a merge may produce this string (NORMAL, USER_DEFINED, UNUSED) */
#define SPB_UNUSED 2

typedef struct {
    Table content;        /* polynomial hash of a string -> entry (equal hashes probe on) */
    PyObject **strs;      /* the entries' strings (strong references) */
    double *score;
    int64_t *final_id;    /* ``SentencePieceVocab.piece_to_id`` of the string */
    unsigned char *flags;
    Py_ssize_t n, max_len;
    int64_t unk_id;
    SpmUd ud;
    Table joins;          /* c1 << 21 | c2 for every two adjacent chars inside a mergeable string */
} Spb;

static void spb_free(Spb *t) {
    if (!t) return;
    if (t->content.keys) table_free(&t->content);
    if (t->joins.keys) table_free(&t->joins);
    for (Py_ssize_t k = 0; k < t->n; k++) Py_XDECREF(t->strs[k]);
    PyMem_RawFree(t->strs); PyMem_RawFree(t->score); PyMem_RawFree(t->final_id); PyMem_RawFree(t->flags);
    spm_ud_free(&t->ud);
    PyMem_RawFree(t);
}

static void spb_destroy(PyObject *capsule) { spb_free(PyCapsule_GetPointer(capsule, "tokviz.spm_bpe")); }

static inline uint64_t spb_key(uint64_t h) { return h == EMPTY ? EMPTY - 1 : h; }

/* The entry equal to text[a:e] (hash h), or -1. */
static int64_t spb_find(const Spb *t, uint64_t h, int kind, const void *data, Py_ssize_t a, Py_ssize_t e) {
    h = spb_key(h);
    size_t slot = mix(h) & t->content.mask;
    for (;; slot = (slot + 1) & t->content.mask) {
        uint64_t key = t->content.keys[slot];
        if (key == EMPTY) return -1;
        if (key != h) continue;
        PyObject *u = t->strs[t->content.vals[slot]];
        if (PyUnicode_GET_LENGTH(u) != e - a) continue;
        int ukind = PyUnicode_KIND(u);
        const void *udata = PyUnicode_DATA(u);
        Py_ssize_t i = 0;
        while (i < e - a && PyUnicode_READ(ukind, udata, i) == PyUnicode_READ(kind, data, a + i)) i++;
        if (i == e - a) return t->content.vals[slot];
    }
}

/* spm_bpe_table(strings, final_ids, scores, flags, user_defined, unk_id) -> table, or None when
 * a mergeable score is NaN (the Python's heap order is then its own). Strings are distinct. */
static PyObject *py_spm_bpe_table(PyObject *self, PyObject *args) {
    PyObject *strs, *ids, *scores, *flags, *ud;
    long long unk;
    if (!PyArg_ParseTuple(args, "O!O!O!O!OL", &PyList_Type, &strs, &PyList_Type, &ids, &PyList_Type, &scores,
                          &PyList_Type, &flags, &ud, &unk))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(strs);
    if (PyList_GET_SIZE(ids) != n || PyList_GET_SIZE(scores) != n || PyList_GET_SIZE(flags) != n) {
        PyErr_SetString(PyExc_ValueError, "spm_bpe_table columns differ in length");
        return NULL;
    }
    Spb *t = PyMem_RawCalloc(1, sizeof(Spb));
    if (!t) return PyErr_NoMemory();
    t->unk_id = unk;
    t->strs = PyMem_RawCalloc((size_t)n + 1, sizeof(PyObject *));
    t->score = PyMem_RawMalloc(((size_t)n + 1) * sizeof(double));
    t->final_id = PyMem_RawMalloc(((size_t)n + 1) * sizeof(int64_t));
    t->flags = PyMem_RawMalloc((size_t)n + 1);
    if (!t->strs || !t->score || !t->final_id || !t->flags || table_init(&t->content, (size_t)n) < 0
        || table_init(&t->joins, (size_t)n) < 0) {
        spb_free(t);
        return PyErr_NoMemory();
    }
    if (spm_ud_init(&t->ud, ud) < 0) { spb_free(t); return NULL; }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *s = PyList_GET_ITEM(strs, k);
        if (!PyUnicode_Check(s)) { PyErr_SetString(PyExc_TypeError, "strings must be str"); goto fail; }
        t->score[k] = PyFloat_AsDouble(PyList_GET_ITEM(scores, k));
        t->final_id[k] = PyLong_AsLongLong(PyList_GET_ITEM(ids, k));
        long f = PyLong_AsLong(PyList_GET_ITEM(flags, k));
        if (PyErr_Occurred()) goto fail;
        t->flags[k] = (unsigned char)f;
        Py_INCREF(s);
        t->strs[k] = s;
        t->n = k + 1;
        Py_ssize_t len = PyUnicode_GET_LENGTH(s);
        if (len > t->max_len) t->max_len = len;
        if ((f & SPB_MERGE) && t->score[k] != t->score[k]) { spb_free(t); Py_RETURN_NONE; }
        for (Py_ssize_t j = 0; (f & SPB_MERGE) && j + 1 < len; j++) {
            uint64_t pair = ((uint64_t)PyUnicode_READ_CHAR(s, j) << 21) | PyUnicode_READ_CHAR(s, j + 1);
            if (table_put(&t->joins, pair, 0) < 0) goto fail;
        }
        /* linear probing past equal hashes: every string keeps its own slot */
        uint64_t h = spb_key(str_hash(PyUnicode_KIND(s), PyUnicode_DATA(s), 0, len));
        Table *c = &t->content;
        if ((c->used + 1) * 2 > c->mask + 1) { PyErr_SetString(PyExc_RuntimeError, "spm_bpe_table overfull"); goto fail; }
        size_t slot = mix(h) & c->mask;
        while (c->keys[slot] != EMPTY) slot = (slot + 1) & c->mask;
        c->keys[slot] = h;
        c->vals[slot] = k;
        c->used++;
    }
    PyObject *cap = PyCapsule_New(t, "tokviz.spm_bpe", spb_destroy);
    if (cap) return cap;
fail:
    spb_free(t);
    return NULL;
}

/* A float32 score as bits that sort like the score (ascending). */
static inline uint32_t spb_order(double score) {
    float f = (float)score;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

typedef struct {
    const Spb *t;
    int kind;
    const void *data;
    Py_ssize_t *start, *len;   /* symbol m spans text[start[m] : start[m] + len[m]] */
    int64_t *nxt, *prv, *val;  /* linked list; val[m]: entry of the pair at m, or -1 */
    unsigned char *frozen;
    uint64_t *pre, *pw;        /* prefix hashes of the text, powers of POLY */
    uint64_t *heap;
    Py_ssize_t heap_n;
    int unused;                /* a pair forming an UNUSED piece was seen */
} SpbRun;

static void spb_heap_push(SpbRun *r, uint64_t x) {
    Py_ssize_t i = r->heap_n++;
    while (i > 0) {
        Py_ssize_t p = (i - 1) / 2;
        if (r->heap[p] <= x) break;
        r->heap[i] = r->heap[p];
        i = p;
    }
    r->heap[i] = x;
}

static uint64_t spb_heap_pop(SpbRun *r) {
    uint64_t top = r->heap[0], x = r->heap[--r->heap_n];
    Py_ssize_t i = 0, n = r->heap_n;
    for (;;) {
        Py_ssize_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && r->heap[c + 1] < r->heap[c]) c++;
        if (x <= r->heap[c]) break;
        r->heap[i] = r->heap[c];
        i = c;
    }
    if (n) r->heap[i] = x;
    return top;
}

/* The entry of the string text[a:e], or -1. */
static inline int64_t spb_lookup(const SpbRun *r, Py_ssize_t a, Py_ssize_t e) {
    if (e - a > r->t->max_len) return -1;
    return spb_find(r->t, r->pre[e] - r->pre[a] * r->pw[e - a], r->kind, r->data, a, e);
}

/* Set val[m] to the mergeable pair (m, nxt[m]) and queue it (highest score, leftmost first). */
static inline void spb_pair(SpbRun *r, int64_t m) {
    if (m < 0) return;
    int64_t q = r->nxt[m];
    r->val[m] = -1;
    if (q < 0 || r->frozen[m] || r->frozen[q]) return;
    int64_t k = spb_lookup(r, r->start[m], r->start[q] + r->len[q]);
    if (k < 0 || !(r->t->flags[k] & SPB_MERGE)) return;
    if (r->t->flags[k] & SPB_UNUSED) r->unused = 1;
    r->val[m] = k;
    spb_heap_push(r, ((uint64_t)(~spb_order(r->t->score[k])) << 32) | (uint64_t)m);
}

/* Merge the symbols first..last (no merge can join them to their neighbours). */
static void spb_merge_part(SpbRun *r, Py_ssize_t first, Py_ssize_t last) {
    for (Py_ssize_t i = first; i < last; i++) spb_pair(r, i);
    while (r->heap_n && !r->unused) {
        uint64_t key = spb_heap_pop(r);
        int64_t i = (int64_t)(key & 0xffffffffu), k = r->val[i];
        /* stale unless it is the current pair's key (an equal key merges the same pair) */
        if (k < 0 || (uint32_t)(key >> 32) != ~spb_order(r->t->score[k])) continue;
        int64_t q = r->nxt[i];
        r->len[i] += r->len[q];
        r->nxt[i] = r->nxt[q];
        if (r->nxt[q] >= 0) r->prv[r->nxt[q]] = i;
        r->val[q] = -1;
        spb_pair(r, r->prv[i]);
        spb_pair(r, i);
    }
}

/* Merge all m symbols, part by part: a part ends between two symbols whose touching chars are
 * adjacent in no mergeable string (a merge across would contain them), so each part's heap is
 * small (the whole text's heap was mostly cache misses). */
static void spb_merge_all(SpbRun *r, Py_ssize_t m) {
    Py_ssize_t first = 0;
    int64_t dummy;
    for (Py_ssize_t i = 0; i < m && !r->unused; i++) {
        if (i + 1 < m) {
            Py_ssize_t at = r->start[i + 1];
            uint64_t pair = ((uint64_t)PyUnicode_READ(r->kind, r->data, at - 1) << 21) | PyUnicode_READ(r->kind, r->data, at);
            if (table_get(&r->t->joins, pair, &dummy)) continue;
        }
        spb_merge_part(r, first, i);
        first = i + 1;
    }
}

/* spm_bpe_encode(table, text) -> (ids, starts, ends) of SentencePiece BPE over the whole text
 * (before unknown merging / byte fallback), or None when an UNUSED piece would be formed. */
static PyObject *py_spm_bpe_encode(PyObject *self, PyObject *args) {
    PyObject *cap, *text;
    if (!PyArg_ParseTuple(args, "OU", &cap, &text)) return NULL;
    const Spb *t = PyCapsule_GetPointer(cap, "tokviz.spm_bpe");
    if (!t) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    SpbRun r = {t, PyUnicode_KIND(text), PyUnicode_DATA(text)};
    size_t sz = (size_t)n + 1;
    r.start = PyMem_RawMalloc(sz * sizeof(Py_ssize_t));
    r.len = PyMem_RawMalloc(sz * sizeof(Py_ssize_t));
    r.nxt = PyMem_RawMalloc(sz * sizeof(int64_t));
    r.prv = PyMem_RawMalloc(sz * sizeof(int64_t));
    r.val = PyMem_RawMalloc(sz * sizeof(int64_t));
    r.frozen = PyMem_RawMalloc(sz);
    r.pre = PyMem_RawMalloc(sz * sizeof(uint64_t));
    r.pw = PyMem_RawMalloc(((size_t)t->max_len + 1) * sizeof(uint64_t));
    r.heap = PyMem_RawMalloc(3 * sz * sizeof(uint64_t));
    PyObject *result = NULL, *ids = NULL, *starts = NULL, *ends = NULL;
    if (!r.start || !r.len || !r.nxt || !r.prv || !r.val || !r.frozen || !r.pre || !r.pw || !r.heap) {
        PyErr_NoMemory();
        goto done;
    }
    r.pre[0] = 0;
    for (Py_ssize_t i = 0; i < n; i++) r.pre[i + 1] = r.pre[i] * POLY + PyUnicode_READ(r.kind, r.data, i) + 1;
    r.pw[0] = 1;
    for (Py_ssize_t i = 1; i <= t->max_len; i++) r.pw[i] = r.pw[i - 1] * POLY;
    Py_ssize_t m = 0;
    for (Py_ssize_t i = 0; i < n; m++) { /* initial symbols: chars; a user-defined piece frozen */
        Py_ssize_t k = spm_ud_match(&t->ud, r.kind, r.data, i, n);
        r.start[m] = i;
        r.len[m] = k ? k : 1;
        r.frozen[m] = k > 0;
        r.nxt[m] = m + 1;
        r.prv[m] = m - 1;
        i += r.len[m];
    }
    if (m) r.nxt[m - 1] = -1;
    if (n >= NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        spb_merge_all(&r, m);
        Py_END_ALLOW_THREADS
    } else {
        spb_merge_all(&r, m);
    }
    if (r.unused) { result = Py_NewRef(Py_None); goto done; }
    Py_ssize_t count = 0;
    for (int64_t i = m ? 0 : -1; i >= 0; i = r.nxt[i]) count++;
    ids = PyList_New(count); starts = PyList_New(count); ends = PyList_New(count);
    if (!ids || !starts || !ends) goto done;
    Py_ssize_t j = 0;
    for (int64_t i = m ? 0 : -1; i >= 0; i = r.nxt[i], j++) {
        Py_ssize_t a = r.start[i], e = a + r.len[i];
        int64_t k = spb_lookup(&r, a, e);
        PyObject *x = PyLong_FromLongLong(k >= 0 ? t->final_id[k] : t->unk_id);
        PyObject *y = PyLong_FromSsize_t(a), *z = PyLong_FromSsize_t(e);
        if (!x || !y || !z) { Py_XDECREF(x); Py_XDECREF(y); Py_XDECREF(z); goto done; }
        PyList_SET_ITEM(ids, j, x);
        PyList_SET_ITEM(starts, j, y);
        PyList_SET_ITEM(ends, j, z);
    }
    result = PyTuple_Pack(3, ids, starts, ends);
done:
    Py_XDECREF(ids); Py_XDECREF(starts); Py_XDECREF(ends);
    PyMem_RawFree(r.start); PyMem_RawFree(r.len); PyMem_RawFree(r.nxt); PyMem_RawFree(r.prv);
    PyMem_RawFree(r.val); PyMem_RawFree(r.frozen); PyMem_RawFree(r.pre); PyMem_RawFree(r.pw); PyMem_RawFree(r.heap);
    return result;
}
/* ---- unknown runs (``merge_unknown_runs`` in models/_spm.py) */
/* Three output columns (ids, starts, ends), appended to together. */
typedef struct { PyObject *ids, *starts, *ends; } SpmCols;

static int spm_cols_new(SpmCols *c) {
    c->ids = PyList_New(0); c->starts = PyList_New(0); c->ends = PyList_New(0);
    return c->ids && c->starts && c->ends ? 0 : -1;
}

static inline int spm_cols_add(SpmCols *c, PyObject *id, PyObject *start, PyObject *end) {
    return PyList_Append(c->ids, id) < 0 || PyList_Append(c->starts, start) < 0 || PyList_Append(c->ends, end) < 0
        ? -1 : 0;
}

/* The columns as a tuple (ok) or NULL; the references are dropped either way. */
static PyObject *spm_cols_done(SpmCols *c, int ok) {
    PyObject *out = ok ? PyTuple_Pack(3, c->ids, c->starts, c->ends) : NULL;
    Py_XDECREF(c->ids); Py_XDECREF(c->starts); Py_XDECREF(c->ends);
    return out;
}

/* 0 when the input columns have one length (and ``extra``, if given, ``extra_len``). */
static int spm_check_columns(PyObject *ids, PyObject *starts, PyObject *ends, PyObject *extra, Py_ssize_t extra_len) {
    Py_ssize_t n = PyList_GET_SIZE(ids);
    if (PyList_GET_SIZE(starts) == n && PyList_GET_SIZE(ends) == n && (!extra || PyList_GET_SIZE(extra) == extra_len))
        return 0;
    PyErr_SetString(PyExc_ValueError, "the columns differ in length");
    return -1;
}

/* spm_merge_unknown(ids, starts, ends, unk) -> (ids, starts, ends): every run of unknown pieces
 * becomes one unknown piece spanning the run (SentencePiece without byte fallback). */
static PyObject *py_spm_merge_unknown(PyObject *self, PyObject *args) {
    PyObject *ids, *starts, *ends;
    long long unk;
    if (!PyArg_ParseTuple(args, "O!O!O!L", &PyList_Type, &ids, &PyList_Type, &starts, &PyList_Type, &ends, &unk))
        return NULL;
    if (spm_check_columns(ids, starts, ends, NULL, 0) < 0) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(ids);
    SpmCols out;
    int ok = 0;
    if (spm_cols_new(&out) < 0) goto done;
    for (Py_ssize_t k = 0; k < n;) {
        PyObject *id = PyList_GET_ITEM(ids, k);
        long long v = PyLong_AsLongLong(id);
        if (v == -1 && PyErr_Occurred()) goto done;
        Py_ssize_t r = k + 1;
        if (v == unk) {
            while (r < n) {
                long long w = PyLong_AsLongLong(PyList_GET_ITEM(ids, r));
                if (w == -1 && PyErr_Occurred()) goto done;
                if (w != unk) break;
                r++;
            }
        }
        if (spm_cols_add(&out, id, PyList_GET_ITEM(starts, k), PyList_GET_ITEM(ends, r - 1)) < 0) goto done;
        k = r;
    }
    ok = 1;
done:
    return spm_cols_done(&out, ok);
}

/* ---- byte fallback (``SentencePieceVocab.finish_columns``) and unknown values */
/* spm_byte_fallback(text, ids, starts, ends, unk, byte_ids) -> (ids, starts, ends): every unknown
 * piece becomes one ``<0xNN>`` piece per UTF-8 byte of the text it covers (``byte_ids[b]``);
 * only the last byte carries the span, the others are empty at its start. */
static PyObject *py_spm_byte_fallback(PyObject *self, PyObject *args) {
    PyObject *text, *ids, *starts, *ends, *byte_ids;
    long long unk;
    if (!PyArg_ParseTuple(args, "UO!O!O!LO!", &text, &PyList_Type, &ids, &PyList_Type, &starts, &PyList_Type, &ends,
                          &unk, &PyList_Type, &byte_ids))
        return NULL;
    if (spm_check_columns(ids, starts, ends, byte_ids, 256) < 0) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(ids);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    SpmCols out;
    int ok = 0;
    if (spm_cols_new(&out) < 0) goto done;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *id = PyList_GET_ITEM(ids, k), *s = PyList_GET_ITEM(starts, k), *e = PyList_GET_ITEM(ends, k);
        long long v = PyLong_AsLongLong(id);
        if (v == -1 && PyErr_Occurred()) goto done;
        if (v != unk) {
            if (spm_cols_add(&out, id, s, e) < 0) goto done;
            continue;
        }
        Py_ssize_t a = PyLong_AsSsize_t(s), b = PyLong_AsSsize_t(e);
        if (PyErr_Occurred()) goto done;
        if (a < 0 || b > len || a > b) { PyErr_SetString(PyExc_ValueError, "a span is outside the text"); goto done; }
        for (Py_ssize_t i = a; i < b; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            unsigned char u[4];
            int m = (int)utf8_len(c);
            if (m == 1) u[0] = (unsigned char)c;
            else {
                for (int j = m - 1; j > 0; j--) { u[j] = (unsigned char)(0x80 | (c & 0x3F)); c >>= 6; }
                u[0] = (unsigned char)((0xF00 >> m) | c);
            }
            for (int j = 0; j < m; j++) {
                int last = i + 1 == b && j + 1 == m;
                if (spm_cols_add(&out, PyList_GET_ITEM(byte_ids, u[j]), s, last ? e : s) < 0) goto done;
            }
        }
    }
    ok = 1;
done:
    return spm_cols_done(&out, ok);
}

/* spm_unknown_values(text, ids, starts, ends, unk, values) -> values: `Unigram.token_values_columns`,
 * a copy of ``values`` where an unknown token with a non-empty span shows the text it covers
 * (``values`` itself when no token is unknown). */
static PyObject *py_spm_unknown_values(PyObject *self, PyObject *args) {
    PyObject *text, *ids, *starts, *ends, *values;
    long long unk;
    if (!PyArg_ParseTuple(args, "UO!O!O!LO!", &text, &PyList_Type, &ids, &PyList_Type, &starts, &PyList_Type, &ends,
                          &unk, &PyList_Type, &values))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(ids);
    if (spm_check_columns(ids, starts, ends, values, n) < 0) return NULL;
    PyObject *out = NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        long long v = PyLong_AsLongLong(PyList_GET_ITEM(ids, k));
        if (v == -1 && PyErr_Occurred()) goto fail;
        if (v != unk) continue;
        Py_ssize_t a = PyLong_AsSsize_t(PyList_GET_ITEM(starts, k)), b = PyLong_AsSsize_t(PyList_GET_ITEM(ends, k));
        if (PyErr_Occurred()) goto fail;
        if (b <= a) continue; /* an empty span keeps the unk piece */
        if (!out && !(out = PyList_GetSlice(values, 0, n))) return NULL;
        PyObject *piece = PyUnicode_Substring(text, a, b);
        if (!piece) goto fail;
        PyList_SetItem(out, k, piece); /* steals piece, drops the old value */
    }
    return out ? out : Py_NewRef(values);
fail:
    Py_XDECREF(out);
    return NULL;
}
/* ================================================================== end of SentencePiece */

/* ================================================================== the pipeline's columns */
/* Two functions of `Tokenizer` (tokviz/engine/tokenizer.py) in C: `emit` appends the tokens
 * of a block of chunks to the encode's output columns (the twin of `emit_columns`), `entry`
 * builds one chunk cache entry (the twin of `entry_of`, chunk_cache.py). A cache entry is a tuple whose slots
 * are the constants at the top of chunk_cache.py; the ENTRY_* numbers below are the same. */
enum { ENTRY_IDS, ENTRY_TOKENS, ENTRY_FIRST, ENTRY_STOP, ENTRY_LAST, ENTRY_MODEL_STARTS, ENTRY_MODEL_ENDS,
       ENTRY_EMPTIES, ENTRY_BYTE_PIECES, ENTRY_IRREGULAR, ENTRY_SLOTS };
/* How `emit` finds a token's bytes (the RULE_* constants of chunk_cache.py): the UTF-8 positions
 * of its char span; its chunk's first byte plus the model's span, in every chunk; the same in
 * the chunks flagged in ``holds`` (first bytes in ``bases``) and the char rule elsewhere. */
enum { RULE_CHARS, RULE_EXACT, RULE_HELD };

/* A read-only column of ints: an int64 buffer (array('q')), a list or tuple, or any sequence. */
typedef struct {
    Py_buffer view;
    int has_view;
    const int64_t *data;
    PyObject *obj;
    Py_ssize_t n;
} IntCol;

static int intcol_open(IntCol *c, PyObject *o) {
    memset(c, 0, sizeof(*c));
    c->obj = o;
    if (o == Py_None) return 0;
    if (PyObject_CheckBuffer(o)) {
        if (PyObject_GetBuffer(o, &c->view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return -1;
        c->has_view = 1;
        const char *f = c->view.format ? c->view.format : "B";
        if (c->view.itemsize == 8 && (strcmp(f, "q") == 0 || strcmp(f, "l") == 0)) {
            c->data = c->view.buf;
            c->n = c->view.len / 8;
            return 0;
        }
        PyBuffer_Release(&c->view);
        c->has_view = 0;
    }
    c->n = PySequence_Length(o);
    return c->n < 0 ? -1 : 0;
}

static void intcol_close(IntCol *c) {
    if (c->has_view) PyBuffer_Release(&c->view);
    c->has_view = 0;
}

/* Item ``i`` into ``*v``; an index outside the column is an IndexError (as in Python). */
static int intcol_get(const IntCol *c, Py_ssize_t i, int64_t *v) {
    if (i < 0 || i >= c->n) {
        PyErr_SetString(PyExc_IndexError, "emit: a position outside the alignment or UTF-8 table");
        return -1;
    }
    if (c->data) { *v = c->data[i]; return 0; }
    PyObject *x;
    if (PyList_CheckExact(c->obj)) x = Py_NewRef(PyList_GET_ITEM(c->obj, i));
    else if (PyTuple_CheckExact(c->obj)) x = Py_NewRef(PyTuple_GET_ITEM(c->obj, i));
    else if (!(x = PySequence_GetItem(c->obj, i))) return -1;
    *v = PyLong_AsLongLong(x);
    Py_DECREF(x);
    return *v == -1 && PyErr_Occurred() ? -1 : 0;
}

/* Item ``j`` of an entry slot (a tuple of ints). */
static inline int slot_int(PyObject *slot, Py_ssize_t j, int64_t *v) {
    *v = PyLong_AsLongLong(PyTuple_GET_ITEM(slot, j));
    return *v == -1 && PyErr_Occurred() ? -1 : 0;
}

/* The last end made by `span_of`: a token usually starts where the one before it ended (tokens
 * tile their chunk, chunks their piece), so that int object serves again (borrowed: the output
 * list holds it until `emit` returns). */
typedef struct { PyObject *obj; int64_t v; } LastEnd;

static PyObject *span_of(int64_t a, int64_t b, LastEnd *last) {
    PyObject *x = last->obj && last->v == a ? Py_NewRef(last->obj) : PyLong_FromLongLong(a);
    PyObject *y = PyLong_FromLongLong(b);
    if (!x || !y) { Py_XDECREF(x); Py_XDECREF(y); return NULL; }
    PyObject *t = PyTuple_New(2);
    if (!t) { Py_DECREF(x); Py_DECREF(y); return NULL; }
    PyTuple_SET_ITEM(t, 0, x);
    PyTuple_SET_ITEM(t, 1, y);
    last->obj = y;
    last->v = b;
    return t;
}

/* 0 when every entry is a tuple of ENTRY_SLOTS slots whose columns have one length per entry;
 * the total token count in ``*total``. */
static int check_entries(PyObject *entries, Py_ssize_t *total) {
    Py_ssize_t n = PyList_GET_SIZE(entries);
    *total = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *e = PyList_GET_ITEM(entries, k);
        if (!PyTuple_CheckExact(e) || PyTuple_GET_SIZE(e) != ENTRY_SLOTS) goto bad;
        PyObject *ids = PyTuple_GET_ITEM(e, ENTRY_IDS);
        if (!PyTuple_CheckExact(ids)) goto bad;
        Py_ssize_t m = PyTuple_GET_SIZE(ids);
        for (int s = ENTRY_TOKENS; s <= ENTRY_MODEL_ENDS; s++) {
            PyObject *col = PyTuple_GET_ITEM(e, s);
            if (!PyTuple_CheckExact(col) || PyTuple_GET_SIZE(col) != m) goto bad;
        }
        *total += m;
    }
    return 0;
bad:
    PyErr_SetString(PyExc_TypeError, "emit: a chunk cache entry without the tuple layout of chunk_cache.py");
    return -1;
}

/* Item ``i`` of a list grown with placeholders (see `emit`) becomes ``item`` (stolen). */
static inline void put(PyObject *list, Py_ssize_t i, PyObject *item) {
    PyObject *old = PyList_GET_ITEM(list, i);
    PyList_SET_ITEM(list, i, item);
    Py_DECREF(old);
}

/* emit(entries, starts, orig, p_starts, p_ends, u8, rule, bases, holds, word,
 *      ids, tokens, offsets, byte_offsets, word_ids) -> irregular chunk indexes.
 * The tokens of a block of chunks (their cache ``entries``, chunk k at piece char
 * ``starts[k]``) appended to the five output lists. A token's char span: piece chars
 * ``starts[k] + first .. starts[k] + stop`` shifted by ``orig`` when the piece's alignment is
 * the identity (``p_starts`` None), else ``p_starts[starts[k] + first]`` ..
 * ``p_ends[starts[k] + last]``. Its bytes follow ``rule``; ``u8`` maps a char position of the
 * original text to its byte position (None: ASCII, the same number; then the byte span is the
 * char span's very tuple under the char rule). Word id of chunk k: ``word + k``. Nothing is
 * appended when an error is raised. */
static PyObject *py_emit(PyObject *self, PyObject *args) {
    PyObject *entries, *starts, *p_starts_o, *p_ends_o, *u8_o, *bases_o, *holds, *o_ids, *o_toks, *o_offs, *o_bytes, *o_words;
    long long orig, word;
    int rule;
    if (!PyArg_ParseTuple(args, "O!O!LOOOiOOLO!O!O!O!O!", &PyList_Type, &entries, &PyList_Type, &starts, &orig,
                          &p_starts_o, &p_ends_o, &u8_o, &rule, &bases_o, &holds, &word, &PyList_Type, &o_ids,
                          &PyList_Type, &o_toks, &PyList_Type, &o_offs, &PyList_Type, &o_bytes, &PyList_Type, &o_words))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(entries), total;
    if (PyList_GET_SIZE(starts) != n) {
        PyErr_SetString(PyExc_ValueError, "emit: entries and starts differ in length");
        return NULL;
    }
    if (rule < RULE_CHARS || rule > RULE_HELD || (rule == RULE_HELD && (!PyList_Check(holds) || PyList_GET_SIZE(holds) != n))) {
        PyErr_SetString(PyExc_ValueError, "emit: a byte rule without its columns");
        return NULL;
    }
    if (check_entries(entries, &total) < 0) return NULL;
    int identity = p_starts_o == Py_None;
    IntCol ps = {0}, pe = {0}, u8 = {0}, bases = {0}; /* (a zeroed column closes as a no-op) */
    PyObject *fill = NULL, *irregular = NULL, *result = NULL;
    int grown = 0; /* output lists grown so far */
    if (intcol_open(&ps, p_starts_o) < 0) goto done;
    if (intcol_open(&pe, p_ends_o) < 0) goto done;
    if (intcol_open(&u8, u8_o) < 0) goto done;
    if (intcol_open(&bases, rule == RULE_HELD ? bases_o : Py_None) < 0) goto done;
    if (rule == RULE_HELD && bases.n != n) {
        PyErr_SetString(PyExc_ValueError, "emit: bases and entries differ in length");
        goto done;
    }
    int ascii = u8_o == Py_None;
    /* The five output lists grow once, by placeholders (one list of Nones), which the loop
     * replaces; on an error they shrink back to their old lengths. */
    PyObject *outs[5] = {o_ids, o_toks, o_offs, o_bytes, o_words};
    Py_ssize_t old_len[5];
    for (int c = 0; c < 5; c++) old_len[c] = PyList_GET_SIZE(outs[c]);
    if (!(irregular = PyList_New(0)) || !(fill = PyList_New(total))) goto done;
    for (Py_ssize_t i = 0; i < total; i++) PyList_SET_ITEM(fill, i, Py_NewRef(Py_None));
    for (int c = 0; c < 5; c++) {
        if (PyList_SetSlice(outs[c], old_len[c], old_len[c], fill) < 0) goto done;
        grown = c + 1;
    }
    Py_CLEAR(fill);
    Py_ssize_t at = 0;
    LastEnd char_end = {NULL, 0}, byte_end = {NULL, 0};
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *e = PyList_GET_ITEM(entries, k);
        PyObject *e_ids = PyTuple_GET_ITEM(e, ENTRY_IDS), *e_toks = PyTuple_GET_ITEM(e, ENTRY_TOKENS);
        PyObject *first = PyTuple_GET_ITEM(e, ENTRY_FIRST), *stop = PyTuple_GET_ITEM(e, ENTRY_STOP);
        PyObject *last = PyTuple_GET_ITEM(e, ENTRY_LAST);
        PyObject *m_starts = PyTuple_GET_ITEM(e, ENTRY_MODEL_STARTS), *m_ends = PyTuple_GET_ITEM(e, ENTRY_MODEL_ENDS);
        Py_ssize_t m = PyTuple_GET_SIZE(e_ids);
        int64_t s = PyLong_AsLongLong(PyList_GET_ITEM(starts, k));
        if (s == -1 && PyErr_Occurred()) goto done;
        /* the chunk's first byte, when its tokens' bytes are its own model spans */
        int own_bytes = rule == RULE_EXACT;
        int64_t base = 0;
        if (rule == RULE_HELD) {
            int h = PyObject_IsTrue(PyList_GET_ITEM(holds, k));
            if (h < 0) goto done;
            own_bytes = h;
            if (h && intcol_get(&bases, k, &base) < 0) goto done;
        } else if (own_bytes) {
            base = orig + s;
            if (!ascii && intcol_get(&u8, orig + s, &base) < 0) goto done;
        }
        PyObject *w = PyLong_FromLongLong(word + k);
        if (!w) goto done;
        for (Py_ssize_t j = 0; j < m; j++, at++) {
            int64_t f, cs, ce;
            if (slot_int(first, j, &f) < 0) { Py_DECREF(w); goto done; }
            if (identity) {
                int64_t t;
                if (slot_int(stop, j, &t) < 0) { Py_DECREF(w); goto done; }
                cs = orig + s + f;
                ce = orig + s + t;
            } else {
                int64_t l;
                if (slot_int(last, j, &l) < 0 || intcol_get(&ps, s + f, &cs) < 0 || intcol_get(&pe, s + l, &ce) < 0) {
                    Py_DECREF(w);
                    goto done;
                }
            }
            PyObject *span = span_of(cs, ce, &char_end), *bspan;
            if (!span) { Py_DECREF(w); goto done; }
            put(o_offs, old_len[2] + at, span);
            if (own_bytes) {
                int64_t bs, be;
                if (slot_int(m_starts, j, &bs) < 0 || slot_int(m_ends, j, &be) < 0) { Py_DECREF(w); goto done; }
                bspan = span_of(base + bs, base + be, &byte_end);
            } else if (ascii) {
                bspan = Py_NewRef(span);
            } else {
                int64_t bs, be;
                if (intcol_get(&u8, cs, &bs) < 0 || intcol_get(&u8, ce, &be) < 0) { Py_DECREF(w); goto done; }
                bspan = span_of(bs, be, &byte_end);
            }
            if (!bspan) { Py_DECREF(w); goto done; }
            put(o_bytes, old_len[3] + at, bspan);
            put(o_ids, old_len[0] + at, Py_NewRef(PyTuple_GET_ITEM(e_ids, j)));
            put(o_toks, old_len[1] + at, Py_NewRef(PyTuple_GET_ITEM(e_toks, j)));
            put(o_words, old_len[4] + at, Py_NewRef(w));
        }
        Py_DECREF(w);
        int irr = PyObject_IsTrue(PyTuple_GET_ITEM(e, ENTRY_IRREGULAR));
        if (irr < 0) goto done;
        if (irr) {
            PyObject *kk = PyLong_FromSsize_t(k);
            if (!kk || PyList_Append(irregular, kk) < 0) { Py_XDECREF(kk); goto done; }
            Py_DECREF(kk);
        }
    }
    result = Py_NewRef(irregular);
done:
    Py_XDECREF(fill);
    if (!result) /* (an error: the output lists as they were) */
        for (int c = 0; c < grown; c++) PyList_SetSlice(outs[c], old_len[c], PyList_GET_SIZE(outs[c]), NULL);
    Py_XDECREF(irregular);
    intcol_close(&bases);
    intcol_close(&u8);
    intcol_close(&pe);
    intcol_close(&ps);
    return result;
}

/* A tuple of the ints of a sequence made fast (a list or tuple). */
static PyObject *tuple_of_ints(PyObject *fast) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyLong_Check(x)) {
            Py_DECREF(t);
            PyErr_SetString(PyExc_TypeError, "entry: the columns hold ints");
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, Py_NewRef(x));
    }
    return t;
}

/* entry(ids, tokens, first, stop, model_starts, model_ends, maybe_empty, byte_pieces) -> entry:
 * `entry_of` of chunk_cache.py. The six columns are sequences of one length; a column given
 * twice (the same object) becomes one tuple. ``maybe_empty``: look for empty model spans (their
 * first/stop become 0/1: such tokens are redone, the column passes need valid indices only);
 * ``byte_pieces``: the set of byte-fallback piece strings. */
static PyObject *py_entry(PyObject *self, PyObject *args) {
    PyObject *arg[6], *col[6] = {NULL}, *pieces;
    int maybe_empty;
    if (!PyArg_ParseTuple(args, "OOOOOOpO!", &arg[0], &arg[1], &arg[2], &arg[3], &arg[4], &arg[5], &maybe_empty,
                          &PyFrozenSet_Type, &pieces))
        return NULL;
    PyObject *slot[ENTRY_SLOTS] = {NULL};
    PyObject *result = NULL, *empties = NULL, *byte_pieces = NULL;
    for (int c = 0; c < 6; c++)
        if (!(col[c] = PySequence_Fast(arg[c], "entry: the columns are sequences"))) goto done;
    PyObject *ids = col[0], *toks = col[1], *first = col[2], *stop = col[3], *ms = col[4], *me = col[5];
    Py_ssize_t m = PySequence_Fast_GET_SIZE(ids);
    for (int c = 1; c < 6; c++)
        if (PySequence_Fast_GET_SIZE(col[c]) != m) {
            PyErr_SetString(PyExc_ValueError, "entry: the columns differ in length");
            goto done;
        }
    empties = PyList_New(0);
    byte_pieces = PyList_New(0);
    if (!empties || !byte_pieces) goto done;
    for (Py_ssize_t j = 0; j < m; j++) {
        int eq = 0, has;
        if (maybe_empty &&
            (eq = PyObject_RichCompareBool(PySequence_Fast_GET_ITEM(ms, j), PySequence_Fast_GET_ITEM(me, j), Py_EQ)) < 0)
            goto done;
        if ((has = PySet_Contains(pieces, PySequence_Fast_GET_ITEM(toks, j))) < 0) goto done;
        PyObject *jj = eq || has ? PyLong_FromSsize_t(j) : NULL;
        if ((eq || has) && !jj) goto done;
        if ((eq && PyList_Append(empties, jj) < 0) || (has && PyList_Append(byte_pieces, jj) < 0)) { Py_DECREF(jj); goto done; }
        Py_XDECREF(jj);
    }
    Py_ssize_t n_empty = PyList_GET_SIZE(empties);
    if (!(slot[ENTRY_IDS] = tuple_of_ints(ids))) goto done;
    if (!(slot[ENTRY_TOKENS] = PySequence_Tuple(toks))) goto done;
    if (!(slot[ENTRY_MODEL_STARTS] = tuple_of_ints(ms))) goto done;
    slot[ENTRY_MODEL_ENDS] = arg[5] == arg[4] ? Py_NewRef(slot[ENTRY_MODEL_STARTS]) : tuple_of_ints(me);
    if (!slot[ENTRY_MODEL_ENDS]) goto done;
    if (n_empty) { /* fresh columns with 0/1 at the empty tokens */
        PyObject *zero = PyLong_FromLong(0), *one = PyLong_FromLong(1);
        slot[ENTRY_FIRST] = tuple_of_ints(first);
        slot[ENTRY_STOP] = tuple_of_ints(stop);
        if (!zero || !one || !slot[ENTRY_FIRST] || !slot[ENTRY_STOP]) { Py_XDECREF(zero); Py_XDECREF(one); goto done; }
        for (Py_ssize_t i = 0; i < n_empty; i++) {
            Py_ssize_t j = PyLong_AsSsize_t(PyList_GET_ITEM(empties, i));
            Py_SETREF(PyTuple_GET_ITEM(slot[ENTRY_FIRST], j), Py_NewRef(zero));
            Py_SETREF(PyTuple_GET_ITEM(slot[ENTRY_STOP], j), Py_NewRef(one));
        }
        Py_DECREF(zero); Py_DECREF(one);
    } else {
        slot[ENTRY_FIRST] = arg[2] == arg[4] ? Py_NewRef(slot[ENTRY_MODEL_STARTS]) : tuple_of_ints(first);
        if (!slot[ENTRY_FIRST]) goto done;
        slot[ENTRY_STOP] = arg[3] == arg[5] ? Py_NewRef(slot[ENTRY_MODEL_ENDS]) : tuple_of_ints(stop);
        if (!slot[ENTRY_STOP]) goto done;
    }
    /* the char each token ends in: stop - 1 */
    if (!(slot[ENTRY_LAST] = PyTuple_New(m))) goto done;
    for (Py_ssize_t j = 0; j < m; j++) {
        long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(slot[ENTRY_STOP], j));
        if (v == -1 && PyErr_Occurred()) goto done;
        PyObject *x = PyLong_FromLongLong(v - 1);
        if (!x) goto done;
        PyTuple_SET_ITEM(slot[ENTRY_LAST], j, x);
    }
    int irregular = n_empty || PyList_GET_SIZE(byte_pieces);
    if (!(slot[ENTRY_EMPTIES] = PyList_AsTuple(empties))) goto done;
    if (!(slot[ENTRY_BYTE_PIECES] = PyList_AsTuple(byte_pieces))) goto done;
    slot[ENTRY_IRREGULAR] = PyBool_FromLong(irregular);
    result = PyTuple_New(ENTRY_SLOTS);
    if (result)
        for (int s = 0; s < ENTRY_SLOTS; s++) { PyTuple_SET_ITEM(result, s, slot[s]); slot[s] = NULL; }
done:
    for (int s = 0; s < ENTRY_SLOTS; s++) Py_XDECREF(slot[s]);
    for (int c = 0; c < 6; c++) Py_XDECREF(col[c]);
    Py_XDECREF(empties); Py_XDECREF(byte_pieces);
    return result;
}

static PyObject *tuple_of(const int64_t *v, Py_ssize_t m, int64_t plus) {
    PyObject *t = PyTuple_New(m);
    if (!t) return NULL;
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *x = PyLong_FromLongLong(v[i] + plus);
        if (!x) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

/* bpe_utf8_entry(table, proxies, id_table, byte_pieces, fallback, text) -> entry: the cache
 * entry of a byte-level chunk given as its original text, `_mapped_entry` of tokenizer.py in
 * one call: `utf8_merge`, the token strings from ``id_table`` (id -> vocab string), the
 * byte-fallback pieces among them (``byte_pieces``); no token is empty. ``fallback(text)``
 * when a proxy is not a one-char token or an id has no string in the table. */
static PyObject *py_bpe_utf8_entry(PyObject *self, PyObject *args) {
    PyObject *cap, *proxies, *id_table, *pieces, *fallback, *text;
    if (!PyArg_ParseTuple(args, "OUO!O!OU", &cap, &proxies, &PyList_Type, &id_table, &PyFrozenSet_Type, &pieces,
                          &fallback, &text))
        return NULL;
    Bpe *b = PyCapsule_GetPointer(cap, "tokviz.bpe");
    if (!b) return NULL;
    Utf8Merge r;
    Utf8Scratch sc;
    int status = utf8_merge(b, text, proxies, &r, &sc);
    if (status) return status > 0 ? PyObject_CallOneArg(fallback, text) : NULL;
    PyObject *slot[ENTRY_SLOTS] = {NULL}, *result = NULL, *byte_pieces = PyList_New(0);
    Py_ssize_t m = r.m, vocab = PyList_GET_SIZE(id_table);
    int use_fallback = 0;
    if (!byte_pieces || !(slot[ENTRY_TOKENS] = PyTuple_New(m))) goto done;
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *tok = r.id[j] >= 0 && r.id[j] < vocab ? PyList_GET_ITEM(id_table, r.id[j]) : NULL;
        if (!tok || !PyUnicode_Check(tok)) { /* (cannot happen: merged ids are vocab ids) */
            use_fallback = 1;
            goto done;
        }
        PyTuple_SET_ITEM(slot[ENTRY_TOKENS], j, Py_NewRef(tok));
        int has = PySet_Contains(pieces, tok);
        if (has < 0) goto done;
        if (has) {
            PyObject *jj = PyLong_FromSsize_t(j);
            if (!jj || PyList_Append(byte_pieces, jj) < 0) { Py_XDECREF(jj); goto done; }
            Py_DECREF(jj);
        }
    }
    int ascii = r.chars == r.n;
    if (!(slot[ENTRY_IDS] = tuple_of(r.id, m, 0)) || !(slot[ENTRY_MODEL_STARTS] = tuple_of(r.bs, m, 0)) ||
        !(slot[ENTRY_MODEL_ENDS] = tuple_of(r.be, m, 0)))
        goto done;
    slot[ENTRY_FIRST] = ascii ? Py_NewRef(slot[ENTRY_MODEL_STARTS]) : tuple_of(r.cs, m, 0);
    slot[ENTRY_STOP] = ascii ? Py_NewRef(slot[ENTRY_MODEL_ENDS]) : tuple_of(r.ce, m, 0);
    slot[ENTRY_LAST] = tuple_of(ascii ? r.be : r.ce, m, -1);
    slot[ENTRY_EMPTIES] = PyTuple_New(0);
    if (!slot[ENTRY_FIRST] || !slot[ENTRY_STOP] || !slot[ENTRY_LAST] || !slot[ENTRY_EMPTIES]) goto done;
    if (!(slot[ENTRY_BYTE_PIECES] = PyList_AsTuple(byte_pieces))) goto done;
    slot[ENTRY_IRREGULAR] = PyBool_FromLong(PyList_GET_SIZE(byte_pieces) > 0);
    result = PyTuple_New(ENTRY_SLOTS);
    if (result)
        for (int s = 0; s < ENTRY_SLOTS; s++) { PyTuple_SET_ITEM(result, s, slot[s]); slot[s] = NULL; }
done:
    for (int s = 0; s < ENTRY_SLOTS; s++) Py_XDECREF(slot[s]);
    Py_XDECREF(byte_pieces);
    utf8_merge_free(&r);
    return use_fallback ? PyObject_CallOneArg(fallback, text) : result;
}

/* utf8_positions(text) -> bytes: the UTF-8 byte position of every char boundary of ``text``
 * (0..len, so len + 1 of them) as native int64s, the table of `OffsetMap.to_utf8`. A lone
 * surrogate counts 3 bytes, as the "surrogatepass" encoding of the Python twin. */
static PyObject *py_utf8_positions(PyObject *self, PyObject *args) {
    PyObject *text;
    if (!PyArg_ParseTuple(args, "U", &text)) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    PyObject *out = PyBytes_FromStringAndSize(NULL, (n + 1) * (Py_ssize_t)sizeof(int64_t));
    if (!out) return NULL;
    int64_t *pos = (int64_t *)PyBytes_AS_STRING(out);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    int64_t b = 0;
    /* (reads an immutable str, writes a bytes object no one else sees yet) */
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        pos[i] = b;
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        b += utf8_len(c);
    }
    pos[n] = b;
    Py_END_ALLOW_THREADS
    return out;
}
/* ================================================================== end of the pipeline's columns */

/* ------------------------------------------------------------------ module */
static PyMethodDef methods[] = {
    {"bpe_table", py_bpe_table, METH_VARARGS,
     "bpe_table(ranks, merged, vocab, ignore_merges) -> table (merges mode, from the model's dicts)"},
    {"bpe_rank_table", py_bpe_rank_table, METH_VARARGS,
     "bpe_rank_table(vocab) -> table (rank mode: a pair merges when its concatenation is a token)"},
    {"bpe_merge_text", py_bpe_merge_text, METH_VARARGS,
     "bpe_merge_text(table, text, columns=False) -> ((id, start, end), ...) | (ids, starts, ends) | None"},
    {"bpe_merge_utf8", py_bpe_merge_utf8, METH_VARARGS,
     "bpe_merge_utf8(table, text, proxies) -> (ids, byte starts, byte ends, char starts, char ends, n bytes) | None"},
    {"bpe_merge_ids", py_bpe_merge_ids, METH_VARARGS,
     "bpe_merge_ids(table, ids) -> ((id, first, end), ...) over initial symbol indexes"},
    {"unigram_trie", py_unigram_trie, METH_VARARGS, "unigram_trie(kids, node_score, node_id) -> trie"},
    {"unigram_viterbi", py_unigram_viterbi, METH_VARARGS,
     "unigram_viterbi(trie, text, start_score, unk_score, unk_id, f32[, merge_unk]) -> (ids, starts, ends, score) or None"},
    {"spm_normalizer", py_spm_normalizer, METH_VARARGS,
     "spm_normalizer(charsmap, user_defined, dummy_prefix, remove_ws, escape_ws, ws_suffix, budget) -> table | None"},
    {"spm_normalize", py_spm_normalize, METH_VARARGS,
     "spm_normalize(table, text, base) -> (normalized, norm_to_orig as int64 bytes) | None"},
    {"spm_bpe_table", py_spm_bpe_table, METH_VARARGS,
     "spm_bpe_table(strings, final_ids, scores, flags, user_defined, unk_id) -> table | None"},
    {"spm_bpe_encode", py_spm_bpe_encode, METH_VARARGS,
     "spm_bpe_encode(table, text) -> (ids, starts, ends) | None"},
    {"spm_merge_unknown", py_spm_merge_unknown, METH_VARARGS,
     "spm_merge_unknown(ids, starts, ends, unk) -> (ids, starts, ends) with unknown runs fused"},
    {"spm_byte_fallback", py_spm_byte_fallback, METH_VARARGS,
     "spm_byte_fallback(text, ids, starts, ends, unk, byte_ids) -> (ids, starts, ends) with unknowns as bytes"},
    {"spm_unknown_values", py_spm_unknown_values, METH_VARARGS,
     "spm_unknown_values(text, ids, starts, ends, unk, values) -> values with unknown tokens as their text"},
    {"emit", py_emit, METH_VARARGS,
     "emit(entries, starts, orig, p_starts, p_ends, u8, rule, bases, holds, word, ids, tokens, offsets, "
     "byte_offsets, word_ids) -> irregular chunk indexes (appends a block's tokens to the five lists)"},
    {"bpe_utf8_entry", py_bpe_utf8_entry, METH_VARARGS,
     "bpe_utf8_entry(table, proxies, id_table, byte_pieces, fallback, text) -> chunk cache entry of a byte-level chunk"},
    {"utf8_positions", py_utf8_positions, METH_VARARGS,
     "utf8_positions(text) -> bytes: the UTF-8 position of every char boundary as native int64s"},
    {"entry", py_entry, METH_VARARGS,
     "entry(ids, tokens, first, stop, model_starts, model_ends, maybe_empty, byte_pieces) -> chunk cache entry"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "tokviz.engine._native",
    "The optional native core: the BPE merge loop and the Unigram Viterbi (see _native.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
