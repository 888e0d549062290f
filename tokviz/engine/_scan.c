/* tokviz.engine._scan: native scanners for the published pre-tokenizer split patterns.
 *
 * A scanner finds the matches of one published pattern (GPT-2, cl100k, o200k, Llama 3, Qwen2,
 * DeepSeek ...) exactly as the `regex` module finds them through tokviz.engine.patterns.HFRegex,
 * without a regex engine. Every such pattern is a top-level alternation, and a backtracking
 * engine with leftmost-first alternation matches it like this: at a position, the alternatives
 * are tried in order and the first one that matches (after its own backtracking) gives the
 * match; where none matches, the search moves on by one character. A scanner is that loop over
 * a small program of alternatives ("ops"), each one a shape that recurs across the patterns,
 * with its character classes as parameters:
 *
 *   OP_CONTRACTION    's|'t|'re|'ve|'m|'ll|'d, case-sensitive or (?i:...)
 *   OP_RUN            P?X+Y* (P optional or required, X at most `max` times, Y optional):
 *                     " ?\p{L}+", "[^\r\n\p{L}\p{N}]?\p{L}+", "\p{N}{1,3}", " ?[^\s\p{L}\p{N}]+[\r\n]*", "\s"
 *   OP_WORD_LOWER     P?U*W+C? (o200k's first word shape: the optional contraction C last)
 *   OP_WORD_UPPER     P?U+W*C? (its second)
 *   OP_WS_NEWLINE     \s*[\r\n]+ and \s*[\r\n] (both end after the run's last CR or LF)
 *   OP_WS_BEFORE_WS   \s+(?!\S)
 *   OP_WS_END         \s++$ and \s++\Z (a possessive run reaching the end of the text)
 *   OP_WS_LINE_END    \s+$ with MULTILINE (backtracks to the run's last LF)
 *
 * The program of each pattern, and the exact pattern texts it stands for, are written in
 * tokviz/engine/scanners.py; tests/engine/test_scanners.py checks every one against `regex` over
 * all of Unicode. Character classes are feature masks over the generated table _scan_tables.h
 * (general categories, \s, and the characters HFRegex hides as U+FDD0) plus literal ranges;
 * code points below 128 are looked up in a bitmap per class.
 *
 * A scan first records the match spans in a C buffer with the GIL released (for long texts:
 * it reads only an immutable str and this module's memory), then makes the Python result the
 * caller asked for: the matches as strings (`findall`) or spans (`spans`), or as the columns of
 * a tokviz.engine.pretokenized.ChunkPlan, (starts, texts): the Isolated pieces (matches and the
 * gaps between them, `pieces`), or the matches only when they tile the text (`tiling`).
 *
 * Performance notes: the whitespace run at a position is computed once and reused by every
 * whitespace op and every later position inside it (which also keeps \s+$ linear on long runs
 * without a line end); each op tests its first character against its ASCII bitmap before
 * anything else. Making the Python strings costs several times the scan itself, so equal short
 * pieces of one long text share one string (see `Maker`).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_scan_tables.h"

#define NOGIL_MIN 4096

enum { OP_CONTRACTION, OP_RUN, OP_WORD_LOWER, OP_WORD_UPPER, OP_WS_NEWLINE, OP_WS_BEFORE_WS, OP_WS_END, OP_WS_LINE_END, OP__COUNT };
enum { PREFIX_NONE, PREFIX_OPTIONAL, PREFIX_REQUIRED };
enum { CONTRACTION_NONE, CONTRACTION_EXACT, CONTRACTION_IGNORE_CASE };
enum { MODE_FINDALL, MODE_PIECES, MODE_TILING, MODE_SPANS };

/* ------------------------------------------------------------------ characters */
static inline uint32_t features_of(Py_UCS4 cp) {
    if (cp >= 0x110000) return SCAN_Cn;
    unsigned block = scan_stage1[cp >> SCAN_BLOCK_SHIFT];
    return scan_class_features[scan_stage2[(block << SCAN_BLOCK_SHIFT) | (cp & ((1u << SCAN_BLOCK_SHIFT) - 1))]];
}

typedef struct {
    int used;
    int negate;
    uint32_t bits;      /* member if the code point has any of these features */
    uint32_t ascii[4];  /* membership of U+0000..U+007F, precomputed */
    Py_ssize_t nranges;
    Py_UCS4 *ranges;    /* literal members: sorted inclusive pairs lo, hi */
} CharClass;

static int in_ranges(const CharClass *c, Py_UCS4 cp) {
    Py_ssize_t lo = 0, hi = c->nranges;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (cp < c->ranges[2 * mid]) hi = mid;
        else if (cp > c->ranges[2 * mid + 1]) lo = mid + 1;
        else return 1;
    }
    return 0;
}

static int in_class_slow(const CharClass *c, Py_UCS4 cp) {
    uint32_t f = features_of(cp);
    int m = (f & c->bits) != 0;
    if (!m && c->nranges) m = in_ranges(c, (f & SCAN_HIDDEN) ? SCAN_HIDE_AS : cp);
    return m != c->negate;
}

static inline int in_class(const CharClass *c, Py_UCS4 cp) {
    if (cp < 128) return (c->ascii[cp >> 5] >> (cp & 31)) & 1;
    return in_class_slow(c, cp);
}

static inline int is_ws(Py_UCS4 cp) {
    return (features_of(cp) & SCAN_WS) != 0;
}

/* The ASCII letter a contraction reads at `cp` (lower case), or 0. */
static int contraction_letter(Py_UCS4 cp, int mode) {
    if (cp >= 'a' && cp <= 'z') return (int)cp;
    if (mode != CONTRACTION_IGNORE_CASE) return 0;
    if (cp >= 'A' && cp <= 'Z') return (int)(cp + ('a' - 'A'));
    for (int k = 0; k < SCAN_N_FOLD_EXTRAS; k++)
        if (scan_fold_extras[k][1] == cp) return (int)scan_fold_extras[k][0];
    return 0;
}

/* ------------------------------------------------------------------ programs */
typedef struct {
    int kind;
    int prefix;          /* PREFIX_* */
    Py_ssize_t max;      /* OP_RUN: at most this many X (0: no bound) */
    int contraction;     /* OP_CONTRACTION's case rule; the words' optional trailing contraction */
    CharClass pre;       /* P */
    CharClass body;      /* X (OP_RUN), U (words) */
    CharClass tail;      /* W (words) */
    CharClass post;      /* Y (OP_RUN) */
    uint32_t first[4];   /* the ASCII characters the op can start with */
} Op;

typedef struct {
    PyObject_HEAD
    Py_ssize_t nops;
    Op *ops;
    PyObject *program; /* the tuple it was built from (repr, equality) */
} Scanner;

/* The text being scanned, and the whitespace run found last (reused inside it). */
typedef struct {
    const void *data;
    int kind;
    Py_ssize_t n;
    Py_ssize_t ws_lo, ws_hi;      /* [ws_lo, ws_hi): a maximal run of \s, or empty */
    Py_ssize_t ws_crlf, ws_lf;    /* the run's last CR-or-LF and last LF, or -1 */
} Text;

#define CP(t, i) PyUnicode_READ((t)->kind, (t)->data, (i))

/* The maximal whitespace run containing `pos` (which starts it or lies inside the cached one). */
static void ws_run(Text *t, Py_ssize_t pos) {
    if (pos >= t->ws_lo && pos < t->ws_hi) return;
    Py_ssize_t i = pos, crlf = -1, lf = -1;
    while (i < t->n) {
        Py_UCS4 c = CP(t, i);
        if (!is_ws(c)) break;
        if (c == '\n') lf = crlf = i;
        else if (c == '\r') crlf = i;
        i++;
    }
    t->ws_lo = pos; t->ws_hi = i; t->ws_crlf = crlf; t->ws_lf = lf;
}

static Py_ssize_t run_length(const Text *t, const CharClass *c, Py_ssize_t i, Py_ssize_t max) {
    Py_ssize_t j = i, stop = (max && i + max < t->n) ? i + max : t->n;
    while (j < stop && in_class(c, CP(t, j))) j++;
    return j - i;
}

static Py_ssize_t contraction_at(const Text *t, Py_ssize_t i, int mode) {
    if (i + 1 >= t->n || CP(t, i) != '\'') return -1;
    int a = contraction_letter(CP(t, i + 1), mode);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
    if (i + 2 >= t->n || !(a == 'r' || a == 'v' || a == 'l')) return -1;
    int b = contraction_letter(CP(t, i + 2), mode);
    return ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) ? i + 3 : -1;
}

static Py_ssize_t op_run(const Text *t, const Op *op, Py_ssize_t pos) {
    Py_ssize_t end = -1, k;
    if (op->prefix != PREFIX_NONE && in_class(&op->pre, CP(t, pos))) {
        k = run_length(t, &op->body, pos + 1, op->max);
        if (k) end = pos + 1 + k;
    }
    if (end < 0) {
        if (op->prefix == PREFIX_REQUIRED) return -1;
        k = run_length(t, &op->body, pos, op->max);
        if (!k) return -1;
        end = pos + k;
    }
    if (op->post.used)
        while (end < t->n && in_class(&op->post, CP(t, end))) end++;
    return end;
}

/* U*W+ from i: U* takes its longest run, then gives back characters until W+ can start. */
static Py_ssize_t word_lower(const Text *t, const Op *op, Py_ssize_t i) {
    Py_ssize_t e = i, last_w = -1;
    while (e < t->n) {
        Py_UCS4 c = CP(t, e);
        if (!in_class(&op->body, c)) break;
        if (in_class(&op->tail, c)) last_w = e;
        e++;
    }
    if (e < t->n && in_class(&op->tail, CP(t, e))) {
        while (e < t->n && in_class(&op->tail, CP(t, e))) e++;
        return e;
    }
    /* W+ starts at the last W inside the U run; the character after it is not W */
    return last_w >= 0 ? last_w + 1 : -1;
}

/* U+W* from i. */
static Py_ssize_t word_upper(const Text *t, const Op *op, Py_ssize_t i) {
    Py_ssize_t e = i;
    while (e < t->n && in_class(&op->body, CP(t, e))) e++;
    if (e == i) return -1;
    while (e < t->n && in_class(&op->tail, CP(t, e))) e++;
    return e;
}

static Py_ssize_t op_word(const Text *t, const Op *op, Py_ssize_t pos) {
    Py_ssize_t (*shape)(const Text *, const Op *, Py_ssize_t) = op->kind == OP_WORD_LOWER ? word_lower : word_upper;
    Py_ssize_t end = -1;
    if (op->prefix != PREFIX_NONE && in_class(&op->pre, CP(t, pos))) end = shape(t, op, pos + 1);
    if (end < 0 && op->prefix != PREFIX_REQUIRED) end = shape(t, op, pos);
    if (end < 0) return -1;
    if (op->contraction != CONTRACTION_NONE) {
        Py_ssize_t c = contraction_at(t, end, op->contraction);
        if (c >= 0) end = c;
    }
    return end;
}

static Py_ssize_t op_ws(Text *t, const Op *op, Py_ssize_t pos) {
    ws_run(t, pos);
    Py_ssize_t hi = t->ws_hi;
    if (hi <= pos) return -1;
    switch (op->kind) {
    case OP_WS_NEWLINE:   /* \s* gives back characters until [\r\n] can match: the last CR/LF */
        return t->ws_crlf >= pos ? t->ws_crlf + 1 : -1;
    case OP_WS_BEFORE_WS: /* (?!\S) holds at the end of the text, else one character early */
        if (hi == t->n) return hi;
        return hi - pos >= 2 ? hi - 1 : -1;
    case OP_WS_END:
        return hi == t->n ? hi : -1;
    case OP_WS_LINE_END:  /* $ (MULTILINE) holds at the end of the text or before an LF */
        if (hi == t->n) return hi;
        return t->ws_lf > pos ? t->ws_lf : -1;
    }
    return -1;
}

/* The end of the match at `pos` (first op that matches), or -1. */
static Py_ssize_t match_at(const Scanner *s, Text *t, Py_ssize_t pos) {
    Py_UCS4 c = CP(t, pos);
    for (Py_ssize_t k = 0; k < s->nops; k++) {
        const Op *op = &s->ops[k];
        if (c < 128 && !((op->first[c >> 5] >> (c & 31)) & 1)) continue;
        Py_ssize_t end;
        switch (op->kind) {
        case OP_CONTRACTION: end = contraction_at(t, pos, op->contraction); break;
        case OP_RUN: end = op_run(t, op, pos); break;
        case OP_WORD_LOWER:
        case OP_WORD_UPPER: end = op_word(t, op, pos); break;
        default: end = op_ws(t, op, pos); break;
        }
        if (end > pos) return end;
    }
    return -1;
}

/* ------------------------------------------------------------------ scanning */
typedef struct {
    int64_t *v;  /* start, end of each match */
    Py_ssize_t len, cap;
} Spans;

static int spans_push(Spans *sp, Py_ssize_t a, Py_ssize_t b) {
    if (sp->len + 2 > sp->cap) {
        Py_ssize_t cap = sp->cap ? sp->cap * 2 : 256;
        int64_t *v = PyMem_RawRealloc(sp->v, (size_t)cap * sizeof(int64_t));
        if (!v) return -1;
        sp->v = v; sp->cap = cap;
    }
    sp->v[sp->len++] = a;
    sp->v[sp->len++] = b;
    return 0;
}

/* Every match of the program in the text, in order; -1 when out of memory. */
static int scan_spans(const Scanner *s, Text *t, Spans *out) {
    Py_ssize_t pos = 0;
    while (pos < t->n) {
        Py_ssize_t end = match_at(s, t, pos);
        if (end < 0) { pos++; continue; }
        if (spans_push(out, pos, end) < 0) return -1;
        pos = end;
    }
    return 0;
}

static int tiles(const Spans *sp, Py_ssize_t n) {
    Py_ssize_t prev = 0;
    for (Py_ssize_t k = 0; k < sp->len; k += 2) {
        if (sp->v[k] != prev) return 0;
        prev = (Py_ssize_t)sp->v[k + 1];
    }
    return prev == n;
}

/* The strings of a result. Short pieces repeat (spaces, newlines, common words): while a long
 * text is turned into strings, a small table keyed by content hands out the string already made
 * for an equal piece, which saves its allocation and lets the chunk cache's dict lookups hash
 * it once. Where pieces rarely repeat (CJK prose: long runs of letters), the table stops being
 * consulted after SHARE_PROBE pieces with fewer than one hit in SHARE_MIN_RATE. */
#define SHARE_MIN_TEXT 256
#define SHARE_MAX_LEN 24
#define SHARE_SLOTS 1024  /* (a table that stays in cache: larger ones lost more to misses than they saved) */
#define SHARE_PROBE 2048
#define SHARE_MIN_RATE 8

typedef struct {
    uint32_t hash;
    Py_ssize_t start, len;
    PyObject *obj;
} Shared;

typedef struct {
    PyObject *text;
    const unsigned char *data;
    int kind;
    Shared *slots;  /* NULL: every piece is a new string */
    size_t mask;
    Py_ssize_t tried, hits;
    int sharing;
} Maker;

static void maker_init(Maker *m, PyObject *text) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    m->text = text;
    m->data = PyUnicode_DATA(text);
    m->kind = PyUnicode_KIND(text);
    m->slots = NULL;
    m->mask = 0;
    m->tried = m->hits = 0;
    m->sharing = 0;
    if (n < SHARE_MIN_TEXT) return;
    size_t cap = 256;
    while (cap < SHARE_SLOTS && cap < (size_t)n / 8) cap <<= 1;
    m->slots = PyMem_Calloc(cap, sizeof(Shared));  /* (none: no sharing) */
    m->mask = cap - 1;
    m->sharing = m->slots != NULL;
}

static void maker_free(Maker *m) {
    if (!m->slots) return;
    for (size_t k = 0; k <= m->mask; k++) Py_XDECREF(m->slots[k].obj);
    PyMem_Free(m->slots);
}

static PyObject *make_piece(Maker *m, Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t len = b - a;
    if (!m->sharing || len > SHARE_MAX_LEN) return PyUnicode_Substring(m->text, a, b);
    if (++m->tried == SHARE_PROBE && m->hits * SHARE_MIN_RATE < m->tried) m->sharing = 0;
    const unsigned char *p = m->data + a * m->kind;
    size_t nbytes = (size_t)len * (size_t)m->kind;
    uint32_t h = 2166136261u;  /* FNV-1a over the piece's bytes in the text's own kind */
    for (size_t i = 0; i < nbytes; i++) h = (h ^ p[i]) * 16777619u;
    Shared *s = &m->slots[(h ^ (h >> 15)) & m->mask];
    if (s->obj && s->hash == h && s->len == len && memcmp(m->data + s->start * m->kind, p, nbytes) == 0) {
        m->hits++;
        Py_INCREF(s->obj);
        return s->obj;
    }
    PyObject *o = PyUnicode_Substring(m->text, a, b);
    if (!o) return NULL;
    Py_INCREF(o);
    Py_XSETREF(s->obj, o);
    s->hash = h; s->start = a; s->len = len;
    return o;
}

/* The matches as strings, or as (start, end) tuples. */
static PyObject *matches_result(Maker *m, const Spans *sp, int as_spans) {
    PyObject *out = PyList_New(sp->len / 2);
    if (!out) return NULL;
    for (Py_ssize_t k = 0; k < sp->len; k += 2) {
        Py_ssize_t a = (Py_ssize_t)sp->v[k], b = (Py_ssize_t)sp->v[k + 1];
        PyObject *item = as_spans ? Py_BuildValue("(nn)", a, b) : make_piece(m, a, b);
        if (!item) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, k / 2, item);
    }
    return out;
}

/* Piece `k` of the columns: its start and its text. */
static int set_piece(PyObject *starts, PyObject *texts, Py_ssize_t k, Maker *m, Py_ssize_t a, Py_ssize_t b) {
    PyObject *start = PyLong_FromSsize_t(a), *piece = start ? make_piece(m, a, b) : NULL;
    if (!piece) { Py_XDECREF(start); return -1; }
    PyList_SET_ITEM(starts, k, start);
    PyList_SET_ITEM(texts, k, piece);
    return 0;
}

/* The Isolated pieces (matches and the gaps between them) as columns: (starts, texts). */
static PyObject *pieces_result(Maker *m, const Spans *sp, Py_ssize_t n) {
    Py_ssize_t count = 0, prev = 0, k = 0;
    for (Py_ssize_t j = 0; j < sp->len; j += 2) {
        count += 1 + (sp->v[j] > prev);
        prev = (Py_ssize_t)sp->v[j + 1];
    }
    count += prev < n;
    PyObject *starts = PyList_New(count), *texts = PyList_New(count), *result = NULL;
    if (!starts || !texts) goto done;
    prev = 0;
    for (Py_ssize_t j = 0; j < sp->len; j += 2) {
        Py_ssize_t a = (Py_ssize_t)sp->v[j], b = (Py_ssize_t)sp->v[j + 1];
        if (a > prev && set_piece(starts, texts, k++, m, prev, a) < 0) goto done;
        if (set_piece(starts, texts, k++, m, a, b) < 0) goto done;
        prev = b;
    }
    if (prev < n && set_piece(starts, texts, k++, m, prev, n) < 0) goto done;
    result = PyTuple_Pack(2, starts, texts);
done:
    Py_XDECREF(starts);  /* (items not yet set are NULL, which list deallocation skips) */
    Py_XDECREF(texts);
    return result;
}

static PyObject *spans_result(PyObject *text, const Spans *sp, Py_ssize_t n, int mode) {
    if (mode == MODE_TILING && !tiles(sp, n)) Py_RETURN_NONE;
    Maker m;
    maker_init(&m, text);
    PyObject *out;
    switch (mode) {
    case MODE_FINDALL: out = matches_result(&m, sp, 0); break;
    case MODE_SPANS: out = matches_result(&m, sp, 1); break;
    default: out = pieces_result(&m, sp, n); break;
    }
    maker_free(&m);
    return out;
}

static PyObject *scan(Scanner *self, PyObject *text, int mode) {
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "expected a str, got %.80s", Py_TYPE(text)->tp_name);
        return NULL;
    }
    Text t = {PyUnicode_DATA(text), PyUnicode_KIND(text), PyUnicode_GET_LENGTH(text), 0, 0, -1, -1};
    Spans sp = {NULL, 0, 0};
    int r;
    if (t.n >= NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        r = scan_spans(self, &t, &sp);
        Py_END_ALLOW_THREADS
    } else {
        r = scan_spans(self, &t, &sp);
    }
    PyObject *result = r < 0 ? PyErr_NoMemory() : spans_result(text, &sp, t.n, mode);
    PyMem_RawFree(sp.v);
    return result;
}

static PyObject *scanner_findall(Scanner *self, PyObject *text) { return scan(self, text, MODE_FINDALL); }
static PyObject *scanner_pieces(Scanner *self, PyObject *text) { return scan(self, text, MODE_PIECES); }
static PyObject *scanner_tiling(Scanner *self, PyObject *text) { return scan(self, text, MODE_TILING); }
static PyObject *scanner_spans(Scanner *self, PyObject *text) { return scan(self, text, MODE_SPANS); }

/* ------------------------------------------------------------------ building a program */
static void class_free(CharClass *c) {
    PyMem_Free(c->ranges);
    c->ranges = NULL;
}

/* `spec` is None or (feature bits, negate, (lo, hi, lo, hi, ...)). */
static int class_parse(CharClass *c, PyObject *spec, const char *what) {
    memset(c, 0, sizeof(*c));
    if (spec == Py_None) return 0;
    unsigned long bits;
    int negate;
    PyObject *ranges;
    if (!PyArg_ParseTuple(spec, "kpO!", &bits, &negate, &PyTuple_Type, &ranges)) {
        PyErr_Format(PyExc_ValueError, "bad character class for %s", what);
        return -1;
    }
    Py_ssize_t m = PyTuple_GET_SIZE(ranges);
    if (m % 2) {
        PyErr_Format(PyExc_ValueError, "odd range list for %s", what);
        return -1;
    }
    c->used = 1;
    c->negate = negate;
    c->bits = (uint32_t)bits;
    c->nranges = m / 2;
    if (m) {
        c->ranges = PyMem_Malloc((size_t)m * sizeof(Py_UCS4));
        if (!c->ranges) { PyErr_NoMemory(); return -1; }
        for (Py_ssize_t k = 0; k < m; k++) {
            long v = PyLong_AsLong(PyTuple_GET_ITEM(ranges, k));
            if (v < 0 || v >= 0x110000 || (k && v < (long)c->ranges[k - 1] + (k % 2 ? 0 : 1))) {
                if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "ranges of %s are not sorted code points", what);
                return -1;
            }
            c->ranges[k] = (Py_UCS4)v;
        }
    }
    for (Py_UCS4 cp = 0; cp < 128; cp++)
        if (in_class_slow(c, cp)) c->ascii[cp >> 5] |= 1u << (cp & 31);
    return 0;
}

static void set_first(Op *op, Py_UCS4 cp) { op->first[cp >> 5] |= 1u << (cp & 31); }

/* The ASCII characters `op` can start a match with. */
static void op_first(Op *op) {
    for (Py_UCS4 cp = 0; cp < 128; cp++) {
        int can;
        switch (op->kind) {
        case OP_CONTRACTION: can = cp == '\''; break;
        case OP_RUN: can = in_class(&op->body, cp) || (op->prefix != PREFIX_NONE && in_class(&op->pre, cp)); break;
        case OP_WORD_LOWER:
        case OP_WORD_UPPER:
            can = in_class(&op->body, cp) || in_class(&op->tail, cp) || (op->prefix != PREFIX_NONE && in_class(&op->pre, cp));
            break;
        default: can = is_ws(cp); break;
        }
        if (can) set_first(op, cp);
    }
}

static int op_parse(Op *op, PyObject *spec) {
    PyObject *pre, *body, *tail, *post;
    memset(op, 0, sizeof(*op));
    if (!PyTuple_Check(spec) || !PyArg_ParseTuple(spec, "iiniOOOO", &op->kind, &op->prefix, &op->max, &op->contraction, &pre, &body, &tail, &post)) {
        if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "an op is (kind, prefix, max, contraction, pre, body, tail, post)");
        }
        return -1;
    }
    if (op->kind < 0 || op->kind >= OP__COUNT || op->prefix < PREFIX_NONE || op->prefix > PREFIX_REQUIRED || op->max < 0
        || op->contraction < CONTRACTION_NONE || op->contraction > CONTRACTION_IGNORE_CASE) {
        PyErr_SetString(PyExc_ValueError, "op kind, prefix, max or contraction out of range");
        return -1;
    }
    if (class_parse(&op->pre, pre, "pre") < 0 || class_parse(&op->body, body, "body") < 0
        || class_parse(&op->tail, tail, "tail") < 0 || class_parse(&op->post, post, "post") < 0)
        return -1;
    int words = op->kind == OP_WORD_LOWER || op->kind == OP_WORD_UPPER;
    if ((op->prefix != PREFIX_NONE && !op->pre.used) || ((op->kind == OP_RUN || words) && !op->body.used) || (words && !op->tail.used)
        || (op->kind == OP_CONTRACTION && op->contraction == CONTRACTION_NONE)) {
        PyErr_SetString(PyExc_ValueError, "op lacks a class or a contraction rule it needs");
        return -1;
    }
    op_first(op);
    return 0;
}

static void scanner_clear_ops(Scanner *self) {
    for (Py_ssize_t k = 0; k < self->nops; k++) {
        class_free(&self->ops[k].pre); class_free(&self->ops[k].body);
        class_free(&self->ops[k].tail); class_free(&self->ops[k].post);
    }
    PyMem_Free(self->ops);
    self->ops = NULL;
    self->nops = 0;
}

static int scanner_init(Scanner *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"program", NULL};
    PyObject *program;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!", kwlist, &PyTuple_Type, &program)) return -1;
    if (self->ops) {  /* (a scan may be running without the GIL over these ops) */
        PyErr_SetString(PyExc_TypeError, "a Scanner's program cannot be replaced");
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(program);
    if (n == 0) {
        PyErr_SetString(PyExc_ValueError, "a program needs at least one op");
        return -1;
    }
    self->ops = PyMem_Calloc((size_t)n, sizeof(Op));
    if (!self->ops) { PyErr_NoMemory(); return -1; }
    self->nops = n;
    for (Py_ssize_t k = 0; k < n; k++)
        if (op_parse(&self->ops[k], PyTuple_GET_ITEM(program, k)) < 0) { scanner_clear_ops(self); return -1; }
    Py_INCREF(program);
    Py_XSETREF(self->program, program);
    return 0;
}

static void scanner_dealloc(Scanner *self) {
    scanner_clear_ops(self);
    Py_XDECREF(self->program);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *scanner_repr(Scanner *self) {
    return PyUnicode_FromFormat("Scanner(%zd ops)", self->nops);
}

static PyMethodDef scanner_methods[] = {
    {"findall", (PyCFunction)scanner_findall, METH_O, "findall(text) -> the matches, as strings (regex findall)"},
    {"pieces", (PyCFunction)scanner_pieces, METH_O,
     "pieces(text) -> (starts, texts): the matches and the gaps between them (Isolated split)"},
    {"tiling", (PyCFunction)scanner_tiling, METH_O, "tiling(text) -> (starts, texts) of the matches when they tile the text, else None"},
    {"spans", (PyCFunction)scanner_spans, METH_O, "spans(text) -> the (start, end) of every match"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tokviz.engine._scan.Scanner",
    .tp_basicsize = sizeof(Scanner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Scanner(program): the matches of one published split pattern (see tokviz.engine.scanners)",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)scanner_init,
    .tp_dealloc = (destructor)scanner_dealloc,
    .tp_repr = (reprfunc)scanner_repr,
    .tp_methods = scanner_methods,
};

/* ------------------------------------------------------------------ module */
static PyObject *features(PyObject *mod, PyObject *args) {
    Py_ssize_t lo, hi;
    if (!PyArg_ParseTuple(args, "nn", &lo, &hi)) return NULL;
    if (lo < 0 || hi > 0x110000 || lo > hi) {
        PyErr_SetString(PyExc_ValueError, "expected 0 <= start <= stop <= 0x110000");
        return NULL;
    }
    PyObject *out = PyList_New(hi - lo);
    if (!out) return NULL;
    for (Py_ssize_t cp = lo; cp < hi; cp++) {
        PyObject *v = PyLong_FromUnsignedLong(features_of((Py_UCS4)cp));
        if (!v) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, cp - lo, v);
    }
    return out;
}

static PyObject *fold_extras(PyObject *mod, PyObject *unused) {
    PyObject *out = PyList_New(SCAN_N_FOLD_EXTRAS);
    if (!out) return NULL;
    for (int k = 0; k < SCAN_N_FOLD_EXTRAS; k++) {
        PyObject *v = Py_BuildValue("(CI)", (int)scan_fold_extras[k][0], (unsigned)scan_fold_extras[k][1]);
        if (!v) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, k, v);
    }
    return out;
}

/* (members, sum of their code points) of each feature bit over all code points */
static PyObject *checksums(PyObject *mod, PyObject *unused) {
    unsigned long long count[32] = {0}, total[32] = {0};
    for (Py_UCS4 cp = 0; cp < 0x110000; cp++) {
        uint32_t f = features_of(cp);
        for (int b = 0; f; b++, f >>= 1)
            if (f & 1) { count[b]++; total[b] += cp; }
    }
    PyObject *out = PyList_New(32);
    if (!out) return NULL;
    for (int b = 0; b < 32; b++) {
        PyObject *v = Py_BuildValue("(KK)", count[b], total[b]);
        if (!v) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, b, v);
    }
    return out;
}

static PyMethodDef module_methods[] = {
    {"features", features, METH_VARARGS, "features(start, stop) -> the feature word of each code point in range"},
    {"checksums", checksums, METH_NOARGS, "checksums() -> (members, sum of code points) of each feature bit"},
    {"fold_extras", fold_extras, METH_NOARGS, "fold_extras() -> (letter, code point) pairs (?i:letter) also matches"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "tokviz.engine._scan",
    "Native scanners for the published pre-tokenizer split patterns (see tokviz.engine.scanners).",
    -1, module_methods,
};

static int add_features(PyObject *mod) {
    static const char *names[] = {
        "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe",
        "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn",
    };
    static const uint32_t bits[] = {
        SCAN_Lu, SCAN_Ll, SCAN_Lt, SCAN_Lm, SCAN_Lo, SCAN_Mn, SCAN_Mc, SCAN_Me, SCAN_Nd, SCAN_Nl,
        SCAN_No, SCAN_Pc, SCAN_Pd, SCAN_Ps, SCAN_Pe, SCAN_Pi, SCAN_Pf, SCAN_Po, SCAN_Sm, SCAN_Sc,
        SCAN_Sk, SCAN_So, SCAN_Zs, SCAN_Zl, SCAN_Zp, SCAN_Cc, SCAN_Cf, SCAN_Cs, SCAN_Co, SCAN_Cn,
    };
    PyObject *d = PyDict_New();
    if (!d) return -1;
    for (size_t k = 0; k < sizeof(bits) / sizeof(bits[0]); k++) {
        PyObject *v = PyLong_FromUnsignedLong(bits[k]);
        if (!v || PyDict_SetItemString(d, names[k], v) < 0) { Py_XDECREF(v); Py_DECREF(d); return -1; }
        Py_DECREF(v);
    }
    PyObject *ws = PyLong_FromUnsignedLong(SCAN_WS), *hidden = PyLong_FromUnsignedLong(SCAN_HIDDEN);
    int r = (!ws || !hidden || PyDict_SetItemString(d, "WS", ws) < 0 || PyDict_SetItemString(d, "HIDDEN", hidden) < 0) ? -1 : 0;
    Py_XDECREF(ws); Py_XDECREF(hidden);
    if (r == 0) r = PyModule_AddObject(mod, "FEATURES", d);
    if (r < 0) Py_DECREF(d);
    return r;
}

PyMODINIT_FUNC PyInit__scan(void) {
    if (PyType_Ready(&ScannerType) < 0) return NULL;
    PyObject *mod = PyModule_Create(&module);
    if (!mod) return NULL;
    Py_INCREF(&ScannerType);
    if (PyModule_AddObject(mod, "Scanner", (PyObject *)&ScannerType) < 0
        || add_features(mod) < 0
        || PyModule_AddStringConstant(mod, "UNICODE_VERSION", SCAN_UNICODE_VERSION) < 0
        || PyModule_AddStringConstant(mod, "REGEX_VERSION", SCAN_REGEX_VERSION) < 0
        || PyModule_AddIntConstant(mod, "OP_CONTRACTION", OP_CONTRACTION) < 0
        || PyModule_AddIntConstant(mod, "OP_RUN", OP_RUN) < 0
        || PyModule_AddIntConstant(mod, "OP_WORD_LOWER", OP_WORD_LOWER) < 0
        || PyModule_AddIntConstant(mod, "OP_WORD_UPPER", OP_WORD_UPPER) < 0
        || PyModule_AddIntConstant(mod, "OP_WS_NEWLINE", OP_WS_NEWLINE) < 0
        || PyModule_AddIntConstant(mod, "OP_WS_BEFORE_WS", OP_WS_BEFORE_WS) < 0
        || PyModule_AddIntConstant(mod, "OP_WS_END", OP_WS_END) < 0
        || PyModule_AddIntConstant(mod, "OP_WS_LINE_END", OP_WS_LINE_END) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
