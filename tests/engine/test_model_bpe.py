"""BPE model: hand-checkable merge semantics, options, dropout, traces, cache, long chunks, and
parity with HF tokenizers' BPE model (merges mode) and tiktoken (rank mode) on single chunks.

Parity inputs are pre-token chunks: the tricky strings, corpus lines/words and hypothesis text,
spelled in the byte alphabet for byte-level vocabs (``"Ġhello"``) and with ``▁`` for spaces for
the SentencePiece-style vocab (mistral).
"""

from __future__ import annotations

import base64
import json
from functools import cache, lru_cache
from typing import Any, ClassVar

import pytest
import regex
from hypothesis import HealthCheck, given, settings, strategies as st
from parity.cases import TRICKY
from support import bundle_bytes, corpus_text, require_module

from tokviz.engine.byte_alphabet import text_to_proxy
from tokviz.engine.encoding import BpeTrace, MergeStep
from tokviz.engine.errors import TokvizFormatError
from tokviz.engine.models import model_from_json
from tokviz.engine.models._py_fast import BpeLongChunks
from tokviz.engine.models.bpe import BPE, merge_flat, merge_heap

# any text without lone surrogates (those are the pipeline's error, never a chunk)
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def toks(model: BPE, text: str) -> list[str]:
    return [model.id_to_token(i) for i, _, _ in model.tokenize(text)]  # type: ignore[misc]


def vocab_of(*tokens: str) -> dict[str, int]:
    return {t: i for i, t in enumerate(tokens)}


def hf_model(model_json: dict[str, Any]) -> Any:
    """An HF Tokenizer that is only this model (no normalizer, no pre-tokenizer)."""
    tokenizers = require_module("tokenizers")
    return tokenizers.Tokenizer.from_str(
        json.dumps({"version": "1.0", "model": model_json, "added_tokens": []})
    )


def hf_result(hf: Any, text: str) -> list[tuple[int, int, int]]:
    e = hf.encode(text)
    return [(i, s, t) for i, (s, t) in zip(e.ids, e.offsets)]


def same_as_hf(model_json: dict[str, Any], texts: list[str]) -> None:
    ours = BPE.from_json(model_json)
    hf = hf_model(model_json)
    for text in texts:
        assert list(ours.tokenize(text)) == hf_result(hf, text), text


# ---------------------------------------------------------------------- hand cases
class TestBpeMerges:
    def test_rank_conflict_lower_rank_wins(self) -> None:
        v = vocab_of("a", "b", "c", "ab", "bc")
        assert toks(BPE(v, [("a", "b"), ("b", "c")]), "abc") == ["ab", "c"]
        assert toks(BPE(v, [("b", "c"), ("a", "b")]), "abc") == ["a", "bc"]

    def test_leftmost_on_ties(self) -> None:
        m = BPE(vocab_of("a", "aa"), [("a", "a")])
        assert toks(m, "aaa") == ["aa", "a"]
        assert toks(m, "aaaaa") == ["aa", "aa", "a"]

    def test_one_pair_at_a_time_not_all_occurrences(self) -> None:
        # After x+y -> z at the left, the fresh pair (z, x) outranks the second (x, y); merging
        # every occurrence of (x, y) at once would give ["z", "z"] instead.
        v = vocab_of("x", "y", "z", "xy", "xyx")
        m = BPE(v, [("xy", "x"), ("x", "y")])
        assert toks(m, "xyxy") == ["xyx", "y"]

    def test_both_merges_formats_and_version_line(self) -> None:
        v = vocab_of("a", "b", "c", "ab", "abc")
        pairs = BPE.from_json({"type": "BPE", "vocab": v, "merges": [["a", "b"], ["ab", "c"]]})
        legacy = BPE.from_json({"type": "BPE", "vocab": v, "merges": ["#version: 0.2", "a b", "ab c"]})
        assert toks(pairs, "abcab") == toks(legacy, "abcab") == ["abc", "ab"]
        assert pairs.merges == legacy.merges == [("a", "b"), ("ab", "c")]

    def test_duplicate_merge_keeps_last_rank_like_hf(self) -> None:
        v = vocab_of("a", "b", "c", "ab", "bc")
        obj = {"type": "BPE", "vocab": v, "merges": [["a", "b"], ["b", "c"], ["a", "b"]]}
        assert toks(BPE.from_json(obj), "abc") == ["a", "bc"]
        same_as_hf(obj, ["abc", "abcabc", "cab"])

    def test_offsets_are_chars_of_the_chunk(self) -> None:
        m = BPE(vocab_of("Ġ", "h", "i", "Ġh", "Ġhi"), [("Ġ", "h"), ("Ġh", "i")])
        assert m.tokenize("ĠhiĠh") == ((4, 0, 3), (3, 3, 5))

    def test_empty_chunk(self) -> None:
        m = BPE(vocab_of("a"), [])
        assert m.tokenize("") == ()
        assert m.tokenize_traced("") == ((), ())

    def test_model_from_json_registry_and_infers_type(self) -> None:
        obj = {"vocab": vocab_of("a", "b", "ab"), "merges": ["a b"]}
        m = model_from_json(obj)
        assert isinstance(m, BPE) and toks(m, "ab") == ["ab"]


class TestBpeOptions:
    def test_byte_fallback(self) -> None:
        v = vocab_of("<unk>", "a", "<0xE9>", "<0xBE>", "<0x98>")
        obj = {"type": "BPE", "vocab": v, "merges": [], "byte_fallback": True, "unk_token": "<unk>"}
        m = BPE.from_json(obj)
        assert toks(m, "a龘a") == ["a", "<0xE9>", "<0xBE>", "<0x98>", "a"]
        # each byte piece spans the whole character, as HF reports it
        assert [(s, e) for _, s, e in m.tokenize("a龘a")] == [(0, 1), (1, 2), (1, 2), (1, 2), (2, 3)]
        # a char whose bytes are not all in the vocab falls back to unk
        assert toks(m, "é") == ["<unk>"]
        same_as_hf(obj, ["a龘a", "龘", "é龘", "aéa"])

    @pytest.mark.parametrize("fuse", [True, False], ids=["fuse_unk", "no_fuse"])
    def test_unk_and_fuse_unk(self, fuse: bool) -> None:
        v = vocab_of("<unk>", "a", "b", "ab")
        obj = {"type": "BPE", "vocab": v, "merges": ["a b"], "unk_token": "<unk>", "fuse_unk": fuse}
        m = BPE.from_json(obj)
        expected = ["a", "<unk>", "ab"] if fuse else ["a", "<unk>", "<unk>", "ab"]
        assert toks(m, "axyab") == expected
        same_as_hf(obj, ["axyab", "xyz", "abxab", "x", "éé"])

    def test_no_unk_token_drops_unknown_chars_like_hf(self) -> None:
        obj = {"type": "BPE", "vocab": vocab_of("a", "b", "ab"), "merges": ["a b"]}
        # the dropped x leaves a and b adjacent, and they merge
        assert toks(BPE.from_json(obj), "axb") == ["ab"]
        # HF's offsets count the bytes of the symbols that remain, so they drift: (0, 2)
        assert BPE.from_json(obj).tokenize("axb") == ((2, 0, 2),)
        same_as_hf(obj, ["axb", "xax", "abxab", "aéb", "éab", "x"])

    def test_unk_token_missing_from_vocab_is_an_error(self) -> None:
        m = BPE(vocab_of("a"), [], unk_token="<unk>")
        with pytest.raises(TokvizFormatError, match="unk_token"):
            m.tokenize("ax")

    def test_ignore_merges(self) -> None:
        # "abc" is in the vocab but the merges would build ["ab", "c"]
        v = vocab_of("a", "b", "c", "ab", "abc")
        obj = {"type": "BPE", "vocab": v, "merges": ["a b"], "ignore_merges": True}
        assert toks(BPE.from_json(obj), "abc") == ["abc"]
        assert toks(BPE.from_json({**obj, "ignore_merges": False}), "abc") == ["ab", "c"]
        same_as_hf(obj, ["abc", "abcabc", "ab"])

    def test_continuing_subword_prefix_and_end_of_word_suffix(self) -> None:
        v = vocab_of("h", "##e", "##l", "##o", "##ll", "he", "hell", "##o</w>", "o</w>", "h</w>", "##llo</w>")
        obj = {
            "type": "BPE",
            "vocab": v,
            "merges": [["h", "##e"], ["##l", "##l"], ["he", "##ll"], ["##ll", "##o</w>"]],
            "continuing_subword_prefix": "##",
            "end_of_word_suffix": "</w>",
        }
        m = BPE.from_json(obj)
        assert toks(m, "hello") == ["hell", "##o</w>"]
        assert [(s, e) for _, s, e in m.tokenize("hello")] == [(0, 4), (4, 5)]
        same_as_hf(obj, ["hello", "h", "o", "llo", "hellollo"])

    def test_bad_merges_name_the_place(self) -> None:
        v = vocab_of("a", "b")
        with pytest.raises(TokvizFormatError, match=r"merges\[0\]"):
            BPE.from_json({"type": "BPE", "vocab": v, "merges": ["a b"]})  # "ab" missing
        with pytest.raises(TokvizFormatError, match=r"merges\[1\]"):
            BPE.from_json({"type": "BPE", "vocab": {**v, "ab": 2}, "merges": ["a b", "a b c"]})
        with pytest.raises(TokvizFormatError, match=r"merges\[0\]"):
            BPE.from_json({"type": "BPE", "vocab": v, "merges": [42]})
        with pytest.raises(TokvizFormatError, match="not in the vocab"):
            BPE.from_json({"type": "BPE", "vocab": v, "merges": [["a", "x"]]})
        with pytest.raises(TokvizFormatError, match="merges"):
            BPE.from_json({"type": "BPE", "vocab": v})
        with pytest.raises(TokvizFormatError, match="dropout"):
            BPE(v, [], dropout=1.5)

    def test_to_json_round_trip_and_matches_hf_serialization(self) -> None:
        obj = {
            "type": "BPE",
            "dropout": None,
            "unk_token": "<unk>",
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": True,
            "byte_fallback": True,
            "ignore_merges": False,
            "vocab": vocab_of("<unk>", "a", "b", "ab"),
            "merges": [["a", "b"]],
        }
        ours = BPE.from_json(obj).to_json()
        assert BPE.from_json(ours).tokenize("abab") == BPE.from_json(obj).tokenize("abab")
        hf_json = json.loads(hf_model(obj).to_str())["model"]
        assert ours == hf_json


class TestBpeDropout:
    V = vocab_of("h", "e", "l", "o", "he", "ll", "hell", "hello", "lo")
    M: ClassVar[list[tuple[str, str]]] = [("h", "e"), ("l", "l"), ("he", "ll"), ("hell", "o"), ("l", "o")]

    def test_p1_gives_characters(self) -> None:
        m = BPE(self.V, self.M, dropout=1.0, seed=0)
        for _ in range(5):
            assert toks(m, "hello") == list("hello")

    def test_p0_is_plain_and_cached(self) -> None:
        plain = BPE(self.V, self.M)
        zero = BPE(self.V, self.M, dropout=0.0)
        assert toks(zero, "hello") == toks(plain, "hello") == ["hello"]
        assert zero.tokenize("hello") is zero.tokenize("hello")  # served from the cache

    def test_statistics_and_seed(self) -> None:
        m = BPE(self.V, self.M, dropout=0.5, seed=1234)
        runs = [toks(m, "hellohello") for _ in range(400)]
        assert all("".join(r) == "hellohello" for r in runs)
        counts = [len(r) for r in runs]
        mean = sum(counts) / len(counts)
        assert 2 < mean < 10  # between fully merged and all characters
        assert len({tuple(r) for r in runs}) > 5  # really random
        again = BPE(self.V, self.M, dropout=0.5, seed=1234)
        assert [toks(again, "hellohello") for _ in range(400)] == runs  # seedable

    def test_rank_mode_dropout(self) -> None:
        ranks = {b"a": 0, b"b": 1, b"ab": 2, b"abab": 3}
        assert toks(BPE.from_ranks(ranks, dropout=1.0, seed=3), "abab") == list("abab")
        m = BPE.from_ranks(ranks, dropout=0.5, seed=3)
        runs = {tuple(toks(m, "ababab")) for _ in range(200)}
        assert ("abab", "ab") in runs and len(runs) > 2
        assert all("".join(r) == "ababab" for r in runs)

    def test_dropout_skips_ignore_merges_like_hf(self) -> None:
        # HF applies ignore_merges only on its deterministic path
        m = BPE(self.V, self.M, dropout=1.0, ignore_merges=True)
        assert toks(m, "hello") == list("hello")
        assert toks(BPE(self.V, self.M, dropout=0.0, ignore_merges=True), "hello") == ["hello"]


class TestBpeTrace:
    def test_hand_trace(self) -> None:
        m = BPE(vocab_of("a", "b", "c", "ab", "abc"), [("a", "b"), ("ab", "c")])
        tokens, traces = m.tokenize_traced("cabc")
        assert tokens == m.tokenize("cabc") == ((2, 0, 1), (4, 1, 4))
        assert traces[0] == BpeTrace(("c",), ())
        assert traces[1] == BpeTrace(
            ("a", "b", "c"),
            (MergeStep(0, "a", "b", "ab", 1), MergeStep(1, "ab", "c", "abc", 1)),
        )

    def test_positions_are_current_symbol_indices(self) -> None:
        m = BPE(vocab_of("a", "aa"), [("a", "a")])
        _, traces = m.tokenize_traced("aaaa")
        assert [s.position for t in traces for s in t.merges] == [0, 1]

    def test_rank_mode_trace_rank_is_merged_token_rank(self) -> None:
        m = BPE.from_ranks({b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"abc": 4})
        tokens, traces = m.tokenize_traced("abc")
        assert tokens == ((4, 0, 3),)  # whole chunk is a token (tiktoken looks it up first)
        tokens, traces = m.tokenize_traced("abcb")
        assert [i for i, _, _ in tokens] == [4, 1]
        assert [s.rank for s in traces[0].merges] == [3, 4]

    @given(st.text(alphabet="abcd", max_size=40))
    def test_traces_replay_to_tokens(self, text: str) -> None:
        m = _toy_model()
        tokens, traces = m.tokenize_traced(text)
        assert tokens == m.tokenize(text)
        assert len(traces) == len(tokens)
        for (i, s, e), tr in zip(tokens, traces):
            assert "".join(tr.initial) == text[s:e]
            syms = list(tr.initial)
            for step in tr.merges:
                k = next(k for k in range(len(syms) - 1) if (syms[k], syms[k + 1]) == (step.left, step.right))
                syms[k : k + 2] = [step.merged]
            assert syms == [m.id_to_token(i)]


@lru_cache(maxsize=1)
def _toy_model() -> BPE:
    v = vocab_of("a", "b", "c", "d", "ab", "bc", "cd", "abc", "bcd", "aa", "aaa", "da", "abcd", "dab")
    merges = [
        ("a", "b"),
        ("c", "d"),
        ("b", "c"),
        ("a", "a"),
        ("ab", "c"),
        ("aa", "a"),
        ("d", "a"),
        ("b", "cd"),
        ("ab", "cd"),
        ("d", "ab"),
    ]
    return BPE(v, merges)


class TestBpeCacheAndLongChunks:
    @given(st.lists(st.text(alphabet="abcd", max_size=30), max_size=30))
    @settings(suppress_health_check=[HealthCheck.too_slow])
    def test_cache_never_changes_results(self, texts: list[str]) -> None:
        base = _toy_model()
        small = BPE(base.get_vocab(), base.merges, cache_capacity=3)
        none = BPE(base.get_vocab(), base.merges, cache_capacity=0)
        for t in texts + texts:
            assert small.tokenize(t) == none.tokenize(t)
        assert len(small._cache or {}) <= 3  # bounded

    @pytest.mark.parametrize(
        "text", ["ab" * 3000, "abcd" * 2500, "a" * 10000, "dab" * 999], ids=["ab", "abcd", "a", "dab"]
    )
    def test_long_chunks_equal_the_list_algorithm(self, text: str) -> None:
        m = _toy_model()
        heap = m.tokenize(text)
        assert heap == m.tokenize_traced(text)[0]
        # the flat-list kernel on the same symbols gives the same merges
        assert [m.id_to_token(i) for i, _, _ in heap] == merge_flat(list(text), m._pairs).symbols

    @given(st.text(alphabet="abcd", max_size=40))
    def test_flat_and_heap_kernels_agree_in_merges_mode(self, text: str) -> None:
        m = _toy_model()
        flat = merge_flat(list(text), m._pairs)
        heap = merge_heap(list(text), m._pairs)
        assert (flat.symbols, flat.firsts) == (heap.symbols, heap.firsts)

    @given(st.text(alphabet="abcd", max_size=40))
    def test_flat_and_heap_kernels_agree_in_rank_mode(self, text: str) -> None:
        # ranks chosen so that a fresh pair can outrank the next occurrence of the best pair
        m = BPE.from_ranks({b"a": 0, b"b": 1, b"c": 2, b"d": 3, b"bc": 4, b"ab": 5, b"abc": 6, b"cd": 7, b"dab": 8, b"da": 9})
        flat = merge_flat(list(text), m._pairs)
        heap = merge_heap(list(text), m._pairs)
        assert (flat.symbols, flat.firsts) == (heap.symbols, heap.firsts)

    def test_long_chunk_matches_hf(self) -> None:
        obj = json.loads(_bundle_json("qwen3"))["model"]
        ours = BPE.from_json(obj)
        hf = hf_model(obj)
        for text in ["a" * 10000, text_to_proxy("吾輩は猫である。名前はまだ無い。" * 400), "Ġ" * 5000]:
            assert list(ours.tokenize(text)) == hf_result(hf, text)


class TestLongChunksWithUnknownChars:
    """A long chunk with chars outside the vocab (a whole document, when there is no
    pre-tokenizer): the result must equal HF's, in every fallback mode."""

    @staticmethod
    def _toy(**options: Any) -> dict[str, Any]:
        tokens = ["<unk>", "▁", "a", "b", "c", "▁▁", "▁a", "ab", "▁ab", "bc", "▁▁a"]
        tokens += [f"<0x{b:02X}>" for b in range(256)]
        merges = [["▁", "▁"], ["▁", "a"], ["a", "b"], ["▁a", "b"], ["b", "c"], ["▁▁", "a"]]
        return {"type": "BPE", "vocab": {t: i for i, t in enumerate(tokens)}, "merges": merges, **options}

    TEXTS: ClassVar[list[str]] = [
        "▁ab▁▁abc\n▁a\n\n▁▁ab" * 40,
        ("▁abc▁é▁ab\n" * 30) + "\n" * 5 + "▁a" * 100,
        "x" * 300 + "▁ab" * 100 + "yz" * 100,
    ]

    @pytest.mark.parametrize(
        "options",
        [
            {"byte_fallback": True, "unk_token": "<unk>"},
            {"unk_token": "<unk>", "fuse_unk": True},
            {"unk_token": "<unk>", "fuse_unk": False},
        ],
        ids=["byte-fallback", "fused-unk", "unk"],
    )
    def test_toy_equals_hf(self, options: dict[str, Any]) -> None:
        obj = self._toy(**options)
        same_as_hf(obj, self.TEXTS)

    @pytest.mark.parametrize(
        "options",
        [{"byte_fallback": True, "unk_token": "<unk>"}, {"unk_token": "<unk>", "fuse_unk": True}, {"unk_token": "<unk>"}],
        ids=["byte-fallback", "fused-unk", "unk"],
    )
    def test_tuned_cut_equals_the_reference_merge(self, options: dict[str, Any]) -> None:
        """The pure-Python backend's long-chunk cut (`_py_fast.BpeLongChunks`) gives what the
        reference kernel gives on the uncut chunk, and really cuts."""
        ours = BPE.from_json(self._toy(**options))
        cutter = BpeLongChunks.of(ours)
        assert cutter is not None
        for text in self.TEXTS:
            got = cutter.tokenize(text)
            assert got is not None  # it really was cut
            assert got == ours._merge_chunk(text)
        assert BpeLongChunks.of(BPE.from_json({**self._toy(**options), "ignore_merges": True})) is None

    def test_fallback_that_merges_is_not_masked(self) -> None:
        """When a byte piece takes part in a merge the unknown char's neighbours stay joined."""
        obj = self._toy(byte_fallback=True)
        obj["vocab"]["<0x0A>▁"] = len(obj["vocab"])
        obj["merges"].insert(0, ["<0x0A>", "▁"])
        same_as_hf(obj, self.TEXTS)
        ours = BPE.from_json(obj)
        assert not BpeLongChunks.of(ours).inert_fallback
        assert all(BpeLongChunks.of(ours).tokenize(t) in (None, ours._merge_chunk(t)) for t in self.TEXTS)

    def test_mistral_documents_equal_hf(self) -> None:
        obj = json.loads(_bundle_json("mistral-7b-v0.1"))["model"]
        lines = corpus_text("botchan.txt").splitlines()[:300]
        text = "▁" + "\n".join(lines).replace(" ", "▁")
        japanese = "▁" + corpus_text("wagahaiwa_nekodearu.txt")[:20000].replace(" ", "▁")
        code = "▁def▁f(x):\n▁▁▁▁return▁x\t+▁1\r\n\n" * 50 + "▁😀🇯🇵" * 20
        same_as_hf(obj, [text, japanese, code])


# ---------------------------------------------------------------------- parity with HF
@cache
def _bundle_json(name: str) -> str:
    return bundle_bytes(f"{name}/tokenizer.json").decode("utf-8")


@cache
def _models(name: str) -> tuple[BPE, Any]:
    obj = json.loads(_bundle_json(name))["model"]
    return BPE.from_json(obj), hf_model(obj)


BUNDLES = ["claude-legacy", "qwen3", "mistral-7b-v0.1"]


def _spell(name: str, text: str) -> str:
    """A chunk as that model sees it: byte-proxy text, or SentencePiece's ▁ for spaces."""
    return text.replace(" ", "▁") if name == "mistral-7b-v0.1" else text_to_proxy(text)


def _chunks(texts: list[str]) -> list[str]:
    out: dict[str, None] = {}
    for t in texts:
        for w in regex.findall(GPT2_PATTERN, t):
            out[w] = None
        out[t] = None  # whole lines too: long chunks
    return [c for c in out if c]


@lru_cache(maxsize=1)
def _corpus_chunks() -> list[str]:
    texts = (
        corpus_text("botchan.txt").splitlines()[:1500]
        + corpus_text("wagahaiwa_nekodearu.txt").splitlines()[:600]
    )
    return _chunks(texts)


@pytest.mark.parametrize("name", BUNDLES)
class TestBpeParityHF:
    def test_tricky(self, name: str) -> None:
        ours, hf = _models(name)
        for case_id, text in TRICKY:
            for chunk in _chunks([text]):
                c = _spell(name, chunk)
                assert list(ours.tokenize(c)) == hf_result(hf, c), (case_id, chunk)
                assert ours.tokenize_traced(c)[0] == ours.tokenize(c)

    def test_corpus(self, name: str) -> None:
        ours, hf = _models(name)
        bad = [
            c
            for c in _corpus_chunks()
            if list(ours.tokenize(_spell(name, c))) != hf_result(hf, _spell(name, c))
        ]
        assert bad == []

    @given(text=TEXT)
    @settings(max_examples=150, deadline=None)
    def test_hypothesis(self, name: str, text: str) -> None:
        ours, hf = _models(name)
        c = _spell(name, text)
        assert list(ours.tokenize(c)) == hf_result(hf, c)


# ---------------------------------------------------------------------- rank mode vs tiktoken
RANK_FILES = {
    "r50k_base": "gpt2/r50k_base.tiktoken",
    "cl100k_base": "cl100k_base/cl100k_base.tiktoken",
    "o200k_base": "o200k_base/o200k_base.tiktoken",
}


@cache
def _rank_models(name: str) -> tuple[BPE, Any]:
    tiktoken = require_module("tiktoken")
    ranks: dict[bytes, int] = {}
    for line in bundle_bytes(RANK_FILES[name]).splitlines():
        if line.strip():
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    # one regex match = the whole chunk, so encode_ordinary encodes exactly that chunk
    enc = tiktoken.Encoding(f"{name}-whole", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={})
    return BPE.from_ranks(ranks), enc


def _rank_ids(model: BPE, chunk: str) -> list[int]:
    return [i for i, _, _ in model.tokenize(text_to_proxy(chunk))]


@pytest.mark.parametrize("name", list(RANK_FILES))
class TestBpeRankMode:
    def test_tricky(self, name: str) -> None:
        ours, enc = _rank_models(name)
        for case_id, text in TRICKY:
            for chunk in _chunks([text]):
                assert _rank_ids(ours, chunk) == enc.encode_ordinary(chunk), (case_id, chunk)

    def test_corpus(self, name: str) -> None:
        ours, enc = _rank_models(name)
        bad = [c for c in _corpus_chunks() if _rank_ids(ours, c) != enc.encode_ordinary(c)]
        assert bad == []

    @given(text=TEXT)
    @settings(max_examples=150, deadline=None)
    def test_hypothesis(self, name: str, text: str) -> None:
        ours, enc = _rank_models(name)
        assert _rank_ids(ours, text) == enc.encode_ordinary(text)

    def test_long_chunks(self, name: str) -> None:
        ours, enc = _rank_models(name)
        for chunk in ["a" * 10000, "吾輩は猫である名前はまだ無い" * 700, " " * 4000, "12" * 3000]:
            assert _rank_ids(ours, chunk) == enc.encode_ordinary(chunk)

    def test_vocab_is_byte_proxy_and_ids_are_ranks(self, name: str) -> None:
        ours, enc = _rank_models(name)
        assert ours.rank_mode
        assert ours.token_to_id("Ġthe") == enc.encode_single_token(b" the")
        assert ours.id_to_token(enc.encode_single_token(b"\n")) == "Ċ"
        assert ours.vocab_size == len(enc._mergeable_ranks)


class TestBpeFromRanks:
    def test_str_keys_equal_bytes_keys(self) -> None:
        by_bytes = BPE.from_ranks({b"a": 0, b" ": 1, b" a": 2})
        by_str = BPE.from_ranks({"a": 0, "Ġ": 1, "Ġa": 2})
        assert by_bytes.get_vocab() == by_str.get_vocab() == {"a": 0, "Ġ": 1, "Ġa": 2}

    def test_pair_priority_is_rank_of_concatenation(self) -> None:
        m = BPE.from_ranks({b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4, b"abc": 5})
        # "abc" whole is a token; "abcab": bc (3) before ab (4), then a+bc = abc (5)
        assert toks(m, "abcab") == ["abc", "ab"]

    def test_missing_byte_is_an_error(self) -> None:
        m = BPE.from_ranks({b"a": 0})
        with pytest.raises(TokvizFormatError, match="rank table"):
            m.tokenize("ab")

    def test_to_json_gives_equivalent_merges(self) -> None:
        ranks = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4, b"abc": 5}
        m = BPE.from_ranks(ranks)
        back = BPE.from_json(m.to_json())
        for text in ["abcab", "cab", "bcbc", "aabbcc"]:
            assert back.tokenize(text) == m.tokenize(text)
