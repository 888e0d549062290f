"""The reports a test session prints at its end: the parity report (per bundle, how many cases
were compared and how many mismatched) and the fuzz outcome counts (per family).

Tests record into `PARITY` and `FUZZ_COUNTS` in whatever process runs them. Under pytest-xdist
each worker sends its records to the controller when it finishes (``tests/conftest.py``:
``pytest_sessionfinish`` on the worker, ``pytest_testnodedown`` on the controller), which merges
them and prints one report for the whole run, the same as a single-process run prints.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FUZZ_COUNTS", "FUZZ_PROFILE", "PARITY", "ParityReport", "fuzz_lines", "merge_fuzz", "fuzz_json"]

_MAX_DETAILS_PER_BUNDLE = 5

#: the fuzz profile: ``short`` (CI) unless ``TOKVIZ_FUZZ=long``
FUZZ_PROFILE = os.environ.get("TOKVIZ_FUZZ", "short").strip().lower() or "short"


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

    def to_json(self) -> dict[str, Any]:
        """What a worker sends to the controller (every detail kept: `lines` trims)."""
        return {b: {"cases": s.cases, "mismatches": s.mismatches, "details": s.details} for b, s in self.bundles.items()}

    def merge(self, data: dict[str, Any]) -> None:
        """Add a worker's `to_json` to this report."""
        for bundle, s in data.items():
            mine = self.bundles.setdefault(bundle, _BundleStats())
            mine.cases += s["cases"]
            mine.mismatches += s["mismatches"]
            mine.details.extend((case, detail) for case, detail in s["details"])

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
        out = [f"{'bundle':<{width}}  {'cases':>7}  {'mismatches':>10}"]
        for name in sorted(self.bundles):
            s = self.bundles[name]
            out.append(f"{name:<{width}}  {s.cases:>7}  {s.mismatches:>10}")
        out.append(f"{'TOTAL':<{width}}  {self.total_cases:>7}  {self.total_mismatches:>10}")
        for name in sorted(self.bundles):
            s = self.bundles[name]
            for case_id, detail in sorted(s.details)[:_MAX_DETAILS_PER_BUNDLE]:
                out.append(f"  {name} {case_id}: {detail[:300]}")
            if len(s.details) > _MAX_DETAILS_PER_BUNDLE:
                out.append(f"  {name}: ... {len(s.details) - _MAX_DETAILS_PER_BUNDLE} more mismatches")
        return out


#: the session's parity report (the ``parity_report`` fixture of tests/parity)
PARITY = ParityReport()

#: fuzz family -> outcome -> count ("ok", "crash", "hang", "rss", or the documented error's class name)
FUZZ_COUNTS: defaultdict[str, Counter[str]] = defaultdict(Counter)
#: fuzz family -> the highest peak resident memory of one of its cases, in MB
FUZZ_PEAK_RSS_MB: defaultdict[str, float] = defaultdict(float)
_PEAK = "peak_rss_mb"  # the key of the peak in `fuzz_json` (merged as a maximum, not a sum)


def fuzz_json() -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {family: dict(counts) for family, counts in FUZZ_COUNTS.items()}
    for family, peak in FUZZ_PEAK_RSS_MB.items():
        out.setdefault(family, {})[_PEAK] = round(peak)
    return out


def merge_fuzz(data: dict[str, dict[str, int]]) -> None:
    for family, counts in data.items():
        counts = dict(counts)
        peak = counts.pop(_PEAK, None)
        FUZZ_COUNTS[family].update(counts)
        if peak is not None:
            FUZZ_PEAK_RSS_MB[family] = max(FUZZ_PEAK_RSS_MB[family], peak)


def fuzz_lines() -> list[str]:
    """The fuzz section: cases per family with their outcomes, then the total."""
    out = []
    total = 0
    for family in sorted(FUZZ_COUNTS):
        counts = FUZZ_COUNTS[family]
        n = sum(counts.values())
        total += n
        detail = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        peak = f", peak RSS {FUZZ_PEAK_RSS_MB[family]:.0f} MB" if family in FUZZ_PEAK_RSS_MB else ""
        out.append(f"{family:>11}: {n:7d} cases ({detail}){peak}")
    out.append(f"{'total':>11}: {total:7d} cases")
    return out
