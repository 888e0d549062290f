/* WordPiece: greedy longest-match-first over one word (tokviz/engine/models/wordpiece.py).
 *
 * At each position the longest vocab entry that matches is taken: at the word's start the
 * chars themselves, after it ``continuing_subword_prefix`` + the chars. A word longer than
 * ``max_input_chars_per_word`` chars, or with a position where nothing matches, is the unk
 * token as a whole (HF's ``WordPiece::tokenize``). The two kinds of lookup are two content
 * tables (table.h's `Content`: hash, id and arena offset in one slot): every token, and the
 * continuation tokens with their prefix taken off, so a candidate is a span of the word itself,
 * hashed from the word's prefix hashes in O(1) and never copied.
 */
#include "table.h"

typedef struct {
    Content head;         /* every token: the piece at the word's start */
    Content tail;         /* the continuation tokens without the prefix: every later piece */
    int64_t unk;          /* the unk token's id, -1 when it is not in the vocab */
    Py_ssize_t max_chars; /* max_input_chars_per_word */
} WordPiece;

static void wordpiece_free(WordPiece *w) {
    if (!w) return;
    content_free(&w->head);
    content_free(&w->tail);
    PyMem_RawFree(w);
}

static void wordpiece_destroy(PyObject *capsule) { wordpiece_free(PyCapsule_GetPointer(capsule, "tokviz.wordpiece")); }

/* wordpiece_table(vocab, tail, unk_id, max_input_chars_per_word) -> table: ``vocab`` ``{token:
 * id}``, ``tail`` ``{token without the prefix: id}`` for the tokens that start with the
 * continuing prefix (the vocab itself when the prefix is empty), ``unk_id`` an id or None. */
PyObject *py_wordpiece_table(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *vocab, *tail, *unk;
    Py_ssize_t max_chars;
    if (!PyArg_ParseTuple(args, "O!O!On", &PyDict_Type, &vocab, &PyDict_Type, &tail, &unk, &max_chars)) return NULL;
    WordPiece *w = PyMem_RawCalloc(1, sizeof(WordPiece));
    if (!w) return PyErr_NoMemory();
    w->unk = -1;
    w->max_chars = max_chars;
    if (unk != Py_None) {
        long long id = PyLong_AsLongLong(unk);
        if ((id == -1 && PyErr_Occurred()) || check_id(id, "unk id") < 0) goto fail;
        w->unk = id;
    }
    if (content_fill(&w->head, vocab) < 0 || content_fill(&w->tail, tail) < 0) goto fail;
    PyObject *cap = PyCapsule_New(w, "tokviz.wordpiece", wordpiece_destroy);
    if (!cap) wordpiece_free(w);
    return cap;
fail:
    wordpiece_free(w);
    return NULL;
}

/* Three lists (ids, starts, ends) of m tokens. */
static PyObject *columns(const int64_t *id, const int64_t *start, const int64_t *end, Py_ssize_t m) {
    PyObject *a = PyList_New(m), *b = PyList_New(m), *c = PyList_New(m), *out = NULL;
    if (!a || !b || !c) goto done;
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *x = PyLong_FromLongLong(id[i]), *y = PyLong_FromLongLong(start[i]), *z = PyLong_FromLongLong(end[i]);
        if (!x || !y || !z) { Py_XDECREF(x); Py_XDECREF(y); Py_XDECREF(z); goto done; }
        PyList_SET_ITEM(a, i, x);
        PyList_SET_ITEM(b, i, y);
        PyList_SET_ITEM(c, i, z);
    }
    out = PyTuple_Pack(3, a, b, c);
done:
    Py_XDECREF(a); Py_XDECREF(b); Py_XDECREF(c);
    return out;
}

/* The greedy longest-match-first pieces of a word of n chars (``pre``/``pw``: room for n + 1
 * prefix hashes and powers; ``ids``/``starts``/``ends``: for n pieces): their count, or -1 when
 * some position matches nothing. */
static Py_ssize_t greedy(const WordPiece *w, int kind, const void *data, Py_ssize_t n, uint64_t *pre, uint64_t *pw,
                         int64_t *ids, int64_t *starts, int64_t *ends) {
    pre[0] = 0;
    pw[0] = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        pre[i + 1] = pre[i] * POLY + PyUnicode_READ(kind, data, i) + 1;
        pw[i + 1] = pw[i] * POLY;
    }
    Py_ssize_t m = 0;
    for (Py_ssize_t start = 0; start < n;) {
        const Content *c = start ? &w->tail : &w->head;
        /* (a candidate longer than the longest token cannot match: none is tried) */
        Py_ssize_t end = n - start < c->longest ? n : start + c->longest;
        int64_t found = -1;
        for (; end > start; end--)
            if ((found = find_span(c, pre[end] - pre[start] * pw[end - start], kind, data, start, end)) >= 0) break;
        if (found < 0) return -1;
        ids[m] = found;
        starts[m] = start;
        ends[m++] = end;
        start = end;
    }
    return m;
}

#define SHORT_WORD 64

/* wordpiece_tokenize(table, word) -> (ids, starts, ends): the char spans of the word's pieces;
 * None when the word is the unk token and the vocab has none (the Python model raises). */
PyObject *py_wordpiece_tokenize(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *cap, *text;
    if (!PyArg_ParseTuple(args, "OU", &cap, &text)) return NULL;
    WordPiece *w = PyCapsule_GetPointer(cap, "tokviz.wordpiece");
    if (!w) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), m = -1;
    PyObject *out = NULL;
    if (n <= w->max_chars) {
        /* a short word's hashes and pieces live on the stack */
        uint64_t small_h[2 * (SHORT_WORD + 1)];
        int64_t small_t[3 * SHORT_WORD];
        int small = n <= SHORT_WORD;
        uint64_t *pre = small ? small_h : PyMem_RawMalloc((size_t)(n + 1) * 2 * sizeof(uint64_t));
        int64_t *ids = small ? small_t : PyMem_RawMalloc((size_t)n * 3 * sizeof(int64_t));
        if (pre && ids) {
            m = greedy(w, PyUnicode_KIND(text), PyUnicode_DATA(text), n, pre, pre + n + 1, ids, ids + n, ids + 2 * n);
            if (m >= 0) out = columns(ids, ids + n, ids + 2 * n, m);
        } else {
            PyErr_NoMemory();
        }
        if (!small) {
            PyMem_RawFree(pre);
            PyMem_RawFree(ids);
        }
        if (m >= 0 || PyErr_Occurred()) return out;
    }
    if (w->unk < 0) Py_RETURN_NONE;
    int64_t zero = 0, whole = n;
    return columns(&w->unk, &zero, &whole, 1);
}
