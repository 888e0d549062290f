"""`Encoding` over `TokenColumns`: a plain frozen dataclass whose HF-style columns are lists built
from int32 arrays on first read; what a kept encoding costs the cycle collector; explicit stages
(``keep_stages``, `Tokenizer.stages`); pickling without the tokenizer."""

from __future__ import annotations

import dataclasses
import functools
import gc
import pickle
from array import array

import pytest
from support import bundle_path, corpus_text

import tokviz
from tokviz.engine import tokenizer as tokenizer_module
from tokviz.engine.columns import TokenColumns
from tokviz.engine.encoding import COLUMNS, Encoding
from tokviz.engine.processors._common import surround, with_type_ids
from tokviz.engine.tokenizer import Tokenizer

# SentencePiece Unigram (precompiled normalizer), a template post-processor (BERT), byte-level BPE
BUNDLES = ["albert-30k-clean/30k-clean.model", "bert-base-uncased/tokenizer.json", "qwen3/tokenizer.json"]
IDS = [b.split("/")[0] for b in BUNDLES]


@functools.cache
def bundle_tok(rel: str) -> Tokenizer:
    return tokviz.load(bundle_path(rel))


def lines() -> list[str]:
    text = corpus_text("botchan.txt")[:8000] + corpus_text("wagahaiwa_nekodearu.txt")[:3000]
    return [ln for ln in text.splitlines(keepends=True) if ln.strip()][:150] + ["", "\n", "😀 <s> [CLS] x"]


def tracked_ids() -> set[int]:
    gc.collect()
    return {id(o) for o in gc.get_objects()}


def assert_same_encoding(got: Encoding, want: Encoding) -> None:
    for name in COLUMNS:
        value = getattr(got, name)
        assert type(value) is list, f"{name} is a {type(value).__name__}"
        assert value == getattr(want, name), f"{name} differs on {got.text[:40]!r}"


@pytest.mark.parametrize("rel", BUNDLES, ids=IDS)
class TestColumns:
    def test_columns_equal_the_reference_path(self, rel: str) -> None:
        tok = bundle_tok(rel)
        for t in lines()[:60]:
            got = tok.encode(t)
            assert_same_encoding(got, tok.encode(t, trace=True))
            assert [tok_.id for tok_ in got] == got.ids and len(got) == len(got.ids)
            assert got.token(len(got) - 1).end == got.offsets[-1][1] if len(got) else True

    def test_int_columns_are_int32_arrays_and_lists_are_built_once(self, rel: str) -> None:
        enc = bundle_tok(rel).encode("Hello there, world! 日本語")
        c = enc.columns
        for col in (c.ids, c.starts, c.ends, c.byte_starts, c.byte_ends, c.word_ids):
            assert type(col) is array and col.typecode == "i"
        assert enc.ids is enc.ids and enc.offsets is enc.offsets and enc.word_ids is enc.word_ids
        assert enc.stages is enc.stages

    def test_kept_lines_without_stages_hold_almost_nothing_tracked(self, rel: str) -> None:
        tok = bundle_tok(rel)
        texts = lines()
        for t in texts:  # fill the chunk caches first: cache entries are the tokenizer's, not the results'
            tok.encode(t)
        before = tracked_ids()
        kept = [tok.encode(t, keep_stages=False) for t in texts]
        for _ in range(3):  # (each pass untracks one more level of tuples of atoms)
            gc.collect()
        new = [o for o in gc.get_objects() if id(o) not in before and o is not kept]
        kinds = sorted({type(o).__name__ for o in new})
        # Per kept encoding, whatever its length: the Encoding, its memo dict, its TokenColumns
        # with six arrays (tracked, but with nothing inside to visit) and its list of token
        # strings; no object per token (the encodings here have 20-40 tokens each).
        assert len(new) <= 11 * len(kept) + 20, kinds
        assert all(e.stages is None for e in kept)

    def test_stages_are_explicit(self, rel: str) -> None:
        tok = bundle_tok(rel)
        text = "<s> [CLS] <|im_start|>Hello<|im_end|> wörld </s>"
        allowed = set(tok._added.special_contents) & {"<s>", "[CLS]", "<|im_start|>"}
        kept = tok.encode(text, allowed_special=allowed)
        assert tok.stages(text, allowed_special=allowed) == kept.stages
        assert kept.stages == tok.encode(text, allowed_special=allowed, trace=True).stages
        assert tok.encode(text, allowed_special=allowed, keep_stages=False).stages is None
        assert tok.encode(text, keep_stages=False).exact_alignment.note == "no stages kept"


class TestEncodingValue:
    def test_a_frozen_dataclass_without_hidden_attributes(self) -> None:
        enc = Encoding.of_lists("ab", [1, 2], ["a", "b"], [(0, 1), (1, 2)], [(0, 1), (1, 2)], word_ids=[0, None])
        assert dataclasses.is_dataclass(enc)
        assert [f.name for f in dataclasses.fields(enc)] == [
            "text", "columns", "stages", "traces", "source", "_memo", "overflowing", "sequence_ranges",
        ]
        with pytest.raises(dataclasses.FrozenInstanceError):
            enc.text = "x"  # type: ignore[misc]
        with pytest.raises(AttributeError):
            enc.no_such_column  # noqa: B018
        assert not hasattr(Encoding, "__getattr__")
        assert (enc.word_ids, enc.special_tokens_mask, enc.type_ids) == ([0, None], [0, 0], [0, 0])

    def test_post_processor_helpers_keep_the_columns_typed(self) -> None:
        enc = Encoding.of_lists("ab", [1, 2], ["a", "b"], [(0, 1), (1, 2)], [(0, 1), (1, 2)], word_ids=[0, 1])
        out = surround(with_type_ids(enc, 1), [(101, "[CLS]", 0)], [(102, "[SEP]", 1)])
        assert out.ids == [101, 1, 2, 102] and out.tokens == ["[CLS]", "a", "b", "[SEP]"]
        assert out.offsets == [(0, 0), (0, 1), (1, 2), (0, 0)]
        assert out.special_tokens_mask == [1, 0, 0, 1] and out.type_ids == [0, 1, 1, 1]
        assert out.word_ids == [None, 0, 1, None]
        assert enc.ids == [1, 2]  # (values: the input is unchanged)

    def test_a_pair_through_the_template(self) -> None:
        tok = bundle_tok("bert-base-uncased/tokenizer.json")
        a, b = "Hello there!", "General Kenobi."
        ea, eb = tok.encode(a, add_special_tokens=False), tok.encode(b, add_special_tokens=False)
        got = tok.post_processor.process(ea, eb)
        assert got.tokens == ["[CLS]", *ea.tokens, "[SEP]", *eb.tokens, "[SEP]"]
        assert got.type_ids.count(1) == len(eb) + 1  # b's tokens and its [SEP]
        assert got.special_tokens_mask == [1] + [0] * len(ea) + [1] + [0] * len(eb) + [1]

    def test_columns_concat(self) -> None:
        a = TokenColumns.of_lists([1], ["x"], [(0, 1)], [(0, 1)], word_ids=[0])
        b = TokenColumns.of_lists([2], ["y"], [(1, 2)], [(1, 3)], special_tokens_mask=[1], word_ids=[None])
        c = TokenColumns.concat([a, b])
        assert (c.ids_list(), c.byte_offsets_list(), c.special_list(), c.word_ids_list()) == (
            [1, 2], [(0, 1), (1, 3)], [0, 1], [0, None])


class _RecordingGc:
    """Stands in for the `gc` module inside `tokviz.engine.tokenizer`: records switches."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def isenabled(self) -> bool:
        return True

    def disable(self) -> None:
        self.calls.append("disable")

    def enable(self) -> None:
        self.calls.append("enable")


class TestGcPause:
    def test_only_the_main_thread_pauses_the_collector(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import threading

        from tokviz.engine.models.wordlevel import WordLevel

        fake = _RecordingGc()
        monkeypatch.setattr(tokenizer_module, "gc", fake)
        tok = Tokenizer(WordLevel({"a": 0}, unk_token="a"))
        text = "a" * tokenizer_module._GC_PAUSE_CHARS
        worker = threading.Thread(target=tok.encode, args=(text,))
        worker.start()
        worker.join()
        assert fake.calls == []  # a worker leaves the process's collector to the application
        assert tok.encode(text).ids == [0]
        assert fake.calls == ["disable", "enable"]
        tok.encode(text[:-1])  # shorter than the pause threshold
        assert fake.calls == ["disable", "enable"]


@pytest.mark.parametrize("rel", BUNDLES, ids=IDS)
@pytest.mark.parametrize("long_text", [False, True], ids=["short", "long"])
def test_pickled_encoding_is_its_values_without_the_tokenizer(rel: str, long_text: bool) -> None:
    """A pickled encoding comes back with equal columns, stages and exact spans, and does not
    carry its tokenizer (a native model does not pickle, and it would be megabytes)."""
    tok = bundle_tok(rel)
    text = "".join(lines()) if long_text else lines()[3]
    enc = tok.encode(text)
    exact = enc.exact_offsets
    data = pickle.dumps(enc)
    back = pickle.loads(data)
    for name in COLUMNS:
        assert getattr(back, name) == getattr(enc, name), name
    assert back.stages == enc.stages
    assert back.source is None
    assert back.exact_offsets == exact  # (computed before pickling: it travels)
    assert back.offset_map.to_utf8(len(text)) == len(text.encode("utf-8"))
    assert len(data) < 64 * len(text.encode("utf-8")) + 4096  # (values only: no vocabulary inside)
