"""The Vocabulary tab: the audit in a worker, the 50k-row table, facets, search, sort, card, export."""

from __future__ import annotations

import csv
import json

import pytest

from tokviz.analysis.audit import audit_vocabulary


@pytest.fixture
def tab(qtbot, gpt2):  # noqa: ANN001, ANN201
    from tokviz.gui.viewmodel import InspectViewModel
    from tokviz.gui.vocab_tab import VocabTab

    vm = InspectViewModel()
    t = VocabTab(vm)
    qtbot.addWidget(t)
    t.resize(1300, 850)
    t.show()
    vm.set_tokenizer(gpt2, name="gpt2")
    qtbot.waitUntil(lambda: t.vm.audit is not None and not t.vm.is_busy(), timeout=60000)
    return t


@pytest.fixture(scope="module")
def gpt2_audit(gpt2):  # noqa: ANN001, ANN201
    return audit_vocabulary(gpt2)


class TestViewModel:
    def test_table_holds_the_whole_vocabulary(self, tab, gpt2_audit):  # noqa: ANN001
        assert tab.vm.table.rowCount() == len(gpt2_audit.tokens) == 50_257
        assert tab.vm.audit.summary() == gpt2_audit.summary()
        # uniform rows, no per-row widgets: the table is a model/view over the audit
        from PySide6.QtWidgets import QHeaderView

        assert tab.table.verticalHeader().sectionResizeMode(0) == QHeaderView.ResizeMode.Fixed
        assert tab.table.indexWidget(tab.vm.table.index(0, 0)) is None

    def test_facets_match_the_summary(self, tab, gpt2_audit):  # noqa: ANN001
        s = gpt2_audit.summary()
        tab.vm.set_facet("partial-utf8", True)
        assert len(tab.vm.rows) == s["partial_utf8"] == 216
        tab.vm.set_facet("never-valid", True)  # any of the checked facets
        assert len(tab.vm.rows) == 216 + 13
        tab.vm.set_facet("partial-utf8", False)
        tab.vm.set_facet("never-valid", False)
        tab.vm.set_facet("fragment-k1", True)
        assert len(tab.vm.rows) == s["fragments"]["k1"]
        assert tab.facet_boxes["fragment-k1"].text().endswith(f"({s['fragments']['k1']})")

    def test_search_and_sort(self, tab):  # noqa: ANN001
        tab.vm.set_search("SolidGold")
        ids = [tab.vm.token_at_row(r).id for r in range(len(tab.vm.rows))]
        assert 43453 in ids and all(b"SolidGold" in tab.vm.audit.get(i).surface for i in ids)
        tab.vm.set_search("43453")
        assert 43453 in [tab.vm.token_at_row(r).id for r in range(len(tab.vm.rows))]
        tab.vm.set_search("")
        tab.vm.table.sort(4, __import__("PySide6.QtCore", fromlist=["Qt"]).Qt.SortOrder.DescendingOrder)
        lengths = [len(tab.vm.token_at_row(r).surface) for r in range(50)]
        assert lengths == sorted(lengths, reverse=True)
        assert lengths[0] == max(len(t.surface) for t in tab.vm.audit.tokens)

    def test_detail_card_and_inspect(self, tab):  # noqa: ANN001
        d = tab.vm.detail(30905)  # rawdownload: parents, its one child, superstrings
        assert d.token.surface == b"rawdownload" and d.token.children == (30906,)
        assert 30906 in d.superstrings
        from tokviz.gui.widgets.vocab_widgets import detail_html

        html = detail_html(d)
        assert "How it is built" in html and "rawdownloadcloneembedreportprint" in html
        assert tab.vm.open_in_inspect(30905)
        assert tab.vm.inspect.text == "rawdownload"
        assert not tab.vm.open_in_inspect(39820)  # partial UTF-8: no text has these bytes

    def test_export_csv_and_json(self, tab, tmp_path):  # noqa: ANN001
        tab.vm.set_facet("fragment-k1", True)
        n = tab.vm.export(tmp_path / "f.csv")
        with open(tmp_path / "f.csv", encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        assert n == len(rows) == 12
        assert {r["surface_hex"] for r in rows} >= {b"rawdownload".hex(), b" TheNitrome".hex()}
        tab.vm.export(tmp_path / "f.json")
        data = json.loads((tmp_path / "f.json").read_bytes().decode("utf-8"))
        assert len(data["tokens"]) == 12 and data["filter"]["facets"] == ["fragment-k1"]
        assert data["summary"]["fragments"]["k1"] == 12

    def test_cancel_keeps_no_audit(self, qtbot, cl100k):  # noqa: ANN001
        from tokviz.gui.viewmodel import InspectViewModel
        from tokviz.gui.vocab_viewmodel import VocabViewModel

        inspect = InspectViewModel()
        vm = VocabViewModel(inspect=inspect)
        vm.set_active(True)
        progress = []
        vm.audit_progress.connect(lambda *a: progress.append(a))
        inspect.set_tokenizer(cl100k, name="cl100k")
        assert vm.is_busy()
        qtbot.waitUntil(lambda: bool(progress), timeout=30000)
        vm.cancel()
        # the worker stops at its next poll of the cancel token; its result is dropped
        qtbot.waitUntil(lambda: not vm.is_busy(), timeout=30000)
        assert vm.audit is None


class TestInWindow:
    def test_tab_in_the_main_window(self, qtbot, window):  # noqa: ANN001
        w = window
        names = [w.tabs.tabText(i) for i in range(w.tabs.count())]
        assert "Vocabulary" in names
        w.tabs.setCurrentWidget(w.vocab_tab)
        qtbot.waitUntil(lambda: w.vocab_tab.vm.audit is not None and not w.vocab_tab.vm.is_busy(), timeout=60000)
        t = w.vocab_tab
        t.vm.set_search("rawdownload")
        t.table.selectRow(0)
        qtbot.waitUntil(lambda: t.card.detail is not None, timeout=5000)
        t.inspect_button.click()
        assert w.tabs.currentWidget() is w.inspect
        assert w.vm.text == t.card.detail.token.surface.decode()

    def test_cli_screenshot_of_the_vocabulary_tab(self, tmp_path):  # noqa: ANN001
        import os
        import subprocess
        import sys

        from PySide6.QtGui import QImage

        from tokviz.resources import resource_path

        out = tmp_path / "vocab.png"
        tok = resource_path("bundles", "gpt2", "r50k_base.tiktoken.gz")
        r = subprocess.run(
            [sys.executable, "-m", "tokviz", "gui", "--screenshot", str(out), "--tokenizer", str(tok),
             "--tab", "vocabulary", "--size", "1200x800"],
            capture_output=True, text=True, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, timeout=300,
        )
        assert r.returncode == 0, r.stderr
        assert QImage(str(out)).width() == 1200


class TestEmbeddings:
    def test_indicator_column_candidates_and_padding(self, qtbot, tab, tmp_path):  # noqa: ANN001
        import numpy as np
        from safetensors.numpy import save_file

        rng = np.random.default_rng(0)
        n_ids = len(tab.vm.audit.tokens)  # 50,257 ids; the matrix is padded to a multiple of 64
        rows = -(-n_ids // 64) * 64
        e = rng.normal(size=(rows, 4)).astype(np.float32)
        path = tmp_path / "model.safetensors"
        save_file({"model.embed_tokens.weight": e}, str(path))  # no lm_head.weight: tied
        seen = []
        tab.vm.embeddings_changed.connect(seen.append)
        tab.vm.load_embeddings(path)
        qtbot.waitUntil(lambda: bool(seen) and seen[-1] is not None, timeout=30000)
        r = tab.vm.embeddings
        assert r.tied and r.indicator == "cosine-distance"
        assert r.reference_ids == (124, 125, *range(177, 188))  # never-valid single bytes (G2)
        assert r.padding_rows == tuple(range(n_ids, rows)) and len(r.values) == n_ids
        # by hand with numpy: 1 - e·m / max(|e||m|, 1e-6), m = mean of the reference rows
        m = e[list(r.reference_ids)].astype(np.float64).mean(axis=0)
        d = 1 - (e[:n_ids] @ m) / np.maximum(np.linalg.norm(e[:n_ids], axis=1) * np.linalg.norm(m), 1e-6)
        assert np.allclose(r.values, d)
        tab.vm.set_facet("embedding-candidate", True)
        assert len(tab.vm.rows) == len(r.candidates) > 0
        first = tab.vm.token_at_row(0)
        assert tab.vm.table.data(tab.vm.table.index(0, 9)) == f"{r.values[first.id]:.4f}"
        assert tab.emb_note.isVisible() and "padding rows" in tab.emb_note.text()
        from tokviz.gui.widgets.vocab_widgets import detail_html

        assert "under-trained candidate" in detail_html(tab.vm.detail(first.id))

    def test_unknown_tensor_asks(self, qtbot, tab, tmp_path):  # noqa: ANN001
        import numpy as np
        from safetensors.numpy import save_file

        path = tmp_path / "odd.safetensors"
        save_file({"enc.emb": np.zeros((3, 2), np.float32)}, str(path))
        asked = []
        tab.vm.tensor_needed.disconnect()
        tab.vm.tensor_needed.connect(lambda p, t: asked.append((p, t)))
        tab.vm.load_embeddings(path)
        qtbot.waitUntil(lambda: bool(asked), timeout=30000)
        assert asked[0][1] == [("enc.emb", (3, 2))]


class TestCorpusCounts:
    def test_button_counts_a_corpus_and_the_facets_follow(self, qtbot, tab, tmp_path, monkeypatch):  # noqa: ANN001
        from collections import Counter

        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QFileDialog

        corpus = tmp_path / "c.txt"
        lines = ["the cat sat on the mat", "naïve café", "SolidGoldMagikarp never appears as one token here"]
        corpus.write_text("\n".join(lines), encoding="utf-8")
        monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(corpus), ""))
        seen = []
        tab.vm.counts_changed.connect(seen.append)
        qtbot.mouseClick(tab.corpus_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: bool(seen) and seen[-1] is not None, timeout=60000)
        # the oracle: every line encoded here, its ids counted
        gpt2 = tab.vm.tokenizer
        want = Counter(i for line in lines for i in gpt2.encode(line, add_special_tokens=False).ids)
        ordinary = [t for t in tab.vm.audit.tokens if t.kind not in ("special", "added", "marker")]
        never = sum(1 for t in ordinary if want[t.id] == 0)
        rare = sum(1 for t in ordinary if 1 <= want[t.id] <= 2)
        assert tab.vm.counts["never-seen"] == never and tab.vm.counts["rarely-seen"] == rare
        the = gpt2.token_to_id("Ġthe")
        tab.vm.set_search(str(the))
        row = next(r for r in range(len(tab.vm.rows)) if tab.vm.token_at_row(r).id == the)
        assert tab.vm.table.data(tab.vm.table.index(row, 10)) == "1"  # "the ... the": one Ġthe
        tab.vm.set_search("")
        qtbot.mouseClick(tab.facet_boxes["rarely-seen"], Qt.MouseButton.LeftButton)
        assert len(tab.vm.rows) == rare
        assert tab.corpus_note.isVisible() and "3 documents" in tab.corpus_note.text()

    def test_scheduler_address_from_the_settings_and_the_edit_menu(self, qtbot, settings, monkeypatch):  # noqa: ANN001
        from PySide6.QtWidgets import QInputDialog

        from tokviz.gui.main_window import MainWindow

        settings.setValue("corpus/scheduler", "tcp://127.0.0.1:8786")
        w = MainWindow(settings=settings)
        qtbot.addWidget(w)
        w.restore_settings()
        assert w.vocab_tab.vm.scheduler == w.compare_tab.vm.scheduler == "tcp://127.0.0.1:8786"
        monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("local:2", True))
        edit = next(a.menu() for a in w.menuBar().actions() if a.text() == "&Edit")
        next(a for a in edit.actions() if a.text().startswith("Dask scheduler")).trigger()
        assert w.compare_tab.vm.scheduler == "local:2" and settings.value("corpus/scheduler") == "local:2"
