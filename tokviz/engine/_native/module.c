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
 * 2. The Unigram Viterbi of one text over the model's character trie, in SentencePiece's
 *    float32 (``Unigram._dp_sp``: path scores stored as C floats, ties kept by the earlier
 *    start, re-basing at +-1e5) or HF's float64 (``Unigram._viterbi_f64``). The Python
 *    functions are the reference; this file mirrors them statement by statement.
 *
 * 3. SentencePiece ``.model`` kernels: the precompiled-charsmap normalization with its
 *    alignment, the SentencePiece BPE merge loop and the unknown-run / byte-fallback step
 *    (section "SentencePiece" below).
 * 4. The pipeline's column loop (`emit`: a block of chunk cache entries -> ids, tokens, char and
 *    byte offsets, word ids appended to the encode's lists) and its cache entries (`entry`,
 *    `bpe_utf8_entry`), twins of `emit_columns`, `entry_of` (tokviz/engine/chunk_cache.py, whose slot
 *    constants give the entry layout) and `Tokenizer._mapped_entry` (tokviz/engine/tokenizer.py).
 *
 * Traces (merge history, lattices), dropout and everything else stay in Python. Tables are
 * opaque capsules built once per model from the Python model's own data.
 *
 * Performance notes: a flat scan for pieces up to FLAT_LIMIT symbols (as tiktoken does for
 * short pieces; above it the heap wins); one open-addressing table type (64-bit keys,
 * splitmix64 hash) serves pairs, single characters, the Unigram trie's rare code points and the
 * SentencePiece tables (rank mode's content table is its own slot layout, below); the
 * Unigram trie itself is arrays over dense symbols (a hashed probe per step of the walk, as the
 * trie first had, cost more than the DP around it), and fresh int objects for every id, start
 * and end cost as much as the DP, so the output columns share them; a branch-free candidate
 * update in the float32 DP bought nothing and was dropped; the GIL is released around
 * the loops of long inputs (they read only this module's memory and an immutable str). Rank
 * mode looks a pair up by its text, so a table also keeps a small memo of recent pairs by id
 * (one atomic word per slot); a larger memo bought little more, nor did a smaller one. The
 * content table (rank mode, ignore_merges) keeps hash, id and arena offset in one slot, the
 * tokens' code points in one arena: a lookup reads a slot and, on a hash match, one arena run
 * (it used to chase a key array, a value array, a token pointer and the token's str). The flat
 * scan's minimum is taken without branches. A byte-level chunk of up to FLAT_LIMIT bytes
 * merges in a stack scratch, its UTF-8 encoded there too (no allocation per chunk). Tried and
 * dropped: a two-pass minimum over a 32-bit rank column (vectorized, but slower on the usual
 * short piece and one more column to move), one record per symbol so that a merge moves one
 * array, a fast-call `bpe_utf8_entry`, and prefetching the first pairs of a scan (none
 * measurable: the memo answers most pairs); prefetching slots while the content table fills
 * is kept.
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
     "emit(entries, block, out) -> irregular chunk indexes (appends a block's tokens to out's columns)"},
    {"bpe_utf8_entry", py_bpe_utf8_entry, METH_VARARGS,
     "bpe_utf8_entry(table, proxies, id_table, byte_pieces, fallback, text) -> chunk cache entry of a byte-level chunk"},
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
