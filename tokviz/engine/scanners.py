r"""Native scanners for the published split patterns, chosen by the exact pattern text.

Each pattern below is written exactly as a file format carries it (a tokenizer.json ``Split``,
the ``ByteLevel`` pre-tokenizer's built-in GPT-2 pattern, a rank file's preset as
`tokviz.io.tiktoken_ranks.engine_pattern` rewrites it, a GGUF pre-tokenizer's regexes) next to
its *program*: the pattern's top-level alternatives, in order, each one a shape the native
scanner (`tokviz.engine._scan`, see its header comment) implements with the alternative's
character classes as parameters. `scanner_for` gives the scanner of a pattern, or None for any
other text, which then runs in the `regex` module as before; `tokviz.engine.patterns.HFRegex` is
the one caller. A scanner returns exactly the matches `HFRegex` finds (the characters it hides
from `regex` included); tests/engine/test_scanners.py checks every pattern here against
`regex.finditer` over all of Unicode.

The shapes, as regex fragments (P, X, Y, U, W character classes; C the contractions):

========================  ==============================================================
`Contraction`             ``'s|'t|'re|'ve|'m|'ll|'d``, also as ``'(?:[sdmt]|ll|ve|re)``; or
                          under ``(?i:...)``
`Run`                     ``P?X+Y*``: P optional or required, X at most ``most`` times,
                          Y optional (``" ?\p{L}+"``, ``"\p{N}{1,3}"``, ``"\s"``)
`Word` (``lower_tail``)   ``P?U*W+C?``, else ``P?U+W*C?`` (o200k's two word shapes)
`Space`                   ``\s*[\r\n]+`` (``"newline"``), ``\s+(?!\S)`` (``"before_space"``),
                          ``\s++$`` / ``\s++\Z`` (``"end"``), ``\s+$`` (``"line_end"``)
========================  ==============================================================

>>> program_of(r"\p{N}{1,3}").name
'digits-1-3'
>>> program_of(r"\p{N}{1,4}") is None
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, Union

import regex

from . import kernels
from .unicode_tables import UNKNOWN_HIDDEN_AS, UNKNOWN_TO_HF_REGEX

__all__ = [
    "Chars", "Contraction", "Run", "Word", "Space", "Program",
    "program_of", "published", "scanner_for", "table_agrees", "regex_checksums",
]

_L = ("Lu", "Ll", "Lt", "Lm", "Lo")
_M = ("Mn", "Mc", "Me")
_N = ("Nd", "Nl", "No")
_P = ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po")
_S = ("Sm", "Sc", "Sk", "So")


@dataclass(frozen=True, slots=True)
class Chars:
    r"""A character class: the general categories it names (``"WS"`` for the `regex` module's
    ``\s``), literal members as inclusive code point ranges, and negation."""

    features: tuple[str, ...] = ()
    ranges: tuple[tuple[int, int], ...] = ()
    negate: bool = False

    def spec(self, bits: dict[str, int]) -> tuple[int, bool, tuple[int, ...]]:
        mask = 0
        for name in self.features:
            mask |= bits[name]
        return mask, self.negate, tuple(v for pair in sorted(self.ranges) for v in pair)


def chars(*features: str, members: str = "", negate: bool = False) -> Chars:
    """A class of categories and literal members; ``members`` is a bracket body of literal
    characters and ``a-b`` ranges (no escapes), as in ``"A-Za-z"``."""
    return Chars(features, _ranges(members), negate)


def _ranges(body: str) -> tuple[tuple[int, int], ...]:
    if "\\" in body:
        raise ValueError(f"escapes are not read here: {body!r}")
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            out.append((ord(body[i]), ord(body[i + 2])))
            i += 3
        else:
            out.append((ord(body[i]), ord(body[i])))
            i += 1
    merged: list[tuple[int, int]] = []
    for a, b in sorted(out):
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return tuple(merged)


@dataclass(frozen=True, slots=True)
class Contraction:
    """``'s|'t|'re|'ve|'m|'ll|'d`` (``ignore_case``: inside ``(?i:...)``)."""

    ignore_case: bool


@dataclass(frozen=True, slots=True)
class Run:
    """``P?X+Y*``: ``prefix`` P (optional, or ``required``), ``body`` X (at most ``most``; 0: no
    bound), ``then`` Y."""

    body: Chars
    prefix: Chars | None = None
    required: bool = False
    most: int = 0
    then: Chars | None = None


@dataclass(frozen=True, slots=True)
class Word:
    """``P?U*W+C?`` (``lower_tail``) or ``P?U+W*C?``; C is the optional ``(?i:...)`` contraction."""

    prefix: Chars
    upper: Chars
    lower: Chars
    lower_tail: bool
    contraction: bool


@dataclass(frozen=True, slots=True)
class Space:
    """One of the whitespace alternatives (see the module docstring)."""

    kind: Literal["newline", "before_space", "end", "line_end"]


Op = Union[Contraction, Run, Word, Space]


@dataclass(frozen=True, slots=True)
class Program:
    """A published pattern's alternatives, in order, under a short name for messages."""

    name: str
    ops: tuple[Op, ...]

    def spec(self, scan) -> tuple[tuple, ...]:  # noqa: ANN001 - the _scan module
        """The program as the tuples `_scan.Scanner` takes."""
        bits = scan.FEATURES

        def cls(c: Chars | None) -> tuple | None:
            return None if c is None else c.spec(bits)

        out = []
        for op in self.ops:
            if isinstance(op, Contraction):
                out.append((scan.OP_CONTRACTION, 0, 0, 2 if op.ignore_case else 1, None, None, None, None))
            elif isinstance(op, Run):
                prefix = 0 if op.prefix is None else 2 if op.required else 1
                out.append((scan.OP_RUN, prefix, op.most, 0, cls(op.prefix), cls(op.body), None, cls(op.then)))
            elif isinstance(op, Word):
                kind = scan.OP_WORD_LOWER if op.lower_tail else scan.OP_WORD_UPPER
                out.append((kind, 1, 0, 2 if op.contraction else 0, cls(op.prefix), cls(op.upper), cls(op.lower), None))
            else:
                kind = {"newline": scan.OP_WS_NEWLINE, "before_space": scan.OP_WS_BEFORE_WS,
                        "end": scan.OP_WS_END, "line_end": scan.OP_WS_LINE_END}[op.kind]
                out.append((kind, 0, 0, 0, None, None, None, None))
        return tuple(out)


# ---------------------------------------------------------------------- classes
WS = chars("WS")
SPACE = chars(members=" ")
CRLF = chars(members="\r\n")
LETTER = chars(*_L)
NUMBER = chars(*_N)
OTHER = chars("WS", *_L, *_N, negate=True)  # [^\s\p{L}\p{N}]
NOT_CRLF_L_N = chars(*_L, *_N, members="\r\n", negate=True)  # [^\r\n\p{L}\p{N}]
UPPER = chars("Lu", "Lt", "Lm", "Lo", *_M)  # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
LOWER = chars("Ll", "Lm", "Lo", *_M)  # [\p{Ll}\p{Lm}\p{Lo}\p{M}]
ASCII_PUNCT = chars(members="!-/:-@[-`{-~")  # [!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]

_WS_TAIL = (Space("newline"), Space("before_space"), Run(WS))


def _cl100k_like(digits: int, *, contraction: bool = True, letters: Chars = LETTER, other: Chars = OTHER,
                 then: Chars | None = CRLF) -> tuple[Op, ...]:
    r"""Llama 3's shape: contraction?, [^\r\n\p{L}\p{N}]?letters+, \p{N}{1,digits}, ' ?other+then*', whitespace."""
    head: tuple[Op, ...] = (Contraction(True),) if contraction else ()
    return (*head, Run(letters, NOT_CRLF_L_N), Run(NUMBER, most=digits), Run(other, SPACE, then=then), *_WS_TAIL)


def _o200k_like(digits: int, *, contraction: bool) -> tuple[Op, ...]:
    return (
        Word(NOT_CRLF_L_N, UPPER, LOWER, True, contraction),
        Word(NOT_CRLF_L_N, UPPER, LOWER, False, contraction),
        Run(NUMBER, most=digits),
        Run(OTHER, SPACE, then=chars(members="\r\n/")),
        *_WS_TAIL,
    )


_GPT2_HEAD: tuple[Op, ...] = (Contraction(False), Run(LETTER, SPACE), Run(NUMBER, SPACE), Run(OTHER, SPACE))
_DEEPSEEK_CJK = "\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff"
_KANA_HAN = "\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff"
_DEEPSEEK_LLM_LETTERS = (
    "A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293"
    "\u0295-\u02af\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c"
    "\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5"
    "\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77"
    "\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59"
    "\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc"
    "\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107"
    "\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139"
    "\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee"
    "\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e"
    "\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a"
    "\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2"
    "\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943"
)
_DEEPSEEK_LLM_PUNCT = "!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002"
_DEEPSEEK3_MAIN = (
    r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
    r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_SPARK_MAIN = (
    r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
    r"| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+"
)


def _literal_crlf(pattern: str) -> str:
    r"""``pattern`` with ``\r``/``\n`` escapes as the characters themselves (tokenizer.json writes
    DeepSeek's patterns so: JSON ``"\r\n"`` inside the class)."""
    return pattern.replace("\\r", "\r").replace("\\n", "\n")


_DS_HEAD: tuple[Op, ...] = (
    Run(chars(members="A-Za-z"), ASCII_PUNCT, required=True),
    Run(chars(*_L, *_M), chars(*_L, *_P, *_S, members="\r\n", negate=True)),
)

#: (program, the exact texts it stands for)
_PUBLISHED: tuple[tuple[Program, tuple[str, ...]], ...] = (
    (
        Program("gpt2", (*_GPT2_HEAD, Space("before_space"), Run(WS))),
        # HF ByteLevel's built-in pattern (tokviz.engine.pre_tokenizers.byte_level.GPT2_PATTERN), Whisper
        (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",),
    ),
    (
        Program("gpt2-gguf", (*_GPT2_HEAD, Space("before_space"))),
        # llama.cpp's GPT-2 regex (tokviz.io.gguf_pre.GPT2_REGEX): no final \s+
        (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)",),
    ),
    (
        Program("r50k", (Contraction(False), *_GPT2_HEAD[1:], Space("end"), Space("before_space"), Run(WS, most=1))),
        # tiktoken's r50k/p50k/gpt2 preset, as written and as engine_pattern rewrites its $
        (
            r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s",
            r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++\Z|\s+(?!\S)|\s",
        ),
    ),
    (
        Program(
            "cl100k",
            (
                Contraction(True), Run(LETTER, NOT_CRLF_L_N), Run(NUMBER, most=3), Run(OTHER, SPACE, then=CRLF),
                Space("end"), Space("newline"), Space("before_space"), Run(WS, most=1),
            ),
        ),
        (
            r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"
            r"|\s++$|\s*[\r\n]|\s+(?!\S)|\s",
            r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"
            r"|\s++\Z|\s*[\r\n]|\s+(?!\S)|\s",
        ),
    ),
    (
        Program("llama3", _cl100k_like(3)),
        # Llama 3's tokenizer.json Split (also its rank-file preset, dbrx, smaug, glm4, jais)
        (
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
            r"|\s*[\r\n]+|\s+(?!\S)|\s+",
        ),
    ),
    (
        Program("qwen2", _cl100k_like(1)),
        # Qwen2 / Qwen3's tokenizer.json Split (qwen.tiktoken's preset)
        (
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
            r"|\s*[\r\n]+|\s+(?!\S)|\s+",
        ),
    ),
    (
        Program("qwen35", _cl100k_like(1, letters=chars(*_L, *_M), other=chars("WS", *_L, *_M, *_N, negate=True))),
        (
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
            r"|\s*[\r\n]+|\s+(?!\S)|\s+",
        ),
    ),
    (
        Program("bailingmoe", _cl100k_like(1)),  # (\s*[\r\n] and \s*[\r\n]+ match alike)
        (
            r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]"
            r"|\s+(?!\S)|\s+",
        ),
    ),
    (
        Program("seed-coder", _cl100k_like(1, then=None)),
        (
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+"
            r"|\s*[\r\n]+|\s+(?!\S)|\s+",
        ),
    ),
    (
        Program("ufakzeka", _cl100k_like(1, contraction=False)),
        (r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",),
    ),
    (
        Program("o200k", _o200k_like(3, contraction=True)),
        # o200k_base (tiktoken preset), Llama 4 and GPT-4o tokenizer.json Splits
        (
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
            r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
            r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        ),
    ),
    (
        Program("tekken", _o200k_like(1, contraction=False)),
        (
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
            r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
            r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        ),
    ),
    (
        Program("deepseek-v3", (*_DS_HEAD, Run(chars(*_P, *_S), SPACE, then=CRLF), *_WS_TAIL)),
        # DeepSeek V3's third Split: tokenizer.json has CR and LF themselves in the classes
        (_literal_crlf(_DEEPSEEK3_MAIN), _DEEPSEEK3_MAIN),
    ),
    (
        Program("spark", (*_DS_HEAD, Run(chars(*_P, *_S), SPACE), Run(CRLF, most=1), *_WS_TAIL[1:])),
        (_literal_crlf(_SPARK_MAIN), _SPARK_MAIN),
    ),
    (Program("digits-1-3", (Run(NUMBER, most=3),)), (r"\p{N}{1,3}",)),
    (Program("digit", (Run(NUMBER, most=1),)), (r"\p{N}",)),
    (Program("digits", (Run(NUMBER),)), (r"\p{N}+",)),
    (Program("kana-han", (Run(chars(members=_KANA_HAN)),)), (f"[{_KANA_HAN}]+",)),
    (Program("deepseek-cjk", (Run(chars(members=_DEEPSEEK_CJK)),)), (f"[{_DEEPSEEK_CJK}]+",)),
    (Program("line-break", (Run(CRLF, most=1),)), ("[\r\n]",)),
    (Program("deepseek-llm-letters", (Run(chars(members=_DEEPSEEK_LLM_LETTERS), WS),)), (f"\\s?[{_DEEPSEEK_LLM_LETTERS}]+",)),
    (Program("deepseek-llm-punct", (Run(chars(members=_DEEPSEEK_LLM_PUNCT), WS),)), (f"\\s?[{_DEEPSEEK_LLM_PUNCT}]+",)),
    (Program("space-line-end", (Space("line_end"),)), (r"\s+$",)),
    (Program("space-letters", (Run(LETTER, WS),)), (r"\s?\p{L}+",)),
    (Program("space-punct", (Run(chars(*_P), WS),)), (r"\s?\p{P}+",)),
    (Program("lines", (Run(chars(members="\n", negate=True)), Run(chars(members="\n")))), (r"[^\n]+|[\n]+",)),
)

_BY_TEXT: dict[str, Program] = {text: program for program, texts in _PUBLISHED for text in texts}


def program_of(pattern: str) -> Program | None:
    """The program of a published pattern (exact text), or None."""
    return _BY_TEXT.get(pattern)


def published() -> dict[str, Program]:
    """Every pattern text that has a scanner, with its program (for tests and docs)."""
    return dict(_BY_TEXT)


@lru_cache(maxsize=1)
def table_agrees() -> bool:
    """True when the scanners' Unicode table (`tokviz.engine._scan_tables.h`) classifies code
    points as the installed `regex` module does: at once when it is the `regex` release the
    table was generated from; otherwise (a newer or older Unicode, maybe) when the member count
    and code point sum of every class agree over all code points (checked once, about half a
    second). When they do not, every pattern runs in `regex`."""
    scan = kernels.scan
    if scan is None:
        return False
    if regex.__version__ == scan.REGEX_VERSION:
        return True
    return regex_checksums(scan.FEATURES) == scan.checksums()


def regex_checksums(features: dict[str, int]) -> list[tuple[int, int]]:
    """``(members, sum of code points)`` of every feature bit as the `regex` module classifies
    all code points, the hidden characters (`UNKNOWN_TO_HF_REGEX`) read as U+FDD0 as
    `tokviz.engine.patterns.hf_regex_view` reads them: what ``_scan.checksums()`` must give."""
    pieces, prev = [], 0
    for a, b in UNKNOWN_TO_HF_REGEX.ranges:
        pieces += ["".join(map(chr, range(prev, a))), UNKNOWN_HIDDEN_AS * (b + 1 - a)]
        prev = b + 1
    view = "".join(pieces) + "".join(map(chr, range(prev, 0x110000)))
    out = [(0, 0)] * 32
    for name, bit in features.items():
        if name == "HIDDEN":
            runs = [(a, b + 1) for a, b in UNKNOWN_TO_HF_REGEX.ranges]
        else:
            cls = r"\s" if name == "WS" else rf"\p{{gc={name}}}"
            runs = [m.span() for m in regex.finditer(f"(?:{cls})+", view, regex.MULTILINE | regex.VERSION0)]
        out[bit.bit_length() - 1] = (sum(e - s for s, e in runs), sum((s + e - 1) * (e - s) // 2 for s, e in runs))
    return out


@lru_cache(maxsize=None)
def _built(program: Program):  # noqa: ANN202 - a _scan.Scanner
    scan = kernels.scan
    return scan.Scanner(program.spec(scan))


def scanner_for(pattern: str):  # noqa: ANN201 - a _scan.Scanner or None
    """The native scanner of ``pattern`` when it is a published pattern and `kernels.scan` is
    loaded, else None (the pattern runs in the `regex` module)."""
    program = _BY_TEXT.get(pattern)
    if program is None or kernels.scan is None or not table_agrees():
        return None
    return _built(program)
