"""Live-typing re-encoding: a window around the edit, spliced, must equal a full encode."""

from __future__ import annotations

import random

import pytest
from support import bundle_path

import tokviz
from tokviz.engine.encoding import Encoding, PreToken
from tokviz.engine.incremental import (
    Edit,
    Fallback,
    Spliced,
    _shift_pair,
    _sync,
    _token_range,
    _Tokens,
    _Window,
    diff_edit,
    reencode,
)
from tokviz.engine.models.bpe import BPE
from tokviz.engine.normalizers import normalizer_from_json
from tokviz.engine.pre_tokenizers import pre_tokenizer_from_json
from tokviz.engine.tokenizer import Tokenizer


@pytest.fixture(scope="module")
def gpt2():  # noqa: ANN201
    return tokviz.load(bundle_path("gpt2/r50k_base.tiktoken"))


@pytest.fixture(scope="module")
def cl100k():  # noqa: ANN201
    return tokviz.load(bundle_path("cl100k_base/cl100k_base.tiktoken"))

TEXT = (
    "Tokenizers split text.  Numbers 1234567 and 3.14!\n"
    "def f(x):\n\treturn x  # note\n\n"
    "日本語の文章。 Emoji 🙂👍🏽 and\u00a0NBSP.\n"
    "<|endoftext|> after a literal\n"
) * 6
PIECES = list("ab  \n\t.,7😀日é") + ["<|endoftext|>", "\n\n", "    ", "'s"]


def _same(a, b) -> str | None:  # noqa: ANN001
    for f in ("ids", "tokens", "offsets", "byte_offsets", "special_tokens_mask", "type_ids", "word_ids"):
        if list(getattr(a, f)) != list(getattr(b, f)):
            return f
    if [(c.text, c.start, c.end) for c in a.stages.pre_tokens] != [(c.text, c.start, c.end) for c in b.stages.pre_tokens]:
        return "pre_tokens"
    seg = lambda e: [(s.start, s.end, s.added_id, s.normalized.text) for s in e.stages.segments]  # noqa: E731
    if seg(a) != seg(b):
        return "segments"
    if a.stages.normalized.text != b.stages.normalized.text:
        return "normalized"
    return None


class TestDiffEdit:
    @pytest.mark.parametrize(
        ("old", "new", "edit"),
        [
            ("hello", "hello", Edit(5, 5, 5)),
            ("hello world", "hello, world", Edit(5, 5, 6)),
            ("abc", "", Edit(0, 3, 0)),
            ("aaa", "aaaa", Edit(3, 3, 4)),
            ("x😀y", "x🙂y", Edit(1, 2, 2)),
        ],
        ids=["same", "insert", "delete-all", "repeat", "emoji"],
    )
    def test_cases(self, old: str, new: str, edit: Edit) -> None:
        assert diff_edit(old, new) == edit
        assert new[: edit.start] + new[edit.start : edit.new_end] + new[edit.new_end :] == new
        assert old[: edit.start] + new[edit.start : edit.new_end] + old[edit.old_end :] == new


class TestSpliced:
    def test_views_shift_lazily_and_compose(self) -> None:
        base = [(0, 1), (1, 2), (2, 3), (3, 4)]
        s = Spliced([(base, 0, 2, 0), ([(0, 5)], 0, 1, 2), (base, 2, 4, 5)], _shift_pair)
        assert list(s) == [(0, 1), (1, 2), (2, 7), (7, 8), (8, 9)]
        assert s[2] == (2, 7) and s[-1] == (8, 9) and s[1:3] == [(1, 2), (2, 7)]
        t = Spliced([(s, 0, 1, 0), (s, 3, 5, -1)], _shift_pair)
        assert list(t) == [(0, 1), (6, 7), (7, 8)]
        assert s == list(s)
        with pytest.raises(IndexError):
            s[5]


class TestReencode:
    @pytest.mark.parametrize("allowed", [None, "all"], ids=["literals-as-text", "allowed-special"])
    def test_random_edits_equal_full_encode(self, cl100k, allowed) -> None:  # noqa: ANN001
        rng = random.Random(1234)
        text = TEXT
        old = cl100k.encode(text, allowed_special=allowed)
        spliced = 0
        for _ in range(120):
            pos = rng.randrange(len(text) + 1)
            if rng.random() < 0.6:
                new = text[:pos] + rng.choice(PIECES) + text[pos:]
            else:
                new = text[:pos] + text[pos + rng.randint(1, 6) :]
            r = reencode(cl100k, text, old, new, add_special_tokens=True, allowed_special=allowed)
            enc = r.encoding
            full = cl100k.encode(new, allowed_special=allowed)
            assert _same(enc, full) is None, (_same(enc, full), new[max(pos - 10, 0) : pos + 10])
            spliced += r.windowed
            old, text = enc, new
        assert spliced > 100  # the window path is the normal path, not the fallback

    def test_hf_tokenizer_json_with_added_tokens(self) -> None:
        qwen = tokviz.load(bundle_path("qwen3/tokenizer.json"))
        rng = random.Random(7)
        text = TEXT.replace("<|endoftext|>", "<|im_start|>user<|im_end|>")
        old = qwen.encode(text)
        for _ in range(60):
            pos = rng.randrange(len(text) + 1)
            new = text[:pos] + rng.choice(PIECES + ["<|im_end|>"]) + text[pos:]
            enc = reencode(qwen, text, old, new, add_special_tokens=True).encoding
            assert _same(enc, qwen.encode(new)) is None
            old, text = enc, new

    def test_splice_names_the_changed_tokens(self, gpt2) -> None:  # noqa: ANN001
        text = "line one\nline two\nline three\nline four\nline five\nline six\n"
        old = gpt2.encode(text)
        new = text.replace("three", "3")
        r = reencode(gpt2, text, old, new, add_special_tokens=True)
        enc, splice = r.encoding, r.splice
        assert splice is not None and r.windowed and r.fallbacks == ()
        before = old.ids[: splice.first] + old.ids[splice.first + splice.removed :]
        after = enc.ids[: splice.first] + enc.ids[splice.first + splice.added :]
        assert before == after
        assert "3" in "".join(enc.tokens[splice.first : splice.first + splice.added])

    def test_empty_text_round_trip(self, gpt2) -> None:  # noqa: ANN001
        old = gpt2.encode("abc")
        r = reencode(gpt2, "abc", old, "", add_special_tokens=True)
        assert r.splice is None and r.encoding.ids == [] and r.fallbacks == (Fallback.EMPTY_TEXT,)


class TestDiffSplice:
    """When a normalizer rules out the window path, the full encode is diffed against the old one."""

    @pytest.mark.parametrize("bundle", ["bert-base-uncased/tokenizer.json", "claude-legacy/tokenizer.json"])
    def test_splice_rebuilds_the_new_encoding_from_the_old(self, bundle: str) -> None:
        tok = tokviz.load(bundle_path(bundle))
        rng = random.Random(99)
        text = TEXT
        old = tok.encode(text)
        spliced = 0
        for _ in range(40):
            pos = rng.randrange(len(text) + 1)
            new_text = text[:pos] + rng.choice(PIECES + ["Ünïcödé", "ﬁ"]) + text[pos:]
            r = reencode(tok, text, old, new_text, add_special_tokens=True)
            enc, sp = r.encoding, r.splice
            assert not r.windowed and r.fallbacks == (Fallback.NORMALIZED,)
            full = tok.encode(new_text)
            assert _same(enc, full) is None
            if sp is not None:
                spliced += 1
                f, r, a = sp.first, sp.removed, sp.added
                assert old.ids[:f] + list(enc.ids[f : f + a]) + old.ids[f + r :] == list(enc.ids)
                assert list(old.offsets[:f]) == list(enc.offsets[:f])
                d = len(new_text) - len(text)
                tail_old = [(s + d, e + d) if e > s else (s, e) for s, e in old.offsets[f + r :]]
                assert tail_old == list(enc.offsets[f + a :])
                oc, nc = list(old.stages.pre_tokens), list(enc.stages.pre_tokens)
                cf, cr, ca = sp.chunk_first, sp.chunk_removed, sp.chunk_added
                assert [c.text for c in oc[:cf] + oc[cf + cr :]] == [c.text for c in nc[:cf] + nc[cf + ca :]]
            old, text = enc, new_text
        assert spliced > 30


def _toy(pre_tokenizer: dict) -> Tokenizer:  # noqa: ANN001
    """A character-level pipeline (a BPE without merges: one token per char) around a pre-tokenizer."""
    vocab = {c: i for i, c in enumerate(sorted(set("ab \n.7'▁")))}
    return Tokenizer(BPE(vocab, []), pre_tokenizer=pre_tokenizer_from_json(pre_tokenizer))


# The whole text is isolated at its very first char ("^." matches once), then split on spaces: a
# window that starts inside the text has its own first char isolated.
_FIRST_CHAR = {
    "type": "Sequence",
    "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "^."}, "behavior": "Isolated", "invert": False},
        {"type": "WhitespaceSplit"},
    ],
}


class TestFallbackReasons:
    """Every reason a window is refused, on the smallest text that shows it (``context_lines=0``:
    the window is the edited line widened by the two synchronising chunks at each edge)."""

    @pytest.mark.parametrize(
        ("pipeline", "old_text", "new_text", "reason"),
        [
            # GPT-2's `\s+(?!\S)`: old chunks " \n" | "\n" | "7"; without the 7 the run " \n\n" is
            # one chunk, so the window's first chunk is not the old " \n".
            ("gpt2", "..7' \n\n7", "..7' \n\n", Fallback.HEAD_CHUNK_CHANGED),
            # old chunks "7" | ".7" | "." | ".ab": the window starts at ".7", whose "." the window's
            # own "^." isolates.
            ("first-char", "7.7\n..ab", "7.7\n..ab.", Fallback.HEAD_CHUNK_CHANGED),
            # old chunks " " | " ." | "7" | "\n" | "\n" | "'" | "a"; the window " \n\n" (after the
            # deletion) is one chunk, but the old tail "\n" | "\n" has two.
            ("gpt2", "  .7\n\n'a", " \n\n'a", Fallback.NO_TAIL_CHUNKS),
            # old tail " " | "\n" (the window ends before "b"); the window's text ends with " \n",
            # which GPT-2 cuts as one chunk when nothing follows.
            ("gpt2", "b.7 \nb '", "b.a7 \nb '", Fallback.TAIL_CHUNK_CHANGED),
            # deleting "b" of "ab": the old tail chunk "\n" starts where the deletion ends.
            ("gpt2", "ab\n '\nb7", "a\n '\nb7", Fallback.TAIL_TOUCHES_EDIT),
            ("whitespace-split", "a . aa\nb", "a. aa\nb", Fallback.TAIL_TOUCHES_EDIT),
        ],
        ids=["gpt2-head", "first-char-head", "gpt2-tail-count", "gpt2-tail", "gpt2-tail-at-edit", "ws-tail-at-edit"],
    )
    def test_reason_and_still_exact(self, gpt2, pipeline, old_text, new_text, reason) -> None:  # noqa: ANN001
        tok = {
            "gpt2": lambda: gpt2,
            "first-char": lambda: _toy(_FIRST_CHAR),
            "whitespace-split": lambda: _toy({"type": "WhitespaceSplit"}),
        }[pipeline]()
        r = reencode(tok, old_text, tok.encode(old_text), new_text, add_special_tokens=True, context_lines=0)
        assert r.fallbacks[0] is reason  # (a wider window may then be used)
        assert _same(r.encoding, tok.encode(new_text)) is None

    def test_normalized_window(self) -> None:
        """ASCII text is left as is by NFC, the typed "e" + U+0301 is composed: the window is refused."""
        vocab = {c: i for i, c in enumerate(sorted(set("abc é\u0301")))}
        tok = Tokenizer(
            BPE(vocab, []),
            normalizer=normalizer_from_json({"type": "NFC"}),
            pre_tokenizer=pre_tokenizer_from_json({"type": "WhitespaceSplit"}),
        )
        text = "ab c\n" * 8
        new = text[:12] + "e\u0301" + text[12:]
        r = reencode(tok, text, tok.encode(text), new, add_special_tokens=True)
        assert r.fallbacks == (Fallback.NORMALIZED,)  # a wider window would be normalized too
        assert _same(r.encoding, tok.encode(new)) is None

    def test_sampling_model_changes_edge_tokens(self, gpt2) -> None:  # noqa: ANN001
        """With BPE-dropout the same chunk comes out differently from one encode to the next, so
        the window's edge tokens do not match the old ones (the chunks still do)."""
        tok = gpt2.with_model(gpt2.model.replace(dropout=0.5, seed=3))
        text = "".join(f"internationalization characteristically {i}\n" for i in range(12))
        new = text.replace(" 6\n", " 66\n")
        r = reencode(tok, text, tok.encode(text), new, add_special_tokens=True)
        assert r.fallbacks[0] is Fallback.EDGE_TOKENS_CHANGED
        assert "".join(r.encoding.tokens) == "".join(gpt2.encode(new).tokens)  # a sample of the same text

    # The reasons below guard assumptions about the other components (model token spans lie in
    # their chunk, no post-processor tokens without add_special_tokens, the unchanged text before
    # the edit comes back as chunks) that no pipeline breaks today: checked on the step itself.
    def test_no_head_chunk(self) -> None:
        chunks = [PreToken("a", 0, 2), PreToken("b", 2, 4), PreToken("c", 4, 6), PreToken("d", 6, 8)]
        got = _sync(chunks, _Window(2, 8, 1, 4), (), Edit(7, 7, 8), 8)
        assert got is Fallback.NO_HEAD_CHUNK

    @pytest.mark.parametrize(
        ("offsets", "window", "reason"),
        [
            ([(0, 3), (3, 6)], _Window(2, 6, 1, 2), Fallback.TOKEN_CROSSES_START),  # (0, 3) holds 2
            ([(0, 2), (2, 5), (5, 6)], _Window(0, 4, 0, 2), Fallback.TOKEN_CROSSES_END),  # (2, 5) holds 4
        ],
        ids=["start", "end"],
    )
    def test_token_crosses_the_window_edge(self, offsets, window, reason) -> None:  # noqa: ANN001
        old = _columns("abcdef", offsets)
        assert _token_range(old, _columns("", []), window) is reason

    def test_window_with_tokens_that_cover_no_text(self) -> None:
        old = _columns("abcd", [(0, 2), (2, 4)])
        w = _columns("abcd", [(0, 0), (0, 2), (2, 4)], special=[1, 0, 0])
        assert _token_range(old, w, _Window(0, 4, 0, 2)) is Fallback.ADDED_TOKENS
        assert _token_range(old, _columns("abcd", [(0, 2), (2, 4)]), _Window(0, 4, 0, 2)) == _Tokens(0, 2, 0, 2)


def _columns(text: str, offsets: list[tuple[int, int]], *, special: list[int] | None = None) -> Encoding:
    n = len(offsets)
    mask = special or [0] * n
    return Encoding.of_lists(text, list(range(n)), ["x"] * n, offsets, offsets, mask, [0] * n, [0] * n)
