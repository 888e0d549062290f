"""The native split scanners (`tokviz.engine._scan`, programs in `tokviz.engine.scanners`) against
the `regex` module, which stays the oracle: the same match spans as `HFRegex` with its scanner
switched off, for every published pattern, on hypothesis text over all of Unicode and on the
cases that broke split patterns before; the Unicode table against `regex`'s classes on every
code point; the hook (`HFRegex.native`) and the switch (``TOKVIZ_PURE_PYTHON=1``).

The scanners are built from `tokviz.engine._scan` directly, so these run under
``TOKVIZ_PURE_PYTHON=1`` too (where the pipeline itself does not use them). The slow-marked
test runs many more examples (``TOKVIZ_SCAN_EXAMPLES`` per pattern, 5000 by default).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings, strategies as st
from parity.cases import TRICKY
from support import ModuleCache

from tokviz.engine import kernels, patterns, scanners
from tokviz.engine.patterns import HFRegex, compile_pattern, hf_regex_view
from tokviz.engine.pre_tokenizers.split import Split
from tokviz.engine.unicode_tables import UNKNOWN_TO_HF_REGEX

try:
    from tokviz.engine import _scan
except ImportError:  # no compiler at build time: the pure-Python engine runs alone
    _scan = None

EXPECT_NATIVE = os.environ.get("TOKVIZ_EXPECT_NATIVE") == "1"  # (CI: the build must have a compiler)
pytestmark = pytest.mark.skipif(_scan is None and not EXPECT_NATIVE, reason="tokviz.engine._scan is not built")

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = scanners.published()
PATTERNS = sorted(PUBLISHED, key=lambda p: (PUBLISHED[p].name, p))
IDS = [f"{PUBLISHED[p].name}-{k}" for k, p in enumerate(PATTERNS)]
FLAGS = regex.MULTILINE | regex.VERSION0
EVERY = "".join(map(chr, range(0x110000)))

_SCANNERS = ModuleCache()


def scanner(pattern: str):  # noqa: ANN201 - a _scan.Scanner
    if pattern not in _SCANNERS:
        _SCANNERS[pattern] = _scan.Scanner(PUBLISHED[pattern].spec(_scan))
    return _SCANNERS[pattern]


def regex_twin(pattern: str) -> HFRegex:
    """The pattern as `HFRegex` runs it without a scanner: the oracle."""
    return HFRegex(regex.compile(pattern, FLAGS), native=None)


def assert_same(pattern: str, text: str) -> None:
    want = [m.span() for m in regex_twin(pattern).finditer(text)]
    got = scanner(pattern).spans(text)
    assert got == want, f"{PUBLISHED[pattern].name}: {text!r}"


# ---------------------------------------------------------------------- text strategies
_HIDDEN = [chr(a) for a, _ in UNKNOWN_TO_HF_REGEX.ranges[:8]]
_CHARS = (
    list(" \t\n\r\x0b\x0c\x1c\x1f\x85\u00a0\u1680\u2028\u2029\u202f\u3000\u200b\ufeff")  # \s and near misses
    + list("'\u2019`\"sStTmMdDrReEvVlLkK\u017f\u212a")  # contractions: ' and ’, (?i:) and its extras
    + list("0123456789\u0663\u096a\u2160\u216b\u00bd\u2460\U0001d7ce")  # Nd, Nl, No, astral digit
    + list("\u0301\u0300\u0308\u20dd\u0903\u093f\ufe0f\u200d\U0001f3fb")  # Mn, Me, Mc, VS16, ZWJ, skin tone
    + list("Aa\u01c5\u02b0\u00aa\u4e2d\u3042\u30a2\uac00\u0905\u05d0\u0628\U00010400\U0001e900\uff21")  # Lu Ll Lt Lm Lo
    + list("/-_.,!?\u2026\u3002\uff0c\uff01$+<=>^~|\u20ac\u20c1\U0001f600\u2018\u201f")  # P and S, ASCII and not
    + _HIDDEN
    + ["\ufdd0", "\ud800", "\udfff", "\U0010ffff", "\x00", "\x7f"]
)
_STRINGS = [
    "'s", "'S", "'ll", "'LL", "'re", "'Ve", "'d", "'m", "'t", "\u2019s", "'\u017f", "''s", " 's", "'",
    " \r\n", "\r\n\r\n  ", "  \n", "\n ", "a  ", "   x", "\t\n x", " \n\n\t", "\r", "\r \r",
    "e\u0301", "\u0301\u0301", "CamelCase", "HTTPServer", "iPhone", "\u00c0B\u0303c", "ABC'S", "don't",
    "12345678", "1,234.5", " 42", "\u0663\u0664\u0665\u0666",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466", "\U0001f3f3\ufe0f\u200d\U0001f308",
    "\u65e5\u672c\u8a9e\u30c6\u30ad\u30b9\u30c8", "\ud55c\uad6d\uc5b4", "x/y//z\n/", "!?\n\n", "-->\r\n",
] + [s for _, s in TRICKY if len(s) < 200]

_atom = st.one_of(st.characters(), st.sampled_from(_CHARS))
_piece = st.one_of(
    _atom,
    _atom,
    st.sampled_from(_STRINGS),
    st.tuples(_atom, st.integers(2, 300)).map(lambda p: p[0] * p[1]),  # long runs of one class
    st.text(st.sampled_from(_CHARS), min_size=1, max_size=12),
)
TEXT = st.lists(_piece, max_size=24).map("".join)


def test_scanner_extension_was_built() -> None:
    assert _scan is not None, "tokviz.engine._scan did not build (setup.py warns and goes on)"


# ---------------------------------------------------------------------- the Unicode table
@functools.lru_cache(maxsize=1)
def _every_view() -> str:
    return hf_regex_view(EVERY)


def _regex_mask(cls: str) -> np.ndarray:
    """1 for every code point ``cls`` matches in the view `HFRegex` searches."""
    view = _every_view()
    out = np.zeros(0x110000, dtype=bool)
    for m in regex.finditer(f"(?:{cls})+", view, FLAGS):
        out[m.start() : m.end()] = True
    return out


def test_unicode_table_is_the_regex_modules_classes_on_every_code_point() -> None:
    feats = np.array(_scan.features(0, 0x110000), dtype=np.uint32)
    hidden = np.zeros(0x110000, dtype=bool)
    for a, b in UNKNOWN_TO_HF_REGEX.ranges:
        hidden[a : b + 1] = True
    for name, bit in _scan.FEATURES.items():
        got = (feats & bit) != 0
        if name == "HIDDEN":
            want = hidden
        else:
            want = _regex_mask(r"\s" if name == "WS" else rf"\p{{gc={name}}}")
        bad = np.flatnonzero(got != want)
        assert not bad.size, f"{name}: {bad.size} code points differ, first U+{bad[0]:04X}"
    # the unions the patterns name are the categories' bits
    for union, cats in {"L": "Lu Ll Lt Lm Lo", "M": "Mn Mc Me", "N": "Nd Nl No",
                        "P": "Pc Pd Ps Pe Pi Pf Po", "S": "Sm Sc Sk So"}.items():
        bits = sum(_scan.FEATURES[c] for c in cats.split())
        assert np.array_equal((feats & bits) != 0, _regex_mask(rf"\p{{{union}}}")), union


def test_case_insensitive_letters_are_the_regex_modules() -> None:
    view = _every_view()
    want = []
    for letter in "sdmtlrev":
        for m in regex.finditer(f"(?i:{letter})", view, FLAGS):
            if m.group() not in (letter, letter.upper()):
                want.append((letter, m.start()))
    assert sorted(_scan.fold_extras()) == sorted(want)
    assert ("s", 0x17F) in want  # LATIN SMALL LETTER LONG S: what makes the table necessary


def test_table_checksums_agree_and_the_guard_turns_scanners_off_when_they_do_not(monkeypatch) -> None:
    assert scanners.regex_checksums(_scan.FEATURES) == _scan.checksums()
    other = types.SimpleNamespace(
        **{k: getattr(_scan, k) for k in dir(_scan) if not k.startswith("__")},
    )
    other.REGEX_VERSION = "0.0"  # not the regex that is installed: the checksums decide
    other.checksums = lambda: [(0, 0)] * 32
    monkeypatch.setattr(kernels, "scan", other)
    scanners.table_agrees.cache_clear()
    try:
        assert scanners.table_agrees() is False
        assert scanners.scanner_for(PATTERNS[0]) is None
        other.checksums = _scan.checksums
        scanners.table_agrees.cache_clear()
        assert scanners.table_agrees() is True
    finally:
        scanners.table_agrees.cache_clear()


def test_header_states_the_unicode_version_of_the_regex_module() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_scan_tables", ROOT / "tools" / "gen_scan_tables.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)  # type: ignore[union-attr]
    assert _scan.UNICODE_VERSION == gen.unicode_version()
    assert _scan.REGEX_VERSION == regex.__version__, "regex was upgraded: run tools/gen_scan_tables.py"


@pytest.mark.slow
def test_generated_header_is_up_to_date() -> None:
    done = subprocess.run([sys.executable, "tools/gen_scan_tables.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------------- which patterns have one
def test_every_pattern_tokviz_publishes_has_a_scanner() -> None:
    from tokviz.engine.pre_tokenizers.byte_level import GPT2_PATTERN
    from tokviz.io import gguf_pre, tiktoken_ranks

    texts = {"ByteLevel": GPT2_PATTERN, "QWEN2": patterns.QWEN2_PATTERN, "LLAMA3": patterns.LLAMA3_PATTERN}
    for preset in tiktoken_ranks.PATTERN_PRESETS.values():
        texts[preset.name] = preset.pattern
        texts[preset.name + " (engine)"] = tiktoken_ranks.engine_pattern(preset.pattern)
    for name in ("gpt-2", "llama-bpe", "qwen2", "qwen35", "gpt-4o", "tekken", "deepseek-v3", "deepseek-llm",
                 "deepseek-coder", "starcoder", "seed-coder", "bailingmoe", "spark2_5", "laguna"):
        for k, text in enumerate(gguf_pre.pre_spec(name).regexes):
            texts[f"gguf {name}[{k}]"] = text
    missing = sorted(name for name, text in texts.items() if text not in PUBLISHED)
    assert not missing


def test_other_patterns_keep_regex() -> None:
    assert scanners.program_of(r"\p{N}{1,4}") is None
    assert compile_pattern(r"\p{N}{1,4}").native is None
    assert compile_pattern(r"\p{N}+", literal=True).native is None  # {"String": ...} is not the regex


@pytest.mark.skipif(kernels.scan is None, reason="scanners switched off (TOKVIZ_PURE_PYTHON=1)")
def test_compiled_published_patterns_carry_their_scanner() -> None:
    for pattern in PATTERNS:
        assert compile_pattern(pattern).native is not None, PUBLISHED[pattern].name


def test_pure_python_switch_turns_the_scanners_off() -> None:
    code = (
        "from tokviz.engine import kernels; from tokviz.engine.patterns import compile_pattern; "
        "from tokviz.engine.pre_tokenizers.byte_level import GPT2_PATTERN; "
        "print(kernels.scan is None, compile_pattern(GPT2_PATTERN).native is None)"
    )
    env = {**os.environ, "TOKVIZ_PURE_PYTHON": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]


# ---------------------------------------------------------------------- same matches as regex
@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
def test_scanner_agrees_with_regex_on_known_hard_cases(pattern: str) -> None:
    for text in [*_STRINGS, *(s for _, s in TRICKY), "".join(_CHARS), "".join(_CHARS[::-1]), "", "x"]:
        assert_same(pattern, text)


@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT)
def test_scanner_agrees_with_regex(pattern: str, text: str) -> None:
    assert_same(pattern, text)


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
def test_scanner_agrees_with_regex_many_examples(pattern: str) -> None:
    n = int(os.environ.get("TOKVIZ_SCAN_EXAMPLES", "5000"))

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(text=TEXT)
    def check(text: str) -> None:
        assert_same(pattern, text)

    check()


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
def test_scanner_agrees_with_regex_on_every_code_point_in_order(pattern: str) -> None:
    assert_same(pattern, EVERY)
    assert_same(pattern, " ".join(EVERY[::97]) + "'s\r\n" + "'".join(EVERY[5::89]))


@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
@settings(max_examples=40, deadline=None)
@given(text=TEXT)
def test_every_result_form_is_the_spans(pattern: str, text: str) -> None:
    sc = scanner(pattern)
    spans = sc.spans(text)
    assert sc.findall(text) == [text[s:e] for s, e in spans]
    pieces, prev = [], 0
    for s, e in spans:
        pieces += [(prev, s)] if prev < s else []
        pieces.append((s, e))
        prev = e
    pieces += [(prev, len(text))] if prev < len(text) else []
    columns = ([s for s, _ in pieces], [text[s:e] for s, e in pieces])
    assert sc.pieces(text) == columns
    assert sc.tiling(text) == (columns if pieces == spans else None)


# ---------------------------------------------------------------------- the hook
@pytest.mark.skipif(kernels.scan is None, reason="scanners switched off (TOKVIZ_PURE_PYTHON=1)")
@pytest.mark.parametrize("behavior", ["Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"])
@pytest.mark.parametrize("invert", [False, True])
def test_split_with_a_scanner_cuts_as_with_regex(behavior: str, invert: bool) -> None:
    texts = [s for _, s in TRICKY] + _STRINGS
    for pattern in PATTERNS:
        native = Split(pattern=pattern, is_regex=True, behavior=behavior, invert=invert)
        assert native._compiled.native is not None
        plain = Split(pattern=pattern, is_regex=True, behavior=behavior, invert=invert)
        plain._compiled = regex_twin(pattern)
        for text in texts:
            assert native.pre_tokenize_str(text) == plain.pre_tokenize_str(text), (PUBLISHED[pattern].name, text)
            assert native.chunk_spans(text) == plain.chunk_spans(text)


@pytest.mark.skipif(kernels.scan is None, reason="scanners switched off (TOKVIZ_PURE_PYTHON=1)")
def test_split_helpers_with_a_scanner_give_the_regex_results() -> None:
    text = "".join(_STRINGS)
    for pattern in PATTERNS:
        fast, slow = compile_pattern(pattern), regex_twin(pattern)
        for helper in (patterns.find_matches, patterns.isolated_spans, patterns.isolated_chunks, patterns.tiling_chunks):
            assert helper(fast, text) == helper(slow, text), (helper.__name__, PUBLISHED[pattern].name)
        assert fast.findall(text) == slow.findall(text)


def test_scanner_refuses_what_it_cannot_read() -> None:
    sc = scanner(PATTERNS[0])
    with pytest.raises(TypeError, match="expected a str"):
        sc.spans(b"bytes")
    with pytest.raises(ValueError, match="at least one op"):
        _scan.Scanner(())
    with pytest.raises(ValueError, match="an op is"):
        _scan.Scanner(((1, 2),))
    with pytest.raises(TypeError, match="cannot be replaced"):
        sc.__init__(PUBLISHED[PATTERNS[0]].spec(_scan))
    with pytest.raises(ValueError, match="not sorted"):
        _scan.Scanner(((_scan.OP_RUN, 0, 0, 0, None, (0, False, (5, 3)), None, None),))
