"""The parity report: every parity test records its comparisons here; pytest prints a summary.

Usage in any parity test file::

    def test_something(parity_report):
        ...
        parity_report.record("qwen3", "tricky/cjk", ok, detail="ids differ at 3: ...")

At the end of the run the report prints, per bundle, how many cases were compared and how many
mismatched (the target is zero), followed by the first few mismatch details of each bundle
(`session_reports.ParityReport`; merged over the xdist workers by ``tests/conftest.py``).
``record_many`` records a batch (e.g. all corpus lines of a bundle in one test) without one
call per case.
"""

from __future__ import annotations

import pytest
from session_reports import PARITY, ParityReport

__all__ = ["parity_report"]


@pytest.fixture(scope="session")
def parity_report() -> ParityReport:
    """The session's parity report (record into it; it is printed at the end of the run)."""
    return PARITY
