"""Layering: the engine, io and training packages never import Qt or pyqtgraph, and no part of
tokviz imports the reference libraries (tokenizers, tiktoken, sentencepiece are test oracles only).
Inside tokviz, two import contracts (on the static import graph): no view-model reaches a widget
or a tab module, and the engine reaches nothing in the GUI.

Each check runs in a fresh interpreter (a subprocess), because this test session itself may
already have imported PySide6 for the GUI tests.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

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


# ---------------------------------------------------------------------------- import contracts
PACKAGE = Path(__file__).resolve().parent.parent / "tokviz"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every tokviz module ``path`` imports, at any depth of the file (function-level too)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)  # `from . import x` imports a module x
    return {m for m in found if m == "tokviz" or m.startswith("tokviz.")}


def _import_graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        deps = set()
        for m in _imports(path):
            while m and m not in modules:  # `from pkg.mod import func`: the module is pkg.mod
                m = m.rpartition(".")[0]
            if m:
                parts = m.split(".")
                deps.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))  # packages run first
        graph[name] = deps - {name}
    return graph


def _reachable(graph: dict[str, set[str]], start: str) -> dict[str, str]:
    """Modules reachable from ``start``, each with the module that imported it first."""
    seen = {start: ""}
    todo = [start]
    while todo:
        m = todo.pop()
        for d in sorted(graph.get(m, ())):
            if d not in seen:
                seen[d] = m
                todo.append(d)
    return seen


def _chain(seen: dict[str, str], m: str) -> str:
    out = [m]
    while seen.get(out[-1]):
        out.append(seen[out[-1]])
    return " <- ".join(out)


class TestImportContracts:
    """In the spirit of import-linter contracts: view-models sit below widgets, the engine below the GUI."""

    def test_the_graph_sees_imports(self) -> None:
        """The static graph itself works: the Inspect view-model imports the engine's encoding."""
        assert "tokviz.engine.encoding" in _reachable(_import_graph(), "tokviz.gui.viewmodel")

    @pytest.mark.parametrize(
        "viewmodel", sorted(_module_name(p) for p in (PACKAGE / "gui").glob("*viewmodel.py")), ids=lambda m: m.split(".")[-1]
    )
    def test_no_viewmodel_imports_widgets_or_tabs(self, viewmodel: str) -> None:
        seen = _reachable(_import_graph(), viewmodel)
        bad = [m for m in seen if m.startswith("tokviz.gui.widgets") or m.endswith("_tab") or m == "tokviz.gui.main_window"]
        assert not bad, "; ".join(_chain(seen, m) for m in bad)

    def test_engine_imports_nothing_from_the_gui(self) -> None:
        graph = _import_graph()
        for engine_module in sorted(m for m in graph if m == "tokviz.engine" or m.startswith("tokviz.engine.")):
            seen = _reachable(graph, engine_module)
            bad = [m for m in seen if m == "tokviz.gui" or m.startswith("tokviz.gui.")]
            assert not bad, "; ".join(_chain(seen, m) for m in bad)

    def test_engine_imports_nothing_from_the_gui_at_run_time(self) -> None:
        """The same in a fresh interpreter after importing every engine submodule."""
        probe = (
            "import importlib, pkgutil, sys, tokviz.engine as e\n"
            "for i in pkgutil.walk_packages(e.__path__, 'tokviz.engine.'): importlib.import_module(i.name)\n"
            "print(sorted(m for m in sys.modules if m.startswith('tokviz.gui')))\n"
        )
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip().splitlines()[-1] == "[]"
