/* The pipeline's column loop and cache entries (tokviz/engine/chunk_cache.py). */
#include "table.h"

/* ================================================================== the pipeline's columns */
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
PyObject *py_emit(PyObject *Py_UNUSED(self), PyObject *args) {
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
PyObject *py_entry(PyObject *Py_UNUSED(self), PyObject *args) {
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
PyObject *py_bpe_utf8_entry(PyObject *Py_UNUSED(self), PyObject *args) {
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
PyObject *py_utf8_positions(PyObject *Py_UNUSED(self), PyObject *args) {
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
