"""The long-work protocol: `CancelToken`, `Cancelled`, `checkpoint`."""

from __future__ import annotations

import doctest
import threading

import pytest

from tokviz.engine import cancel as cancel_mod
from tokviz.engine.cancel import Cancelled, CancelToken, checkpoint


class TestCancelProtocol:
    def test_token_starts_clear_and_stays_set(self) -> None:
        token = CancelToken()
        assert not token.cancelled
        token.raise_if_cancelled("x")  # no raise
        token.cancel()
        token.cancel()
        assert token.cancelled

    def test_set_from_another_thread(self) -> None:
        token = CancelToken()
        t = threading.Thread(target=token.cancel)
        t.start()
        t.join()
        with pytest.raises(Cancelled) as info:
            token.raise_if_cancelled("merges")
        assert info.value.stage == "merges"
        assert "merges" in str(info.value)

    def test_checkpoint_reports_then_stops(self) -> None:
        token = CancelToken()
        seen: list[tuple[str, int, int]] = []
        checkpoint("lines", 3, 10, progress=lambda *a: seen.append(a), cancel=token)
        checkpoint("lines", 4, 10)  # neither option: a no-op
        token.cancel()
        with pytest.raises(Cancelled):
            checkpoint("lines", 5, 10, progress=lambda *a: seen.append(a), cancel=token)
        assert seen == [("lines", 3, 10)]  # a cancelled step reports nothing

    def test_cancelled_is_an_exception_with_a_default_stage(self) -> None:
        assert Cancelled().stage == "" and Cancelled().partial is None
        assert str(Cancelled()) == "cancelled"
        assert Cancelled("lines", partial=[1, 2]).partial == [1, 2]

    def test_doctest(self) -> None:
        assert doctest.testmod(cancel_mod).failed == 0
