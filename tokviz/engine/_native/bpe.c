/* BPE: the pair tables and the merge loop (tokviz/engine/models/bpe.py). */
#include "table.h"

/* ------------------------------------------------------------------ BPE tables */

static void bpe_free(Bpe *b) {
    if (!b) return;
    table_free(&b->pairs);
    table_free(&b->chars);
    table_free(&b->joins);
    content_free(&b->content);
    PyMem_RawFree(b->memo);
    PyMem_RawFree(b);
}

static void bpe_destroy(PyObject *capsule) { bpe_free(PyCapsule_GetPointer(capsule, "tokviz.bpe")); }

static Bpe *bpe_new(int rank_mode, int whole, size_t pairs) {
    Bpe *b = PyMem_RawCalloc(1, sizeof(Bpe));
    if (!b) { PyErr_NoMemory(); return NULL; }
    b->rank_mode = rank_mode;
    b->whole = whole;
    for (int k = 0; k < 256; k++) b->bytes[k] = -1;
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

/* The ids of the byte-fallback pieces ``<0x00>`` .. ``<0xFF>`` (upper-case hex, as HF writes
 * them) into ``b->bytes``; a piece that is no token stays -1. */
static int fill_bytes(Bpe *b, PyObject *vocab) {
    b->byte_fallback = 1;
    for (int k = 0; k < 256; k++) {
        char piece[8];
        snprintf(piece, sizeof(piece), "<0x%02X>", k);
        PyObject *name = PyUnicode_FromString(piece);
        if (!name) return -1;
        PyObject *v = PyDict_GetItemWithError(vocab, name);
        Py_DECREF(name);
        if (!v) {
            if (PyErr_Occurred()) return -1;
            continue;
        }
        int64_t id = PyLong_AsLongLong(v);
        if ((id == -1 && PyErr_Occurred()) || check_id(id, "id") < 0) return -1;
        b->bytes[k] = id;
    }
    return 0;
}

/* The initial symbols a token can start with (``last``: end with), over-counted: the one-char
 * token of its first (last) char and, with byte fallback, the piece ``<0xNN>`` its first (last)
 * six chars spell. In a model without decorations a token is the concatenation of its initial
 * symbols (chars and byte pieces), so its first one is one of these. Their count (0..2). */
static int edge_symbols(const Bpe *b, PyObject *tok, int last, int64_t out[2]) {
    Py_ssize_t len = PyUnicode_GET_LENGTH(tok);
    int count = 0, kind = PyUnicode_KIND(tok);
    const void *data = PyUnicode_DATA(tok);
    if (!len) return 0;
    if (table_get(&b->chars, PyUnicode_READ(kind, data, last ? len - 1 : 0), &out[0])) count++;
    if (b->byte_fallback && len >= 6) {
        Py_ssize_t a = last ? len - 6 : 0;
        Py_UCS4 c[6];
        for (int k = 0; k < 6; k++) c[k] = PyUnicode_READ(kind, data, a + k);
        int hi = c[3] >= '0' && c[3] <= '9' ? (int)(c[3] - '0') : c[3] >= 'A' && c[3] <= 'F' ? (int)(c[3] - 'A' + 10) : -1;
        int lo = c[4] >= '0' && c[4] <= '9' ? (int)(c[4] - '0') : c[4] >= 'A' && c[4] <= 'F' ? (int)(c[4] - 'A' + 10) : -1;
        if (c[0] == '<' && c[1] == '0' && c[2] == 'x' && c[5] == '>' && hi >= 0 && lo >= 0 && b->bytes[hi * 16 + lo] >= 0)
            out[count++] = b->bytes[hi * 16 + lo];
    }
    return count;
}

/* The pairs of adjacent initial symbols some merge joins: (a, b) for every merge (left, right),
 * a an initial symbol left can end with, b one right can start with (`edge_symbols`). Two
 * neighbouring initial symbols not in this set are never inside one token: no merge crosses
 * between them, so a chunk cut there merges part by part to the same tokens (`merge_cut`).
 * Only for a model whose every merged string is its two parts joined (no decorations);
 * otherwise ``joins`` stays empty and nothing is cut. */
static int fill_joins(Bpe *b, PyObject *ranks, PyObject *merged) {
    PyObject *pair, *rank;
    Py_ssize_t pos = 0;
    while (PyDict_Next(ranks, &pos, &pair, &rank)) {
        PyObject *l = PyTuple_GET_ITEM(pair, 0), *r = PyTuple_GET_ITEM(pair, 1), *new = PyDict_GetItem(merged, pair);
        if (!PyUnicode_Check(l) || !PyUnicode_Check(r) || !new || !PyUnicode_Check(new) ||
            PyUnicode_GET_LENGTH(new) != PyUnicode_GET_LENGTH(l) + PyUnicode_GET_LENGTH(r) ||
            PyUnicode_Tailmatch(new, l, 0, PY_SSIZE_T_MAX, -1) != 1 || PyUnicode_Tailmatch(new, r, 0, PY_SSIZE_T_MAX, 1) != 1) {
            PyErr_Clear();
            table_free(&b->joins); /* a decorated merge: no cut */
            return 0;
        }
        int64_t lasts[2], firsts[2];
        int nl = edge_symbols(b, l, 1, lasts), nf = edge_symbols(b, r, 0, firsts);
        for (int x = 0; x < nl; x++)
            for (int y = 0; y < nf; y++)
                if (table_put(&b->joins, pair_key(lasts[x], firsts[y]), 0) < 0) return -1;
    }
    return 0;
}

/* bpe_table(ranks, merged, vocab, ignore_merges, byte_fallback=False): merges mode, from the
 * model's own dicts ``{(left, right): rank}``, ``{(left, right): merged string}`` and ``{token:
 * id}``. ``byte_fallback``: a char that is no token becomes the pieces of its UTF-8 bytes. */
PyObject *py_bpe_table(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *ranks, *merged, *vocab;
    int whole, byte_fallback = 0;
    if (!PyArg_ParseTuple(args, "O!O!O!p|p", &PyDict_Type, &ranks, &PyDict_Type, &merged, &PyDict_Type, &vocab,
                          &whole, &byte_fallback))
        return NULL;
    Bpe *b = bpe_new(0, whole, (size_t)PyDict_GET_SIZE(ranks));
    if (!b) return NULL;
    if (byte_fallback && fill_bytes(b, vocab) < 0) goto fail;
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
    if (fill_chars(b, vocab) < 0 || (whole && content_fill(&b->content, vocab) < 0)) goto fail;
    if (table_init(&b->joins, (size_t)PyDict_GET_SIZE(ranks)) < 0 || fill_joins(b, ranks, merged) < 0) goto fail;
    return bpe_capsule(b);
fail:
    bpe_free(b);
    return NULL;
}

#define FILL_AHEAD 16

/* Every token of ``vocab`` (``{str: id}``) into the content table ``c``; ``c->longest``: the
 * longest token's length. */
int content_fill(Content *c, PyObject *vocab) {
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
    c->longest = 0;
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
        c->longest = len > c->longest ? len : c->longest;
        off += 1 + (size_t)len;
    }
    for (size_t j = k > FILL_AHEAD ? k - FILL_AHEAD : 0; j < k; j++) content_put(c, ahead[j % FILL_AHEAD]);
    return 0;
}

/* bpe_rank_table(vocab): rank mode (tiktoken), from ``{token: rank}``. Two adjacent parts merge
 * when their concatenation is a token, with its rank: looked up by content, as tiktoken does.
 * A chunk that is itself a token is that token (``ignore_merges``, as encode_ordinary). */
PyObject *py_bpe_rank_table(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *vocab;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &vocab)) return NULL;
    Bpe *b = bpe_new(1, 1, 0);
    if (!b) return NULL;
    if (content_fill(&b->content, vocab) < 0 || fill_chars(b, vocab) < 0) {
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
    int64_t r = find_span(&run->b->content, h, run->kind, run->data, s, e);
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

/* The merged symbols as (id, first, end) triples over initial symbol indexes: ``ids``/``firsts``
 * hold m symbols; the last one ends at n. */
static PyObject *pack(const int64_t *ids, const int64_t *firsts, Py_ssize_t m, Py_ssize_t n) {
    PyObject *out = PyTuple_New(m);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *t = triple(ids[i], firsts[i], i + 1 < m ? firsts[i + 1] : n);
        if (!t) { Py_DECREF(out); return NULL; }
        PyTuple_SET_ITEM(out, i, t);
    }
    return out;
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

/* The parts of one long chunk already merged (`merge_cut`): a document repeats its words, and
 * a part merges the same way wherever it stands. A slot holds a part's hash (of its ids) and
 * where the part is in the arena: its ``len`` ids, then its merged count k, k ids and k firsts.
 * The ids are compared on a hash match, so a collision costs a merge, never a wrong result.
 * Local to one call (threads share nothing) and bounded: once full, parts are merged and not
 * kept. */
typedef struct { uint64_t key; uint32_t off, len; } PartSlot;
typedef struct {
    PartSlot *slots;
    size_t mask, count;
    int64_t *arena;
    size_t used, cap;
} Parts;

#define PARTS_MIN_SYMBOLS 4096 /* chunks this long get a memo (shorter ones: the pipeline's cache) */
#define PARTS_MAX ((size_t)1 << 14)

static int parts_init(Parts *p, Py_ssize_t n) {
    size_t want = (size_t)n / 4 < PARTS_MAX ? (size_t)n / 4 : PARTS_MAX, cap = 16;
    while (cap < want * 2) cap <<= 1;
    p->slots = PyMem_RawMalloc(cap * sizeof(PartSlot));
    p->cap = (size_t)n < 8 * PARTS_MAX ? (size_t)n : 8 * PARTS_MAX; /* (the arena: parts up to 1/3 of this) */
    p->arena = PyMem_RawMalloc(p->cap * sizeof(int64_t));
    if (!p->slots || !p->arena) {
        PyMem_RawFree(p->slots);
        PyMem_RawFree(p->arena);
        return -1;
    }
    memset(p->slots, 0xff, cap * sizeof(PartSlot));
    p->mask = cap - 1;
    p->count = p->used = 0;
    return 0;
}

static void parts_free(Parts *p) {
    PyMem_RawFree(p->slots);
    PyMem_RawFree(p->arena);
}

/* The stored result of the part ``ids`` (hash ``h``): a pointer to its count k, then k ids and
 * k firsts; NULL when it is not stored. */
static const int64_t *parts_find(const Parts *p, uint64_t h, const int64_t *ids, Py_ssize_t len) {
    for (size_t s = mix(h) & p->mask;; s = (s + 1) & p->mask) {
        const PartSlot *x = &p->slots[s];
        if (x->key == EMPTY) return NULL;
        if (x->key == h && x->len == (uint32_t)len && memcmp(p->arena + x->off, ids, (size_t)len * sizeof(int64_t)) == 0)
            return p->arena + x->off + len;
    }
}

/* Keep the part ``ids`` (hash ``h``), before it is merged: where its result goes (see
 * `parts_find`), or NULL when the memo is full. */
static int64_t *parts_add(Parts *p, uint64_t h, const int64_t *ids, Py_ssize_t len) {
    size_t need = 3 * (size_t)len + 1;
    if (p->used + need > p->cap || (p->count + 1) * 2 > p->mask + 1) return NULL;
    int64_t *at = p->arena + p->used;
    memcpy(at, ids, (size_t)len * sizeof(int64_t));
    size_t s = mix(h) & p->mask;
    while (p->slots[s].key != EMPTY) s = (s + 1) & p->mask;
    p->slots[s] = (PartSlot){h, (uint32_t)p->used, (uint32_t)len};
    p->used += need;
    p->count++;
    return at + len;
}

/* Merge the part ``sid`` of ``len`` symbols in place (``sf``: each result's first initial
 * symbol in the part; ``flat``: FLAT_LIMIT words for a flat scan, a longer part allocates its
 * heap's): its merged count, or -1 (no memory). */
static Py_ssize_t merge_part(const Run *run, int64_t *sid, int64_t *sf, int64_t *flat, Py_ssize_t len) {
    Py_ssize_t k = 0;
    if (len <= FLAT_LIMIT) {
        for (Py_ssize_t j = 0; j < len; j++) sf[j] = j;
        return len > 1 ? merge_flat(run, sid, sf, flat, len) : 1;
    }
    int64_t *work = PyMem_RawMalloc((size_t)(3 * len) * sizeof(int64_t));
    if (!work || merge_heap(run, sid, work, work + len, work + 2 * len, len) < 0) {
        PyMem_RawFree(work);
        return -1;
    }
    for (int64_t t = 0; t >= 0; t = work[len + t], k++) { /* the survivors, linked from 0 */
        sid[k] = sid[t];
        sf[k] = t;
    }
    PyMem_RawFree(work);
    return k;
}

/* `merge_run` of a text's initial symbols (one-char tokens and byte pieces): cut between every
 * two neighbours that no merge joins (`fill_joins`), each part merged alone (`merge_part`, or
 * its result taken from the memo of a long chunk's parts, `Parts`), the parts' results put
 * together. Exact: no pair across a cut ever merges, and the lowest-rank-leftmost rule picks,
 * within each part, the merges it would pick on the whole. */
static Py_ssize_t merge_cut(const Run *run, int64_t *id, int64_t *firsts, Py_ssize_t n) {
    int64_t flat[FLAT_LIMIT];
    Parts parts, *memo = n >= PARTS_MIN_SYMBOLS && parts_init(&parts, n) == 0 ? &parts : NULL;
    const Table *joins = &run->b->joins;
    Py_ssize_t m = 0, s = 0;
    uint64_t h = (uint64_t)id[0] + 1; /* the hash of the part so far, id[s..i) */
    Py_BEGIN_ALLOW_THREADS /* (merges mode: only this module's memory is read) */
    for (Py_ssize_t i = 1; i <= n; i++) {
        int64_t v;
        if (i < n && table_get(joins, pair_key(id[i - 1], id[i]), &v)) {
            h = h * POLY + (uint64_t)id[i] + 1;
            continue;
        }
        Py_ssize_t len = i - s, k;
        int64_t *sid = id + s, *sf = firsts + s;
        const int64_t *hit = memo && len > 1 ? parts_find(memo, as_key(h), sid, len) : NULL;
        if (hit) {
            k = hit[0];
            memcpy(sid, hit + 1, (size_t)k * sizeof(int64_t));
            memcpy(sf, hit + 1 + k, (size_t)k * sizeof(int64_t));
        } else {
            int64_t *keep = memo && len > 1 && len <= FLAT_LIMIT ? parts_add(memo, as_key(h), sid, len) : NULL;
            k = merge_part(run, sid, sf, flat, len);
            if (keep && k >= 0) {
                keep[0] = k;
                memcpy(keep + 1, sid, (size_t)k * sizeof(int64_t));
                memcpy(keep + 1 + k, sf, (size_t)k * sizeof(int64_t));
            }
        }
        if (k < 0) {
            m = -1;
            break;
        }
        for (Py_ssize_t j = 0; j < k; j++) {
            id[m + j] = sid[j];
            firsts[m + j] = sf[j] + s;
        }
        m += k;
        s = i;
        if (i < n) h = (uint64_t)id[i] + 1;
    }
    Py_END_ALLOW_THREADS
    if (memo) parts_free(memo);
    return m;
}

/* The whole chunk's id when ``ignore_merges`` applies and it is a token, else -1. */
static int64_t whole_token(const Run *run, Py_ssize_t n) {
    if (!run->b->whole || n == 0) return -1;
    uint64_t h = run->pre ? run->pre[n] : str_hash(run->kind, run->data, 0, n);
    return find_span(&run->b->content, h, run->kind, run->data, 0, n);
}

/* Merge n symbols (``id`` initial ids given by the caller, which may hold the unk token or
 * decorated symbols: never cut) and pack the result as (id, first, end) triples over initial
 * symbol indexes (see `pack`). */
static PyObject *merge_and_pack(const Run *run, int64_t *id, Py_ssize_t n) {
    if (n >= ((Py_ssize_t)1 << 31)) {
        PyErr_SetString(PyExc_OverflowError, "a chunk of 2**31 symbols or more");
        return NULL;
    }
    if (n == 0) return pack(id, id, 0, 0);
    int64_t *firsts = PyMem_RawMalloc((size_t)n * sizeof(int64_t));
    if (!firsts) return PyErr_NoMemory();
    Py_ssize_t m = merge_run(run, id, firsts, n);
    PyObject *out = m < 0 ? PyErr_NoMemory() : pack(id, firsts, m, n);
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

/* The UTF-8 bytes of ``c`` (not a surrogate) into ``u``; their count. */
static inline int utf8_of(Py_UCS4 c, unsigned char *u) {
    if (c < 0x80) { u[0] = (unsigned char)c; return 1; }
    if (c < 0x800) { u[0] = (unsigned char)(0xC0 | c >> 6); u[1] = (unsigned char)(0x80 | (c & 0x3F)); return 2; }
    if (c < 0x10000) {
        u[0] = (unsigned char)(0xE0 | c >> 12);
        u[1] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
        u[2] = (unsigned char)(0x80 | (c & 0x3F));
        return 3;
    }
    u[0] = (unsigned char)(0xF0 | c >> 18);
    u[1] = (unsigned char)(0x80 | (c >> 12 & 0x3F));
    u[2] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
    u[3] = (unsigned char)(0x80 | (c & 0x3F));
    return 4;
}

/* The initial symbols of a chunk, as HF's ``merge_word`` makes them for an undecorated
 * model: each char's one-char token or, with byte fallback, the pieces ``<0xNN>`` of its UTF-8
 * bytes, each spanning the char. ``char_of``: the char of every symbol, NULL while every char
 * is one symbol. */
typedef struct { int64_t *id, *char_of; Py_ssize_t n, cap; } Syms;

static void syms_free(Syms *s) {
    PyMem_RawFree(s->id);
    PyMem_RawFree(s->char_of);
}

/* Room for ``more`` symbols after the n there are: 0, or -1 (no memory). */
static int syms_reserve(Syms *s, Py_ssize_t more) {
    if (s->n + more <= s->cap) return 0;
    Py_ssize_t cap = s->cap * 2 > s->n + more ? s->cap * 2 : s->n + more;
    int64_t *id = PyMem_RawRealloc(s->id, (size_t)cap * sizeof(int64_t));
    if (!id) return -1;
    s->id = id;
    if (s->char_of) {
        int64_t *co = PyMem_RawRealloc(s->char_of, (size_t)cap * sizeof(int64_t));
        if (!co) return -1;
        s->char_of = co;
    }
    s->cap = cap;
    return 0;
}

/* 0: done; 1: a char is no token and its bytes are not all pieces that are (the unk token or
 * a dropped char: the Python kernel's rules); -1: no memory (an exception set). */
static int initial_syms(const Bpe *b, int kind, const void *data, Py_ssize_t n, Syms *s) {
    *s = (Syms){PyMem_RawMalloc((size_t)(n + 1) * sizeof(int64_t)), NULL, 0, n + 1};
    if (!s->id) goto nomem;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        int64_t v;
        if (table_get(&b->chars, c, &v)) {
            if (s->char_of) s->char_of[s->n] = i;
            s->id[s->n++] = v;
            continue;
        }
        if (!b->byte_fallback || (c >= 0xD800 && c <= 0xDFFF)) return 1;
        unsigned char u[4];
        int k = utf8_of(c, u);
        for (int j = 0; j < k; j++)
            if (b->bytes[u[j]] < 0) return 1;
        /* (room for the rest of the chunk at one symbol a char, plus these pieces) */
        if (syms_reserve(s, n - i + k) < 0) goto nomem;
        if (!s->char_of) {
            if (!(s->char_of = PyMem_RawMalloc((size_t)s->cap * sizeof(int64_t)))) goto nomem;
            for (Py_ssize_t j = 0; j < s->n; j++) s->char_of[j] = j;
        }
        for (int j = 0; j < k; j++) {
            s->char_of[s->n] = i;
            s->id[s->n++] = b->bytes[u[j]];
        }
    }
    return 0;
nomem:
    PyErr_NoMemory();
    return -1;
}

/* 0: done (free r->id); 1: a char is neither a token nor made of byte pieces that are
 * tokens; -1: an error. */
int text_merge(const Bpe *b, PyObject *text, TextMerge *r) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Run run = {b, PyUnicode_KIND(text), PyUnicode_DATA(text), NULL, NULL};
    memset(r, 0, sizeof(*r));
    Syms syms;
    int status = initial_syms(b, run.kind, run.data, n, &syms);
    if (status == 0 && syms.n >= ((Py_ssize_t)1 << 31)) {
        PyErr_SetString(PyExc_OverflowError, "a chunk of 2**31 symbols or more");
        status = -1;
    }
    if (status == 0 && b->rank_mode && run_hashes(&run, n) < 0) status = -1;
    Py_ssize_t k = syms.n;
    int64_t *firsts = status == 0 ? PyMem_RawMalloc((size_t)(k + 1) * 2 * sizeof(int64_t)) : NULL;
    if (status == 0 && !firsts) {
        PyErr_NoMemory();
        status = -1;
    }
    if (status == 0) {
        int64_t whole = whole_token(&run, n), *id = syms.id, m;
        if (whole >= 0 || k == 0) {
            m = k ? 1 : 0;
            id[0] = whole;
            firsts[0] = 0;
        } else {
            /* (a short chunk is one flat scan; cutting pays on long ones) */
            m = b->joins.keys && k > FLAT_LIMIT ? merge_cut(&run, id, firsts, k) : merge_run(&run, id, firsts, k);
        }
        if (m < 0) {
            PyErr_NoMemory();
            status = -1;
        } else {
            /* the columns: the ids where the merge left them, char starts after ``firsts``,
             * whose place each token's char end takes */
            const int64_t *co = whole >= 0 ? NULL : syms.char_of;
            int64_t *o_s = firsts + (k + 1);
            for (Py_ssize_t i = 0; i < m; i++) {
                Py_ssize_t last = (i + 1 < m ? firsts[i + 1] : (whole >= 0 ? 1 : k)) - 1; /* its last initial symbol */
                o_s[i] = co ? co[firsts[i]] : firsts[i];
                firsts[i] = whole >= 0 ? n : co ? co[last] + 1 : last + 1;
            }
            *r = (TextMerge){m, id, o_s, firsts};
            syms.id = NULL; /* (now r's) */
        }
    }
    if (status != 0) PyMem_RawFree(firsts);
    PyMem_RawFree(run.pre);
    syms_free(&syms);
    return status;
}

void text_merge_free(TextMerge *r) {
    PyMem_RawFree(r->id);
    PyMem_RawFree(r->end); /* (ends, then starts: one block) */
    memset(r, 0, sizeof(*r));
}

/* bpe_merge_text(table, text, columns=False): the tokens of a chunk whose every char is a
 * one-char token or, with byte fallback, falls back to byte pieces that are tokens, as (id,
 * start, end) char spans (or three lists: ids, starts, ends); None when some char is neither. */
PyObject *py_bpe_merge_text(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *cap, *text;
    int columns = 0;
    if (!PyArg_ParseTuple(args, "OU|p", &cap, &text, &columns)) return NULL;
    Bpe *b = PyCapsule_GetPointer(cap, "tokviz.bpe");
    if (!b) return NULL;
    TextMerge r;
    int status = text_merge(b, text, &r);
    if (status) return status > 0 ? Py_NewRef(Py_None) : NULL;
    PyObject *out = NULL;
    if (!columns) {
        out = PyTuple_New(r.m);
        for (Py_ssize_t i = 0; out && i < r.m; i++) {
            PyObject *t = triple(r.id[i], r.start[i], r.end[i]);
            if (!t) Py_CLEAR(out);
            else PyTuple_SET_ITEM(out, i, t);
        }
    } else {
        PyObject *a = list_of(r.id, r.m), *s = list_of(r.start, r.m), *e = list_of(r.end, r.m);
        if (a && s && e) out = PyTuple_Pack(3, a, s, e);
        Py_XDECREF(a); Py_XDECREF(s); Py_XDECREF(e);
    }
    text_merge_free(&r);
    return out;
}

void utf8_merge_free(Utf8Merge *r) {
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
int utf8_merge(const Bpe *b, PyObject *text, PyObject *proxies, Utf8Merge *r, Utf8Scratch *sc) {
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
PyObject *py_bpe_merge_utf8(PyObject *Py_UNUSED(self), PyObject *args) {
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
PyObject *py_bpe_merge_ids(PyObject *Py_UNUSED(self), PyObject *args) {
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
    PyObject *out = merge_and_pack(&run, id, n);
    PyMem_RawFree(id);
    return out;
}
