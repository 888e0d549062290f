"""The Compare tab: add / remove / reorder tokenizers, aligned rows, hover and click, corpus run with cancel."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt

from tokviz.analysis.compare import TextIndex, cut_ratios, cut_set, segment
from tokviz.resources import resource_path

TEXT = "The naïve café in 東京 costs ¥1,234."
BUNDLES = {
    "r50k": "gpt2/r50k_base.tiktoken",
    "cl100k": "cl100k_base/cl100k_base.tiktoken",
    "bert": "bert-base-uncased/tokenizer.json",
}


def bundle(rel: str) -> Path:
    return resource_path("bundles", *(rel + ".gz").split("/"))


@pytest.fixture
def tab(qtbot):  # noqa: ANN001, ANN201
    from tokviz.gui.compare_tab import CompareTab
    from tokviz.gui.viewmodel import InspectViewModel

    inspect = InspectViewModel()
    inspect.set_text(TEXT, from_editor=False)
    t = CompareTab(inspect)
    qtbot.addWidget(t)
    t.resize(1300, 850)
    t.show()
    return t


def add_all(qtbot, tab, names=tuple(BUNDLES)) -> None:  # noqa: ANN001
    for n in names:
        tab.vm.add_tokenizer(bundle(BUNDLES[n]), name=n)
    wait_ready(qtbot, tab, len(names))


def wait_ready(qtbot, tab, n: int) -> None:  # noqa: ANN001
    def ok() -> bool:
        a = tab.vm.analysis
        ready = [r.name for r in tab.vm.rows if r.ready]
        return (len(ready) == n and a is not None and list(a.names) == ready and a.text == tab.vm.text
                and not tab.vm.is_busy())

    qtbot.waitUntil(ok, timeout=30000)


class TestRows:
    def test_add_shows_rows_and_matches_the_analysis(self, qtbot, tab) -> None:  # noqa: ANN001
        assert tab.vm.text == TEXT  # follows the Inspect text
        add_all(qtbot, tab)
        a = tab.vm.analysis
        assert tab.list.count() == 3 and a.names == ("r50k", "cl100k", "bert")
        # the matrix equals the analysis functions run directly on the engine's segmentations
        import tokviz

        ix = TextIndex(TEXT)
        cuts = [cut_set(segment(tokviz.load(bundle(BUNDLES[n])), TEXT), ix) for n in BUNDLES]
        assert a.f1["char_collapsed"] == [[cut_ratios(x, y).f1 for y in cuts] for x in cuts]
        assert tab.summary.rowCount() == 3 and tab.summary.item(0, 1).text() == str(a.tokens[0])
        assert tab.f1_table.rowCount() == 3
        qtbot.waitUntil(lambda: tab.vm.overlap is not None and len(tab.vm.overlap.names) == 3, timeout=30000)
        assert tab.overlap_table.rowCount() == 3

    def test_remove_and_reorder(self, qtbot, tab) -> None:  # noqa: ANN001
        add_all(qtbot, tab)
        before = tab.vm.analysis.f1["byte"]
        tab.list.setCurrentRow(0)
        tab.down_button.click()  # r50k moves below cl100k
        wait_ready(qtbot, tab, 3)
        assert tab.vm.analysis.names == ("cl100k", "r50k", "bert")
        assert tab.list.currentRow() == 1
        # the matrix follows the order: rows 0 and 1 swap
        after = tab.vm.analysis.f1["byte"]
        assert after[0][1] == before[1][0] and after[2][0] == before[2][1]
        tab.list.setCurrentRow(2)
        tab.remove_button.click()
        wait_ready(qtbot, tab, 2)
        assert tab.vm.analysis.names == ("cl100k", "r50k") and tab.list.count() == 2

    def test_a_file_that_fails_keeps_its_row(self, qtbot, tab, tmp_path: Path) -> None:  # noqa: ANN001
        bad = tmp_path / "broken.json"
        bad.write_text("{", encoding="utf-8")
        errors: list[str] = []
        tab.vm.error_raised.connect(errors.append)
        tab.vm.add_tokenizer(bad)
        add_all(qtbot, tab, ("r50k", "cl100k"))
        qtbot.waitUntil(lambda: tab.vm.rows[0].error is not None, timeout=10000)
        assert "broken.json" in errors[0]
        assert "error" in tab.list.item(0).text()
        assert tab.vm.analysis.names == ("r50k", "cl100k")

    def test_eight_rows_and_the_limit(self, qtbot, tab) -> None:  # noqa: ANN001
        tab.add_defaults(8)
        wait_ready(qtbot, tab, 8)
        assert len(tab.vm.analysis.units) == 8
        from tokviz.gui.compare_viewmodel import MAX_ROWS

        tok = tab.vm.rows[0].tokenizer
        while len(tab.vm.rows) < MAX_ROWS:
            tab.vm.add_loaded(tok, name="again")
        assert tab.vm.add_loaded(tok, name="one too many") == -1
        wait_ready(qtbot, tab, MAX_ROWS)  # no job may outlive the tab (pytest-qt deletes it first)

    def test_text_edit_reanalyses(self, qtbot, tab) -> None:  # noqa: ANN001
        add_all(qtbot, tab, ("r50k", "cl100k"))
        tab.text_edit.setPlainText("hello world")
        qtbot.waitUntil(lambda: tab.vm.analysis is not None and tab.vm.analysis.text == "hello world"
                        and not tab.vm.is_busy(), timeout=10000)
        assert tab.vm.analysis.tokens == (2, 2)


class TestIncremental:
    """Adding a row computes only that row and its pairs; the view shows the new row."""

    def test_fifth_row_reuses_the_other_rows(self, qtbot, tab) -> None:  # noqa: ANN001
        import tokviz
        from tokviz.analysis.compare import analyze

        names = ("r50k", "cl100k", "bert")
        add_all(qtbot, tab, names)
        before = tab.vm.analysis
        segs = [tab.vm.segmentation(k) for k in range(3)]
        tok = tokviz.load(bundle("o200k_base/o200k_base.tiktoken"))
        tab.vm.add_loaded(tok, name="o200k")
        wait_ready(qtbot, tab, 4)
        after = tab.vm.analysis
        # the first rows' segmentations and unit tables are the same objects: not recomputed
        assert [tab.vm.segmentation(k) for k in range(3)] == segs
        assert all(after.units[k] is before.units[k] for k in range(3))
        # and the incremental result equals a fresh analysis of the four segmentations
        fresh = analyze([*segs, tab.vm.segmentation(3)], TEXT)
        assert after.f1 == fresh.f1 and after.votes == fresh.votes
        assert after.span_shared == fresh.span_shared and after.scripts == fresh.scripts
        # the view shows four rows: the widget paints the new row's tokens
        assert tab.rows_view.analysis is after and tab.rows_view._n_rows() == 4  # noqa: SLF001
        assert tab.summary.rowCount() == 4 and tab.summary.item(3, 1).text() == str(after.tokens[3])
        tab.rows_view.repaint()
        pt = TestHoverAndClick()._point(tab, 3, 19)  # o200k on 東 (" 東京" is one token there)
        side, j = tab.rows_view.hit(pt)
        assert side == 3 and after.units[3][j].start <= 19 < after.units[3][j].end

    def test_remove_then_reorder_matches_fresh(self, qtbot, tab) -> None:  # noqa: ANN001
        from tokviz.analysis.compare import analyze

        add_all(qtbot, tab)
        tab.vm.remove(1)
        wait_ready(qtbot, tab, 2)
        tab.vm.move(0, 1)
        wait_ready(qtbot, tab, 2)
        a = tab.vm.analysis
        fresh = analyze([tab.vm.segmentation(0), tab.vm.segmentation(1)], TEXT)
        assert a.names == ("bert", "r50k")
        assert a.f1 == fresh.f1 and a.votes == fresh.votes and a.span_shared_trimmed == fresh.span_shared_trimmed


class TestExactText:
    def test_the_editor_never_rewrites_the_text(self, qtbot) -> None:  # noqa: ANN001
        from tokviz.gui.compare_tab import CompareTab
        from tokviz.gui.viewmodel import InspectViewModel

        text = "a\u00a0b\r\nc\td\u2029e"  # a QPlainTextEdit turns NBSP, CRLF and U+2029 into its own
        inspect = InspectViewModel()
        inspect.set_text(text, from_editor=False)
        t = CompareTab(inspect)
        qtbot.addWidget(t)
        qtbot.wait(400)  # longer than the editor's debounce
        assert t.vm.text == text
        t.use_inspect_text()
        qtbot.wait(400)
        assert t.vm.text == text


class TestHoverAndClick:
    def _point(self, tab, row: int, char: int) -> QPoint:  # noqa: ANN001
        from tokviz.gui.widgets.compare_rows import LABEL_W

        v = tab.rows_view
        cw, rh, strip, _ = v._metrics()  # noqa: SLF001 - the geometry the test aims at
        return QPoint(LABEL_W + v._col[char] * cw + cw // 2, strip + rh * (row + 1) + rh // 2)  # noqa: SLF001

    def test_hover_highlights_the_span_in_every_row(self, qtbot, tab) -> None:  # noqa: ANN001
        add_all(qtbot, tab)
        pt = self._point(tab, 1, 5)  # cl100k, inside "naïve"
        side, j = tab.rows_view.hit(pt)
        unit = tab.vm.analysis.units[side][j]
        assert side == 1 and unit.start <= 5 < unit.end
        qtbot.mouseMove(tab.rows_view, pt)
        qtbot.waitUntil(lambda: tab.vm.hovered == (unit.start, unit.end), timeout=5000)
        assert tab.rows_view.highlight == (unit.start, unit.end)

    def test_click_opens_inspect_on_that_tokenizer_and_token(self, qtbot, tab) -> None:  # noqa: ANN001
        add_all(qtbot, tab)
        insp = tab.vm.inspect
        pt = self._point(tab, 0, 19)  # r50k, on 東
        qtbot.mouseClick(tab.rows_view, Qt.MouseButton.LeftButton, pos=pt)
        qtbot.waitUntil(lambda: insp.tokenizer is not None and insp.selected >= 0 and insp.encoding is not None,
                        timeout=20000)
        assert Path(insp.tokenizer_path) == bundle(BUNDLES["r50k"])
        s, e = insp.encoding.offsets[insp.selected]
        assert s <= 19 < e


class TestCorpusMode:
    def test_run_cancel_and_run_again(self, qtbot, tab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
        import tokviz.analysis.corpus as corpus

        add_all(qtbot, tab, ("r50k", "cl100k"))
        p = tmp_path / "c.txt"
        p.write_text("\n".join(f"line {i} 東京は晴れ" for i in range(3000)), encoding="utf-8")
        monkeypatch.setattr(corpus, "BATCH_CHARS", 500)  # many batches: time to cancel between them
        tab.corpus_path.setText(str(p))
        tab.corpus_mode.setCurrentText("lines")
        tab.run_corpus(workers=1)
        assert tab.corpus_cancel.isEnabled() and not tab.corpus_run.isEnabled()
        tab.corpus_cancel.click()
        assert tab.corpus_status.text() == "Cancelled."
        assert tab.corpus_run.isEnabled()
        qtbot.waitUntil(lambda: not tab.vm.is_busy(), timeout=60000)
        assert tab.corpus_report is None  # the cancelled run's result is dropped
        tab.run_corpus(workers=1)
        qtbot.waitUntil(lambda: tab.corpus_report is not None, timeout=60000)
        assert tab.corpus_bar.value() == 1000
        assert tab.corpus_table.rowCount() == 2
        rows = tab.corpus_report.to_json()["tokenizers"]
        assert tab.corpus_table.item(0, 1).text() == f"{rows[0]['tokens']:,}"
        assert tab.corpus_report.n_doc == 3000


    def test_pool_run_from_the_tab_reports_progress(self, qtbot, tab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
        """Two worker processes (forked from this Qt process where possible, inheriting the rows'
        tokenizers): progress reaches the total and the numbers equal a one-process run."""
        import tokviz.analysis.corpus as corpus

        add_all(qtbot, tab, ("r50k", "cl100k"))
        p = tmp_path / "c.txt"
        p.write_text("\n".join(f"line {i} 東京は晴れ {'x' * (i % 5)}" for i in range(2000)), encoding="utf-8")
        monkeypatch.setattr(corpus, "BATCH_CHARS", 4000)
        seen: list[tuple[int, int]] = []
        tab.vm.corpus_progress.connect(lambda d, t: seen.append((d, t)))
        tab.corpus_path.setText(str(p))
        tab.corpus_mode.setCurrentText("lines")
        tab.run_corpus(workers=2)
        qtbot.waitUntil(lambda: tab.corpus_report is not None, timeout=120000)
        assert seen and seen[-1] == (p.stat().st_size, p.stat().st_size)
        assert tab.corpus_bar.value() == 1000 and tab.corpus_report.workers == 2
        assert tab.vm.corpus_documents == 2000  # every one of the 2000 lines is a document (none is empty)
        specs = [corpus.TokenizerSpec(r.name, r.path) for r in tab.vm.rows]
        one = corpus.run_corpus(specs, p, mode="lines", workers=1)
        assert [t.n_tok for t in tab.corpus_report.tokenizers] == [t.n_tok for t in one.tokenizers]
        assert [t.per_script for t in tab.corpus_report.tokenizers] == [t.per_script for t in one.tokenizers]


    def test_pool_run_cancels_and_runs_again(self, qtbot, tab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
        """Cancel while two worker processes count: the tab says so at once, the run stops
        between batches (no result), the workers are gone, and a new run completes."""
        import multiprocessing

        import tokviz.analysis.corpus as corpus

        add_all(qtbot, tab, ("r50k", "cl100k"))
        p = tmp_path / "c.txt"
        p.write_text("\n".join(f"line {i} 東京は晴れ {'x' * (i % 5)}" for i in range(20000)), encoding="utf-8")
        monkeypatch.setattr(corpus, "BATCH_CHARS", 2000)  # many batches: the run is still going
        seen: list[int] = []
        tab.vm.corpus_progress.connect(lambda d, t: seen.append(d))
        tab.corpus_path.setText(str(p))
        tab.corpus_mode.setCurrentText("lines")
        tab.run_corpus(workers=2)
        qtbot.waitUntil(lambda: len(seen) > 0, timeout=60000)
        tab.corpus_cancel.click()
        assert tab.corpus_status.text() == "Cancelled." and tab.corpus_run.isEnabled()
        qtbot.waitUntil(lambda: not tab.vm.is_busy(), timeout=60000)
        assert tab.corpus_report is None
        qtbot.waitUntil(lambda: not multiprocessing.active_children(), timeout=30000)
        monkeypatch.setattr(corpus, "BATCH_CHARS", 64000)
        tab.run_corpus(workers=2)
        qtbot.waitUntil(lambda: tab.corpus_report is not None, timeout=120000)
        assert tab.corpus_report.n_doc == 20000 and tab.corpus_bar.value() == 1000



class TestDiffPanel:
    def test_diff_button_shows_the_vocabulary_diff_and_the_regression_check(self, qtbot, tab) -> None:  # noqa: ANN001
        from tokviz.analysis.vocab_diff import regression_check, vocab_diff

        add_all(qtbot, tab, ("r50k", "cl100k"))
        assert tab.diff_old.currentText() == "1 r50k" and tab.diff_new.currentText() == "2 cl100k"
        qtbot.mouseClick(tab.diff_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: tab.diff_text.toPlainText().startswith("old: r50k"), timeout=60000)
        shown = tab.diff_text.toPlainText()
        old, new = (r.tokenizer for r in tab.vm.rows)
        # with no corpus the regression check re-encodes the tab's own text
        expected = vocab_diff(old, new, old_name="r50k", new_name="cl100k").to_text(
            regression_check(old, new, [TEXT]), corpus="this text"
        )
        assert shown == expected
        assert shown.splitlines()[1] == "new: cl100k" and "regression on this text (lines): 1 of 1 documents" in shown

class TestScreenshot:
    def test_compare_tab_screenshot(self, tmp_path: Path) -> None:
        import subprocess
        import sys

        out = tmp_path / "compare.png"
        r = subprocess.run([sys.executable, "-m", "tokviz", "gui", "--screenshot", str(out), "--tab", "compare",
                            "--text", TEXT, "--size", "1400x900"], capture_output=True, text=True, timeout=300,
                           cwd=str(Path(__file__).resolve().parents[2]))
        assert r.returncode == 0, r.stderr
        assert out.stat().st_size > 10_000
