"""The offset linter against the expected lint table (spec §3.iii), with HF's offsets in each test.

Every row loads the same tokenizer file in tokviz and in HF ``tokenizers``, checks that tokviz's
``offsets`` equal HF's (parity: the linter lints HF's spans), then checks the findings the row
names. "Errors exactly" means no other error finding appears.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hf_builders import albert_json, char_bpe_json, gpt2_json, llama3_like_json, roberta_like_json
from hypothesis import HealthCheck, given, settings, strategies as st
from support import ModuleCache, bundle_path, require_module

import tokviz
from tokviz.analysis.corpus import as_token
from tokviz.analysis.corpus_jobs import lint_corpus
from tokviz.analysis.lint import CHECKS, CorpusLint, LintReport, lint_encoding, lint_text, regression_case
from tokviz.cli import main as cli_main
from tokviz.engine.cancel import Cancelled

NFD_KOREAN = "\u1106\u1161\u1109\u1175\u11af\u1101\u1161\u1112\u1162\u110b\u1167"  # 마실까해여, 11 code points
E_ACUTE = "e\u0301te\u0301"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lint-tokenizers")


_PATHS = {
    "gpt2": lambda d: gpt2_json(d),
    "llama3-like": lambda d: llama3_like_json(d),
    "albert-json": lambda d: albert_json(d),
    "roberta-like": lambda d: roberta_like_json(d),
    "char-bpe": lambda d: char_bpe_json(d),
    "qwen3": lambda d: bundle_path("qwen3/tokenizer.json"),
    "claude": lambda d: bundle_path("claude-legacy/tokenizer.json"),
    "mistral-json": lambda d: bundle_path("mistral-7b-v0.1/tokenizer.json"),
    "bert": lambda d: bundle_path("bert-base-uncased/tokenizer.json"),
}
_cache = ModuleCache()


def pair(name: str, folder: Path):  # noqa: ANN201
    """(tokviz tokenizer, HF tokenizer, path) of one named tokenizer file."""
    if name not in _cache:
        hf = require_module("tokenizers")
        path = Path(_PATHS[name](folder))
        _cache[name] = (tokviz.load(path), hf.Tokenizer.from_file(str(path)), path)
    return _cache[name]


def lint(name: str, folder: Path, text: str) -> tuple[LintReport, object, list[tuple[int, int]]]:
    """Lint ``text`` and check parity of the offsets with HF in the same step."""
    tok, hf, _ = pair(name, folder)
    enc = tok.encode(text, add_special_tokens=False)
    hf_offsets = [tuple(o) for o in hf.encode(text, add_special_tokens=False).offsets]
    assert enc.offsets == hf_offsets, f"{name}: offsets differ from HF on {text!r}"
    return lint_encoding(tok, enc), enc, hf_offsets


def findings(report: LintReport, check: str, severity: str | None = None) -> list:
    return [f for f in report.findings if f.check == check and (severity is None or f.severity == severity)]


def errors(report: LintReport) -> list[tuple[str, tuple[int, int]]]:
    return sorted((f.check, f.span) for f in report.findings if f.severity == "error")


class TestSpecTable:
    @pytest.mark.parametrize("text", ["Sample input", "are you ok?", "This is an example."])
    def test_llama3_like_ignore_merges_has_no_findings(self, built: Path, text: str) -> None:
        report, _, hf_offsets = lint("llama3-like", built, text)
        assert all(s < e for s, e in hf_offsets)  # no zero-width span (#1517 is fixed)
        assert report.findings == ()

    @pytest.mark.parametrize("name", ["gpt2", "llama3-like", "qwen3", "claude"])
    def test_byte_split_arrow(self, built: Path, name: str) -> None:
        report, enc, hf = lint(name, built, "i ⭢ j")
        k = enc.tokens.index("Ġâ")
        assert enc.tokens[k : k + 3] == ["Ġâ", "Ń", "¢"] and hf[k : k + 3] == [(1, 3), (2, 3), (2, 3)]
        o1 = findings(report, "O1")
        assert [(f.severity, f.tokens) for f in o1] == [("info", (k, k + 1))]
        assert "byte split" in o1[0].reason
        d1 = findings(report, "D1")
        assert [(f.severity, f.tokens, f.span) for f in d1] == [("info", (k + 1, k + 2), (2, 3))]
        assert [f.tokens for f in findings(report, "U1")] == [(k, k + 1, k + 2)]
        assert errors(report) == []

    def test_gpt2_karadzic_duplicate_is_info(self, built: Path) -> None:
        report, enc, hf = lint("gpt2", built, "Radovan Karadžić in Bosnia")
        k = enc.tokens.index("Å")
        assert enc.tokens[k + 1] == "¾" and hf[k] == hf[k + 1] == (13, 14)
        assert [(f.severity, f.tokens, f.span) for f in findings(report, "D1")] == [("info", (k, k + 1), (13, 14))]
        assert errors(report) == []

    def test_qwen3_nfd_korean_composition_gaps(self, built: Path) -> None:
        report, enc, hf = lint("qwen3", built, NFD_KOREAN)
        assert hf == [(0, 1), (2, 3), (5, 6), (7, 8), (9, 10)]
        g1 = findings(report, "G1", "error")
        # jamo at 1, 3-4, 6, 8, 10 are in no token (NFC kept only each syllable's first source)
        assert [f.span for f in g1] == [(1, 2), (3, 5), (6, 7), (8, 9), (10, 11)]
        assert all("normalizer composition" in f.reason for f in g1)
        assert errors(report) == [("G1", f.span) for f in g1]
        assert enc.exact_offsets == [(0, 2), (2, 5), (5, 7), (7, 9), (9, 11)]

    @pytest.mark.parametrize("name", ["qwen3", "claude"])
    def test_combining_acute_trailing_gap(self, built: Path, name: str) -> None:
        report, enc, hf = lint(name, built, E_ACUTE)
        assert hf == [(0, 4)]
        assert errors(report) == [("G1", (4, 5))]
        assert "composition" in findings(report, "G1")[0].reason
        assert enc.exact_offsets == [(0, 5)]

    def test_claude_expansion_duplicate(self, built: Path) -> None:
        report, enc, hf = lint("claude", built, "ヿ")
        assert hf == [(0, 1), (0, 1)]
        d1 = findings(report, "D1")
        assert [(f.severity, f.tokens) for f in d1] == [("info", (0, 1))]
        assert "expansion" in d1[0].reason
        assert [f.span for f in findings(report, "N1")] == [(0, 1)]
        assert errors(report) == []

    def test_albert_json_prepended_marker_overlap(self, built: Path) -> None:
        report, enc, hf = lint("albert-json", built, "中文 中文")
        assert enc.tokens[:2] == ["▁", "中文"] and hf[:2] == [(0, 1), (0, 2)]
        o1 = findings(report, "O1")
        assert [(f.severity, f.tokens) for f in o1] == [("error", (0, 1))]
        assert "prepended marker" in o1[0].reason and "Metaspace" in o1[0].reason
        assert errors(report) == [("O1", o1[0].span)]
        assert enc.exact_offsets[:2] == [(0, 0), (0, 2)]

    def test_albert_model_already_reports_zero_width_marker(self) -> None:
        tok = tokviz.load(bundle_path("albert-30k-clean/30k-clean.model"))
        enc = tok.encode("中文 中文", add_special_tokens=False)
        # SentencePiece's norm_to_orig puts the dummy prefix at position 0 with no source (hand-checked)
        assert enc.tokens[:2] == ["▁", "中文"] and enc.offsets[:2] == [(0, 0), (0, 2)]
        assert errors(lint_encoding(tok, enc)) == []

    def test_mistral_json_prepended_marker_duplicate(self, built: Path) -> None:
        report, enc, hf = lint("mistral-json", built, "中文 中文")
        assert enc.tokens[:2] == ["▁", "中"] and hf[:2] == [(0, 1), (0, 1)]
        d1 = findings(report, "D1")
        assert [(f.severity, f.tokens, f.span) for f in d1] == [("error", (0, 1), (0, 1))]
        assert "prepended marker" in d1[0].reason and "Prepend normalizer" in d1[0].reason
        assert errors(report) == [("D1", (0, 1))]
        assert enc.exact_offsets[0] == (0, 0)

    def test_roberta_like_added_token_shifts_prefix_space(self, built: Path) -> None:
        report, enc, hf = lint("roberta-like", built, "<device_name>BMS-L17-1</device_name>")
        k = enc.tokens.index("ĠB")
        assert hf[k] == (14, 14) and hf[k + 1] == (14, 16)
        assert [(f.check, f.tokens) for f in findings(report, "Z1", "error")] == [("Z1", (k,))]
        assert "added token shifted the prefix space" in findings(report, "Z1")[0].reason
        assert [f.span for f in findings(report, "G1", "error")] == [(13, 14)]
        assert errors(report) == [("G1", (13, 14)), ("Z1", (14, 14))]
        assert enc.exact_offsets[k] == (13, 14) == enc.byte_offsets[k]

    def test_roberta_like_standalone_prefix_space(self, built: Path) -> None:
        report, enc, hf = lint("roberta-like", built, "  two leading")
        assert enc.tokens[0] == "Ġ" and hf[0] == (0, 0)
        assert [(f.severity, f.tokens) for f in findings(report, "Z2")] == [("info", (0,))]
        assert errors(report) == []

    def test_bert_strip_accents_deletion_is_info(self, built: Path) -> None:
        report, enc, hf = lint("bert", built, E_ACUTE)
        assert enc.tokens == ["et", "##e"] and hf == [(0, 3), (3, 4)]
        g1 = findings(report, "G1")
        assert [(f.severity, f.span) for f in g1] == [("info", (4, 5))]
        assert "deleted by the normalizer" in g1[0].reason
        assert findings(report, "N1")
        assert errors(report) == []

    def test_bert_added_token_before_lowercasing_passes_t1(self, built: Path) -> None:
        report, enc, hf = lint("bert", built, "A, naïve [MASK] AllenNLP sentence.")
        assert hf[enc.tokens.index("[MASK]")] == (9, 15) and hf[enc.tokens.index("allen")] == (16, 21)
        assert findings(report, "T1") == [] and errors(report) == []

    def test_albert_json_deleted_control_chars(self, built: Path) -> None:
        report, enc, hf = lint("albert-json", built, "T\x10his \x10\t is")
        assert enc.tokens == ["▁this", "▁is"] and hf == [(0, 5), (8, 11)]
        assert [(f.severity, f.span) for f in findings(report, "G1")] == [("info", (6, 7))]
        assert findings(report, "N1")
        assert errors(report) == []


class TestExplanations:
    def test_character_bpe_probe_shift(self, built: Path) -> None:
        report, enc, hf = lint("char-bpe", built, "This is")
        # HF's running offsets skip the unknown "T": "hi" gets "Th" (0, 2); exact is (1, 3)
        assert enc.tokens[:2] == ["hi", "s"] and hf[:2] == [(0, 2), (2, 3)]
        t1 = findings(report, "T1", "error")
        assert [f.tokens for f in t1] == [(0,), (1,)]
        assert "no token for" in t1[0].reason and "'Th'" in t1[0].reason
        assert enc.exact_offsets[:2] == [(1, 3), (3, 4)]
        exact = lint_encoding(pair("char-bpe", built)[0], enc, exact=True)
        assert [(f.check, f.span) for f in exact.findings if f.severity == "error"] == [("G1", (0, 1))]

    @pytest.mark.parametrize(("name", "text"), [
        ("qwen3", NFD_KOREAN), ("mistral-json", "中文 中文"), ("albert-json", "中文 中文"),
        ("roberta-like", "<device_name>BMS-L17-1</device_name>"), ("qwen3", E_ACUTE),
    ])
    def test_exact_spans_clear_the_errors(self, built: Path, name: str, text: str) -> None:
        tok = pair(name, built)[0]
        assert errors(lint_text(tok, text)) != []
        assert errors(lint_text(tok, text, exact=True)) == []

    def test_every_check_id_is_documented(self) -> None:
        assert list(CHECKS) == ["Z1", "Z2", "O1", "D1", "R1", "G1", "U1", "K1", "T1", "T2", "N1"]

    def test_grapheme_cut_on_zwj_family(self, built: Path) -> None:
        report, _, _ = lint("qwen3", built, "👨\u200d👩\u200d👧")
        assert findings(report, "K1") and all(f.severity == "info" for f in findings(report, "K1"))
        assert errors(report) == []


class TestCorpusAndExport:
    def test_corpus_counts_examples_and_progress(self, built: Path, tmp_path: Path) -> None:
        tok = pair("qwen3", built)[0]
        f = tmp_path / "c.txt"
        f.write_bytes(("plain line\r\n" + E_ACUTE + "\r\n" + NFD_KOREAN + "\n" + E_ACUTE).encode("utf-8"))
        seen: list[tuple[int, int]] = []
        result = lint_corpus(tok, f, examples=2, progress=lambda s, d, t: s == "bytes" and seen.append((d, t)))
        assert result.lines == 4 and not result.cancelled
        # G1 errors: 1 per e-acute line (x2) + 5 for the Korean line
        assert result.counts["G1"] == 7
        assert len(result.samples["G1"]) == 2 and result.samples["G1"][0]["line"] == 2
        assert result.samples["G1"][0]["text"] == E_ACUTE + "\r\n"  # the line exactly as in the file
        assert result.samples["G1"][0]["file"] == str(f)
        assert seen and seen[-1][0] == seen[-1][1] == f.stat().st_size
        json.dumps(result.to_json())

    def test_corpus_cancel(self, built: Path, tmp_path: Path) -> None:
        tok = pair("qwen3", built)[0]
        f = tmp_path / "c.txt"
        f.write_text("a\n" * 50, encoding="utf-8")
        calls = []
        with pytest.raises(Cancelled) as info:
            lint_corpus(tok, f, cancel=as_token(lambda: calls.append(1) or len(calls) > 3))
        result = info.value.partial  # the lines linted before the token was set
        assert isinstance(result, CorpusLint) and result.cancelled and 0 < result.lines < 4
        assert result.to_json()["cancelled"] is True

    def test_regression_case_reproduces(self, built: Path) -> None:
        tok, hf, path = pair("mistral-json", built)
        enc = tok.encode("中文 中文", add_special_tokens=False)
        report = lint_encoding(tok, enc)
        case = json.loads(json.dumps(regression_case(str(path), enc, report.findings[0])))
        again = tokviz.load(case["tokenizer"]).encode(case["text"], add_special_tokens=False)
        assert [list(o) for o in again.offsets] == case["expected"]["offsets"]
        assert [list(o) for o in hf.encode(case["text"], add_special_tokens=False).offsets] == case["expected"]["offsets"]
        assert case["expected"]["exact_offsets"][0] == [0, 0] and case["finding"]["check"] == "D1"


class TestCli:
    def test_lint_json(self, built: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """By default the text is encoded as the GUI shows it: Mistral's <s> is token 0."""
        path = pair("mistral-json", built)[2]
        assert cli_main(["lint", str(path), "--text", "中文 中文", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["add_special_tokens"] is True and out["counts"] == {"D1": 1}
        f = out["findings"][0]
        assert (f["check"], f["severity"], f["tokens"], f["span"]) == ("D1", "error", [1, 2], [0, 1])
        assert "prepended marker" in f["reason"]

    def test_no_special_numbers_tokens_without_bos(self, built: Path, capsys: pytest.CaptureFixture[str]) -> None:
        path = pair("mistral-json", built)[2]
        assert cli_main(["lint", str(path), "--text", "中文 中文", "--no-special", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["add_special_tokens"] is False
        assert [(f["check"], f["tokens"]) for f in out["findings"]] == [("D1", [0, 1])]

    def test_text_output_says_whether_special_tokens_were_added(
        self, built: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        tok, _, path = pair("mistral-json", built)
        n = len(tok.encode("中文 中文").ids)  # with <s>
        assert cli_main(["lint", str(path), "--text", "中文 中文"]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0] == f"{n} tokens (HF-compatible spans, special tokens added)"
        assert lines[1].startswith("[0] D1 error tokens [1, 2] span (0, 1)")
        assert cli_main(["lint", str(path), "--text", "中文 中文", "--no-special", "--exact"]) == 0
        assert capsys.readouterr().out.splitlines()[0] == f"{n - 1} tokens (exact spans, no special tokens added)"

    def test_corpus_and_regression_say_how_they_encoded(
        self, built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        tok, hf, path = pair("mistral-json", built)
        corpus = tmp_path / "c.txt"
        corpus.write_text("中文 中文\nabc\n", encoding="utf-8")
        for flags, added in (([], True), (["--no-special"], False)):
            assert cli_main(["lint", str(path), "--corpus", str(corpus), "--json", *flags]) == 0
            out = json.loads(capsys.readouterr().out)
            assert out["add_special_tokens"] is added and out["lines"] == 2
            assert out["examples"]["D1"][0]["finding"]["tokens"] == ([1, 2] if added else [0, 1])
        assert cli_main(["lint", str(path), "--corpus", str(corpus)]) == 0
        assert capsys.readouterr().out.splitlines()[0] == "2 lines linted (HF-compatible spans, special tokens added)"
        assert cli_main(["lint", str(path), "--text", "中文 中文", "--regression", "0"]) == 0
        case = json.loads(capsys.readouterr().out)
        assert case["add_special_tokens"] is True
        again = tokviz.load(case["tokenizer"]).encode(case["text"], add_special_tokens=case["add_special_tokens"])
        assert [list(o) for o in again.offsets] == case["expected"]["offsets"]
        assert hf.encode(case["text"]).ids == case["expected"]["ids"]  # HF adds <s> by default too

    def test_lint_exact_file(self, built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        path = pair("qwen3", built)[2]
        f = tmp_path / "t.txt"
        f.write_bytes(NFD_KOREAN.encode("utf-8"))
        assert cli_main(["lint", str(path), "--file", str(f), "--exact", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["spans"] == "exact" and "G1" not in out["counts"] and out["counts"]["N1"] == 5

    def test_bad_regression_index_is_one_line_error(self, built: Path, capsys: pytest.CaptureFixture[str]) -> None:
        path = pair("qwen3", built)[2]
        assert cli_main(["lint", str(path), "--text", "x", "--regression", "3"]) == 2
        assert "there are 0 findings" in capsys.readouterr().err


class TestMoreReproducers:
    @pytest.mark.parametrize("text", ["ﬁne", "\u3007"])  # a ligature; a CJK char only byte fallback knows
    def test_mistral_marker_duplicates_first_char(self, built: Path, text: str) -> None:
        report, enc, hf = lint("mistral-json", built, text)
        assert enc.tokens[0] == "▁" and hf[0] == hf[1]
        d1 = findings(report, "D1", "error")
        assert d1 and d1[0].tokens[0] == 0 and "prepended marker" in d1[0].reason
        assert enc.exact_offsets[0] == (0, 0)

    @pytest.mark.parametrize("text", ["日本語", "😀 ok", "Ελληνικά", "\u1106\u1161 x"])
    def test_albert_json_marker_overlaps_first_token(self, built: Path, text: str) -> None:
        report, enc, hf = lint("albert-json", built, text)
        assert enc.tokens[0] == "▁" and hf[0][0] == hf[1][0] == 0 and hf[0][1] > 0
        o1 = findings(report, "O1", "error") + findings(report, "D1", "error")
        assert o1 and o1[0].tokens[0] == 0 and "Metaspace" in o1[0].reason
        assert enc.exact_offsets[0] == (0, 0)


_ALPHABET = st.sampled_from(
    list("ab T.") + ["\u0301", "é", "ﬁ", "ヿ", "中", "😀", "\u200d", "\x10", "  ", "\u1106", "\u1161", "\U0001F1E9", "\r\n"]
)


class TestLintProperties:
    @pytest.mark.parametrize("name", ["qwen3", "claude", "mistral-json", "bert", "albert-json", "roberta-like"])
    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(text=st.lists(_ALPHABET, min_size=1, max_size=10).map("".join))
    def test_exact_spans_leave_no_offset_errors(self, built: Path, name: str, text: str) -> None:
        """Every lint runs; on exact spans no zero-width, overlap, duplicate or gap error is left
        (these tokenizers all have an unk token or byte fallback, so nothing is dropped)."""
        report, _, _ = lint(name, built, text)
        json.dumps(report.to_json())
        exact = lint_encoding(pair(name, built)[0], pair(name, built)[0].encode(text, add_special_tokens=False), exact=True)
        left = [(f.check, f.span, f.reason) for f in exact.findings if f.severity == "error" and f.check in ("Z1", "O1", "D1", "G1", "R1")]
        assert left == []
