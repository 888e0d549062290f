"""The lint panel and its view-model: findings of the Inspect text, marks, span toggle, stage trace,
corpus lint with progress and cancel, export. Expected findings are the spec §3.iii rows that
tests/analysis/test_lint.py checks against HF; here they check the wiring."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tokviz
from tokviz.gui.lint_viewmodel import LintViewModel
from tokviz.gui.viewmodel import InspectViewModel
from tokviz.gui.widgets.lint_panel import LintPanel

from support import bundle_path

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
        assert groups["G1"].childCount() == 5 and groups["G1"].text(4) == "5 error"
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
