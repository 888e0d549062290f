/* Unigram: the character trie and the Viterbi (tokviz/engine/models/unigram.py). */
#include "table.h"

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
    int32_t jlen, jfirst, jto; /* a run of prefix-only nodes after this one (`trie_jumps`) */
} TNode;

typedef struct {
    TNode *node;
    Py_ssize_t nodes;
    Edge *edges;
    int32_t *label;        /* the symbols of every chain (`trie_jumps`) */
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
    PyMem_RawFree(t->node); PyMem_RawFree(t->edges); PyMem_RawFree(t->dense); PyMem_RawFree(t->label);
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

#define MIN_JUMP 4 /* the shortest chain a walk jumps over */

/* Chains: a node that is no candidate and has one child starts a run of such nodes; a walk
 * reaching its head compares the text with the run's symbols at once (memcmp) and lands on the
 * node after it, instead of a step per character (no candidate ends inside a run). A long piece
 * then costs one comparison per start position, not a walk. As `chain_jumps` in unigram.py:
 * one pass over the nodes, each chain's symbols stored once, from its head. */
static int trie_jumps(Trie *t) {
    Py_ssize_t n = t->nodes, pool = 0;
    unsigned char *inner = PyMem_RawCalloc((size_t)n, 1);
    if (!inner) { PyErr_NoMemory(); return -1; }
#define UNARY(k) ((k) > 0 && t->node[k].id < 0 && t->node[k].count == 1)
    for (Py_ssize_t k = 0; k < n; k++) { /* (each such node gives its chain one symbol) */
        t->node[k].jlen = 0;
        if (!UNARY(k)) continue;
        pool++;
        int32_t child = t->edges[t->node[k].first].child;
        if (UNARY(child)) inner[child] = 1;
    }
    t->label = PyMem_RawMalloc(((size_t)pool + 1) * sizeof(int32_t));
    if (!t->label) { PyMem_RawFree(inner); PyErr_NoMemory(); return -1; }
    Py_ssize_t used = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (!UNARY(k) || inner[k]) continue;
        Py_ssize_t first = used;
        int32_t x = (int32_t)k;
        while (UNARY(x)) {
            const Edge *e = &t->edges[t->node[x].first];
            t->label[used++] = e->sym;
            x = e->child;
        }
        if (used - first >= MIN_JUMP) {
            t->node[k].jlen = (int32_t)(used - first);
            t->node[k].jfirst = (int32_t)first;
            t->node[k].jto = x;
        } else {
            used = first;
        }
    }
#undef UNARY
    PyMem_RawFree(inner);
    return 0;
}

/* Follow node's chain from e (sym[e] on); the node after it, or -1 when the text differs. */
static inline int32_t trie_jump(const Trie *t, const TNode *nd, const int32_t *sym, Py_ssize_t n, Py_ssize_t *e) {
    if (*e + nd->jlen > n || memcmp(sym + *e, t->label + nd->jfirst, (size_t)nd->jlen * sizeof(int32_t)) != 0)
        return -1;
    *e += nd->jlen;
    return nd->jto;
}

/* The next node from *node over sym[*e..] where a piece ends (child steps and chain jumps,
   counted in *nstep), or NULL when the walk leaves the trie. Both DPs walk with it. */
static inline const TNode *walk_to_piece(const Trie *t, int32_t *node, const int32_t *sym, Py_ssize_t n,
                                         Py_ssize_t *e, Py_ssize_t *nstep) {
    int32_t child;
    while ((child = trie_child(t, *node, sym[*e])) >= 0) {
        (*e)++;
        (*nstep)++;
        *node = child;
        const TNode *nd = &t->node[child];
        if (nd->jlen) {
            (*nstep)++;
            if ((*node = trie_jump(t, nd, sym, n, e)) < 0) return NULL;
            nd = &t->node[*node];
        }
        if (nd->id >= 0) return nd;
    }
    return NULL;
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

/* The symbol of code point c: a new one the first time an edge carries c. */
static int trie_symbol(Trie *t, Py_UCS4 c, uint32_t *max_bmp, int64_t *sym) {
    if (c < BMP_SPAN) {
        if (!t->bmp[c]) t->bmp[c] = (uint32_t)++t->alpha;
        if (c >= *max_bmp) *max_bmp = c + 1;
        *sym = t->bmp[c];
        return 0;
    }
    if (table_get(&t->syms, c, sym)) return 0;
    *sym = ++t->alpha;
    return table_put(&t->syms, c, *sym);
}

/* Insert every piece (a char per step, children found through ``child``: (node, symbol) ->
 * node); the first piece of a string claims its node, with its score, or with none (None: an
 * UNUSED piece, in the trie but never a candidate). Edges are gathered in ``tmp`` in the
 * order they are made. */
static int trie_insert(Trie *t, PyObject *pieces, PyObject *scores, PyObject *ids, Table *child, Edge *tmp,
                       int32_t *parent, unsigned char *claimed, uint32_t *max_bmp) {
    Py_ssize_t np = PyList_GET_SIZE(pieces);
    int64_t max_id = -1;
    for (Py_ssize_t i = 0; i < np; i++) {
        PyObject *p = PyList_GET_ITEM(pieces, i);
        int kind = PyUnicode_KIND(p);
        const void *data = PyUnicode_DATA(p);
        int64_t node = 0, sym, next;
        for (Py_ssize_t k = 0, len = PyUnicode_GET_LENGTH(p); k < len; k++) {
            if (trie_symbol(t, PyUnicode_READ(kind, data, k), max_bmp, &sym) < 0) return -1;
            uint64_t key = ((uint64_t)node << 32) | (uint64_t)sym;
            if (!table_get(child, key, &next)) {
                next = t->nodes;
                TNode *nd = &t->node[next];
                nd->id = -1; nd->score = 0.0; nd->row = -1; nd->count = 0;
                tmp[next - 1] = (Edge){(int32_t)sym, (int32_t)next};
                parent[next - 1] = (int32_t)node;
                t->node[node].count++;
                t->nodes++;
                if (table_put(child, key, next) < 0) return -1;
            }
            node = next;
        }
        if (claimed[node]) continue;
        claimed[node] = 1;
        PyObject *s = PyList_GET_ITEM(scores, i);
        if (s == Py_None) continue;
        double score = PyFloat_AsDouble(s);
        long long id = PyLong_AsLongLong(PyList_GET_ITEM(ids, i));
        if (PyErr_Occurred() || check_id(id, "piece id") < 0) return -1;
        t->node[node].score = score;
        t->node[node].id = (int32_t)id;
        if (id > max_id) max_id = id;
    }
    t->nid = (Py_ssize_t)(max_id + 1);
    return 0;
}

/* unigram_trie(pieces, scores, ids): the model's trie, made from the pieces themselves
 * (`Unigram._trie_entries`: non-empty strings in id order; ``scores[i]`` a float, or None for
 * a piece that is in the trie but no candidate), as `_PyTrie.of` makes the Python one. */
PyObject *py_unigram_trie(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *pieces, *scores, *ids;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyList_Type, &pieces, &PyList_Type, &scores, &PyList_Type, &ids))
        return NULL;
    Py_ssize_t np = PyList_GET_SIZE(pieces), total = 0;
    if (PyList_GET_SIZE(scores) != np || PyList_GET_SIZE(ids) != np) {
        PyErr_SetString(PyExc_ValueError, "piece columns differ in length");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < np; i++) {
        PyObject *p = PyList_GET_ITEM(pieces, i);
        if (!PyUnicode_Check(p)) { PyErr_SetString(PyExc_TypeError, "pieces must be str"); return NULL; }
        total += PyUnicode_GET_LENGTH(p);
    }
    if (total >= INT32_MAX) { PyErr_SetString(PyExc_ValueError, "trie too large"); return NULL; }
    Trie *t = PyMem_RawCalloc(1, sizeof(Trie));
    if (!t) return PyErr_NoMemory();
    Table child = {0};
    Edge *tmp = PyMem_RawMalloc((size_t)(total + 1) * sizeof(Edge));
    int32_t *parent = PyMem_RawMalloc((size_t)(total + 1) * sizeof(int32_t));
    unsigned char *claimed = PyMem_RawCalloc((size_t)total + 1, 1);
    t->node = PyMem_RawMalloc((size_t)(total + 1) * sizeof(TNode));
    t->edges = PyMem_RawMalloc((size_t)(total + 1) * sizeof(Edge));
    t->bmp = PyMem_RawCalloc(BMP_SPAN, sizeof(uint32_t));
    uint32_t max_bmp = 0;
    int ok = tmp && parent && claimed && t->node && t->edges && t->bmp;
    if (!ok) PyErr_NoMemory();
    ok = ok && table_init(&t->syms, 64) == 0 && table_init(&child, (size_t)total) == 0;
    if (ok) {
        t->nodes = 1;
        t->node[0] = (TNode){.score = 0.0, .id = -1, .row = -1, .first = 0, .count = 0};
        ok = trie_insert(t, pieces, scores, ids, &child, tmp, parent, claimed, &max_bmp) == 0;
    }
    if (ok) { /* each node's edges together (a counting sort by parent), then by symbol */
        Py_ssize_t n = t->nodes, at = 0;
        for (Py_ssize_t k = 0; k < n; k++) { t->node[k].first = (int32_t)at; at += t->node[k].count; t->node[k].count = 0; }
        for (Py_ssize_t e = 0; e + 1 < n; e++) {
            TNode *p = &t->node[parent[e]];
            t->edges[p->first + p->count++] = tmp[e];
        }
        for (Py_ssize_t k = 0; k < n; k++)
            if (t->node[k].count > 1) qsort(t->edges + t->node[k].first, (size_t)t->node[k].count, sizeof(Edge), edge_cmp);
        t->bmp_n = max_bmp;
        uint32_t *bmp = PyMem_RawRealloc(t->bmp, ((size_t)max_bmp + 1) * sizeof(uint32_t));
        if (bmp) t->bmp = bmp; /* (a failed shrink keeps the big array) */
        t->id_obj = PyMem_RawCalloc((size_t)t->nid + 1, sizeof(PyObject *));
        if (!t->id_obj) PyErr_NoMemory();
        ok = t->id_obj && trie_rows(t) == 0 && trie_jumps(t) == 0;
    }
    table_free(&child);
    PyMem_RawFree(tmp); PyMem_RawFree(parent); PyMem_RawFree(claimed);
    if (!ok) { trie_free(t); return NULL; }
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
                       double unk_score, int32_t unk_id, int32_t *starts, int32_t *ids, double *end_score,
                       Py_ssize_t *steps) {
    float *best = PyMem_RawCalloc((size_t)n + 1, sizeof(float));
    if (!best) return -1;
    best[0] = (float)start;
    for (Py_ssize_t i = 0; i <= n; i++) starts[i] = -1;
    Py_ssize_t frontier = 0, nstep = 0;
    for (Py_ssize_t s = 0; s < n; s++) {
        double base = best[s];
        if (base < -RESET || base > RESET) {
            for (Py_ssize_t i = s; i <= frontier; i++)
                if (i == s || starts[i] != -1) best[i] = (float)((double)best[i] - base);
            base = 0.0;
        }
        int32_t node = 0;
        Py_ssize_t e = s;
        int single = 0;
        const TNode *nd;
        while ((nd = walk_to_piece(t, &node, sym, n, &e, &nstep)) != NULL) {
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
    *steps = nstep;
    PyMem_RawFree(best);
    return 0;
}

/* The float64 DP of ``Unigram._viterbi_f64`` (HF): the later of two equal scores loses. */
static int viterbi_f64(const Trie *t, const int32_t *sym, Py_ssize_t n, double start,
                       double unk_score, int32_t unk_id, int32_t *starts, int32_t *ids, double *end_score,
                       Py_ssize_t *steps) {
    double *best = PyMem_RawCalloc((size_t)n + 1, sizeof(double));
    if (!best) return -1;
    best[0] = start;
    for (Py_ssize_t i = 0; i <= n; i++) starts[i] = -1;
    Py_ssize_t nstep = 0;
    for (Py_ssize_t s = 0; s < n; s++) {
        double base = best[s];
        int32_t node = 0;
        Py_ssize_t e = s;
        int single = 0;
        const TNode *nd;
        while ((nd = walk_to_piece(t, &node, sym, n, &e, &nstep)) != NULL) {
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
    *steps = nstep;
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
 * as columns (ids, starts, ends), the score at the end and the walks' steps (edges followed
 * plus chains compared: linear in the text while pieces overlap boundedly); None when a char has no candidate
 * and unk_id is negative (the caller raises its own error). */
PyObject *py_unigram_viterbi(PyObject *Py_UNUSED(self), PyObject *args) {
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
    Py_ssize_t steps = 0; /* edges followed and chains compared (the tests' measure of work) */
    int rc;
    if (n >= NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        trie_symbols(t, kind, data, n, sym);
        rc = (f32 ? viterbi_f32 : viterbi_f64)(t, sym, n, start, unk_score, (int32_t)unk_id, starts, ids, &end_score,
                                                 &steps);
        Py_END_ALLOW_THREADS
    } else {
        trie_symbols(t, kind, data, n, sym);
        rc = (f32 ? viterbi_f32 : viterbi_f64)(t, sym, n, start, unk_score, (int32_t)unk_id, starts, ids, &end_score,
                                                 &steps);
    }
    if (rc < 0) { PyErr_NoMemory(); goto done; }
    if (rc > 0) { result = Py_NewRef(Py_None); goto done; }
    cols = path_columns(t, starts, ids, n, (int32_t)unk_id, merge_unk, bnd, sym);
    if (!cols) goto done;
    result = Py_BuildValue("(OOOdn)", PyTuple_GET_ITEM(cols, 0), PyTuple_GET_ITEM(cols, 1), PyTuple_GET_ITEM(cols, 2),
                           end_score, steps);
done:
    Py_XDECREF(cols);
    PyMem_RawFree(buf);
    return result;
}
