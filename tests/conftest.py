"""Session setup for every test: offscreen Qt, the tests folder on sys.path, shared fixtures,
and the end-of-run parity and fuzz reports (`session_reports`, merged over xdist workers).

The helpers live in ``tests/support.py`` (``from support import bundle_path, require, ...``).
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# tiktoken caches every file it reads under the SHA-1 of its path, so each reference encoding
# built from a tmp file would leave a multi-MB entry behind, and the app's discovery (which lists
# that cache in every window's picker) would read them all: an empty value switches the cache off
# for tiktoken and for discovery alike. Tests that exercise the cache set their own folder.
os.environ["TIKTOKEN_CACHE_DIR"] = ""
sys.path.insert(0, str(Path(__file__).resolve().parent))

import session_reports  # noqa: E402
from support import SHARED, ModuleCache, require  # noqa: E402


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    require(SHARED is not None, "../shared not found (set TOKVIZ_SHARED)")
    return SHARED  # type: ignore[return-value]


# ---------------------------------------------------------------------------- memory between modules
_TESTS = str(Path(__file__).resolve().parent) + os.sep


def _clear_caches_of(module: ModuleType) -> None:
    """Empty the caches a module of tests/ keeps: its `support.ModuleCache` dicts and the
    ``functools`` caches it defines (tokenizers and reference objects built for its tests)."""
    for value in list(vars(module).values()):
        if isinstance(value, ModuleCache):
            value.clear()
        elif callable(getattr(value, "cache_clear", None)) and getattr(value, "__module__", None) == module.__name__:
            value.cache_clear()


def _trim_heap() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``), so that a long
    session's resident size follows what it holds, not the high-water mark of its biggest test."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


@pytest.fixture(scope="module", autouse=True)
def _release_module_caches() -> Iterator[None]:
    """After a test module: empty the caches of every module of tests/ (the finished module's
    and the shared test-support modules'), the app's shared tokenizer registry and the engine's
    process-wide caches, collect, and trim the heap, so the next module of this process starts
    from the memory the session holds, not from every module's leftovers. Under ``--dist
    loadfile`` a module's tests run together, so nothing is built twice."""
    yield
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and path.startswith(_TESTS):
            _clear_caches_of(module)
    from tokviz.engine.caching import clear_shared_caches
    from tokviz.io.registry import shared_registry

    shared_registry().clear()
    clear_shared_caches()
    gc.collect()
    _trim_heap()


# ---------------------------------------------------------------------------- end-of-run reports
def _is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On an xdist worker: hand the parity and fuzz records to the controller."""
    if _is_xdist_worker(session.config):
        session.config.workeroutput["tokviz_reports"] = {  # type: ignore[attr-defined]
            "parity": session_reports.PARITY.to_json(),
            "fuzz": session_reports.fuzz_json(),
        }


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:  # noqa: ANN001, ARG001 - an xdist hook
    """On the xdist controller: merge what a finished worker recorded."""
    reports = getattr(node, "workeroutput", {}).get("tokviz_reports")
    if reports:
        session_reports.PARITY.merge(reports["parity"])
        session_reports.merge_fuzz(reports["fuzz"])


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ANN001, ARG001
    if _is_xdist_worker(config):
        return
    if session_reports.PARITY.bundles:
        terminalreporter.section("tokviz parity report")
        for line in session_reports.PARITY.lines():
            terminalreporter.write_line(line)
    if session_reports.FUZZ_COUNTS:
        terminalreporter.section(f"tokviz fuzz ({session_reports.FUZZ_PROFILE} profile): cases per family")
        for line in session_reports.fuzz_lines():
            terminalreporter.write_line(line)
        path = os.environ.get("TOKVIZ_FUZZ_REPORT")
        if path:
            Path(path).write_text(json.dumps(session_reports.fuzz_json(), indent=2) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------- memory log
def _rss_kb() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def pytest_runtest_teardown(item: pytest.Item) -> None:
    """``TOKVIZ_TEST_MEMLOG=path``: each process appends ``nodeid rss_kB`` after every test to
    ``path.<pid>`` (to find the tests that leave memory behind; Linux only)."""
    path = os.environ.get("TOKVIZ_TEST_MEMLOG")
    if path:
        with open(f"{path}.{os.getpid()}", "a", encoding="utf-8") as f:
            f.write(f"{item.nodeid} {_rss_kb()}\n")
