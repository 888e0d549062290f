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
 *    With byte fallback a char that is no token becomes its UTF-8 bytes' pieces; a long chunk
 *    is cut where no merge can join two neighbours and merged part by part (bpe.c).
 * 2. The WordPiece longest-match loop over one word (wordpiece.c).
 * 3. The Unigram Viterbi of one text over the model's character trie, in SentencePiece's
 *    float32 (``Unigram._dp_sp``: path scores stored as C floats, ties kept by the earlier
 *    start, re-basing at +-1e5) or HF's float64 (``Unigram._viterbi_f64``) (unigram.c). The
 *    Python functions are the reference; the C mirrors them statement by statement.
 * 4. SentencePiece ``.model`` kernels: the precompiled-charsmap normalization with its
 *    alignment, the SentencePiece BPE merge loop and the unknown-run / byte-fallback step
 *    (spm.c).
 * 5. The pipeline's column loop (`emit`: a block of chunk cache entries -> ids, tokens, char and
 *    byte offsets, word ids appended to the encode's lists) and its cache entries (`entry`,
 *    `bpe_utf8_entry`, `bpe_text_entry`), twins of `emit_columns`, `entry_of`
 *    (tokviz/engine/chunk_cache.py, whose slot constants give the entry layout) and
 *    `Tokenizer._mapped_entry` (tokviz/engine/tokenizer.py) (columns.c).
 *
 * Traces (merge history, lattices), dropout and everything else stay in Python. Tables are
 * opaque capsules built once per model from the Python model's own data.
 *
 * Design notes: a flat scan for pieces up to FLAT_LIMIT symbols (as tiktoken does for short
 * pieces; above it the heap wins), its minimum taken without branches; one open-addressing
 * table type (64-bit keys, splitmix64 hash) serves pairs, single characters, the Unigram trie's
 * rare code points and the SentencePiece tables; the Unigram trie itself is arrays over dense
 * symbols (a hashed probe per step of the walk would cost more than the DP around it); the
 * output columns share their int objects (fresh ones for every id, start and end would cost as
 * much as the DP); the GIL is released around the loops of long inputs (they read only this
 * module's memory and an immutable str). Rank mode looks a pair up by its text, so a table also
 * keeps a small memo of recent pairs by id (one atomic word per slot). The content table (rank
 * mode, ignore_merges, WordPiece) keeps hash, id and arena offset in one slot and the tokens'
 * code points in one arena: a lookup reads a slot and, on a hash match, one arena run; slots are
 * prefetched while it fills. A byte-level chunk of up to FLAT_LIMIT bytes merges in a stack
 * scratch, its UTF-8 encoded there too (no allocation per chunk). bench/bench_bpe_kernel.py and
 * bench/bench_encode.py measure these choices.
 */
#include "table.h"

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
    {"wordpiece_table", py_wordpiece_table, METH_VARARGS,
     "wordpiece_table(vocab, tail, unk_id, max_input_chars_per_word) -> table (tail: continuation tokens without the prefix)"},
    {"wordpiece_tokenize", py_wordpiece_tokenize, METH_VARARGS,
     "wordpiece_tokenize(table, word) -> (ids, starts, ends) | None (the unk token is needed and not in the vocab)"},
    {"unigram_trie", py_unigram_trie, METH_VARARGS, "unigram_trie(pieces, scores, ids) -> trie"},
    {"unigram_viterbi", py_unigram_viterbi, METH_VARARGS,
     "unigram_viterbi(trie, text, start_score, unk_score, unk_id, f32[, merge_unk]) -> (ids, starts, ends, score, steps) or None"},
    {"spm_charsmap_check", py_spm_charsmap_check, METH_VARARGS,
     "spm_charsmap_check(blob, budget) -> bool (would the Python decode of the charsmap succeed?)"},
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
     "emit(entries, block, out) -> indexes of the chunks to redo (appends a block's tokens to out's columns)"},
    {"bpe_utf8_entry", py_bpe_utf8_entry, METH_VARARGS,
     "bpe_utf8_entry(table, proxies, id_table, byte_pieces, fallback, text) -> chunk cache entry of a byte-level chunk"},
    {"bpe_text_entry", py_bpe_text_entry, METH_VARARGS,
     "bpe_text_entry(table, id_table, byte_pieces, fallback, limit, text) -> chunk cache entry of a chunk seen as it is"},
    {"utf8_positions", py_utf8_positions, METH_VARARGS,
     "utf8_positions(text) -> bytes: the UTF-8 position of every char boundary as native int64s"},
    {"entry", py_entry, METH_VARARGS,
     "entry(ids, tokens, first, stop, model_starts, model_ends, maybe_empty, byte_pieces) -> chunk cache entry"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "tokviz.engine._native",
    .m_doc = "The optional native core: the engine's hot loops in C (see tokviz/engine/_native/module.c).",
    .m_size = -1,
    .m_methods = methods,
};

/* The entry, rule and block layouts as module constants: chunk_cache.py checks at import that
 * its SLOT_*, RULE_* and `Block` fields are the same numbers. */
static int add_layout(PyObject *m) {
    static const struct { const char *name; int value; } layout[] = {
        {"ENTRY_IDS", ENTRY_IDS}, {"ENTRY_TOKENS", ENTRY_TOKENS}, {"ENTRY_FIRST", ENTRY_FIRST},
        {"ENTRY_STOP", ENTRY_STOP}, {"ENTRY_LAST", ENTRY_LAST}, {"ENTRY_MODEL_STARTS", ENTRY_MODEL_STARTS},
        {"ENTRY_MODEL_ENDS", ENTRY_MODEL_ENDS}, {"ENTRY_EMPTIES", ENTRY_EMPTIES},
        {"ENTRY_BYTE_PIECES", ENTRY_BYTE_PIECES}, {"ENTRY_IRREGULAR", ENTRY_IRREGULAR}, {"ENTRY_SLOTS", ENTRY_SLOTS},
        {"RULE_CHARS", RULE_CHARS}, {"RULE_EXACT", RULE_EXACT}, {"RULE_HELD", RULE_HELD},
        {"BLOCK_FIELDS", BLOCK_FIELDS},
    };
    for (size_t k = 0; k < sizeof(layout) / sizeof(layout[0]); k++)
        if (PyModule_AddIntConstant(m, layout[k].name, layout[k].value) < 0) return -1;
    return 0;
}

PyMODINIT_FUNC PyInit__native(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && add_layout(m) < 0) Py_CLEAR(m);
    return m;
}
