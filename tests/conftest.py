"""Session setup for every test: offscreen Qt, the tests folder on sys.path, shared fixtures.

The helpers live in ``tests/support.py`` (``from support import bundle_path, require, ...``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from support import SHARED, require  # noqa: E402


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    require(SHARED is not None, "../shared not found (set TOKVIZ_SHARED)")
    return SHARED  # type: ignore[return-value]
