"""The linear-time linter and exact alignment against brute-force oracles.

The look-ups that once scanned every token per finding (which tokens overlap a span, which
grapheme cluster holds a code point, the next covered character of a segment) are now indexed.
Each test here swaps the index for the plain scan it replaced (the definition, a few lines) and
checks that the findings and the exact spans come out identical on real texts and bundles.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st
from support import SHARED, bundle_path, require

import tokviz
import tokviz.analysis.lint as lint_mod
import tokviz.engine.exact as exact_mod
from tokviz.analysis.lint import SpanIndex, lint_encoding
from tokviz.io.textfile import read_text_file

NFD_KOREAN = "\u1106\u1161\u1109\u1175\u11af\u1101\u1161\u1112\u1162\u110b\u1167"

BUNDLES = [
    "cl100k_base/cl100k_base.tiktoken",
    "qwen3/tokenizer.json",
    "mistral-7b-v0.1/tokenizer.json",
    "bert-base-uncased/tokenizer.json",
    "albert-30k-clean/30k-clean.model",
]


def _japanese() -> str:
    path = SHARED / "corpora" / "wagahaiwa_nekodearu.txt" if SHARED is not None else None
    require(path is not None and path.is_file(), "corpus wagahaiwa_nekodearu.txt not found")
    return read_text_file(path).text  # type: ignore[arg-type]


def _texts() -> list[str]:
    ja = _japanese()
    return [
        ja[:1200],
        ja[20000:21000],
        NFD_KOREAN * 3 + " abc " + NFD_KOREAN,
        "e\u0301te\u0301 cafe\u0301 na\u0308ive \U0001F468\u200d\U0001F469\u200d\U0001F467 \U0001F1EF\U0001F1F5 x\u0300\u0301",
        "a\x00b\x01c\u200bd  \t  e\r\n\r\nf   g\u00a0h\ufeffi \ufb01ne \u2026 \u2460 \uff71\uff72 \uff21 ",
        "\u4e2d\u6587 \u4e2d\u6587 Hello  World\n  THIS is A test. 123,456   ",
    ]


class _BruteSpans:
    """The oracle: the scans `SpanIndex` replaced."""

    def __init__(self, tokens, spans) -> None:  # noqa: ANN001
        self.rows = [(t, sp) for t in tokens if (sp := spans(t)) is not None]

    def overlapping(self, a: int, b: int) -> list[int]:
        return sorted(t for t, (s, e) in self.rows if s < b and e > a)

    def last_ending_by(self, p: int) -> int | None:
        before = [t for t, (_, e) in self.rows if e <= p]
        return max(before) if before else None


def _brute_cluster_at(text: str, bounds: list[int], cp: int) -> tuple[int, int, str]:
    s = max(b for b in bounds if b < cp)
    e = min(b for b in bounds if b > cp)
    return s, e, text[s:e]


def _brute_right_facts(original, owner, seg_start, deletes):  # noqa: ANN001, ANN202
    """Per position: the next covering char by a scan ahead, and the old collapsed-space scan."""
    width = len(owner)
    right_of = [next((o for o in owner[k + 1 :] if o >= 0), -1) for k in range(width)]
    collapses = []
    for k in range(width + 1):
        verdict = False
        for j in range(k, width):
            c = original[seg_start + j]
            if not deletes.blank(c):  # white space, or made white space by the normalizer
                if owner[j] < 0 and deletes(c):
                    continue
                break
            if owner[j] >= 0:
                verdict = True
                break
        collapses.append(verdict)
    return right_of, collapses


def _brute_widen(text: str, src: list[list[int]], first: int) -> None:
    """Every empty span (not a ``▁``) scans ahead for the span that ends its run."""
    n = len(src)
    for i in range(first, n):
        a, b = src[i]
        if a != b or text[i] == "\u2581":
            continue
        j = i + 1
        while j < n and src[j][0] == src[j][1] == a and text[j] != "\u2581":
            j += 1
        if j < n and src[j][0] == a < src[j][1]:
            src[i] = list(src[j])


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return _texts()


@pytest.fixture(scope="module", params=BUNDLES, ids=lambda b: b.split("/")[0])
def tok(request: pytest.FixtureRequest):  # noqa: ANN201
    return tokviz.load(bundle_path(request.param))


def _lint_all(tok, texts: list[str]) -> list[tuple[object, object, object]]:  # noqa: ANN001
    out = []
    for text in texts:
        enc = tok.encode(text, add_special_tokens=False)
        out.append((enc.exact_offsets, lint_encoding(tok, enc).to_json(), lint_encoding(tok, enc, exact=True).to_json()))
    return out


class TestAgainstBruteForce:
    def test_findings_and_exact_spans_equal_the_scans(self, tok, texts, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
        fast = _lint_all(tok, texts)
        monkeypatch.setattr(lint_mod, "SpanIndex", _BruteSpans)
        monkeypatch.setattr(lint_mod, "_cluster_at", _brute_cluster_at)
        monkeypatch.setattr(exact_mod, "_right_facts", _brute_right_facts)
        monkeypatch.setattr(exact_mod, "_widen_empty_expansions", _brute_widen)
        slow = _lint_all(tok, texts)
        assert sum(len(r[1]["findings"]) for r in fast) > 0  # the texts do exercise the checks
        for text, f, s in zip(texts, fast, slow):
            assert f == s, f"differs on {text[:30]!r}"

    def test_a_long_text_equals_the_scans(self, texts, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
        tok = tokviz.load(bundle_path("cl100k_base/cl100k_base.tiktoken"))
        long = _japanese()[:6000]
        fast = _lint_all(tok, [long])
        monkeypatch.setattr(lint_mod, "SpanIndex", _BruteSpans)
        slow = _lint_all(tok, [long])
        assert fast == slow
        assert {"U1", "D1"} <= set(fast[0][1]["counts"])  # byte splits on CJK: the look-ups ran


_span = st.tuples(st.integers(0, 40), st.integers(0, 12)).map(lambda t: (t[0], t[0] + t[1]))


class TestSpanIndex:
    @settings(max_examples=200, deadline=None)
    @given(st.lists(_span, max_size=30), st.integers(-1, 55), st.integers(0, 14))
    def test_queries_equal_the_scan(self, spans: list[tuple[int, int]], a: int, width: int) -> None:
        fast = SpanIndex(range(len(spans)), spans.__getitem__)
        slow = _BruteSpans(range(len(spans)), spans.__getitem__)
        assert fast.overlapping(a, a + width) == slow.overlapping(a, a + width)
        assert fast.last_ending_by(a) == slow.last_ending_by(a)


class TestSegmentScans:
    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.tuples(st.sampled_from("a \t\x01\x02"), st.integers(-1, 3)), max_size=25))
    def test_right_facts_equal_the_scan_ahead(self, cells: list[tuple[str, int]]) -> None:
        original = "xy" + "".join(c for c, _ in cells)  # a segment starting at 2
        owner = [o for _, o in cells]

        class Deletes:
            def __call__(self, c: str) -> bool:
                return c == "\x01"  # a control character the normalizer drops

            def blank(self, c: str) -> bool:
                return c in " \t\x02"  # \x02: one the normalizer makes a space (like U+200B)

        deletes = Deletes()
        assert exact_mod._right_facts(original, owner, 2, deletes) == _brute_right_facts(original, owner, 2, deletes)

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.tuples(st.sampled_from("a.\u2581"), st.integers(0, 3), st.integers(0, 1)), max_size=20), st.integers(0, 2))
    def test_widen_equals_the_scan_ahead(self, cells: list[tuple[str, int, int]], first: int) -> None:
        text = "".join(c for c, _, _ in cells)
        fast = [[a, a + w] for _, a, w in cells]
        slow = [list(s) for s in fast]
        exact_mod._widen_empty_expansions(text, fast, first)
        _brute_widen(text, slow, first)
        assert fast == slow
