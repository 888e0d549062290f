"""The Inspect view-model: workers, latest request wins, incremental == full, errors, huge input."""

from __future__ import annotations

import threading

from tokviz.gui.display import ViewMode
from tokviz.gui.viewmodel import InspectViewModel


class _Recording:
    """A tokenizer wrapper that records which thread encodes (the real engine does the work)."""

    def __init__(self, tok) -> None:  # noqa: ANN001
        self._tok = tok
        self.threads: list[str] = []
        self.texts: list[int] = []
        self.special_policy = tok.special_policy
        self.added_tokens = tok.added_tokens

    def encode(self, text: str, **kw):  # noqa: ANN003, ANN201
        self.threads.append(threading.current_thread().name)
        self.texts.append(len(text))
        return self._tok.encode(text, **kw)


class TestInspectViewModel:
    def test_encodes_in_a_worker_thread(self, qtbot, gpt2, encoded) -> None:  # noqa: ANN001
        vm = InspectViewModel()
        rec = _Recording(gpt2)
        vm.set_text("hello world")
        vm.set_tokenizer(rec, name="gpt2")
        encoded(qtbot, vm)
        assert vm.encoding.ids == gpt2.encode("hello world").ids
        assert rec.threads and threading.main_thread().name not in rec.threads

    def test_latest_request_wins(self, qtbot, gpt2, encoded) -> None:  # noqa: ANN001
        vm = InspectViewModel()
        vm.set_tokenizer(gpt2)
        shown: list[str] = []
        vm.encoding_changed.connect(lambda u: shown.append(u.encoding.text))
        texts = [f"request number {i} " * 50 for i in range(30)]
        for t in texts:
            vm.set_text(t)
        encoded(qtbot, vm)
        assert vm.encoding.text == texts[-1]
        assert shown[-1] == texts[-1]
        assert len(shown) < len(texts)  # intermediate requests were dropped, not queued
        assert vm.encoding.ids == gpt2.encode(texts[-1]).ids

    def test_typing_is_incremental_and_equals_a_full_encode(self, qtbot, gpt2, encoded) -> None:  # noqa: ANN001
        vm = InspectViewModel()
        text = "".join(f"line {i}: some words and numbers {i * 37}\n" for i in range(300))
        vm.set_text(text)
        vm.set_tokenizer(gpt2)
        encoded(qtbot, vm)
        splices = []
        vm.encoding_changed.connect(lambda u: splices.append(u.splice))
        pos = len(text) // 2
        for ch in "typed!":
            text = text[:pos] + ch + text[pos:]
            pos += 1
            vm.set_text(text)
            encoded(qtbot, vm)
        assert splices and all(s is not None for s in splices)
        full = gpt2.encode(text)
        assert list(vm.encoding.ids) == full.ids and list(vm.encoding.offsets) == full.offsets

    def test_options_re_encode(self, qtbot, gpt2, encoded) -> None:  # noqa: ANN001
        vm = InspectViewModel()
        vm.set_text("a <|endoftext|> b")
        vm.set_tokenizer(gpt2)
        encoded(qtbot, vm)
        assert 50256 not in vm.encoding.ids  # tiktoken default: a literal is ordinary text
        assert vm.update.special_literals == ((2, 15, None),)
        vm.set_honour_special_literals(True)
        encoded(qtbot, vm)
        assert 50256 in vm.encoding.ids
        assert vm.update.special_literals == ((2, 15, 50256),)

    def test_bad_tokenizer_file_reports_and_keeps_everything(self, qtbot, gpt2, tmp_path, encoded) -> None:  # noqa: ANN001
        vm = InspectViewModel()
        vm.set_text("keep me")
        vm.set_tokenizer(gpt2, name="gpt2")
        encoded(qtbot, vm)
        bad = tmp_path / "broken.json"
        bad.write_text('{"model": {"type": "BPE", "vocab": ', encoding="utf-8")
        errors: list[str] = []
        vm.error_raised.connect(errors.append)
        vm.load_tokenizer(bad)
        qtbot.waitUntil(lambda: bool(errors) and not vm.is_busy(), timeout=10000)
        assert "broken.json" in errors[0]
        assert vm.tokenizer is gpt2 and vm.text == "keep me" and vm.encoding.text == "keep me"

    def test_huge_paste_returns_at_once_and_encodes_off_the_gui_thread(self, qtbot, gpt2, encoded) -> None:  # noqa: ANN001
        vm = InspectViewModel()
        rec = _Recording(gpt2)
        vm.set_tokenizer(rec)
        encoded(qtbot, vm)
        huge = "".join(f"All work and no play makes Jack a dull boy, day {i * 7919 % 100003}.\n" for i in range(11000))
        seen: list[tuple[bool, int]] = []
        vm.encoding_changed.connect(lambda u: seen.append((u.partial, len(u.encoding.text))))
        vm.set_text(huge)
        # set_text only queued the work: the GUI thread is free while the worker encodes
        assert vm.update is None or vm.update.encoding.text != huge
        encoded(qtbot, vm, timeout=120000)
        assert len(vm.encoding.text) == len(huge)
        assert all(name != threading.main_thread().name for name in rec.threads)
        # a preview of the start came first, then the whole text
        assert seen[0][0] is True and seen[0][1] < len(huge)
        assert seen[-1] == (False, len(huge))
        assert list(vm.encoding.ids) == gpt2.encode(huge).ids

    def test_selection_fills_details_with_the_bpe_merges(self, qtbot, gpt2, encoded) -> None:  # noqa: ANN001
        vm = InspectViewModel()
        vm.set_text("unbelievably")
        vm.set_tokenizer(gpt2)
        encoded(qtbot, vm)
        got = []
        vm.details_changed.connect(got.append)
        vm.select_token(0)
        qtbot.waitUntil(lambda: any(d is not None and d.traced is not None for d in got), timeout=10000)
        d = [d for d in got if d.traced is not None][-1]
        assert d.token.id == gpt2.encode("unbelievably").ids[0]
        assert d.traced.trace.merges  # the merges that built it, in order
        assert d.utf16 == (0, d.token.end)

    def test_view_mode_signal(self, qtbot) -> None:  # noqa: ANN001
        vm = InspectViewModel()
        with qtbot.waitSignal(vm.view_mode_changed):
            vm.set_view_mode("ids")
        assert vm.view_mode is ViewMode.IDS
