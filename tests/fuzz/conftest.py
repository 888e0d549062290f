"""The fuzz suite's folder on sys.path (``from fuzzkit import ...``) and the count report."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest  # noqa: E402
from fuzzkit import COUNTS, PEAK_RSS_MB, PROFILE  # noqa: E402

from tokviz.engine import patterns  # noqa: E402

#: the regex timeout in the fuzz families: the code path is the one of the real 1 s timeout,
#: but a case that meets a hostile pattern then costs a tenth of a second instead of one
FUZZ_TIMEOUT_BASE = 0.1


@pytest.fixture(autouse=True)
def _short_regex_timeout(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.module.__name__.rsplit(".", 1)[-1].startswith("test_fuzz_"):
        monkeypatch.setattr(patterns, "TIMEOUT_BASE", FUZZ_TIMEOUT_BASE)


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
        peak = f", peak RSS {PEAK_RSS_MB[family]:.0f} MB" if family in PEAK_RSS_MB else ""
        tr.write_line(f"{family:>11}: {n:7d} cases ({detail}){peak}")
    tr.write_line(f"{'total':>11}: {total:7d} cases")
    report = os.environ.get("TOKVIZ_FUZZ_REPORT")
    if report:
        out = {f: {**dict(c), "peak_rss_mb": round(PEAK_RSS_MB.get(f, 0.0))} for f, c in COUNTS.items()}
        Path(report).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
