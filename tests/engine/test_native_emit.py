"""The pipeline's column kernels: the native ``emit``, ``entry`` and ``bpe_utf8_entry`` against
their Python twins (`emit_columns`, `entry_of`, `Tokenizer._mapped_entry`), column by column.

Random blocks of chunk cache entries go through both ``emit`` kernels, for identity and
non-identity alignments (list, array and lazy sequence columns), ASCII and non-ASCII texts
(a UTF-8 table), and every byte rule; whole encodes of hypothesis text run through a tokenizer
and its pure-Python twin, byte-level and plain, with a normalizer that changes the text and
without. With ``TOKVIZ_PURE_PYTHON=1`` only the twins run (tests/engine/test_paths.py covers
them).
"""

from __future__ import annotations

from array import array
from itertools import accumulate

import pytest
from hypothesis import given, settings, strategies as st
from support import ModuleCache, bundle_path, corpus_text, python_twin, tiktoken_encoding

import tokviz
from tokviz.engine import kernels
from tokviz.engine.chunk_cache import (
    RULE_CHARS,
    RULE_EXACT,
    RULE_HELD,
    SLOT_BYTE_PIECES,
    SLOT_IRREGULAR,
    Block,
    OutColumns,
    emit_columns,
    entry_of,
)
from tokviz.engine.columns import int_column
from tokviz.engine.models.bpe import BPE
from tokviz.engine.reference import BYTE_PIECES
from tokviz.engine.text import OffsetMap

native = kernels.native
needs_native = pytest.mark.skipif(native is None, reason="native core not built or TOKVIZ_PURE_PYTHON=1")


class _Lazy:
    """A read-only int column that is neither a list nor a buffer (like a lazy alignment)."""

    def __init__(self, values: list[int]) -> None:
        self._values = values

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, i: int) -> int:
        return self._values[i]


@st.composite
def chunk_columns(draw: st.DrawFn) -> tuple[list, list, list, list, list, list, bool]:
    """The columns a model gives for one chunk: ids, tokens (some ``<0xNN>`` pieces), char
    starts/stops and model spans (some empty when allowed), tokens tiling the chunk."""
    m = draw(st.integers(0, 6))
    widths = draw(st.lists(st.integers(0, 3), min_size=m, max_size=m))
    maybe_empty = draw(st.booleans())
    if not maybe_empty:
        widths = [w or 1 for w in widths]
    stops = list(accumulate(widths))
    starts = [s - w for s, w in zip(stops, widths)]
    ids = draw(st.lists(st.integers(0, 300), min_size=m, max_size=m))
    toks = [draw(st.sampled_from(["a", "<0x41>", "<0xE3>", "bc", "<0x4>", "\u65e5"])) for _ in range(m)]
    return ids, toks, starts, stops, starts, stops, maybe_empty


def _entry_pair(cols: tuple) -> tuple[tuple, tuple]:
    ids, toks, first, stop, m_starts, m_ends, maybe_empty = cols
    args = (ids, toks, first, stop, m_starts, m_ends, maybe_empty, BYTE_PIECES)
    return entry_of(*args), native.entry(*args)  # type: ignore[union-attr]


@needs_native
class TestEntry:
    @settings(max_examples=300, deadline=None)
    @given(chunk_columns())
    def test_native_entry_equals_twin(self, cols: tuple) -> None:
        python, c = _entry_pair(cols)
        assert c == python

    def test_hand_checked_entry(self) -> None:
        # tokens "ab" (0..2), "" (2..2), "<0x41>" (2..3): the empty one gets first 0 / stop 1,
        # last = stop - 1 = (1, 0, 2); empties (1,), byte pieces (2,), irregular
        c = native.entry([5, 6, 7], ["ab", "", "<0x41>"], [0, 2, 2], [2, 2, 3], [0, 2, 2], [2, 2, 3],  # type: ignore[union-attr]
                         True, BYTE_PIECES)
        assert c == ((5, 6, 7), ("ab", "", "<0x41>"), (0, 0, 2), (2, 1, 3), (1, 0, 2), (0, 2, 2), (2, 2, 3),
                     (1,), (2,), True)

    def test_columns_of_different_lengths_are_refused(self) -> None:
        with pytest.raises(ValueError, match="differ in length"):
            native.entry([1], ["a", "b"], [0], [1], [0], [1], True, BYTE_PIECES)  # type: ignore[union-attr]


@needs_native
class TestUtf8Positions:
    @settings(max_examples=200, deadline=None)
    @given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(["\ud800", "\udfff"]), max_size=300))
    def test_native_table_equals_twin(self, text: str) -> None:
        table = array("q")
        table.frombytes(native.utf8_positions(text))  # type: ignore[union-attr]
        saved, kernels.native = kernels.native, None  # (an OffsetMap picks its kernel when it builds the table)
        try:
            assert table == OffsetMap(text)._utf8_table()
        finally:
            kernels.native = saved
        assert OffsetMap(text)._utf8_table() == table

    def test_hand_checked(self) -> None:
        # "a😀é": a at byte 0, 😀 (4 bytes) at 1, é (2 bytes) at 5, the end at 7
        table = array("q")
        table.frombytes(native.utf8_positions("a\U0001f600\u00e9"))  # type: ignore[union-attr]
        assert list(table) == [0, 1, 5, 7]


def _rank_pair() -> tuple:
    """A toy rank-mode BPE (all strings over "abc" up to 3 chars, shuffled ranks above the
    single chars) built natively and as its pure-Python twin."""
    import random

    tokens = [a + b + c for a in "abc" for b in ["", *"abc"] for c in ["", *"abc"] if b or not c]
    ranks = list(range(len(tokens)))
    random.Random(5).shuffle(ranks)
    table = dict(zip(tokens, ranks))
    return BPE.from_ranks(table, cache_capacity=0), python_twin(lambda: BPE.from_ranks(table, cache_capacity=0))


_RANKS = _rank_pair() if native is not None else None


@needs_native
class TestRankPairMemo:
    """Rank mode remembers recent pairs by id in the table (shared by every call and thread)."""

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet="abc", max_size=300))
    def test_one_table_across_texts_equals_twin(self, text: str) -> None:
        fast, ref = _RANKS  # type: ignore[misc]
        assert fast._native_table is not None and ref._native_table is None
        assert fast.tokenize(text) == ref.tokenize(text)

    def test_many_distinct_pairs_equal_tiktoken(self) -> None:
        # a Japanese novel under cl100k: far more distinct pairs than memo slots, so slots are
        # shared by different pairs and each answer must be checked against its pair
        ref = tiktoken_encoding("cl100k_base/cl100k_base.tiktoken")
        tok = tokviz.load(bundle_path("cl100k_base/cl100k_base.tiktoken"))
        text = corpus_text("wagahaiwa_nekodearu.txt")
        assert tok.encode(text).ids == ref.encode_ordinary(text)

    def test_threads_share_the_memo(self) -> None:
        import random
        from concurrent.futures import ThreadPoolExecutor

        fast, ref = _RANKS  # type: ignore[misc]
        rng = random.Random(11)
        # long texts take the heap loop, which runs without the GIL
        texts = ["".join(rng.choice("abc") for _ in range(rng.randrange(200, 3000))) for _ in range(48)]
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(fast.tokenize, texts))
        assert got == [ref.tokenize(t) for t in texts]


@st.composite
def blocks(draw: st.DrawFn) -> dict:
    """A block of chunks over an original text: entries, chunk starts that tile a piece, the
    piece's alignment (identity or arrays), the UTF-8 table (ASCII or not) and a byte rule."""
    entries = [entry_of(*cols, BYTE_PIECES) for cols in draw(st.lists(chunk_columns(), min_size=1, max_size=8))]
    if draw(st.booleans()):  # the int columns as int32 arrays (an entry of a chunk too long to cache)
        entries = [tuple(int_column(x) if k in (0, 2, 3, 4, 5, 6) else x for k, x in enumerate(e)) for e in entries]
    widths = [max([1, *e[3]]) for e in entries]  # a chunk is as long as its last stop (at least 1)
    starts = list(accumulate(widths[:-1], initial=draw(st.integers(0, 3))))
    n_piece = starts[-1] + widths[-1] + draw(st.integers(0, 2))
    orig = draw(st.integers(0, 5))
    text = draw(st.text(alphabet="ab\u00e9\u65e5\U0001f600", min_size=orig + n_piece + 4, max_size=orig + n_piece + 8))
    ascii_ = draw(st.booleans())
    if ascii_:
        text = "x" * len(text)
    u8 = None if ascii_ else OffsetMap(text).utf8_table()
    alignment = draw(st.sampled_from(["identity", "list", "array", "lazy"]))
    p_starts = p_ends = None
    if alignment != "identity":  # a non-decreasing map of piece chars into the original
        lo = sorted(draw(st.lists(st.integers(orig, len(text) - 1), min_size=n_piece, max_size=n_piece)))
        hi = [a + draw(st.integers(0, 1)) for a in lo]
        make = {"list": list, "array": lambda v: array("q", v), "lazy": _Lazy}[alignment]
        p_starts, p_ends = make(lo), make(hi)
    rule = draw(st.sampled_from([RULE_CHARS, RULE_EXACT, RULE_HELD] if alignment == "identity" else [RULE_CHARS, RULE_HELD]))
    holds: bool | list[bool] = rule == RULE_EXACT
    bases = None
    if rule == RULE_HELD:
        holds = draw(st.lists(st.booleans(), min_size=len(entries), max_size=len(entries)))
        bases = draw(st.lists(st.integers(0, 40), min_size=len(entries), max_size=len(entries)))
    return {"entries": entries, "starts": starts, "orig": orig, "p_starts": p_starts, "p_ends": p_ends, "u8": u8,
            "rule": rule, "bases": bases, "holds": holds, "word": draw(st.integers(0, 1000))}


def _block(block: dict) -> Block:
    return Block(*[block[k] for k in Block._fields])


def _out() -> OutColumns:
    out = OutColumns()  # (appended to, not replaced: one token there already)
    for col, v in ((out.ids, 7), (out.starts, 0), (out.ends, 0), (out.byte_starts, 0), (out.byte_ends, 0), (out.word_ids, -1)):
        col.append(v)
    out.tokens.append("pre")
    return out


def _lists(out: OutColumns) -> tuple:
    return (list(out.ids), out.tokens, list(zip(out.starts, out.ends)), list(zip(out.byte_starts, out.byte_ends)),
            list(out.word_ids))


def _run(kernel, block: dict) -> tuple:  # noqa: ANN001 - either kernel
    out = _out()
    irregular = kernel(block["entries"], _block(block), out)
    return (list(irregular), *_lists(out))


@needs_native
class TestEmit:
    @settings(max_examples=500, deadline=None)
    @given(blocks())
    def test_native_emit_equals_twin(self, block: dict) -> None:
        assert _run(native.emit, block) == _run(emit_columns, block)  # type: ignore[union-attr]

    def test_hand_checked_block(self) -> None:
        # text "xé日z" (UTF-8 bytes x=0, é=1..2, 日=3..5, z=6): chunks "x" at piece char 0 and
        # "é日" at 1 (identity, orig 0); tokens "x" (0..1), "é" (0..1), "日" (1..2) of chunk 1
        text = "xé日z"
        e0 = entry_of([1], ["x"], [0], [1], [0], [1], False, BYTE_PIECES)
        e1 = entry_of([2, 3], ["é", "日"], [0, 1], [1, 2], [0, 2], [2, 5], False, BYTE_PIECES)
        block = {"entries": [e0, e1], "starts": [0, 1], "orig": 0, "p_starts": None, "p_ends": None,
                 "u8": OffsetMap(text).utf8_table(), "rule": RULE_CHARS, "bases": None, "holds": False, "word": 4}
        irregular, ids, toks, offsets, byte_offsets, words = _run(native.emit, block)  # type: ignore[union-attr]
        assert irregular == []
        assert ids[1:] == [1, 2, 3] and toks[1:] == ["x", "é", "日"] and words[1:] == [4, 5, 5]
        assert offsets[1:] == [(0, 1), (1, 2), (2, 3)]
        assert byte_offsets[1:] == [(0, 1), (1, 3), (3, 6)]
        # the exact rule: chunk 1 starts at byte 1 (u8[1]); its model spans 0..2 and 2..5 -> 1..3, 3..6
        assert _run(native.emit, {**block, "rule": RULE_EXACT})[4][1:] == [(0, 1), (1, 3), (3, 6)]  # type: ignore[union-attr]

    def test_position_outside_the_alignment_is_an_index_error_and_appends_nothing(self) -> None:
        e = entry_of([1], ["x"], [0], [1], [0], [1], False, BYTE_PIECES)
        block = {"entries": [e], "starts": [3], "orig": 0, "p_starts": [0, 1], "p_ends": [1, 2], "u8": None,
                 "rule": RULE_CHARS, "bases": None, "holds": False, "word": 0}
        out = _out()
        before = _lists(out)
        with pytest.raises(IndexError):
            native.emit(block["entries"], _block(block), out)  # type: ignore[union-attr]
        assert _lists(out) == before

    def test_malformed_entry_is_a_type_error(self) -> None:
        with pytest.raises(TypeError, match="tuple layout"):
            native.emit([(1, 2)], Block([0], 0, None, None, None, RULE_CHARS, None, False, 0), OutColumns())  # type: ignore[union-attr]

    def test_the_layout_is_checked_at_import(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from types import SimpleNamespace

        from tokviz.engine import chunk_cache

        chunk_cache._check_native_layout()  # the built core matches
        wrong = SimpleNamespace(**{k: getattr(native, k) for k in dir(native) if k.isupper()})
        wrong.ENTRY_LAST += 1
        monkeypatch.setattr(kernels, "native", wrong)
        with pytest.raises(ImportError, match="ENTRY_LAST"):
            chunk_cache._check_native_layout()


@needs_native
class TestUtf8EntryFallback:
    def test_a_vocab_without_some_byte_proxies_falls_back_to_python(self) -> None:
        # proxies of "a", "b" and "Ġ" (the space) only: "é" and "c" have no one-char token, so
        # those chunks go to `_mapped_entry` (the unknown token), the others stay native
        from tokviz.engine.pre_tokenizers.byte_level import ByteLevel
        from tokviz.engine.tokenizer import Tokenizer

        vocab = {"<unk>": 0, "a": 1, "b": 2, "\u0120": 3, "ab": 4, "\u0120a": 5}
        merges = [("a", "b"), ("\u0120", "a")]

        def make() -> Tokenizer:
            return Tokenizer(BPE(vocab, merges, unk_token="<unk>"), pre_tokenizer=ByteLevel(add_prefix_space=False))

        tok, twin = make(), python_twin(make)
        assert tok._mapped_maker() is not False and twin._utf8_maker in (None, False)
        for text in ("ab ab", "ab é c", "é", "aab\u00e9b"):
            a, b = tok.encode(text), twin.encode(text)
            assert (a.ids, a.tokens, a.offsets, a.byte_offsets) == (b.ids, b.tokens, b.offsets, b.byte_offsets)
        # by hand: chunks "ab" -> ab (4); "Ġab": (a, b) ranks before (Ġ, a), so Ġ (3) + ab (4)
        assert tok.encode("ab ab").ids == [4, 3, 4]

    def test_a_merged_byte_piece_is_marked_as_in_the_twin(self) -> None:
        # a byte-level vocab in which the proxies of "<0x41>" merge into that very string (a
        # byte-fallback piece): the native entry marks it (byte pieces, irregular) exactly as
        # `_mapped_entry` does, and a chunk without one has none
        from tokviz.engine.byte_alphabet import bytes_to_proxy
        from tokviz.engine.pre_tokenizers.byte_level import ByteLevel
        from tokviz.engine.tokenizer import Tokenizer

        vocab = {bytes_to_proxy(bytes([b])): b for b in range(256)}
        merges = [("<", "0"), ("<0", "x"), ("<0x", "4"), ("<0x4", "1"), ("<0x41", ">")]
        for left, right in merges:
            vocab[left + right] = len(vocab)
        tok = Tokenizer(BPE(vocab, merges), pre_tokenizer=ByteLevel(add_prefix_space=False, use_regex=False))
        maker = tok._mapped_maker()
        assert maker is not tok._mapped_entry  # the native entry
        for text in ("<0x41>", "a<0x41>b", "<0x4", "abc"):
            assert maker(text) == tok._mapped_entry(text), text
        assert maker("a<0x41>")[SLOT_BYTE_PIECES] == (1,) and maker("a<0x41>")[SLOT_IRREGULAR] is True
        assert maker("abc")[SLOT_BYTE_PIECES] == () and maker("abc")[SLOT_IRREGULAR] is False

    def test_the_tokenizer_is_freed_by_reference_counting(self) -> None:
        import gc
        import weakref

        tok = tokviz.load(bundle_path("gpt2/r50k_base.tiktoken"))
        tok.encode("h\u00e9llo")
        ref = weakref.ref(tok)
        enabled = gc.isenabled()
        gc.disable()
        try:
            del tok
            assert ref() is None  # (no cycle through the native entry maker's fallback)
        finally:
            if enabled:
                gc.enable()


# byte-level BPE with identity pieces (r50k, qwen3), a normalizer that changes the text (BERT
# uncased: lowercase, accents stripped), Metaspace-style normalization with byte fallback
# (Mistral's tokenizer.json: irregular chunks), SentencePiece Unigram plain chunks (ALBERT)
BUNDLES = ["gpt2/r50k_base.tiktoken", "qwen3/tokenizer.json", "bert-base-uncased/tokenizer.json",
           "mistral-7b-v0.1/tokenizer.json", "albert-30k-clean/30k-clean.model"]
mixed = st.lists(st.sampled_from(list("ab Z\n\t.,1") + ["\u00c9", "\u00e9", "\u65e5\u672c", "\U0001f600", "\u0301",
                                                        "\u3000", "\u0f00", "<0x41>"]), max_size=60).map("".join)
_loaded = ModuleCache()


def _pair(rel: str) -> tuple:
    """The bundle loaded natively and as its pure-Python twin (once per test run)."""
    if rel not in _loaded:
        path = bundle_path(rel)
        _loaded[rel] = (tokviz.load(path), python_twin(lambda: tokviz.load(path)))
    return _loaded[rel]


@needs_native
@pytest.mark.parametrize("rel", BUNDLES, ids=lambda r: r.split("/")[0])
class TestWholeEncodes:
    @settings(max_examples=60, deadline=None)
    @given(text=mixed)
    def test_native_encode_equals_pure_python(self, rel: str, text: str) -> None:
        tok, twin = _pair(rel)
        tok.clear_caches()
        twin.clear_caches()
        for _ in range(2):  # cold, then every chunk a cache hit
            a, b = tok.encode(text), twin.encode(text)
            assert (a.ids, a.tokens, a.offsets, a.byte_offsets, a.word_ids) == (b.ids, b.tokens, b.offsets,
                                                                                b.byte_offsets, b.word_ids)

    def test_twin_runs_pure_python(self, rel: str) -> None:
        tok, twin = _pair(rel)
        assert tok._emit_kernel is native.emit and twin._emit_kernel is emit_columns  # type: ignore[union-attr]
