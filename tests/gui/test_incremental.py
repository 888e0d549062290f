"""Live-typing re-encoding: a window around the edit, spliced, must equal a full encode."""

from __future__ import annotations

import random

import pytest

from tokviz.gui.incremental import Edit, Spliced, diff_edit, reencode, _shift_pair

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
            enc, splice = reencode(cl100k, text, old, new, add_special_tokens=True, allowed_special=allowed)
            full = cl100k.encode(new, allowed_special=allowed)
            assert _same(enc, full) is None, (_same(enc, full), new[max(pos - 10, 0) : pos + 10])
            spliced += splice is not None
            old, text = enc, new
        assert spliced > 100  # the window path is the normal path, not the fallback

    def test_hf_tokenizer_json_with_added_tokens(self) -> None:
        import tokviz
        from tokviz.resources import resource_path

        qwen = tokviz.load(resource_path("bundles", "qwen3", "tokenizer.json.gz"))
        rng = random.Random(7)
        text = TEXT.replace("<|endoftext|>", "<|im_start|>user<|im_end|>")
        old = qwen.encode(text)
        for _ in range(60):
            pos = rng.randrange(len(text) + 1)
            new = text[:pos] + rng.choice(PIECES + ["<|im_end|>"]) + text[pos:]
            enc, _splice = reencode(qwen, text, old, new, add_special_tokens=True)
            assert _same(enc, qwen.encode(new)) is None
            old, text = enc, new

    def test_splice_names_the_changed_tokens(self, gpt2) -> None:  # noqa: ANN001
        text = "line one\nline two\nline three\nline four\nline five\nline six\n"
        old = gpt2.encode(text)
        new = text.replace("three", "3")
        enc, splice = reencode(gpt2, text, old, new, add_special_tokens=True)
        assert splice is not None
        before = old.ids[: splice.first] + old.ids[splice.first + splice.removed :]
        after = enc.ids[: splice.first] + enc.ids[splice.first + splice.added :]
        assert before == after
        assert "3" in "".join(enc.tokens[splice.first : splice.first + splice.added])

    def test_empty_text_round_trip(self, gpt2) -> None:  # noqa: ANN001
        old = gpt2.encode("abc")
        enc, splice = reencode(gpt2, "abc", old, "", add_special_tokens=True)
        assert splice is None and enc.ids == []


class TestDiffSplice:
    """When a normalizer rules out the window path, the full encode is diffed against the old one."""

    @pytest.mark.parametrize("bundle", ["bert-base-uncased/tokenizer.json.gz", "claude-legacy/tokenizer.json.gz"])
    def test_splice_rebuilds_the_new_encoding_from_the_old(self, bundle: str) -> None:
        import tokviz
        from tokviz.resources import resource_path

        tok = tokviz.load(resource_path("bundles", *bundle.split("/")))
        rng = random.Random(99)
        text = TEXT
        old = tok.encode(text)
        spliced = 0
        for _ in range(40):
            pos = rng.randrange(len(text) + 1)
            new_text = text[:pos] + rng.choice(PIECES + ["Ünïcödé", "ﬁ"]) + text[pos:]
            enc, sp = reencode(tok, text, old, new_text, add_special_tokens=True)
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
