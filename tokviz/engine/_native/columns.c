/* The pipeline's column loop and cache entries (tokviz/engine/chunk_cache.py). */
#include "table.h"

/* ================================================================== the pipeline's columns */
/* A read-only column of ints: an int64 or int32 buffer (array('q'), array('i')), a list or
 * tuple, or any sequence. */
typedef struct {
    Py_buffer view;
    int has_view;
    const int64_t *data64;
    const int32_t *data32;
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
            c->data64 = c->view.buf;
            c->n = c->view.len / 8;
            return 0;
        }
        if (c->view.itemsize == 4 && (strcmp(f, "i") == 0 || strcmp(f, "l") == 0)) {
            c->data32 = c->view.buf;
            c->n = c->view.len / 4;
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
    if (c->data64) { *v = c->data64[i]; return 0; }
    if (c->data32) { *v = c->data32[i]; return 0; }
    PyObject *x;
    if (PyList_CheckExact(c->obj)) x = Py_NewRef(PyList_GET_ITEM(c->obj, i));
    else if (PyTuple_CheckExact(c->obj)) x = Py_NewRef(PyTuple_GET_ITEM(c->obj, i));
    else if (!(x = PySequence_GetItem(c->obj, i))) return -1;
    *v = PyLong_AsLongLong(x);
    Py_DECREF(x);
    return *v == -1 && PyErr_Occurred() ? -1 : 0;
}

/* The int columns of one cache entry (ENTRY_IDS, FIRST, STOP, LAST, MODEL_STARTS, MODEL_ENDS):
 * tuples of ints (a cached chunk) read directly, or int buffers (a chunk too long for the
 * cache) through `IntCol`. */
enum { COL_IDS, COL_FIRST, COL_STOP, COL_LAST, COL_MSTARTS, COL_MENDS, N_COLS };
static const int COL_SLOT[N_COLS] = {ENTRY_IDS, ENTRY_FIRST, ENTRY_STOP, ENTRY_LAST, ENTRY_MODEL_STARTS, ENTRY_MODEL_ENDS};

typedef struct {
    PyObject *tuple[N_COLS]; /* borrowed; NULL where the slot is a buffer */
    IntCol col[N_COLS];
    Py_ssize_t m;
} EntryCols;

static void entry_close(EntryCols *e) {
    for (int c = 0; c < N_COLS; c++) intcol_close(&e->col[c]);
}

static int entry_open(EntryCols *e, PyObject *entry) {
    memset(e, 0, sizeof(*e));
    e->m = -1;
    for (int c = 0; c < N_COLS; c++) {
        PyObject *slot = PyTuple_GET_ITEM(entry, COL_SLOT[c]);
        Py_ssize_t len;
        if (PyTuple_CheckExact(slot)) {
            e->tuple[c] = slot;
            len = PyTuple_GET_SIZE(slot);
        } else {
            if (intcol_open(&e->col[c], slot) < 0) { entry_close(e); return -1; }
            len = e->col[c].n;
        }
        if (e->m >= 0 && len != e->m) {
            entry_close(e);
            PyErr_SetString(PyExc_TypeError, "emit: a chunk cache entry whose columns differ in length");
            return -1;
        }
        e->m = len;
    }
    return 0;
}

static inline int entry_int(const EntryCols *e, int c, Py_ssize_t j, int64_t *v) {
    if (e->tuple[c]) {
        *v = PyLong_AsLongLong(PyTuple_GET_ITEM(e->tuple[c], j));
        return *v == -1 && PyErr_Occurred() ? -1 : 0;
    }
    return intcol_get(&e->col[c], j, v);
}

/* 0 when every entry is a tuple of ENTRY_SLOTS slots with a token tuple; the total token count
 * in ``*total`` (from the ids column). */
static int check_entries(PyObject *entries, Py_ssize_t *total) {
    Py_ssize_t n = PyList_GET_SIZE(entries);
    *total = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *e = PyList_GET_ITEM(entries, k);
        if (!PyTuple_CheckExact(e) || PyTuple_GET_SIZE(e) != ENTRY_SLOTS) goto bad;
        PyObject *toks = PyTuple_GET_ITEM(e, ENTRY_TOKENS);
        if (!PyTuple_CheckExact(toks) && !PyList_CheckExact(toks)) goto bad;
        *total += PySequence_Fast_GET_SIZE(toks);
    }
    return 0;
bad:
    PyErr_SetString(PyExc_TypeError, "emit: a chunk cache entry without the tuple layout of chunk_cache.py");
    return -1;
}

/* An int32 output value (the output columns are array('i'): positions and ids of texts under 2 GiB). */
static inline int put32(int32_t *col, Py_ssize_t i, int64_t v) {
    if (v < INT32_MIN || v > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "emit: a position or id outside the int32 columns");
        return -1;
    }
    col[i] = (int32_t)v;
    return 0;
}

/* The output object's columns (attributes of an `OutColumns`), new references. */
static const char *const OUT_NAMES[] = {"ids", "starts", "ends", "byte_starts", "byte_ends", "word_ids"};
#define N_OUT 6

/* Append the filled int32 columns ``buf`` (N_OUT columns of ``total`` values) and the tokens to
 * the output; on an error nothing stays appended. */
static int append_out(PyObject *outs[N_OUT], PyObject *o_toks, const int32_t *buf, Py_ssize_t total, PyObject *toks) {
    Py_ssize_t old[N_OUT];
    int done = 0;
    for (int c = 0; c < N_OUT; c++) old[c] = PyObject_Length(outs[c]);
    for (int c = 0; c < N_OUT; c++) {
        if (old[c] < 0) goto fail;
        PyObject *mv = PyMemoryView_FromMemory((char *)(buf + c * total), total * (Py_ssize_t)sizeof(int32_t), PyBUF_READ);
        PyObject *r = mv ? PyObject_CallMethod(outs[c], "frombytes", "O", mv) : NULL;
        Py_XDECREF(mv);
        if (!r) goto fail;
        Py_DECREF(r);
        done = c + 1;
    }
    Py_ssize_t nt = PyList_GET_SIZE(o_toks);
    if (PyList_SetSlice(o_toks, nt, nt, toks) < 0) goto fail;
    return 0;
fail:
    for (int c = 0; c < done; c++) PySequence_DelSlice(outs[c], old[c], PY_SSIZE_T_MAX);
    return -1;
}


/* The bytes of a chunk's byte-fallback pieces (the tokens at ``pieces``, in order; ``bs``/``be``
 * the chunk's byte columns, which hold each piece's character): the next byte of the character
 * after the token before it, `byte_piece_span` of tokviz/engine/reference.py. */
static int fix_byte_pieces(PyObject *pieces, int32_t *bs, int32_t *be, Py_ssize_t m) {
    for (Py_ssize_t p = 0; p < PyTuple_GET_SIZE(pieces); p++) {
        Py_ssize_t j = PyLong_AsSsize_t(PyTuple_GET_ITEM(pieces, p));
        if (j == -1 && PyErr_Occurred()) return -1;
        if (j < 0 || j >= m) {
            PyErr_SetString(PyExc_IndexError, "emit: a byte piece outside its chunk");
            return -1;
        }
        int32_t s = bs[j], e = be[j], cursor = j ? be[j - 1] : -1;
        if (s <= cursor && cursor < e) s = cursor;
        bs[j] = s;
        be[j] = e > s ? s + 1 : s;
    }
    return 0;
}

/* emit(entries, block, out) -> the chunks to redo: `emit_columns` of chunk_cache.py. The
 * tokens of a block of chunks (their cache ``entries``, laid out by the `Block` tuple ``block``)
 * appended to the `OutColumns` ``out``: ids, char and byte spans and word ids to its int32
 * arrays, the token strings to its list. A token's char span: piece chars ``starts[k] + first
 * .. starts[k] + stop`` shifted by ``orig`` when the piece's alignment is the identity
 * (``p_starts`` None), else ``p_starts[starts[k] + first]`` .. ``p_ends[starts[k] + last]``.
 * Its bytes follow ``rule``; ``u8`` maps a char position of the original text to its byte
 * position (None: ASCII, the same number); a byte-fallback piece then gets the one byte of
 * its character that is its own (`fix_byte_pieces`), unless its chunk holds its original
 * bytes. Word id of chunk k: ``word + k``. Returned: the chunks with an empty token, whose
 * offsets the tokenizer redoes (`Tokenizer._redo`, byte pieces included). Nothing is appended
 * when an error is raised. */
PyObject *py_emit(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *entries, *block, *out;
    if (!PyArg_ParseTuple(args, "O!O!O", &PyList_Type, &entries, &PyTuple_Type, &block, &out)) return NULL;
    if (PyTuple_GET_SIZE(block) != BLOCK_FIELDS) {
        PyErr_SetString(PyExc_TypeError, "emit: block must be a Block (chunk_cache.py)");
        return NULL;
    }
    PyObject *starts = PyTuple_GET_ITEM(block, BLOCK_STARTS), *holds = PyTuple_GET_ITEM(block, BLOCK_HOLDS);
    PyObject *p_starts_o = PyTuple_GET_ITEM(block, BLOCK_P_STARTS), *u8_o = PyTuple_GET_ITEM(block, BLOCK_U8);
    long long orig = PyLong_AsLongLong(PyTuple_GET_ITEM(block, BLOCK_ORIG));
    long long word = PyLong_AsLongLong(PyTuple_GET_ITEM(block, BLOCK_WORD));
    long rule = PyLong_AsLong(PyTuple_GET_ITEM(block, BLOCK_RULE));
    if (PyErr_Occurred()) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(entries), total;
    if (rule < RULE_CHARS || rule > RULE_HELD || (rule == RULE_HELD && (!PyList_Check(holds) || PyList_GET_SIZE(holds) != n))) {
        PyErr_SetString(PyExc_ValueError, "emit: a byte rule without its columns");
        return NULL;
    }
    if (check_entries(entries, &total) < 0) return NULL;
    int identity = p_starts_o == Py_None, ascii = u8_o == Py_None;
    IntCol st = {0}, ps = {0}, pe = {0}, u8 = {0}, bases = {0}; /* (a zeroed column closes as a no-op) */
    PyObject *outs[N_OUT] = {NULL}, *o_toks = NULL, *toks = NULL, *irregular = NULL, *result = NULL;
    int32_t *buf = NULL;
    if (intcol_open(&st, starts) < 0 || intcol_open(&ps, p_starts_o) < 0 ||
        intcol_open(&pe, PyTuple_GET_ITEM(block, BLOCK_P_ENDS)) < 0 || intcol_open(&u8, u8_o) < 0 ||
        intcol_open(&bases, rule == RULE_HELD ? PyTuple_GET_ITEM(block, BLOCK_BASES) : Py_None) < 0)
        goto done;
    if (st.n != n || (rule == RULE_HELD && bases.n != n)) {
        PyErr_SetString(PyExc_ValueError, "emit: the block's columns and the entries differ in length");
        goto done;
    }
    for (int c = 0; c < N_OUT; c++)
        if (!(outs[c] = PyObject_GetAttrString(out, OUT_NAMES[c]))) goto done;
    if (!(o_toks = PyObject_GetAttrString(out, "tokens"))) goto done;
    if (!PyList_Check(o_toks)) { PyErr_SetString(PyExc_TypeError, "emit: out.tokens must be a list"); goto done; }
    if (!(irregular = PyList_New(0)) || !(toks = PyList_New(total))) goto done;
    if (!(buf = PyMem_RawMalloc((size_t)(total ? total : 1) * N_OUT * sizeof(int32_t)))) { PyErr_NoMemory(); goto done; }
    int32_t *o_ids = buf, *o_cs = buf + total, *o_ce = buf + 2 * total, *o_bs = buf + 3 * total,
            *o_be = buf + 4 * total, *o_w = buf + 5 * total;
    Py_ssize_t at = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *e = PyList_GET_ITEM(entries, k);
        PyObject *e_toks = PyTuple_GET_ITEM(e, ENTRY_TOKENS);
        EntryCols ec;
        if (entry_open(&ec, e) < 0) goto done;
        Py_ssize_t m = ec.m, at0 = at;
        int64_t s, base = 0;
        int own_bytes = rule == RULE_EXACT; /* the chunk's first byte, when its tokens' bytes are its own model spans */
        int ok = intcol_get(&st, k, &s) == 0 && m == PySequence_Fast_GET_SIZE(e_toks);
        if (ok && rule == RULE_HELD) {
            int h = PyObject_IsTrue(PyList_GET_ITEM(holds, k));
            own_bytes = h > 0;
            ok = h >= 0 && (!own_bytes || intcol_get(&bases, k, &base) == 0);
        } else if (ok && own_bytes) {
            base = orig + s;
            ok = ascii || intcol_get(&u8, orig + s, &base) == 0;
        }
        for (Py_ssize_t j = 0; ok && j < m; j++, at++) {
            int64_t f, id, cs, ce, bs, be, t;
            ok = entry_int(&ec, COL_IDS, j, &id) == 0 && entry_int(&ec, COL_FIRST, j, &f) == 0;
            if (ok && identity) {
                ok = entry_int(&ec, COL_STOP, j, &t) == 0;
                cs = orig + s + f;
                ce = orig + s + t;
            } else if (ok) {
                ok = entry_int(&ec, COL_LAST, j, &t) == 0 && intcol_get(&ps, s + f, &cs) == 0 && intcol_get(&pe, s + t, &ce) == 0;
            }
            if (!ok) break;
            if (own_bytes) {
                ok = entry_int(&ec, COL_MSTARTS, j, &bs) == 0 && entry_int(&ec, COL_MENDS, j, &be) == 0;
                bs += base;
                be += base;
            } else if (ascii) {
                bs = cs;
                be = ce;
            } else {
                ok = intcol_get(&u8, cs, &bs) == 0 && intcol_get(&u8, ce, &be) == 0;
            }
            ok = ok && put32(o_ids, at, id) == 0 && put32(o_cs, at, cs) == 0 && put32(o_ce, at, ce) == 0 &&
                 put32(o_bs, at, bs) == 0 && put32(o_be, at, be) == 0 && put32(o_w, at, word + k) == 0;
            if (ok) PyList_SET_ITEM(toks, at, Py_NewRef(PySequence_Fast_GET_ITEM(e_toks, j)));
        }
        entry_close(&ec);
        if (!ok) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "emit: an entry's tokens and ids differ in length");
            goto done;
        }
        int irr = PyObject_IsTrue(PyTuple_GET_ITEM(e, ENTRY_IRREGULAR));
        if (irr < 0) goto done;
        if (!irr) continue;
        PyObject *empties = PyTuple_GET_ITEM(e, ENTRY_EMPTIES), *pieces = PyTuple_GET_ITEM(e, ENTRY_BYTE_PIECES);
        if (!PyTuple_CheckExact(empties) || !PyTuple_CheckExact(pieces)) {
            PyErr_SetString(PyExc_TypeError, "emit: a chunk cache entry without the tuple layout of chunk_cache.py");
            goto done;
        }
        if (PyTuple_GET_SIZE(empties)) { /* redone by the tokenizer (`Tokenizer._redo`) */
            PyObject *kk = PyLong_FromSsize_t(k);
            if (!kk || PyList_Append(irregular, kk) < 0) { Py_XDECREF(kk); goto done; }
            Py_DECREF(kk);
        } else if (!own_bytes && fix_byte_pieces(pieces, o_bs + at0, o_be + at0, m) < 0) {
            goto done;
        }
    }
    if (append_out(outs, o_toks, buf, total, toks) < 0) goto done;
    result = Py_NewRef(irregular);
done:
    if (toks && !result) /* (unfilled items are NULL: list_dealloc skips them) */
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(toks); i++)
            if (!PyList_GET_ITEM(toks, i)) PyList_SET_ITEM(toks, i, Py_NewRef(Py_None));
    Py_XDECREF(toks);
    Py_XDECREF(irregular);
    Py_XDECREF(o_toks);
    for (int c = 0; c < N_OUT; c++) Py_XDECREF(outs[c]);
    PyMem_RawFree(buf);
    intcol_close(&bases);
    intcol_close(&u8);
    intcol_close(&pe);
    intcol_close(&ps);
    intcol_close(&st);
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

/* The token strings of m ids from ``id_table`` (id -> vocab string) into ``*toks`` (a tuple),
 * and the indexes of the byte-fallback pieces among them (``pieces``) into ``*found`` (a
 * tuple). 0: done; 1: an id has no string (the caller falls back); -1: an error. */
static int tokens_of(PyObject *id_table, PyObject *pieces, const int64_t *id, Py_ssize_t m, PyObject **toks,
                     PyObject **found) {
    Py_ssize_t vocab = PyList_GET_SIZE(id_table);
    PyObject *t = PyTuple_New(m), *list = PyList_New(0);
    int status = -1;
    if (!t || !list) goto done;
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *tok = id[j] >= 0 && id[j] < vocab ? PyList_GET_ITEM(id_table, id[j]) : NULL;
        if (!tok || !PyUnicode_Check(tok)) { /* (cannot happen: merged ids are vocab ids) */
            status = 1;
            goto done;
        }
        PyTuple_SET_ITEM(t, j, Py_NewRef(tok));
        int has = PySet_Contains(pieces, tok);
        if (has < 0) goto done;
        if (has) {
            PyObject *jj = PyLong_FromSsize_t(j);
            if (!jj || PyList_Append(list, jj) < 0) { Py_XDECREF(jj); goto done; }
            Py_DECREF(jj);
        }
    }
    if (!(*found = PyList_AsTuple(list))) goto done;
    *toks = Py_NewRef(t);
    status = 0;
done:
    Py_XDECREF(t);
    Py_XDECREF(list);
    return status;
}

/* A cache entry from its slots (new references, NULL where building one failed: then NULL). */
static PyObject *entry_of_slots(PyObject *slot[ENTRY_SLOTS]) {
    PyObject *result = NULL;
    int ok = 1;
    for (int s = 0; s < ENTRY_SLOTS; s++) ok = ok && slot[s];
    if (ok && (result = PyTuple_New(ENTRY_SLOTS)))
        for (int s = 0; s < ENTRY_SLOTS; s++) { PyTuple_SET_ITEM(result, s, slot[s]); slot[s] = NULL; }
    for (int s = 0; s < ENTRY_SLOTS; s++) Py_XDECREF(slot[s]);
    return result;
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
    PyObject *slot[ENTRY_SLOTS] = {NULL}, *result = NULL;
    Py_ssize_t m = r.m;
    status = tokens_of(id_table, pieces, r.id, m, &slot[ENTRY_TOKENS], &slot[ENTRY_BYTE_PIECES]);
    if (status == 0) {
        int ascii = r.chars == r.n;
        slot[ENTRY_IDS] = tuple_of(r.id, m, 0);
        slot[ENTRY_MODEL_STARTS] = tuple_of(r.bs, m, 0);
        slot[ENTRY_MODEL_ENDS] = tuple_of(r.be, m, 0);
        slot[ENTRY_FIRST] = ascii ? Py_XNewRef(slot[ENTRY_MODEL_STARTS]) : tuple_of(r.cs, m, 0);
        slot[ENTRY_STOP] = ascii ? Py_XNewRef(slot[ENTRY_MODEL_ENDS]) : tuple_of(r.ce, m, 0);
        slot[ENTRY_LAST] = tuple_of(ascii ? r.be : r.ce, m, -1);
        slot[ENTRY_EMPTIES] = PyTuple_New(0);
        slot[ENTRY_IRREGULAR] = PyBool_FromLong(PyTuple_GET_SIZE(slot[ENTRY_BYTE_PIECES]) > 0);
        result = entry_of_slots(slot);
    } else {
        for (int s = 0; s < ENTRY_SLOTS; s++) Py_XDECREF(slot[s]);
    }
    utf8_merge_free(&r);
    return status > 0 ? PyObject_CallOneArg(fallback, text) : result;
}

/* An int column of m values (plus ``plus``) for an entry that is never cached: int64s in a
 * memoryview of format "q" (no int object per value; `emit` reads it as a buffer). */
static PyObject *buffer_of(const int64_t *v, Py_ssize_t m, int64_t plus) {
    PyObject *bytes = PyBytes_FromStringAndSize(NULL, m * (Py_ssize_t)sizeof(int64_t));
    if (!bytes) return NULL;
    int64_t *out = (int64_t *)PyBytes_AS_STRING(bytes);
    for (Py_ssize_t i = 0; i < m; i++) out[i] = v[i] + plus;
    PyObject *view = PyMemoryView_FromObject(bytes);
    Py_DECREF(bytes);
    if (!view) return NULL;
    PyObject *cast = PyObject_CallMethod(view, "cast", "s", "q");
    Py_DECREF(view);
    return cast;
}

/* bpe_text_entry(table, id_table, byte_pieces, fallback, limit, text) -> entry: the cache entry
 * of a chunk the model sees as it is, `Tokenizer._plain_entry` in one call: `text_merge`, the
 * token strings and byte-fallback pieces as in `bpe_utf8_entry`; the model's spans are the
 * tokens' char spans, and no token is empty. A chunk longer than ``limit`` chars (never cached)
 * keeps its int columns in buffers (`buffer_of`), a shorter one in tuples. ``fallback(text)``
 * when a char is neither a token nor byte pieces that are (unk: the Python model's rules). */
PyObject *py_bpe_text_entry(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *cap, *id_table, *pieces, *fallback, *text;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "OO!O!OnU", &cap, &PyList_Type, &id_table, &PyFrozenSet_Type, &pieces, &fallback,
                          &limit, &text))
        return NULL;
    Bpe *b = PyCapsule_GetPointer(cap, "tokviz.bpe");
    if (!b) return NULL;
    TextMerge r;
    int status = text_merge(b, text, &r);
    if (status) return status > 0 ? PyObject_CallOneArg(fallback, text) : NULL;
    PyObject *slot[ENTRY_SLOTS] = {NULL}, *result = NULL;
    Py_ssize_t m = r.m;
    status = tokens_of(id_table, pieces, r.id, m, &slot[ENTRY_TOKENS], &slot[ENTRY_BYTE_PIECES]);
    if (status == 0) {
        PyObject *(*column)(const int64_t *, Py_ssize_t, int64_t) = PyUnicode_GET_LENGTH(text) > limit ? buffer_of : tuple_of;
        slot[ENTRY_IDS] = column(r.id, m, 0);
        slot[ENTRY_MODEL_STARTS] = column(r.start, m, 0);
        slot[ENTRY_MODEL_ENDS] = column(r.end, m, 0);
        slot[ENTRY_FIRST] = Py_XNewRef(slot[ENTRY_MODEL_STARTS]);
        slot[ENTRY_STOP] = Py_XNewRef(slot[ENTRY_MODEL_ENDS]);
        slot[ENTRY_LAST] = column(r.end, m, -1);
        slot[ENTRY_EMPTIES] = PyTuple_New(0);
        slot[ENTRY_IRREGULAR] = PyBool_FromLong(PyTuple_GET_SIZE(slot[ENTRY_BYTE_PIECES]) > 0);
        result = entry_of_slots(slot);
    } else {
        for (int s = 0; s < ENTRY_SLOTS; s++) Py_XDECREF(slot[s]);
    }
    text_merge_free(&r);
    return status > 0 ? PyObject_CallOneArg(fallback, text) : result;
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
