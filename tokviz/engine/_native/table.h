/* The native core's one header: what its kernel families share (see module.c for the map).
 *
 * - the open-addressing hash table (64-bit keys, splitmix64 hash) every table type uses;
 * - small helpers (reading an int column, id and pair-key checks, the span hash, UTF-8 lengths);
 * - the BPE table and the byte-level merge result, shared by bpe.c and columns.c;
 * - the layout of the pipeline's chunk cache entries and byte rules (ENTRY_*, RULE_*), which
 *   tokviz/engine/chunk_cache.py mirrors as SLOT_* / RULE_* (checked at import: `layout`);
 * - the module's functions, one per Python name (module.c lists them).
 */
#ifndef TOKVIZ_NATIVE_TABLE_H
#define TOKVIZ_NATIVE_TABLE_H
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

static inline int table_init(Table *t, size_t expected) {
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

static inline void table_free(Table *t) {
    PyMem_RawFree(t->keys); PyMem_RawFree(t->vals);
    t->keys = NULL; t->vals = NULL;
}

/* Insert or overwrite (a later entry wins, as a Python dict built in order). The table is
 * sized for the expected count; it grows when it fills past half. */
static inline int table_put(Table *t, uint64_t key, int64_t val) {
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
static inline int read_ints(PyObject *seq, const char *what, int64_t **out, Py_ssize_t *n) {
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

static inline int check_id(int64_t v, const char *what) {
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

static inline uint64_t str_hash(int kind, const void *data, Py_ssize_t a, Py_ssize_t b) {
    uint64_t h = 0;
    for (Py_ssize_t i = a; i < b; i++) h = h * POLY + PyUnicode_READ(kind, data, i) + 1;
    return h;
}


static inline Py_ssize_t utf8_len(Py_UCS4 c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

/* ------------------------------------------------------------------ BPE tables (bpe.c) */
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
    Py_ssize_t longest; /* the longest token, in code points */
} Content;

int content_fill(Content *c, PyObject *vocab); /* (bpe.c) */

static inline void content_free(Content *c) {
    PyMem_RawFree(c->slots);
    PyMem_RawFree(c->arena);
    c->slots = NULL;
    c->arena = NULL;
}

/* A content hash as a table key (EMPTY marks a free slot). */
static inline uint64_t as_key(uint64_t h) { return h == EMPTY ? EMPTY - 1 : h; }

/* Does the arena run ``u`` (length first) hold exactly text[a:e]? */
static inline int same_chars(const uint32_t *u, int kind, const void *data, Py_ssize_t a, Py_ssize_t e) {
    if (u[0] != (uint32_t)(e - a)) return 0;
    if (kind == PyUnicode_4BYTE_KIND) return memcmp(u + 1, (const Py_UCS4 *)data + a, (size_t)(e - a) * 4) == 0;
    for (Py_ssize_t i = a; i < e; i++)
        if (u[1 + i - a] != PyUnicode_READ(kind, data, i)) return 0;
    return 1;
}

/* The id of the token equal to ``text[a:e]`` (content hash ``h``, `str_hash`), or -1. */
static inline int64_t find_span(const Content *c, uint64_t h, int kind, const void *data, Py_ssize_t a, Py_ssize_t e) {
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

typedef struct {
    int rank_mode;
    int whole;          /* ignore_merges: a chunk that is a token is that token */
    Table pairs;        /* merges mode: pair_key(left id, right id) -> rank << 32 | merged id */
    Table chars;        /* code point -> id of the one-char token */
    Content content;    /* rank mode or whole: the tokens by content */
    uint64_t *memo;     /* rank mode: recent pairs by id (see `pair_of`), or NULL */
    Table joins;        /* merges mode: the pairs of initial symbols a merge can join (see `fill_joins`);
                           keys NULL: no cut */
    int byte_fallback;  /* merges mode: a char that is no token becomes its bytes' pieces */
    int64_t bytes[256]; /* the id of the piece ``<0xNN>`` of every byte, -1 when it is no token */
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

int utf8_merge(const Bpe *b, PyObject *text, PyObject *proxies, Utf8Merge *r, Utf8Scratch *sc);
void utf8_merge_free(Utf8Merge *r);

/* The merge of a chunk the model sees as it is (merges or rank mode, no decorations): its chars'
 * one-char tokens or, with byte fallback, their bytes' pieces are the initial symbols. ``m``
 * tokens: ids and char spans (a byte piece spans its char), which `text_merge_free` releases. */
typedef struct {
    Py_ssize_t m;
    int64_t *id, *start, *end;
} TextMerge;

int text_merge(const Bpe *b, PyObject *text, TextMerge *r);
void text_merge_free(TextMerge *r);

/* ------------------------------------------------------------------ the pipeline's entries (columns.c) */
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
/* The layout of a `Block` (chunk_cache.py): BLOCK_* are its fields' positions. */
enum { BLOCK_STARTS, BLOCK_ORIG, BLOCK_P_STARTS, BLOCK_P_ENDS, BLOCK_U8, BLOCK_RULE, BLOCK_BASES, BLOCK_HOLDS,
       BLOCK_WORD, BLOCK_FIELDS };


/* ------------------------------------------------------------------ the module's functions */
PyObject *py_bpe_merge_ids(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_bpe_merge_text(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_bpe_merge_utf8(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_bpe_rank_table(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_bpe_table(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_bpe_text_entry(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_bpe_utf8_entry(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_emit(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_entry(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_spm_bpe_encode(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_spm_bpe_table(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_spm_byte_fallback(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_spm_merge_unknown(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_spm_normalize(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_spm_charsmap_check(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_spm_normalizer(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_spm_unknown_values(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_unigram_trie(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_unigram_viterbi(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_utf8_positions(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_wordpiece_table(PyObject *Py_UNUSED(self), PyObject *args);
PyObject *py_wordpiece_tokenize(PyObject *Py_UNUSED(self), PyObject *args);

#endif
