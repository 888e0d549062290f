"""The parity report: every parity test records its comparisons here; pytest prints a summary.

Usage in any parity test file::

    def test_something(parity_report):
        ...
        parity_report.record("qwen3", "tricky/cjk", ok, detail="ids differ at 3: ...")

At the end of the run (``pytest_terminal_summary``) the report prints, per bundle, how many
cases were compared and how many mismatched (the target is zero), followed by the first few
mismatch details of each bundle. ``record_many`` records a batch (e.g. all corpus lines of a
bundle in one test) without one call per case.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pytest

__all__ = ["ParityReport", "parity_report"]

_MAX_DETAILS_PER_BUNDLE = 5


@dataclass(slots=True)
class _BundleStats:
    cases: int = 0
    mismatches: int = 0
    details: list[tuple[str, str]] = field(default_factory=list)


class ParityReport:
    """Counts of compared cases and mismatches per bundle for one pytest session."""

    def __init__(self) -> None:
        self.bundles: dict[str, _BundleStats] = {}

    def record(self, bundle: str, case_id: str, ok: bool, detail: str = "") -> None:
        """Record one compared case (``ok`` False = a mismatch, ``detail`` says what differed)."""
        stats = self.bundles.setdefault(bundle, _BundleStats())
        stats.cases += 1
        if not ok:
            stats.mismatches += 1
            stats.details.append((case_id, detail))

    def record_many(self, bundle: str, results: Iterable[tuple[str, bool, str]]) -> None:
        """Record ``(case_id, ok, detail)`` triples."""
        for case_id, ok, detail in results:
            self.record(bundle, case_id, ok, detail)

    @property
    def total_cases(self) -> int:
        return sum(s.cases for s in self.bundles.values())

    @property
    def total_mismatches(self) -> int:
        return sum(s.mismatches for s in self.bundles.values())

    def lines(self) -> list[str]:
        """The printed report, one line per bundle, then mismatch samples."""
        if not self.bundles:
            return ["no parity cases were recorded"]
        width = max(len("bundle"), *(len(b) for b in self.bundles))
        out = [f"{'bundle':<{width}}  {'cases':>7}  {'mismatches':>10}"]  # noqa: E501
        for name in sorted(self.bundles):
            s = self.bundles[name]
            out.append(f"{name:<{width}}  {s.cases:>7}  {s.mismatches:>10}")
        out.append(f"{'TOTAL':<{width}}  {self.total_cases:>7}  {self.total_mismatches:>10}")
        for name in sorted(self.bundles):
            s = self.bundles[name]
            for case_id, detail in s.details[:_MAX_DETAILS_PER_BUNDLE]:
                out.append(f"  {name} {case_id}: {detail[:300]}")
            if len(s.details) > _MAX_DETAILS_PER_BUNDLE:
                out.append(f"  {name}: ... {len(s.details) - _MAX_DETAILS_PER_BUNDLE} more mismatches")
        return out


_REPORT = ParityReport()


@pytest.fixture(scope="session")
def parity_report() -> ParityReport:
    """The session's parity report (record into it; it is printed at the end of the run)."""
    return _REPORT


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ANN001, ARG001
    if not _REPORT.bundles:
        return
    terminalreporter.section("tokviz parity report")
    for line in _REPORT.lines():
        terminalreporter.write_line(line)
