/* SentencePiece .model kernels: charsmap normalization, SentencePiece BPE, unknown runs. */
#include "table.h"

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

/* spm_charsmap_check(blob, budget) -> bool: `spn_check` of a charsmap blob whose header
 * `CharsMap.from_bytes` has checked (True: the Python decode would find nothing wrong, so it can
 * wait until the Python matcher asks). */
PyObject *py_spm_charsmap_check(PyObject *Py_UNUSED(self), PyObject *args) {
    const char *raw;
    Py_ssize_t len;
    long long budget;
    if (!PyArg_ParseTuple(args, "y#L", &raw, &len, &budget)) return NULL;
    uint32_t size = 0;
    if (len > 4) memcpy(&size, raw, 4); /* little-endian hosts only (as the .model files) */
    if (len <= 4 || size == 0 || size % 4 || (Py_ssize_t)size + 4 > len) Py_RETURN_FALSE;
    Spn z = {0};
    z.nunits = size / 4;
    z.nrepl = len - 4 - size;
    z.units = PyMem_RawMalloc(size);
    z.repl = PyMem_RawMalloc((size_t)z.nrepl + 1);
    int ok = -1;
    if (z.units && z.repl) {
        memcpy(z.units, raw + 4, size);
        memcpy(z.repl, raw + 4 + size, (size_t)z.nrepl);
        z.repl[z.nrepl] = 0;
        ok = spn_check(&z, budget);
    }
    PyMem_RawFree(z.units);
    PyMem_RawFree(z.repl);
    if (ok < 0) return PyErr_NoMemory();
    return PyBool_FromLong(ok);
}

/* spm_normalizer(blob, user_defined, add_dummy_prefix, remove_extra_whitespaces,
 * escape_whitespaces, treat_whitespace_as_suffix, budget) -> table, or None when the charsmap
 * ``blob`` (None: none) fails `spn_check` (the Python then runs and reports the problem). */
PyObject *py_spm_normalizer(PyObject *Py_UNUSED(self), PyObject *args) {
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
PyObject *py_spm_normalize(PyObject *Py_UNUSED(self), PyObject *args) {
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
PyObject *py_spm_bpe_table(PyObject *Py_UNUSED(self), PyObject *args) {
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
PyObject *py_spm_bpe_encode(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *cap, *text;
    if (!PyArg_ParseTuple(args, "OU", &cap, &text)) return NULL;
    const Spb *t = PyCapsule_GetPointer(cap, "tokviz.spm_bpe");
    if (!t) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    SpbRun r;
    memset(&r, 0, sizeof(r));
    r.t = t;
    r.kind = PyUnicode_KIND(text);
    r.data = PyUnicode_DATA(text);
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
PyObject *py_spm_merge_unknown(PyObject *Py_UNUSED(self), PyObject *args) {
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
PyObject *py_spm_byte_fallback(PyObject *Py_UNUSED(self), PyObject *args) {
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
PyObject *py_spm_unknown_values(PyObject *Py_UNUSED(self), PyObject *args) {
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
