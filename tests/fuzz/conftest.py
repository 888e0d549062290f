"""The fuzz suite's folder on sys.path (``from fuzzkit import ...``) and its short regex timeout.

The per-family counts are printed at the end of the run by ``tests/conftest.py``
(`session_reports.fuzz_lines`).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest  # noqa: E402

from tokviz.engine import patterns  # noqa: E402

#: the regex timeout in the fuzz families: the code path is the one of the real 1 s timeout,
#: but a case that meets a hostile pattern then costs a tenth of a second instead of one
FUZZ_TIMEOUT_BASE = 0.1


@pytest.fixture(autouse=True)
def _short_regex_timeout(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.module.__name__.rsplit(".", 1)[-1].startswith("test_fuzz_"):
        monkeypatch.setattr(patterns, "TIMEOUT_BASE", FUZZ_TIMEOUT_BASE)
