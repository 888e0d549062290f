"""Layering: the engine, io and training packages never import Qt or pyqtgraph.

Each check runs in a fresh interpreter (a subprocess), because this test session itself may
already have imported PySide6 for the GUI tests.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

GUI_ONLY = ("PySide6", "pyqtgraph", "shiboken6")
NON_GUI_PACKAGES = ["tokviz", "tokviz.engine", "tokviz.io", "tokviz.training"]

_PROBE = """
import importlib, json, pkgutil, sys
name = sys.argv[1]
mod = importlib.import_module(name)
if sys.argv[2] == "deep" and hasattr(mod, "__path__"):
    for info in pkgutil.walk_packages(mod.__path__, name + "."):
        if ".gui" in info.name:
            continue
        try:
            importlib.import_module(info.name)
        except ImportError as exc:  # a module whose optional sibling has not landed yet
            print("skipped", info.name, exc, file=sys.stderr)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in %r)))
""" % (GUI_ONLY,)


def _qt_modules_after_import(name: str, mode: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, name, mode], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


class TestLayering:
    @pytest.mark.parametrize("package", NON_GUI_PACKAGES)
    def test_import_keeps_qt_out(self, package: str) -> None:
        assert _qt_modules_after_import(package, "shallow") == []

    @pytest.mark.parametrize("package", ["tokviz.engine", "tokviz.io", "tokviz.training"])
    def test_every_submodule_keeps_qt_out(self, package: str) -> None:
        assert _qt_modules_after_import(package, "deep") == []

    def test_probe_sees_qt_when_it_is_imported(self) -> None:
        """The probe itself works: importing the GUI package's Qt dependency shows up."""
        pytest.importorskip("PySide6")
        assert "PySide6" in _qt_modules_after_import("PySide6.QtCore", "shallow")
