"""The fuzz suite's harness: profiles, the per-case time guard, the allowed outcomes, counts.

Every fuzz case runs through `run_case`: it arms a hard watchdog (`faulthandler`, which works
even while C code holds the GIL: it dumps every thread's stack and ends the process, so a hang
can never stall the run) and measures the case against a soft limit (a case slower than that
fails as a hang, with hypothesis's shrunk input). The only outcomes allowed are success and the
documented errors (`TokvizFormatError`, including `PatternTimeoutError`, `ChatTemplateError`, and
the lone-surrogate ValueError); anything else is a crash and fails the test with its input.

Profiles (environment):

* ``TOKVIZ_FUZZ`` unset or ``short``: a few dozen derandomized cases per test (CI; the whole
  suite takes about a minute).
* ``TOKVIZ_FUZZ=long``: ``TOKVIZ_FUZZ_EXAMPLES`` cases per test (default 10,000), random seeds.
* ``TOKVIZ_FUZZ_SOFT`` / ``TOKVIZ_FUZZ_HARD``: the soft and hard limits per case in seconds
  (default 10 and 120; the machine may be loaded).
* ``TOKVIZ_FUZZ_REPORT=path``: write the per-family outcome counts there as JSON at the end.
* ``TOKVIZ_FUZZ_HANG_LOG=path`` (default ``tokviz-fuzz-hangs.log`` in the temporary folder): where
  the hard watchdog writes every thread's stack (the test function names the family) before it ends the process (pytest
  captures the standard error, so a dump there would be lost with the process).
* ``TOKVIZ_FUZZ_RSS_MB``: how far one case may raise the resident memory above where it found it
  (default 2048). The peak is the process's high-water mark, reset before each case
  (``/proc/self/clear_refs``); the case's growth is that peak less the resident size at its
  start, so a test process that earlier modules left large (freed memory that the allocator keeps)
  does not fail a case that allocates little. The reported peak is the whole high-water mark.
"""

from __future__ import annotations

import faulthandler
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from session_reports import FUZZ_COUNTS as COUNTS, FUZZ_PEAK_RSS_MB as PEAK_RSS_MB, FUZZ_PROFILE as PROFILE

from tokviz.analysis.chat_render import ChatTemplateError
from tokviz.engine.errors import TokvizFormatError
from tokviz.engine.patterns import PatternTimeoutError

LONG = PROFILE == "long"
LONG_EXAMPLES = int(os.environ.get("TOKVIZ_FUZZ_EXAMPLES", "10000"))
SOFT_LIMIT = float(os.environ.get("TOKVIZ_FUZZ_SOFT", "10"))
RSS_LIMIT_MB = float(os.environ.get("TOKVIZ_FUZZ_RSS_MB", "2048"))
HARD_LIMIT = float(os.environ.get("TOKVIZ_FUZZ_HARD", "120"))
HANG_LOG_PATH = os.environ.get("TOKVIZ_FUZZ_HANG_LOG") or os.path.join(tempfile.gettempdir(), "tokviz-fuzz-hangs.log")
_hang_log = None


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM, the peak resident set size (Linux 4.0+)
        return True
    except OSError:
        return False


def _status_mb(field: str) -> float:
    """A memory line of ``/proc/self/status`` (``VmHWM``: the peak, ``VmRSS``: now) in MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def fuzz_settings(short_examples: int) -> settings:
    """Hypothesis settings for one fuzz test in the current profile (no deadline: `run_case`
    keeps time itself, on the wall clock, with a limit meant for a loaded machine). No explain
    phase: it runs cases under a line tracer, outside `run_case`'s watchdog (a long hostile-
    template run was seen spending over ten minutes there); ``print_blob`` reproduces a failure."""
    return settings(
        phases=[p for p in Phase if p is not Phase.explain],
        max_examples=LONG_EXAMPLES if LONG else short_examples,
        deadline=None,
        derandomize=not LONG,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


def is_documented_error(exc: BaseException) -> bool:
    if isinstance(exc, (TokvizFormatError, ChatTemplateError)):
        return True
    return type(exc) is ValueError and "lone surrogate" in str(exc)


def outcome_name(exc: BaseException) -> str:
    if isinstance(exc, PatternTimeoutError):
        return "PatternTimeoutError"
    if isinstance(exc, TokvizFormatError):
        return "TokvizFormatError"
    if isinstance(exc, ChatTemplateError):
        return f"ChatTemplateError-{exc.kind}"
    return "lone-surrogate"


def run_case(family: str, fn: Callable[[], Any], *, swallow: bool = True) -> Any:
    """Run one case under the time guard; return ``fn()``'s value, or None after a documented
    error (re-raised instead when ``swallow`` is false, for the regression tests). A crash
    propagates; a case over the soft limit fails as a hang."""
    measured = _reset_peak_rss()
    base = _status_mb("VmRSS") if measured else 0.0
    global _hang_log
    if _hang_log is None:
        _hang_log = open(HANG_LOG_PATH, "a", encoding="utf-8")  # noqa: SIM115 - kept open for the watchdog
    faulthandler.dump_traceback_later(HARD_LIMIT, exit=True, file=_hang_log)
    start = time.perf_counter()
    error: Exception | None = None
    try:
        result = fn()
        outcome = "ok"
    except Exception as exc:
        if not is_documented_error(exc):
            COUNTS[family]["crash"] += 1
            raise
        one_line(exc)
        result, outcome, error = None, outcome_name(exc), exc
    finally:
        faulthandler.cancel_dump_traceback_later()
    elapsed = time.perf_counter() - start
    if elapsed > SOFT_LIMIT:
        COUNTS[family]["hang"] += 1
        raise AssertionError(f"hang: the case took {elapsed:.1f} s (limit {SOFT_LIMIT} s)")
    if measured:
        peak = _status_mb("VmHWM")
        PEAK_RSS_MB[family] = max(PEAK_RSS_MB[family], peak)
        if peak - base > RSS_LIMIT_MB:
            COUNTS[family]["rss"] += 1
            raise AssertionError(
                f"memory: the case raised the resident size by {peak - base:.0f} MB to {peak:.0f} MB"
                f" (limit {RSS_LIMIT_MB:.0f} MB above its start)"
            )
    COUNTS[family][outcome] += 1
    if error is not None and not swallow:
        raise error
    return result


def one_line(exc: BaseException) -> None:
    """A documented error must read as one line for the CLI and the error bar."""
    message = str(exc)
    assert message and "\n" not in message and "Traceback" not in message, message
    assert len(message) < 2000, f"error message of {len(message)} characters"


def check_encoding(tok: Any, text: str) -> None:
    """Offsets inside the text (code points, start <= end) and ids that decode to a string."""
    enc = tok.encode(text)
    n = len(text)
    assert len(enc.offsets) == len(enc.ids)
    for s, e in enc.offsets:
        assert 0 <= s <= e <= n, (s, e, n)
    for ids in (enc.ids, [i for i in enc.ids if not tok.is_special_id(i)]):
        out = tok.decode(ids)
        assert isinstance(out, str)
    tok.decode(enc.ids, skip_special_tokens=True)


#: texts every loaded fuzz tokenizer encodes (short: each case loads a new tokenizer)
PROBE_TEXTS = (
    "",
    "Hello world! It's 2026.",
    "  leading and  double  spaces\t\ttabs\r\nCRLF\n",
    "naïve café Ωμέγα добрый 日本語のテキスト 한국어 🎉👩‍👩‍👧",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!",
    "<s></s><unk>[CLS][SEP]<|endoftext|>",
)
