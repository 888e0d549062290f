"""The Train tab: the merge slider against the trainer's own events, cancel, rank cutoff, export."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from tokviz.resources import resource_path
from tokviz.training.events import MergeEvent


@pytest.fixture
def tab(qtbot):  # noqa: ANN001, ANN201
    from tokviz.gui.train_tab import TrainTab
    from tokviz.gui.viewmodel import InspectViewModel

    vm = InspectViewModel()
    t = TrainTab(vm)
    t._auto_started = True  # the tests choose the corpus themselves
    qtbot.addWidget(t)
    t.resize(1300, 850)
    t.show()
    yield t
    t.vm.cancel()
    t.vm.wait()


def _toy() -> str:
    return resource_path("corpora", "toy.txt").read_text(encoding="utf-8")


def _train(qtbot, tab, corpus: str, **cfg) -> tuple[object, list[MergeEvent]]:  # noqa: ANN001, ANN003
    from tokviz.gui.train_viewmodel import TrainConfig

    events: list[MergeEvent] = []
    tab.vm.events_arrived.connect(lambda evs: events.extend(e for e in evs if isinstance(e, MergeEvent)))
    tab.vm.set_corpus(corpus, from_editor=False)
    with qtbot.waitSignal(tab.vm.training_finished, timeout=60000) as blocker:
        tab.vm.train(TrainConfig(**cfg))
    qtbot.waitUntil(lambda: tab.vm.step == tab.vm.run.num_steps and not tab.vm.step_busy(), timeout=20000)
    return blocker.args[0], events


class TestMergeSlider:
    def test_stepping_with_the_keyboard_matches_the_trainers_events(self, qtbot, tab) -> None:  # noqa: ANN001
        run, events = _train(qtbot, tab, _toy(), algorithm="bpe-byte", vocab_size=290)
        n = run.num_steps
        assert n == len(events) == 290 - 256
        assert [e.rank for e in events] == list(range(n))
        views = []
        tab.vm.step_changed.connect(views.append)
        slider = tab.slider.slider
        slider.setFocus()
        qtbot.keyClick(slider, Qt.Key.Key_Home)
        qtbot.waitUntil(lambda: bool(views) and views[-1].k == 0, timeout=5000)
        assert views[-1].merge is None
        assert views[-1].next_merge.new_token == events[0].new_token
        for k in range(1, n + 1):
            qtbot.keyClick(slider, Qt.Key.Key_Right)
            qtbot.waitUntil(lambda k=k: bool(views) and views[-1].k == k, timeout=5000)
            v = views[-1]
            ev = events[k - 1]
            m = v.merge
            assert (m.left, m.right, m.new_token, m.new_id, m.count) == (
                ev.left, ev.right, ev.new_token, ev.new_id, ev.count
            )
            # the table explains this merge: its chosen row is the merged pair with the event's count
            chosen = [r for r in v.pair_rows if r.chosen]
            assert len(chosen) == 1
            assert (chosen[0].left, chosen[0].right, chosen[0].count) == (ev.left, ev.right, ev.count)
            assert all(r.count <= ev.count for r in v.pair_rows)
            assert v.vocab_size == ev.vocab_size
            # the widgets show the same step
            assert tab.slider.spin.value() == k
            row = tab.pairs.chosen_row
            assert tab.pairs.item(row, 4).text() == f"{ev.count:,}"
            assert f"Merge <b>{k:,}</b>" in tab.headline.text()

    def test_ties_name_the_rule_that_decided_them(self, qtbot, tab) -> None:  # noqa: ANN001
        # D02: {"abab": 3, "abac": 1} -> (a, b) first; ("b","a") ties with nothing, "ab"+"ab" next
        run, events = _train(qtbot, tab, "abab abab abab abac\nxy yx\n", algorithm="bpe-byte", vocab_size=258)
        assert (events[0].left, events[0].right) == ("a", "b")
        view = None

        def grab(v):  # noqa: ANN001, ANN202
            nonlocal view
            view = v

        tab.vm.step_changed.connect(grab)
        tab.slider.set_value(1)
        qtbot.waitUntil(lambda: view is not None and view.k == 1, timeout=5000)
        rows = {(r.left, r.right): r for r in view.pair_rows}
        assert rows[("a", "b")].chosen
        # "xy" and "yx" occur once each like other count-1 pairs: not ties of the count-4 winner
        assert rows[("b", "a")].decided_by == "count" and not rows[("b", "a")].tie

    def test_words_are_segmented_after_k_merges(self, qtbot, tab) -> None:  # noqa: ANN001
        run, _ = _train(qtbot, tab, _toy(), algorithm="bpe-byte", vocab_size=300)
        res = run.result
        views = []
        tab.vm.step_changed.connect(views.append)
        tab.slider.set_value(5)
        qtbot.waitUntil(lambda: bool(views) and views[-1].k == 5, timeout=5000)
        for w in views[-1].words:
            wi = res.words.index(w.word)
            assert list(w.pieces) == res.segmentation_at(5, wi)
            assert "".join(w.pieces) == w.word
        # the probe is the trained tokenizer cut at 5 merges (it arrives on its own signal)
        qtbot.waitUntil(lambda: not tab.vm.step_busy(), timeout=5000)
        probes = []
        tab.vm.probe_changed.connect(probes.append)
        tab.probe_edit.setFocus()
        qtbot.keyClick(tab.probe_edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(tab.probe_edit, "the newest hugs, the lowest pugs")
        qtbot.waitUntil(lambda: bool(probes) and probes[-1].text == "the newest hugs, the lowest pugs", timeout=5000)
        p = probes[-1]
        assert p.k == 5
        assert p.encoding.ids == res.tokenizer(num_merges=5).encode(p.text, add_special_tokens=False).ids
        assert tab.probe_view.count() == len(p.encoding.ids)

    def test_double_clicking_a_pair_jumps_to_its_merge(self, qtbot, tab) -> None:  # noqa: ANN001
        run, events = _train(qtbot, tab, _toy(), algorithm="bpe-byte", vocab_size=300)
        views = []
        tab.vm.step_changed.connect(views.append)
        tab.slider.set_value(0)
        qtbot.waitUntil(lambda: bool(views) and views[-1].k == 0, timeout=5000)
        rows = views[-1].pair_rows
        target = next(i for i, r in enumerate(rows) if not r.chosen
                      and any((e.left, e.right) == (r.left, r.right) for e in events))
        want = next(e.rank + 1 for e in events if (e.left, e.right) == (rows[target].left, rows[target].right))
        tab.jump_to_pair(target)
        qtbot.waitUntil(lambda: views[-1].k == want, timeout=5000)
        assert (views[-1].merge.left, views[-1].merge.right) == (rows[target].left, rows[target].right)

    def test_play_advances_and_stops_at_the_end(self, qtbot, tab) -> None:  # noqa: ANN001
        run, _ = _train(qtbot, tab, _toy(), algorithm="bpe-byte", vocab_size=262)
        tab.slider.timer.setInterval(5)
        tab.slider.set_value(0)
        qtbot.keyClick(tab.slider.slider, Qt.Key.Key_Space)
        assert tab.slider.is_playing()
        qtbot.waitUntil(lambda: not tab.slider.is_playing(), timeout=5000)
        assert tab.slider.value() == run.num_steps


class TestCancel:
    def test_cancel_mid_training_leaves_the_tab_usable(self, qtbot, tab) -> None:  # noqa: ANN001
        from tokviz.gui.train_viewmodel import TrainConfig

        big = "\n".join(f"w{i} x{i % 97}y{i % 89} z{i * 7919 % 10007} the quick brown fox" for i in range(40000))
        tab.vm.set_corpus(big, from_editor=False)
        cancelled = []
        tab.vm.training_cancelled.connect(cancelled.append)
        started = []
        tab.vm.progress.connect(lambda *a: started.append(a))
        tab.vm.train(TrainConfig(algorithm="bpe-byte", vocab_size=20000))
        qtbot.waitUntil(lambda: bool(started), timeout=20000)
        assert tab.cancel_button.isEnabled() and not tab.train_button.isEnabled()
        qtbot.mouseClick(tab.cancel_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not tab.vm.is_training(), timeout=30000)
        assert cancelled, "the trainer reported no cancellation"
        assert tab.vm.run is None
        assert tab.train_button.isEnabled() and not tab.cancel_button.isEnabled()
        assert "Cancelled" in tab.status.text()
        # still usable: train again, step
        run, events = _train(qtbot, tab, _toy(), algorithm="bpe-byte", vocab_size=270)
        assert run.num_steps == len(events) == 14
        tab.slider.set_value(3)
        qtbot.waitUntil(lambda: tab.vm.step == 3 and not tab.vm.step_busy(), timeout=5000)


class TestOtherAlgorithms:
    def test_wordpiece_shows_the_score_of_each_chosen_pair(self, qtbot, tab) -> None:  # noqa: ANN001
        run, events = _train(qtbot, tab, _toy(), algorithm="wordpiece", vocab_size=70)
        assert events and all(e.score is not None for e in events)
        views = []
        tab.vm.step_changed.connect(views.append)
        tab.slider.set_value(1)
        qtbot.waitUntil(lambda: bool(views) and views[-1].k == 1, timeout=5000)
        v = views[-1]
        assert v.merge.score == pytest.approx(events[0].score)
        chosen = [r for r in v.pair_rows if r.chosen][0]
        assert chosen.score == pytest.approx(events[0].score)
        assert max(r.score for r in v.pair_rows) == pytest.approx(chosen.score)
        assert not tab.pairs.isColumnHidden(5)
        assert "score" in tab.headline.text()

    def test_unigram_shows_em_iterations_and_pruning_rounds(self, qtbot, tab) -> None:  # noqa: ANN001
        run, _ = _train(qtbot, tab, _toy() * 3, algorithm="unigram", vocab_size=60)
        assert run.em and run.prunes
        assert tab.prunes.rowCount() == len(run.prunes)
        assert tab.table_stack.currentWidget() is tab.prunes
        pr = run.prunes[0]
        assert tab.prunes.item(0, 1).text() == f"{pr.vocab_before:,} → {pr.vocab_after:,}"
        assert not tab.slider.isVisible()


    def test_unigram_below_the_character_count_is_refused(self, qtbot, tab) -> None:  # noqa: ANN001
        from tokviz.gui.train_viewmodel import TrainConfig

        errors = []
        tab.vm.error_raised.connect(errors.append)
        tab.vm.set_corpus("".join(chr(0x4E00 + i) for i in range(300)), from_editor=False)
        tab.vm.train(TrainConfig(algorithm="unigram", vocab_size=100))
        assert errors and "at least about" in errors[-1]
        assert not tab.vm.is_training()


class TestRankCutoff:
    def test_cutoff_follows_the_inspect_tokenizer(self, qtbot, tab, gpt2) -> None:  # noqa: ANN001
        vm = tab.vm.inspect
        text = "Tokenization of unbelievable words"
        vm.set_text(text, from_editor=False)
        with qtbot.waitSignal(tab.vm.cutoff_available, timeout=20000, check_params_cb=lambda n, d: n > 0) as b:
            vm.set_tokenizer(gpt2, name="gpt2")
        n = b.args[0]
        assert n == 50000
        views = []
        tab.vm.cutoff_changed.connect(views.append)
        tab.vm.set_cutoff(n)
        qtbot.waitUntil(lambda: bool(views) and views[-1].k == n, timeout=20000)
        assert views[-1].encoding.ids == gpt2.encode(text, add_special_tokens=False).ids
        tab.vm.set_cutoff(0)
        qtbot.waitUntil(lambda: views[-1].k == 0, timeout=20000)
        assert len(views[-1].encoding.ids) == len(text.encode("utf-8"))  # bytes only


class TestExport:
    def test_save_and_open_in_inspect(self, qtbot, tab, tmp_path) -> None:  # noqa: ANN001
        import tokviz

        run, _ = _train(qtbot, tab, _toy(), algorithm="bpe-byte", vocab_size=280)
        out = tab.vm.save_tokenizer(tmp_path / "tokenizer.json")
        assert json.loads(out.read_text(encoding="utf-8"))["model"]["type"] == "BPE"
        loaded = tokviz.load(out)
        probe = "the newest hugs"
        assert loaded.encode(probe, add_special_tokens=False).ids == run.result.tokenizer().encode(
            probe, add_special_tokens=False).ids
        inspect = tab.vm.inspect
        with qtbot.waitSignal(inspect.tokenizer_changed, timeout=5000):
            tab.open_in_inspect()
        assert inspect.tokenizer.vocab_size() if callable(inspect.tokenizer.vocab_size) else True
        assert "trained" in inspect.tokenizer_name

    @pytest.mark.parametrize("suffix", ["png", "svg"])
    def test_chart_export(self, qtbot, tab, tmp_path, suffix) -> None:  # noqa: ANN001
        _train(qtbot, tab, _toy(), algorithm="bpe-byte", vocab_size=280)
        path = tmp_path / f"chart.{suffix}"
        tab.chart.export(path)
        assert path.stat().st_size > 500


class TestScreenshot:
    def test_cli_screenshot_of_the_train_tab(self, tmp_path) -> None:  # noqa: ANN001
        import os
        import subprocess
        import sys

        from PySide6.QtGui import QImage

        out = tmp_path / "train.png"
        tok = resource_path("bundles", "gpt2", "r50k_base.tiktoken.gz")
        r = subprocess.run(
            [sys.executable, "-m", "tokviz", "gui", "--screenshot", str(out), "--tokenizer", str(tok),
             "--tab", "train", "--size", "1100x750"],
            capture_output=True, text=True, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, timeout=180,
        )
        assert r.returncode == 0, r.stderr
        img = QImage(str(out))
        assert (img.width(), img.height()) == (1100, 750)

    def test_screenshot_waits_for_the_first_training_and_step(self, qtbot, settings, gpt2) -> None:  # noqa: ANN001
        from PySide6.QtWidgets import QApplication

        from tokviz.gui.app import wait_idle
        from tokviz.gui.main_window import MainWindow

        w = MainWindow(settings=settings)
        qtbot.addWidget(w)
        w.vm.set_tokenizer(gpt2, name="gpt2")
        w.tabs.setCurrentWidget(w.train_tab)
        w.show()
        assert wait_idle(QApplication.instance(), w, timeout=60)
        t = w.train_tab
        assert t.vm.run is not None and t.vm.run.num_steps > 0
        assert t.slider.value() == 1 and t.words.count() > 0 and t.probe_view.count() > 0
        assert "Merge <b>1</b>" in t.headline.text()


class TestProbeModel:
    @pytest.mark.parametrize("algorithm", ["bpe-byte", "bpe-char"])
    def test_probe_equals_the_exported_tokenizer_cut_at_k(self, algorithm) -> None:  # noqa: ANN001
        # the probe keeps only the merges that can occur in the probe's chunks; it must still
        # tokenize exactly like the full tokenizer.json cut at k merges
        from tokviz.gui.train_viewmodel import TrainConfig, TrainRun, _probe, make_trainer
        from tokviz.training.bpe import run_to_result

        cfg = TrainConfig(algorithm=algorithm, vocab_size=400 if algorithm == "bpe-byte" else 150)
        res = run_to_result(make_trainer(cfg).train(_toy().splitlines() * 3))
        run = TrainRun(cfg, res)
        text = "the lowest newest widest hugs, quickly: tokenization is a pipeline 42"
        for k in sorted({0, 1, 2, 7, 20, res.num_merges // 2, res.num_merges}):
            enc, err, _ = _probe(run, k, text)
            assert err is None
            assert enc.ids == res.tokenizer(num_merges=k).encode(text, add_special_tokens=False).ids, k


class TestProbeViewLines:
    def test_lines_break_as_in_the_inspect_pane(self, qtbot) -> None:  # noqa: ANN001
        # BERT drops the newline (it lies between two tokens): the line still breaks after "ab"
        from support import bundle_path

        import tokviz
        from tokviz.gui.display import token_is_break
        from tokviz.gui.widgets.segments import ProbeView

        view = ProbeView()
        qtbot.addWidget(view)
        for rel, first_break in (("bert-base-uncased/tokenizer.json", "cd"), ("gpt2/r50k_base.tiktoken", "Ċ")):
            enc = tokviz.load(bundle_path(rel)).encode("ab cd\nef\n\ngh", add_special_tokens=False)
            view.set_encoding(enc)
            tb = enc.text.encode("utf-8")
            want = [i for i in range(len(enc.ids)) if token_is_break(enc.byte_offsets, tb, i)]
            assert [i for i in range(len(enc.ids)) if view._src.is_break(i)] == want and want, rel
            assert enc.tokens[want[0]] == first_break, rel
