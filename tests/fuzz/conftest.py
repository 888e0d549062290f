"""The fuzz suite's folder on sys.path (``from fuzzkit import ...``) and the count report."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzzkit import COUNTS, PROFILE  # noqa: E402


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ANN001, ARG001
    if not COUNTS:
        return
    tr = terminalreporter
    tr.section(f"tokviz fuzz ({PROFILE} profile): cases per family")
    total = 0
    for family in sorted(COUNTS):
        counts = COUNTS[family]
        n = sum(counts.values())
        total += n
        detail = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        tr.write_line(f"{family:>8}: {n:7d} cases ({detail})")
    tr.write_line(f"{'total':>8}: {total:7d} cases")
    report = os.environ.get("TOKVIZ_FUZZ_REPORT")
    if report:
        Path(report).write_text(json.dumps({f: dict(c) for f, c in COUNTS.items()}, indent=2) + "\n", encoding="utf-8")
