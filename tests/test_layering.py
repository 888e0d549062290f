"""Layering: the engine, io and training packages never import Qt or pyqtgraph, and no part of
tokviz imports the reference libraries (tokenizers, tiktoken, sentencepiece are test oracles only).
Inside tokviz, import contracts on the static import graph (function-level and TYPE_CHECKING
imports count): no view-model reaches a widget or a tab module, the engine reaches nothing in the
GUI, nothing below the command line reaches `tokviz.cli` or `tokviz.commands`, and the graph has
no circle (no strongly connected component of more than one module).

Each check runs in a fresh interpreter (a subprocess), because this test session itself may
already have imported PySide6 for the GUI tests.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import require_module

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
        require_module("PySide6")
        assert "PySide6" in _modules_after_import("PySide6.QtCore", "shallow", GUI_ONLY)

    def test_no_part_of_tokviz_imports_a_reference_library(self) -> None:
        assert _modules_after_import("tokviz", "deep", REFERENCE_LIBS, gui=True) == []

    def test_probe_sees_a_reference_library_when_it_is_imported(self) -> None:
        require_module("tokenizers")
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


# ---------------------------------------------------------------------------- no circles
def _extension_modules() -> set[str]:
    """The compiled modules setup.py declares (``from . import _native`` names a module, not a name)."""
    setup = (PACKAGE.parent / "setup.py").read_text(encoding="utf-8")
    return set(re.findall(r"""Extension\(\s*["']([\w.]+)["']""", setup))


def _ancestors(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def _targets(name: str, path: Path, modules: set[str]) -> set[str]:
    """The modules importing ``name`` runs: each module named (deepest existing prefix), and the
    packages above it that are not already running (a module's own packages started before it)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            named.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # `from pkg import x` imports the module pkg.x when there is one, else a name of pkg
            named.update(f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod for a in node.names)
    found: set[str] = set()
    for m in named:
        if not (m == "tokviz" or m.startswith("tokviz.")):
            continue
        while m and m not in modules:  # `import tokviz.x.func`-like names: the module is tokviz.x
            m = m.rpartition(".")[0]
        if m:
            found.add(m)
            found |= _ancestors(m) - _ancestors(name)
    return found - {name}


def _run_graph() -> dict[str, set[str]]:
    """Module -> the tokviz modules it imports (at any depth of the file), as Python runs them."""
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    # `tokviz.resources` is the top-level resources/ folder (pyproject's package-dir)
    paths["tokviz.resources"] = PACKAGE.parent / "resources" / "__init__.py"
    modules = set(paths) | _extension_modules()
    graph = {name: _targets(name, path, modules) for name, path in paths.items()}
    return graph | {m: set() for m in modules - set(paths)}


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(frozenset(comp))
    return out


def _path_within(graph: dict[str, set[str]], comp: frozenset[str]) -> str:
    """One circle inside ``comp``, spelled out, for the failure message."""
    start = min(comp)
    seen = {start: ""}
    todo = [start]
    while todo:
        m = todo.pop(0)
        for d in sorted(graph[m] & comp):
            if d == start:
                chain = [m]
                while seen[chain[-1]]:
                    chain.append(seen[chain[-1]])
                return " -> ".join([*reversed(chain), start])
            if d not in seen:
                seen[d] = m
                todo.append(d)
    return ", ".join(sorted(comp))


# Import circles allowed for now, by name: none (the engine's circle is gone). An entry may only
# shrink: a circle that grows, or any new one, fails; a module that leaves it must leave the list too.
KNOWN_CIRCLES: dict[str, frozenset[str]] = {}


class TestNoCircles:
    def test_the_cycle_finder_finds_a_circle(self) -> None:
        graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
        assert _cycles(graph) == [frozenset("abc")]
        assert _path_within(graph, frozenset("abc")) == "a -> b -> c -> a"

    def test_the_graph_sees_deferred_and_type_checking_imports(self) -> None:
        graph = _run_graph()
        # function-level: the diff command imports its analysis inside run()
        assert "tokviz.analysis.vocab_diff" in graph["tokviz.commands.diff"]
        # TYPE_CHECKING only: detect names Tokenizer for its annotations
        assert "tokviz.engine.tokenizer" in graph["tokviz.io.detect"]
        # a compiled module is a module: `from . import _native` does not import the package
        assert "tokviz.engine._native" in graph["tokviz.engine.kernels"]
        assert "tokviz.engine" not in graph["tokviz.engine.kernels"]

    def test_no_import_circle(self) -> None:
        graph = _run_graph()
        bad = [c for c in _cycles(graph) if not any(c <= known for known in KNOWN_CIRCLES.values())]
        assert not bad, "import circles: " + "; ".join(_path_within(graph, c) for c in bad)

    def test_known_circles_are_still_circles(self) -> None:
        """The allow-list shrinks with the code: a module no longer in a circle leaves it."""
        in_circles = set().union(*_cycles(_run_graph()))
        stale = {name: sorted(known - in_circles) for name, known in KNOWN_CIRCLES.items() if known - in_circles}
        assert not stale, f"no longer in a circle, remove from KNOWN_CIRCLES: {stale}"


class TestNothingImportsTheCommandLine:
    @staticmethod
    def _is_cli(module: str) -> bool:
        return module in ("tokviz.cli", "tokviz.__main__") or module.split(".")[:2] == ["tokviz", "commands"]

    def test_the_commands_reach_the_gui(self) -> None:
        """The check itself works: the gui command launches the app."""
        assert "tokviz.gui.app" in _reachable(_run_graph(), "tokviz.commands.gui")

    def test_nothing_below_the_command_line_imports_it(self) -> None:
        graph = _run_graph()
        bad = []
        for module in sorted(m for m in graph if not self._is_cli(m)):
            seen = _reachable(graph, module)
            bad += [_chain(seen, m) for m in seen if self._is_cli(m)]
        assert not bad, "; ".join(bad)
