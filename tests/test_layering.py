"""Layering: the engine, io and training packages never import Qt or pyqtgraph, and no part of
tokviz imports the reference libraries (tokenizers, tiktoken, sentencepiece are test oracles only).

Each check runs in a fresh interpreter (a subprocess), because this test session itself may
already have imported PySide6 for the GUI tests.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

GUI_ONLY = ("PySide6", "pyqtgraph", "shiboken6")
REFERENCE_LIBS = ("tokenizers", "tiktoken", "sentencepiece", "transformers")
NON_GUI_PACKAGES = ["tokviz", "tokviz.engine", "tokviz.io", "tokviz.training", "tokviz.analysis", "tokviz.commands"]

_PROBE = """
import importlib, json, pkgutil, sys
name = sys.argv[1]
mod = importlib.import_module(name)
if sys.argv[2] == "deep" and hasattr(mod, "__path__"):
    for info in pkgutil.walk_packages(mod.__path__, name + "."):
        if ".gui" in info.name and sys.argv[3] == "no-gui":
            continue
        importlib.import_module(info.name)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in set(sys.argv[4].split(",")))))
"""


def _modules_after_import(name: str, mode: str, watched: tuple[str, ...], *, gui: bool = False) -> list[str]:
    """Top-level ``watched`` modules present after importing ``name`` (and, deep, every submodule)."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, name, mode, "gui" if gui else "no-gui", ",".join(watched)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


class TestLayering:
    @pytest.mark.parametrize("package", NON_GUI_PACKAGES)
    def test_import_keeps_qt_out(self, package: str) -> None:
        assert _modules_after_import(package, "shallow", GUI_ONLY) == []

    @pytest.mark.parametrize(
        "package", ["tokviz.engine", "tokviz.io", "tokviz.training", "tokviz.analysis", "tokviz.commands"]
    )
    def test_every_submodule_keeps_qt_out(self, package: str) -> None:
        assert _modules_after_import(package, "deep", GUI_ONLY) == []

    def test_probe_sees_qt_when_it_is_imported(self) -> None:
        """The probe itself works: importing the GUI package's Qt dependency shows up."""
        pytest.importorskip("PySide6")
        assert "PySide6" in _modules_after_import("PySide6.QtCore", "shallow", GUI_ONLY)

    def test_no_part_of_tokviz_imports_a_reference_library(self) -> None:
        assert _modules_after_import("tokviz", "deep", REFERENCE_LIBS, gui=True) == []

    def test_probe_sees_a_reference_library_when_it_is_imported(self) -> None:
        pytest.importorskip("tokenizers")
        assert "tokenizers" in _modules_after_import("tokenizers", "shallow", REFERENCE_LIBS)
