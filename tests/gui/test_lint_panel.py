"""The lint panel and its view-model: findings of the Inspect text, marks, span toggle, stage trace,
corpus lint with progress and cancel, export. Expected findings are the spec §3.iii rows that
tests/analysis/test_lint.py checks against HF; here they check the wiring."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st
from PySide6.QtCore import Qt
from support import SHARED, bundle_path, require

import tokviz
from tokviz.gui.lint_viewmodel import SEVERITY_RANK, LintMarks, LintViewModel, lint_cut
from tokviz.gui.viewmodel import InspectViewModel
from tokviz.gui.widgets.lint_panel import ROWS_PER_PAGE, LintPanel, chunk_marks
from tokviz.io.textfile import read_text_file

NFD_KOREAN = "\u1106\u1161\u1109\u1175\u11af\u1101\u1161\u1112\u1162\u110b\u1167"


@pytest.fixture(scope="module")
def qwen3():
    return tokviz.load(bundle_path("qwen3/tokenizer.json"))


@pytest.fixture(scope="module")
def mistral():
    return tokviz.load(bundle_path("mistral-7b-v0.1/tokenizer.json"))


def linted(qtbot, tok, text: str):  # noqa: ANN001, ANN201
    vm = InspectViewModel()
    lvm = LintViewModel(vm)
    panel = LintPanel(lvm)
    qtbot.addWidget(panel)
    vm.set_text(text)
    vm.set_tokenizer(tok, name="t")
    qtbot.waitUntil(lambda: lvm.view is not None and lvm.view.encoding.text == text and not vm.is_busy() and not lvm.is_busy(), timeout=30000)
    return vm, lvm, panel


class TestLintPanel:
    def test_findings_grouped_by_check_with_counts(self, qtbot, qwen3) -> None:  # noqa: ANN001
        vm, lvm, panel = linted(qtbot, qwen3, NFD_KOREAN)
        groups = {panel.tree.topLevelItem(k).text(0).split(" ")[0]: panel.tree.topLevelItem(k) for k in range(panel.tree.topLevelItemCount())}
        assert groups["G1"].childCount() == 5 and groups["G1"].text(4) == "5 errors"
        assert "composition" in groups["G1"].child(0).text(4)
        # marks sit on the Inspect tokens (qwen3 adds no special tokens here: same indexes)
        assert vm.lint_marks.tokens == {0: "error", 1: "error", 2: "error", 3: "error", 4: "error"}
        assert "5 errors" in panel.summary.text()

    def test_exact_toggle_switches_highlight_spans(self, qtbot, qwen3) -> None:  # noqa: ANN001
        vm, lvm, panel = linted(qtbot, qwen3, NFD_KOREAN)
        assert vm.token_span(0) == (0, 1)  # HF: only the first jamo
        panel.exact_box.setChecked(True)
        assert vm.span_mode == "exact" and vm.token_span(0) == (0, 2)
        assert "no findings" not in panel.summary.text() and "exact spans" in panel.summary.text()
        assert set(vm.lint_marks.tokens.values()) == {"info"}  # no error left: N1 badges only

    def test_stage_trace_shows_where_the_offset_moved(self, qtbot, qwen3) -> None:  # noqa: ANN001
        vm, lvm, panel = linted(qtbot, qwen3, NFD_KOREAN)
        vm.select_token(1)
        rows = {r.stage: r for r in lvm.stage_rows(1)}
        assert rows["normalized"].hf == (2, 3) and rows["normalized"].exact == (2, 5) and rows["normalized"].moved
        assert "composition" in rows["normalized"].note
        assert panel.stages.topLevelItemCount() >= 5

    def test_selecting_a_finding_selects_its_token(self, qtbot, mistral) -> None:  # noqa: ANN001
        vm, lvm, panel = linted(qtbot, mistral, "中文 中文")
        top = panel.tree.topLevelItem(0)
        assert top.text(0).startswith("D1")
        panel.tree.setCurrentItem(top.child(0))
        # Mistral's post-processor adds <s>: the lint's tokens 0, 1 are Inspect tokens 1, 2
        assert vm.encoding.tokens[0] == "<s>" and vm.selected == 1 and vm.hovered == (0, 1)
        assert "prepended marker" in top.child(0).text(4)

    def test_byte_split_is_a_bracket_not_a_mark(self, qtbot, qwen3) -> None:  # noqa: ANN001
        vm, lvm, panel = linted(qtbot, qwen3, "i ⭢ j")
        k = vm.encoding.tokens.index("Ġâ")
        assert vm.lint_marks.brackets == ((k, k + 1, k + 2),)
        assert vm.lint_marks.tokens == {}

    def test_corpus_lint_progress_and_export(self, qtbot, qwen3, tmp_path: Path) -> None:  # noqa: ANN001
        vm, lvm, panel = linted(qtbot, qwen3, "e\u0301te\u0301")
        corpus = tmp_path / "c.txt"
        corpus.write_bytes(("e\u0301te\u0301\r\n" * 3).encode("utf-8"))
        progress: list[float] = []
        lvm.corpus_progress.connect(lambda f, _m: progress.append(f))
        with qtbot.waitSignal(lvm.corpus_finished, timeout=30000) as sig:
            panel.start_corpus(str(corpus))
        result = sig.args[0]
        assert result.lines == 3 and result.counts["G1"] == 3 and progress and progress[-1] == 1.0
        assert "3 lines" in panel.corpus_label.text()
        out = tmp_path / "report.json"
        lvm.export_report(out)
        data = json.loads(out.read_text(encoding="utf-8"))
        assert data["counts"]["G1"] == 1 and data["corpus"]["counts"]["G1"] == 3
        case = tmp_path / "case.json"
        lvm.export_regression(lvm.view.hf.findings[0], case)
        assert json.loads(case.read_text(encoding="utf-8"))["expected"]["exact_offsets"] == [[0, 5]]

    def test_corpus_cancel(self, qtbot, qwen3, tmp_path: Path) -> None:  # noqa: ANN001
        vm, lvm, panel = linted(qtbot, qwen3, "x")
        corpus = tmp_path / "c.txt"
        corpus.write_text("a line of text\n" * 3000, encoding="utf-8")
        lvm.cancel_corpus()  # an earlier cancel does not stop the next run
        with qtbot.waitSignal(lvm.corpus_finished, timeout=30000) as sig:
            lvm.lint_corpus(corpus)
            lvm.cancel_corpus()
        assert sig.args[0].cancelled and sig.args[0].lines < 3000


# 30 lines of 11 CJK characters + CRLF (13 code points a line): every character is 3 UTF-8 bytes, qwen3 splits many of
# them into byte tokens, so the lint has many info-level byte-split findings
CJK_LINES = "".join("吾輩は猫である名前は無\r\n" for _ in range(30))


class TestLongTexts:
    def test_lint_has_lanes_of_its_own(self, qtbot, qwen3) -> None:  # noqa: ANN001
        vm, lvm, panel = linted(qtbot, qwen3, NFD_KOREAN)
        lvm.refresh()  # a lint job starts at once (its lane was idle)
        assert lvm.is_busy() and not vm.is_busy()
        qtbot.waitUntil(lambda: not lvm.is_busy(), timeout=30000)

    def test_a_long_text_is_linted_over_its_first_lines(self, qtbot, qwen3) -> None:  # noqa: ANN001
        vm = InspectViewModel()
        lvm = LintViewModel(vm)
        lvm.max_chars = 50  # 50 chars hold 3 lines of 13 (cut after the 3rd CRLF: 39 chars)
        panel = LintPanel(lvm)
        qtbot.addWidget(panel)
        vm.set_text(CJK_LINES)
        vm.set_tokenizer(qwen3, name="t")
        qtbot.waitUntil(lambda: lvm.view is not None and not vm.is_busy() and not lvm.is_busy(), timeout=30000)
        view = lvm.view
        assert lint_cut(CJK_LINES, 50) == 39 and view.linted == 39 and view.total == 30 * 13 == len(CJK_LINES) and view.partial
        assert view.encoding.text == CJK_LINES[:39]
        assert all(f.span[1] <= 39 for f in view.hf.findings)
        assert "linted the first 39 of 390 characters" in panel.summary.text()
        # the linted start keeps the exact spans of its tokens in the highlights
        panel.exact_box.setChecked(True)
        assert vm.span_mode == "exact"

    def test_a_new_text_supersedes_the_running_lint(self, qtbot, qwen3) -> None:  # noqa: ANN001
        vm, lvm, panel = linted(qtbot, qwen3, CJK_LINES)
        vm.set_text(NFD_KOREAN)
        qtbot.waitUntil(lambda: lvm.view is not None and lvm.view.encoding.text == NFD_KOREAN and not lvm.is_busy(), timeout=30000)
        assert lvm.view.total == len(NFD_KOREAN) and not lvm.view.partial

    def test_finding_rows_are_made_a_page_at_a_time(self, qtbot) -> None:  # noqa: ANN001
        require(SHARED is not None, "shared corpora not found")
        text = read_text_file(SHARED / "corpora" / "wagahaiwa_nekodearu.txt").text[:3000]
        cl100k = tokviz.load(bundle_path("cl100k_base/cl100k_base.tiktoken"))  # splits most kanji into bytes
        vm, lvm, panel = linted(qtbot, cl100k, text)
        groups = {panel.tree.topLevelItem(k).data(0, Qt.ItemDataRole.UserRole + 3): panel.tree.topLevelItem(k)
                  for k in range(panel.tree.topLevelItemCount())}
        n = lvm.view.hf.counts["U1"]
        assert n > ROWS_PER_PAGE + 1  # enough byte splits for two pages
        top = groups["U1"]
        assert not top.isExpanded() and top.childCount() == 0  # an info group: nothing made yet
        assert top.text(0).endswith(f"({n:,})")
        top.setExpanded(True)
        assert top.childCount() == ROWS_PER_PAGE + 1 and f"{n - ROWS_PER_PAGE:,} more" in top.child(ROWS_PER_PAGE).text(0)
        panel.tree.setCurrentItem(top.child(ROWS_PER_PAGE))  # selecting "more" shows the next page
        expected = min(n, 2 * ROWS_PER_PAGE) + (1 if n > 2 * ROWS_PER_PAGE else 0)
        qtbot.waitUntil(lambda: top.childCount() == expected, timeout=5000)
        assert top.child(ROWS_PER_PAGE).text(0) == "info"


class TestMarkLookups:
    """`chunk_marks` goes through a span index; the oracle is the scan of every chunk per mark."""

    @staticmethod
    def _brute(chunks, spans) -> dict[int, str]:  # noqa: ANN001
        out: dict[int, str] = {}
        for s, e, sev in spans:
            for k, c in enumerate(chunks):
                hit = (c.start < max(e, s + 1) and s < c.end) if c.end > c.start else s <= c.start < max(e, s + 1)
                if hit and (k not in out or SEVERITY_RANK[sev] < SEVERITY_RANK[out[k]]):
                    out[k] = sev
        return out

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 4)), max_size=15),
           st.lists(st.tuples(st.integers(0, 30), st.integers(0, 5), st.sampled_from(["error", "warn", "info"])), min_size=1, max_size=8))
    def test_chunk_marks_equal_the_scan(self, cuts, spans) -> None:  # noqa: ANN001
        chunks = [SimpleNamespace(start=a, end=a + w) for a, w in sorted(cuts)]
        marks = LintMarks(tuple((s, s + w, sev) for s, w, sev in spans), {}, ())
        assert chunk_marks(chunks, marks) == self._brute(chunks, marks.spans)
        # the same from span columns (a full encode's update has them), ordered or not
        cols = ([c.start for c in chunks], [c.end for c in chunks])
        assert chunk_marks(list(chunks), marks, cols) == self._brute(chunks, marks.spans)
        shuffled = chunks[::-1]
        cols = ([c.start for c in shuffled], [c.end for c in shuffled])
        assert chunk_marks(shuffled, marks, cols) == self._brute(shuffled, marks.spans)
