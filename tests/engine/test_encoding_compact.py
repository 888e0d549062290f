"""Compact encodings: what a kept short-line `Encoding` costs the cycle collector, and that its
lazily built columns and derived stages are the very values a kept run gives."""

from __future__ import annotations

import functools
import gc

import pytest
from support import bundle_path, corpus_text

import tokviz
from tokviz.engine import tokenizer as tokenizer_module
from tokviz.engine.encoding import COLUMNS, Encoding, with_columns
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


def assert_same_encoding(got: Encoding, kept: Encoding) -> None:
    for name in COLUMNS:
        value = getattr(got, name)
        assert type(value) is list, f"{name} is a {type(value).__name__}"
        assert value == getattr(kept, name), f"{name} differs on {got.text[:40]!r}"
    assert got.stages == kept.stages
    assert got.stages.normalized.text == kept.stages.normalized.text
    assert [(s.start, s.end, s.added_id, s.special) for s in got.stages.segments] == [
        (s.start, s.end, s.added_id, s.special) for s in kept.stages.segments]
    assert tuple(got.stages.pre_tokens) == tuple(kept.stages.pre_tokens)
    assert got.exact_offsets == kept.exact_offsets


@pytest.mark.parametrize("rel", BUNDLES, ids=IDS)
class TestCompactEncoding:
    def test_kept_short_lines_hold_almost_nothing_tracked(self, rel: str) -> None:
        tok = bundle_tok(rel)
        texts = lines()
        for t in texts:  # fill the chunk caches first: cache entries are the tokenizer's, not the results'
            tok.encode(t)
        before = tracked_ids()
        kept = [tok.encode(t) for t in texts]
        for _ in range(3):  # (each pass untracks one more level of nested tuples of atoms)
            gc.collect()
        new = [o for o in gc.get_objects() if id(o) not in before and o is not kept]
        kinds = sorted({type(o).__name__ for o in new})
        # Each kept encoding is one tracked object (the Encoding: its columns are tuples of
        # atoms, which the collector untracks); a kept run used to add about 20 (seven column
        # lists, boxes, the stages' segment, plan and text objects).
        assert len(new) <= len(kept) + 20, kinds  # (+ the tokenizer's `_LastRun`: the last text's run)

    def test_reading_builds_the_kept_values(self, rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
        tok = bundle_tok(rel)
        texts = lines()[:40]
        compact = [tok.encode(t) for t in texts]
        monkeypatch.setattr(tokenizer_module, "_KEEP_RUN_CHARS", 0)  # every run keeps what it built
        for got, t in zip(compact, texts):
            kept = tok.encode(t)
            assert kept._pending is None
            assert_same_encoding(got, kept)
            assert len(got) == len(kept.ids)

    def test_allowed_special_is_the_run_s(self, rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
        tok = bundle_tok(rel)
        text = "<s> [CLS] <|im_start|>x<|im_end|> </s>"
        allowed = set(tok._added.special_contents) & {"<s>", "[CLS]", "<|im_start|>"}
        got = tok.encode(text, allowed_special=allowed)
        allowed.clear()  # the caller's set changing later must not change the derived stages
        monkeypatch.setattr(tokenizer_module, "_KEEP_RUN_CHARS", 0)
        kept = tok.encode(text, allowed_special=set(tok._added.special_contents) & {"<s>", "[CLS]", "<|im_start|>"})
        assert_same_encoding(got, kept)

    def test_columns_are_built_once(self, rel: str) -> None:
        enc = bundle_tok(rel).encode("Hello there, world!")
        assert enc.ids is enc.ids and enc.offsets is enc.offsets
        assert enc.stages is enc.stages
        assert [t.id for t in enc] == enc.ids


class TestLastRun:
    def test_stages_read_right_after_the_encode_reuse_its_run(self, monkeypatch: pytest.MonkeyPatch) -> None:
        tok = bundle_tok("bert-base-uncased/tokenizer.json")
        calls: list[str] = []
        runs = tok._runs
        monkeypatch.setattr(tok, "_runs", lambda text, allowed: calls.append(text) or runs(text, allowed))
        first = tok.encode("Héllo there!")
        last = tok.encode("General Kenobi.")
        assert calls == ["Héllo there!", "General Kenobi."]
        assert [c.text for c in last.stages.pre_tokens] == ["general", "kenobi", "."]
        assert len(calls) == 2  # the last run answered
        assert [c.text for c in first.stages.pre_tokens] == ["hello", "there", "!"]
        assert calls[2:] == ["Héllo there!"]  # an earlier encoding derives its own


class TestWithColumns:
    def test_a_kept_encoding_stays_list_valued(self) -> None:
        enc = Encoding("ab", [1, 2], ["a", "b"], [(0, 1), (1, 2)], [(0, 1), (1, 2)], [0, 0], [0, 0], [0, 1])
        out = with_columns(enc, type_ids=(1, 1))
        assert out.type_ids == [1, 1] and type(out.type_ids) is list
        assert out.ids is enc.ids and out.stages is None

    def test_a_pair_through_the_template(self, monkeypatch: pytest.MonkeyPatch) -> None:
        tok = bundle_tok("bert-base-uncased/tokenizer.json")
        a, b = "Hello there!", "General Kenobi."
        got = tok.post_processor.process(tok.encode(a, add_special_tokens=False), tok.encode(b, add_special_tokens=False))
        monkeypatch.setattr(tokenizer_module, "_KEEP_RUN_CHARS", 0)
        kept = tok.post_processor.process(tok.encode(a, add_special_tokens=False), tok.encode(b, add_special_tokens=False))
        for name in COLUMNS:
            assert getattr(got, name) == getattr(kept, name)
        assert got.type_ids.count(1) == len(tok.encode(b, add_special_tokens=False)) + 1  # b's tokens and its [SEP]
        assert got.stages == kept.stages


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
    """A pickled encoding (compact or not) comes back with equal columns and stages, and does not
    carry its tokenizer (a native model does not pickle, and it would be megabytes)."""
    import pickle

    tok = bundle_tok(rel)
    text = "".join(lines()) if long_text else lines()[3]
    enc = tok.encode(text)
    data = pickle.dumps(enc)
    back = pickle.loads(data)
    for name in COLUMNS:
        assert getattr(back, name) == getattr(enc, name), name
    assert back.stages == enc.stages
    assert back._source is None
    assert back.offset_map.to_utf8(len(text)) == len(text.encode("utf-8"))
    assert len(data) < 64 * len(text.encode("utf-8")) + 4096  # (values only: no vocabulary inside)
