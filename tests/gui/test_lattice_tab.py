"""The Lattice tab: Viterbi path = the encoding, n-best selection, sampling histograms, export."""

from __future__ import annotations

import pytest

from tokviz.resources import resource_path


def _load(rel: str):  # noqa: ANN202
    import tokviz

    return tokviz.load(resource_path("bundles", *(rel + ".gz").split("/")))


@pytest.fixture(scope="module")
def sp_test():  # noqa: ANN201
    return _load("sentencepiece-test/test_model.model")


@pytest.fixture(scope="module")
def albert():  # noqa: ANN201
    return _load("albert-30k-clean/30k-clean.model")


@pytest.fixture
def tab(qtbot):  # noqa: ANN001, ANN201
    from tokviz.gui.lattice_tab import LatticeTab
    from tokviz.gui.viewmodel import InspectViewModel

    vm = InspectViewModel()
    t = LatticeTab(vm)
    t.vm.auto_sample = False
    qtbot.addWidget(t)
    t.resize(1300, 850)
    t.show()
    return t


def _show(qtbot, tab, tok, text: str, name: str = "tok"):  # noqa: ANN001, ANN202
    results = []
    tab.vm.lattice_changed.connect(results.append)
    tab.vm.text = text
    tab.vm.inspect.set_tokenizer(tok, name=name)
    qtbot.waitUntil(lambda: bool(results) and results[-1] is not None and results[-1].text == text
                    and not tab.vm.is_busy(), timeout=20000)
    return results[-1]


def _collapse(ids, unk: int) -> tuple[int, ...]:  # noqa: ANN001
    out: list[int] = []
    for i in ids:
        if not (i == unk and out and out[-1] == unk):
            out.append(i)
    return tuple(out)


class TestLattice:
    @pytest.mark.parametrize(
        "text",
        ["Hello world", "tokenization is not one algorithm", "I saw a girl with a telescope.", "abc  ABC 123"],
        ids=["hello", "tokenization", "telescope", "spaces-digits"],
    )
    @pytest.mark.parametrize("bundle", ["sp_test", "albert"])
    def test_viterbi_path_equals_the_encoding(self, qtbot, tab, request, bundle, text) -> None:  # noqa: ANN001
        tok = request.getfixturevalue(bundle)
        res = _show(qtbot, tab, tok, text)
        assert res.mode == "unigram"
        enc = tok.encode(text, add_special_tokens=False)
        assert len(res.chunks) == 1
        unk = tok.model.unk_id
        if unk in enc.ids and tuple(res.viterbi.ids) != tuple(enc.ids):
            # SentencePiece merges a run of unknown pieces into one <unk> after the Viterbi search
            assert _collapse(res.viterbi.ids, unk) == tuple(enc.ids) == tuple(res.encoded_ids)
            assert "after merging" in tab.summary.text()
            return
        assert tuple(res.viterbi.ids) == tuple(enc.ids) == tuple(res.encoded_ids)
        # the drawn picture highlights exactly the Viterbi nodes, and they tile the chunk
        pic = tab.lattice.canvas.picture
        assert pic.viterbi == res.viterbi.nodes
        spans = [(pic.nodes[k].start, pic.nodes[k].end) for k in pic.viterbi]
        assert spans[0][0] == 0 and spans[-1][1] == len(pic.text)
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
        assert "equals the pipeline" in tab.summary.text()

    def test_nbest_first_is_viterbi_and_selecting_highlights_its_path(self, qtbot, tab, sp_test) -> None:  # noqa: ANN001
        res = _show(qtbot, tab, sp_test, "Hello world")
        assert len(res.nbest) == tab.nbest.value() == 8
        assert res.nbest[0].ids == res.viterbi.ids
        scores = [s.score for s in res.nbest]
        assert scores == sorted(scores, reverse=True)
        assert tab.nbest_table.rowCount() == 8
        tab.select_nbest(3)
        assert tab.lattice.canvas.picture.selected == res.nbest[3].nodes
        assert tab.nbest_table.item(3, 3).text() == " | ".join(res.nbest[3].pieces)  # no spaces to mark here

    def test_marginals_are_probabilities(self, qtbot, tab, sp_test) -> None:  # noqa: ANN001
        import math

        res = _show(qtbot, tab, sp_test, "Hello world")
        pic = res.picture
        probs = [math.exp(m) for m in pic.marginals]
        assert all(0.0 <= p <= 1.0 + 1e-9 for p in probs)
        # the nodes covering any one character position carry the whole probability mass
        for pos in range(len(pic.text)):
            mass = sum(p for nd, p in zip(pic.nodes, probs) if nd.start <= pos < nd.end)
            assert mass == pytest.approx(1.0, abs=1e-6)


    def test_hover_names_the_node_under_the_mouse(self, qtbot, tab, sp_test) -> None:  # noqa: ANN001
        res = _show(qtbot, tab, sp_test, "Hello world")
        canvas = tab.lattice.canvas
        k = res.viterbi.nodes[-1]
        hovered = []
        canvas.node_hovered.connect(hovered.append)
        qtbot.mouseMove(canvas, canvas._rects[k].center().toPoint())
        qtbot.waitUntil(lambda: bool(hovered), timeout=3000)
        assert hovered[-1] == k and canvas.picture.nodes[k].piece == res.viterbi.pieces[-1]


class TestSampling:
    def test_unigram_histogram_sums_to_n(self, qtbot, tab, sp_test) -> None:  # noqa: ANN001
        _show(qtbot, tab, sp_test, "Hello world")
        tab.count.setValue(500)
        tab.alpha.setValue(0.2)
        with qtbot.waitSignal(tab.vm.samples_changed, timeout=20000) as b:
            tab.sample()
        out = b.args[0]
        assert out.total == 500 == sum(c for _, c, _ in out.rows)
        assert tab.histogram.total == 500
        assert sum(1 for _, _, best in out.rows if best) <= 1
        assert out.distinct >= 2  # alpha 0.2 is flat enough to see alternatives

    def test_clicking_a_sampled_segmentation_shows_its_path(self, qtbot, tab, sp_test) -> None:  # noqa: ANN001
        from PySide6.QtCore import QPoint, Qt

        _show(qtbot, tab, sp_test, "Hello world")
        tab.alpha.setValue(0.1)
        with qtbot.waitSignal(tab.vm.samples_changed, timeout=20000) as b:
            tab.sample()
        out = b.args[0]
        assert len(out.paths) == len(out.rows)
        h = tab.histogram
        rh = h._row_h()
        qtbot.mouseClick(h, Qt.MouseButton.LeftButton, pos=QPoint(40, int(4 + rh + 1.5 * rh)))  # row 1
        path = tab.lattice.canvas.picture.selected
        assert path == out.paths[1]
        pieces = [tab.lattice.canvas.picture.nodes[k].piece for k in path]
        assert " | ".join(pieces) == out.rows[1][0]
        assert not out.rows[1][2]  # row 1 is not the Viterbi one (row 0 is, at alpha 0.1 here)

    def test_large_alpha_concentrates_on_viterbi(self, qtbot, tab, sp_test) -> None:  # noqa: ANN001
        _show(qtbot, tab, sp_test, "Hello world")
        tab.count.setValue(200)
        tab.alpha.setValue(10.0)
        with qtbot.waitSignal(tab.vm.samples_changed, timeout=20000) as b:
            tab.sample()
        label, count, best = b.args[0].rows[0]
        assert best and count > 190

    def test_bpe_dropout_histogram(self, qtbot, tab, gpt2) -> None:  # noqa: ANN001
        res = _show(qtbot, tab, gpt2, "unbelievable tokenization")
        assert res.mode == "bpe" and res.picture is None
        assert not tab.alpha.isVisible() and tab.dropout.isVisible()
        tab.count.setValue(300)
        tab.dropout.setValue(0.5)
        with qtbot.waitSignal(tab.vm.samples_changed, timeout=30000) as b:
            tab.sample()
        out = b.args[0]
        assert out.total == 300 == sum(c for _, c, _ in out.rows)
        assert out.distinct > 1
        for label, _, _ in out.rows:
            if not label.startswith("…"):
                assert label.replace(" | ", "") in ("unbelievableĠtokenization",)
        tab.dropout.setValue(0.0)
        with qtbot.waitSignal(tab.vm.samples_changed, timeout=30000) as b:
            tab.sample()
        (label, count, best), = b.args[0].rows
        assert best and count == 300
        assert label.split(" | ") == list(gpt2.encode("unbelievable tokenization", add_special_tokens=False).tokens)


class TestExport:
    @pytest.mark.parametrize("suffix", ["png", "svg"])
    def test_lattice_and_histogram_export(self, qtbot, tab, sp_test, tmp_path, suffix) -> None:  # noqa: ANN001
        _show(qtbot, tab, sp_test, "Hello world")
        with qtbot.waitSignal(tab.vm.samples_changed, timeout=20000):
            tab.sample()
        for name, fn in (("lattice", tab.lattice.export), ("hist", tab.histogram.export)):
            path = tmp_path / f"{name}.{suffix}"
            fn(path)
            assert path.stat().st_size > 500
        if suffix == "svg":
            assert "▁world" in (tmp_path / "lattice.svg").read_text(encoding="utf-8")


class TestScreenshot:
    def test_cli_screenshot_of_the_lattice_tab(self, tmp_path) -> None:  # noqa: ANN001
        import os
        import subprocess
        import sys

        from PySide6.QtGui import QImage

        out = tmp_path / "lattice.png"
        tok = resource_path("bundles", "sentencepiece-test", "test_model.model.gz")
        r = subprocess.run(
            [sys.executable, "-m", "tokviz", "gui", "--screenshot", str(out), "--tokenizer", str(tok),
             "--text", "Hello world", "--tab", "lattice", "--size", "1100x750"],
            capture_output=True, text=True, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, timeout=180,
        )
        assert r.returncode == 0, r.stderr
        img = QImage(str(out))
        assert (img.width(), img.height()) == (1100, 750)

    def test_screenshot_waits_for_lattice_and_samples(self, qtbot, settings, sp_test) -> None:  # noqa: ANN001
        from PySide6.QtWidgets import QApplication

        from tokviz.gui.app import wait_idle
        from tokviz.gui.main_window import MainWindow

        w = MainWindow(settings=settings)
        qtbot.addWidget(w)
        w.vm.set_text("Hello world", from_editor=False)
        w.vm.set_tokenizer(sp_test, name="sp")
        w.tabs.setCurrentWidget(w.lattice_tab)
        w.show()
        assert wait_idle(QApplication.instance(), w, timeout=60)
        t = w.lattice_tab
        assert t.vm.result is not None and t.vm.result.text == "Hello world"
        assert t.lattice.canvas.picture is not None and t.histogram.total == t.vm.samples
