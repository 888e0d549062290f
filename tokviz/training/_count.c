/* tokviz.training._count: BPE training's pair queue in C (optional; the pure-Python twin is
 * tokviz.training.merges.PyPairQueue, and a test checks both give the same merges).
 *
 * PairQueue(words, counts, sym_len, max_len) keeps:
 *   - every corpus word as symbol ids (one flat int32 buffer; words only shrink),
 *   - the count of every adjacent pair (an open-addressing table keyed by left << 32 | right),
 *   - a binary heap of entries (count, left, right, seq, word set): the highest count first,
 *     then the smaller left id, the smaller right id, the older entry. An entry's word set is
 *     where the pair was seen when the entry was pushed (sorted word indices).
 * pop() returns the next entry whose count is current (a stale one is pushed back with the
 * current count and its old words: HF's lazy invalidation); merge(a, b, new_id) applies the
 * merge to that entry's words with exactly the neighbour-pair changes of HF's Word::merge
 * (the merged pair's own count is never decremented) and pushes one entry per pair it
 * created. See tokviz/training/bpe.py for the rules and why.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ word sets */
typedef struct {
    Py_ssize_t n, cap;
    int32_t *v;
} IdSet;

static IdSet *set_new(void) {
    IdSet *s = (IdSet *)calloc(1, sizeof(IdSet));
    return s;
}

static int set_add(IdSet *s, int32_t wi) { /* words come in increasing order: sorted, unique */
    if (s->n && s->v[s->n - 1] == wi) return 0;
    if (s->n == s->cap) {
        Py_ssize_t cap = s->cap ? 2 * s->cap : 4;
        int32_t *v = (int32_t *)realloc(s->v, (size_t)cap * sizeof(int32_t));
        if (!v) return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = wi;
    return 0;
}

static void set_free(IdSet *s) {
    if (s) {
        free(s->v);
        free(s);
    }
}

/* ------------------------------------------------------------------ pair -> value tables */
#define EMPTY UINT64_MAX

static inline uint64_t key_of(int32_t a, int32_t b) { return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b; }

static inline size_t hash_key(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k;
}

typedef struct { /* pair -> int64 count */
    uint64_t *keys;
    int64_t *vals;
    size_t cap, n;
} Counts;

static int counts_init(Counts *t, size_t cap) {
    t->cap = cap;
    t->n = 0;
    t->keys = (uint64_t *)malloc(cap * sizeof(uint64_t));
    t->vals = (int64_t *)calloc(cap, sizeof(int64_t));
    if (!t->keys || !t->vals) return -1;
    memset(t->keys, 0xff, cap * sizeof(uint64_t));
    return 0;
}

static int64_t *counts_slot(Counts *t, uint64_t k); /* creates (0) when missing; NULL: no memory */

static int counts_grow(Counts *t) {
    Counts bigger;
    if (counts_init(&bigger, t->cap * 2) < 0) return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->keys[i] != EMPTY) *counts_slot(&bigger, t->keys[i]) = t->vals[i];
    free(t->keys);
    free(t->vals);
    *t = bigger;
    return 0;
}

static int64_t *counts_slot(Counts *t, uint64_t k) {
    if (2 * (t->n + 1) > t->cap && counts_grow(t) < 0) return NULL;
    size_t mask = t->cap - 1, i = hash_key(k) & mask;
    while (t->keys[i] != EMPTY && t->keys[i] != k) i = (i + 1) & mask;
    if (t->keys[i] == EMPTY) {
        t->keys[i] = k;
        t->vals[i] = 0;
        t->n++;
    }
    return &t->vals[i];
}

static int64_t counts_get(const Counts *t, uint64_t k) {
    size_t mask = t->cap - 1, i = hash_key(k) & mask;
    while (t->keys[i] != EMPTY) {
        if (t->keys[i] == k) return t->vals[i];
        i = (i + 1) & mask;
    }
    return 0;
}

typedef struct { /* pair -> its new word set, for one merge (or the initial count) */
    uint64_t *keys;
    IdSet **sets;
    size_t cap, n;
    uint64_t *order; /* keys in insertion order */
} Where;

static int where_init(Where *w, size_t cap) {
    w->cap = cap;
    w->n = 0;
    w->keys = (uint64_t *)malloc(cap * sizeof(uint64_t));
    w->sets = (IdSet **)calloc(cap, sizeof(IdSet *));
    w->order = (uint64_t *)malloc(cap * sizeof(uint64_t));
    if (!w->keys || !w->sets || !w->order) return -1;
    memset(w->keys, 0xff, cap * sizeof(uint64_t));
    return 0;
}

static void where_free(Where *w) {
    free(w->keys);
    free(w->sets);
    free(w->order);
}

static IdSet **where_slot(Where *w, uint64_t k);

static int where_grow(Where *w) {
    Where bigger;
    if (where_init(&bigger, w->cap * 2) < 0) return -1;
    for (size_t j = 0; j < w->n; j++) {
        uint64_t k = w->order[j];
        size_t mask = w->cap - 1, i = hash_key(k) & mask;
        while (w->keys[i] != k) i = (i + 1) & mask;
        *where_slot(&bigger, k) = w->sets[i];
    }
    where_free(w);
    *w = bigger;
    return 0;
}

static IdSet **where_slot(Where *w, uint64_t k) {
    if (2 * (w->n + 1) > w->cap && where_grow(w) < 0) return NULL;
    size_t mask = w->cap - 1, i = hash_key(k) & mask;
    while (w->keys[i] != EMPTY && w->keys[i] != k) i = (i + 1) & mask;
    if (w->keys[i] == EMPTY) {
        w->keys[i] = k;
        w->sets[i] = NULL;
        w->order[w->n++] = k;
    }
    return &w->sets[i];
}

static IdSet *where_take(Where *w, uint64_t k) { /* the set of k (the table forgets nothing) */
    size_t mask = w->cap - 1, i = hash_key(k) & mask;
    while (w->keys[i] != k) i = (i + 1) & mask;
    return w->sets[i];
}

static void where_clear(Where *w) { /* emptied by the keys used, not by the whole table */
    for (size_t j = 0; j < w->n; j++) {
        uint64_t k = w->order[j];
        size_t mask = w->cap - 1, i = hash_key(k) & mask;
        while (w->keys[i] != k) i = (i + 1) & mask;
        w->keys[i] = EMPTY;
        w->sets[i] = NULL;
    }
    w->n = 0; /* every occupied slot was one of these keys: the table is empty again */
}

/* ------------------------------------------------------------------ the heap */
typedef struct {
    int64_t count;
    int32_t a, b;
    int64_t seq;
    IdSet *set;
} Entry;

static inline int entry_less(const Entry *x, const Entry *y) {
    if (x->count != y->count) return x->count > y->count;
    if (x->a != y->a) return x->a < y->a;
    if (x->b != y->b) return x->b < y->b;
    return x->seq < y->seq;
}

typedef struct {
    Entry *v;
    Py_ssize_t n, cap;
} Heap;

static void heap_sift_down(Heap *h, Py_ssize_t i) {
    Entry e = h->v[i];
    for (;;) {
        Py_ssize_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && entry_less(&h->v[c + 1], &h->v[c])) c++;
        if (!entry_less(&h->v[c], &e)) break;
        h->v[i] = h->v[c];
        i = c;
    }
    h->v[i] = e;
}

static int heap_push(Heap *h, Entry e) {
    if (h->n == h->cap) {
        Py_ssize_t cap = h->cap ? 2 * h->cap : 1024;
        Entry *v = (Entry *)realloc(h->v, (size_t)cap * sizeof(Entry));
        if (!v) return -1;
        h->v = v;
        h->cap = cap;
    }
    Py_ssize_t i = h->n++;
    while (i > 0) {
        Py_ssize_t p = (i - 1) / 2;
        if (!entry_less(&e, &h->v[p])) break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = e;
    return 0;
}

static Entry heap_pop(Heap *h) {
    Entry top = h->v[0];
    h->v[0] = h->v[--h->n];
    if (h->n) heap_sift_down(h, 0);
    return top;
}

/* ------------------------------------------------------------------ the object */
typedef struct {
    PyObject_HEAD
    int32_t *buf;     /* every word's symbols, word k at buf + off[k] */
    int64_t *off;
    int32_t *len;
    int64_t *counts;
    Py_ssize_t n_words;
    int64_t *sym_len; /* base symbols per id */
    Py_ssize_t n_sym;
    int64_t max_len;  /* -1: no limit */
    int64_t seq;
    Counts pc;
    Where where;
    Heap heap;
    IdSet *current;
    size_t distinct;  /* pairs counted before any merge */
} PairQueue;

static int grow_sym(PairQueue *q, Py_ssize_t need) {
    if (need <= q->n_sym) return 0;
    Py_ssize_t cap = q->n_sym ? q->n_sym : 256;
    while (cap < need) cap *= 2;
    int64_t *v = (int64_t *)realloc(q->sym_len, (size_t)cap * sizeof(int64_t));
    if (!v) return -1;
    for (Py_ssize_t i = q->n_sym; i < cap; i++) v[i] = 1;
    q->sym_len = v;
    q->n_sym = cap;
    return 0;
}

static inline int64_t sym_of(PairQueue *q, int32_t i) { return i < q->n_sym ? q->sym_len[i] : 1; }

static int add_count(PairQueue *q, int32_t a, int32_t b, int64_t c) {
    int64_t *slot = counts_slot(&q->pc, key_of(a, b));
    if (!slot) return -1;
    *slot += c;
    return 0;
}

static int add_where(PairQueue *q, int32_t a, int32_t b, int32_t wi) {
    IdSet **slot = where_slot(&q->where, key_of(a, b));
    if (!slot) return -1;
    if (!*slot && !(*slot = set_new())) return -1;
    return set_add(*slot, wi);
}

/* push one entry per pair of the where table with a positive count; the table is emptied */
static int push_where(PairQueue *q) {
    for (size_t j = 0; j < q->where.n; j++) {
        uint64_t k = q->where.order[j];
        IdSet *s = where_take(&q->where, k);
        int64_t cnt = counts_get(&q->pc, k);
        if (cnt > 0) {
            Entry e = {cnt, (int32_t)(k >> 32), (int32_t)(k & 0xffffffffu), q->seq++, s};
            if (heap_push(&q->heap, e) < 0) return -1;
        } else {
            set_free(s);
        }
    }
    where_clear(&q->where);
    return 0;
}

static int read_ids(PyObject *seq, Py_ssize_t *n, int64_t **out, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    *n = PySequence_Fast_GET_SIZE(fast);
    *out = (int64_t *)malloc((size_t)(*n ? *n : 1) * sizeof(int64_t));
    if (!*out) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < *n; i++) {
        long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        (*out)[i] = v;
    }
    Py_DECREF(fast);
    return 0;
}

static int load_words(PairQueue *q, PyObject *words) {
    PyObject *fast = PySequence_Fast(words, "words must be a sequence of lists of ids");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast), total = 0;
    q->n_words = n;
    q->off = (int64_t *)malloc((size_t)(n + 1) * sizeof(int64_t));
    q->len = (int32_t *)malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    if (!q->off || !q->len) goto nomem;
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t m = PyObject_Length(PySequence_Fast_GET_ITEM(fast, k));
        if (m < 0) goto fail;
        q->off[k] = total;
        q->len[k] = (int32_t)m;
        total += m;
    }
    q->buf = (int32_t *)malloc((size_t)(total ? total : 1) * sizeof(int32_t));
    if (!q->buf) goto nomem;
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t m;
        int64_t *ids;
        if (read_ids(PySequence_Fast_GET_ITEM(fast, k), &m, &ids, "a word must be a list of ids") < 0) goto fail;
        for (Py_ssize_t i = 0; i < m; i++) {
            if (ids[i] < 0 || ids[i] > INT32_MAX) {
                free(ids);
                PyErr_SetString(PyExc_ValueError, "symbol ids must be in 0 .. 2**31-1");
                goto fail;
            }
            q->buf[q->off[k] + i] = (int32_t)ids[i];
        }
        free(ids);
    }
    Py_DECREF(fast);
    return 0;
nomem:
    PyErr_NoMemory();
fail:
    Py_DECREF(fast);
    return -1;
}

static int PairQueue_init(PairQueue *q, PyObject *args, PyObject *kw) {
    static char *names[] = {"words", "counts", "sym_len", "max_len", NULL};
    PyObject *words, *counts, *sym_len;
    long long max_len;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOL", names, &words, &counts, &sym_len, &max_len)) return -1;
    if (q->buf) {
        PyErr_SetString(PyExc_RuntimeError, "PairQueue is initialised once");
        return -1;
    }
    q->max_len = max_len;
    if (load_words(q, words) < 0) return -1;
    Py_ssize_t nc, ns;
    if (read_ids(counts, &nc, &q->counts, "counts must be a sequence of ints") < 0) return -1;
    if (nc != q->n_words) {
        PyErr_SetString(PyExc_ValueError, "one count per word");
        return -1;
    }
    if (read_ids(sym_len, &ns, &q->sym_len, "sym_len must be a sequence of ints") < 0) return -1;
    q->n_sym = ns;
    if (counts_init(&q->pc, 1 << 16) < 0 || where_init(&q->where, 1 << 16) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < q->n_words; k++) {
        int32_t *w = q->buf + q->off[k];
        for (int32_t i = 0; i + 1 < q->len[k]; i++)
            if (add_count(q, w[i], w[i + 1], q->counts[k]) < 0 || add_where(q, w[i], w[i + 1], (int32_t)k) < 0) {
                PyErr_NoMemory();
                return -1;
            }
    }
    q->distinct = q->pc.n;
    if (push_where(q) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void PairQueue_dealloc(PairQueue *q) {
    free(q->buf);
    free(q->off);
    free(q->len);
    free(q->counts);
    free(q->sym_len);
    free(q->pc.keys);
    free(q->pc.vals);
    if (q->where.keys) {
        for (size_t j = 0; j < q->where.n; j++) set_free(where_take(&q->where, q->where.order[j]));
        where_free(&q->where);
    }
    for (Py_ssize_t i = 0; i < q->heap.n; i++) set_free(q->heap.v[i].set);
    free(q->heap.v);
    set_free(q->current);
    Py_TYPE(q)->tp_free((PyObject *)q);
}

static PyObject *PairQueue_pop(PairQueue *q, PyObject *Py_UNUSED(ignored)) {
    while (q->heap.n) {
        Entry e = heap_pop(&q->heap);
        int64_t cur = counts_get(&q->pc, key_of(e.a, e.b));
        if (e.count != cur) { /* stale: back with the current count and its old words */
            e.count = cur;
            e.seq = q->seq++;
            if (heap_push(&q->heap, e) < 0) return PyErr_NoMemory();
            continue;
        }
        set_free(q->current);
        q->current = e.set;
        return Py_BuildValue("(iiL)", e.a, e.b, (long long)cur);
    }
    Py_RETURN_NONE;
}

/* merge (a, b) -> nw in word k; the number of occurrences merged (-1: no memory) */
static int64_t merge_word(PairQueue *q, Py_ssize_t k, int32_t a, int32_t b, int32_t nw, int64_t new_len) {
    int32_t *w = q->buf + q->off[k];
    int32_t n = q->len[k];
    int64_t c = q->counts[k], hit = 0;
    int64_t limit = q->max_len;
    for (int32_t i = 0; i < n; i++) {
        if (w[i] != a || i + 1 >= n || w[i + 1] != b) continue;
        hit++;
        if (i > 0) {
            int32_t pv = w[i - 1];
            if (add_count(q, pv, a, -c) < 0) return -1; /* may go below 0 with max_len, as in HF */
            if (limit < 0 || sym_of(q, pv) + new_len < limit)
                if (add_count(q, pv, nw, c) < 0 || add_where(q, pv, nw, (int32_t)k) < 0) return -1;
        }
        w[i] = nw;
        memmove(w + i + 1, w + i + 2, (size_t)(n - i - 2) * sizeof(int32_t));
        n--;
        if (i < n - 1) {
            int32_t nx = w[i + 1];
            if (add_count(q, b, nx, -c) < 0) return -1;
            if (limit < 0 || sym_of(q, nx) + new_len < limit)
                if (add_count(q, nw, nx, c) < 0 || add_where(q, nw, nx, (int32_t)k) < 0) return -1;
        }
    }
    q->len[k] = n;
    return hit;
}

static PyObject *PairQueue_merge(PairQueue *q, PyObject *args, PyObject *kw) {
    static char *names[] = {"a", "b", "new_id", "changed", NULL};
    int a, b, nw, want = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iii|$p", names, &a, &b, &nw, &want)) return NULL;
    if (a < 0 || b < 0 || nw < 0) {
        PyErr_SetString(PyExc_ValueError, "ids must be non-negative");
        return NULL;
    }
    if (grow_sym(q, (Py_ssize_t)nw + 1) < 0 || grow_sym(q, (Py_ssize_t)(a > b ? a : b) + 1) < 0)
        return PyErr_NoMemory();
    int64_t new_len = q->sym_len[a] + q->sym_len[b];
    q->sym_len[nw] = new_len;
    PyObject *changed = PyList_New(0);
    if (!changed) return NULL;
    int64_t touched = 0, removed = 0;
    IdSet *s = q->current;
    for (Py_ssize_t j = 0; s && j < s->n; j++) {
        Py_ssize_t k = s->v[j];
        int64_t hit = merge_word(q, k, a, b, nw, new_len);
        if (hit < 0) {
            Py_DECREF(changed);
            return PyErr_NoMemory();
        }
        if (!hit) continue;
        touched++;
        removed += hit * q->counts[k];
        if (want) {
            PyObject *i = PyLong_FromSsize_t(k);
            if (!i || PyList_Append(changed, i) < 0) {
                Py_XDECREF(i);
                Py_DECREF(changed);
                return NULL;
            }
            Py_DECREF(i);
        }
    }
    if (push_where(q) < 0) {
        Py_DECREF(changed);
        return PyErr_NoMemory();
    }
    return Py_BuildValue("(LLN)", (long long)touched, (long long)removed, changed);
}

static PyObject *word_list(PairQueue *q, Py_ssize_t k, int as_tuple) {
    PyObject *out = as_tuple ? PyTuple_New(q->len[k]) : PyList_New(q->len[k]);
    if (!out) return NULL;
    for (int32_t i = 0; i < q->len[k]; i++) {
        PyObject *v = PyLong_FromLong(q->buf[q->off[k] + i]);
        if (!v) {
            Py_DECREF(out);
            return NULL;
        }
        if (as_tuple)
            PyTuple_SET_ITEM(out, i, v);
        else
            PyList_SET_ITEM(out, i, v);
    }
    return out;
}

static PyObject *PairQueue_word(PairQueue *q, PyObject *arg) {
    Py_ssize_t k = PyLong_AsSsize_t(arg);
    if (k == -1 && PyErr_Occurred()) return NULL;
    if (k < 0 || k >= q->n_words) {
        PyErr_SetString(PyExc_IndexError, "word index out of range");
        return NULL;
    }
    return word_list(q, k, 0);
}

static PyObject *PairQueue_segments(PairQueue *q, PyObject *Py_UNUSED(ignored)) {
    PyObject *out = PyList_New(q->n_words);
    if (!out) return NULL;
    for (Py_ssize_t k = 0; k < q->n_words; k++) {
        PyObject *t = word_list(q, k, 1);
        if (!t) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, k, t);
    }
    return out;
}

static Py_ssize_t PairQueue_len(PairQueue *q) { return (Py_ssize_t)q->distinct; }

static PyMethodDef PairQueue_methods[] = {
    {"pop", (PyCFunction)PairQueue_pop, METH_NOARGS, "(left, right, count) of the next current entry, or None."},
    {"merge", (PyCFunction)(void (*)(void))PairQueue_merge, METH_VARARGS | METH_KEYWORDS,
     "merge(a, b, new_id, *, changed=False) -> (words touched, tokens removed, words changed)."},
    {"word", (PyCFunction)PairQueue_word, METH_O, "The symbols of word k now (a list)."},
    {"segments", (PyCFunction)PairQueue_segments, METH_NOARGS, "Every word's symbols now (tuples)."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods PairQueue_as_sequence = {.sq_length = (lenfunc)PairQueue_len};

static PyTypeObject PairQueueType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tokviz.training._count.PairQueue",
    .tp_basicsize = sizeof(PairQueue),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "BPE training's pair counts, pair -> words index and merge queue (see the module).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)PairQueue_init,
    .tp_dealloc = (destructor)PairQueue_dealloc,
    .tp_methods = PairQueue_methods,
    .tp_as_sequence = &PairQueue_as_sequence,
};

static struct PyModuleDef countmodule = {
    PyModuleDef_HEAD_INIT, "tokviz.training._count", "BPE training's pair queue in C (optional).", -1, NULL,
};

PyMODINIT_FUNC PyInit__count(void) {
    if (PyType_Ready(&PairQueueType) < 0) return NULL;
    PyObject *m = PyModule_Create(&countmodule);
    if (!m) return NULL;
    Py_INCREF(&PairQueueType);
    if (PyModule_AddObject(m, "PairQueue", (PyObject *)&PairQueueType) < 0) {
        Py_DECREF(&PairQueueType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
