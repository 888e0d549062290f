"""Generate tokviz/engine/_scan_tables.h, the Unicode table of the native split scanners.

The scanners (`tokviz/engine/_scan.c`) must classify every code point exactly as the patterns
run by `tokviz.engine.patterns.HFRegex` do: the Python `regex` module, compiled with
``MULTILINE | VERSION0``, over the text as `hf_regex_view` shows it (the characters of
`unicode_tables.UNKNOWN_TO_HF_REGEX` replaced by ``UNKNOWN_HIDDEN_AS``, U+FDD0). So the table is
derived from the `regex` module itself, by matching each class against a string of every code
point, and not from `unicodedata` (Python 3.11's is Unicode 14.0, older than `regex`'s):

* the general category of every code point (``\\p{gc=Lu}`` ... ``\\p{gc=Cn}``), one bit each;
* ``\\s`` (the `regex` module's whitespace, which is not a general category);
* a hidden bit for the characters `hf_regex_view` replaces; their other bits are U+FDD0's;
* for the case-insensitive contractions ``(?i:'s|'t|'re|'ve|'m|'ll|'d)``, every code point
  that ``(?i:x)`` matches for each of those letters, beyond the letter's two ASCII cases.

The Unicode version written into the header is the newest one whose sentinel character (a
character first assigned in that version) the `regex` module assigns; `tests/engine/
test_scanners.py` compares the built table with the `regex` classes over all code points, so
a `regex` upgrade that changes any class fails there until this script is run again.

    python tools/gen_scan_tables.py            # rewrite the header
    python tools/gen_scan_tables.py --check    # exit 1 if the header is not up to date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import regex

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tokviz.engine.unicode_tables import UNKNOWN_HIDDEN_AS, UNKNOWN_TO_HF_REGEX  # noqa: E402

HEADER = ROOT / "tokviz" / "engine" / "_scan_tables.h"
MAX_CP = 0x110000
FLAGS = regex.MULTILINE | regex.VERSION0  # as patterns.compile_pattern compiles a file's pattern
HIDE = ord(UNKNOWN_HIDDEN_AS)

#: The general categories, in bit order (bit k of a feature word is category k).
CATEGORIES = (
    "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe",
    "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn",
)
WS_BIT = 30
HIDDEN_BIT = 31
#: The letters of the contractions; ``(?i:x)`` may match more than ``x`` and its upper case.
FOLD_LETTERS = "sdmtlrev"
#: (version, a character first assigned in it): the table states the newest one present.
SENTINELS = (
    ("14.0", 0x061D),  # ARABIC END OF TEXT MARK
    ("15.0", 0x11F00),  # KAWI SIGN CANDRABINDU
    ("15.1", 0x2FFC),  # IDEOGRAPHIC DESCRIPTION CHARACTER SURROUND FROM RIGHT
    ("16.0", 0x1C89),  # CYRILLIC CAPITAL LETTER TJE
    ("17.0", 0x20C1),  # SAUDI RIYAL SIGN
)
BLOCK = 256


def _members(pattern: str, text: str) -> list[tuple[int, int]]:
    """The runs of ``text`` (all code points in order) matched by ``pattern``'s class."""
    return [m.span() for m in regex.compile(f"(?:{pattern})+", FLAGS).finditer(text)]


def features() -> list[int]:
    """The feature word of every code point, as `HFRegex` sees it."""
    every = "".join(map(chr, range(MAX_CP)))
    feat = [0] * MAX_CP
    for bit, cat in enumerate(CATEGORIES):
        for a, b in _members(rf"\p{{gc={cat}}}", every):
            for cp in range(a, b):
                feat[cp] |= 1 << bit
    for a, b in _members(r"\s", every):
        for cp in range(a, b):
            feat[cp] |= 1 << WS_BIT
    for cp, f in enumerate(feat):
        if bin(f & ((1 << WS_BIT) - 1)).count("1") != 1:
            raise SystemExit(f"U+{cp:04X} is in {bin(f).count('1')} general categories of the regex module")
    for a, b in UNKNOWN_TO_HF_REGEX.ranges:
        for cp in range(a, b + 1):
            feat[cp] = feat[HIDE] | (1 << HIDDEN_BIT)
    return feat


def fold_extras() -> list[tuple[str, int]]:
    """``(letter, code point)`` for every non-ASCII-case match of ``(?i:letter)``."""
    every = "".join(map(chr, range(MAX_CP)))
    hidden = {cp for a, b in UNKNOWN_TO_HF_REGEX.ranges for cp in range(a, b + 1)}
    out = []
    for letter in FOLD_LETTERS:
        for a, b in _members(f"(?i:{letter})", every):
            for cp in range(a, b):
                if chr(cp) not in (letter, letter.upper()) and cp not in hidden:
                    out.append((letter, cp))
    return out


def unicode_version() -> str:
    version = "older than 14.0"
    for name, cp in SENTINELS:
        if not regex.match(r"\p{Cn}", chr(cp), FLAGS):
            version = name
    return version


def _c_array(ctype: str, name: str, values: list[int], *, per_line: int = 16, fmt: str = "{}") -> str:
    lines = []
    for i in range(0, len(values), per_line):
        lines.append("    " + ", ".join(fmt.format(v) for v in values[i : i + per_line]) + ",")
    return f"static const {ctype} {name}[{len(values)}] = {{\n" + "\n".join(lines) + "\n};\n"


def render() -> str:
    feat = features()
    classes = sorted(set(feat))
    index = {f: k for k, f in enumerate(classes)}
    if len(classes) > 256:
        raise SystemExit(f"{len(classes)} distinct feature words: more than a byte can index")
    blocks: list[tuple[int, ...]] = []
    block_of: dict[tuple[int, ...], int] = {}
    stage1 = []
    for base in range(0, MAX_CP, BLOCK):
        block = tuple(index[f] for f in feat[base : base + BLOCK])
        if block not in block_of:
            block_of[block] = len(blocks)
            blocks.append(block)
        stage1.append(block_of[block])
    stage2 = [v for block in blocks for v in block]
    folds = fold_extras()
    bits = "\n".join(f"#define SCAN_{cat} (1u << {bit})" for bit, cat in enumerate(CATEGORIES))
    fold_rows = "\n".join(f"    {{'{letter}', 0x{cp:04X}}}," for letter, cp in folds) or "    {0, 0},"
    return f"""/* Generated by tools/gen_scan_tables.py; do not edit. Run it again after a `regex` upgrade.
 *
 * The character classes of the native split scanners (_scan.c), derived from the Python `regex`
 * module {regex.__version__} (Unicode {unicode_version()}) as tokviz.engine.patterns.HFRegex runs it: a
 * feature word per code point (one bit per general category, SCAN_WS for the module's \\s,
 * SCAN_HIDDEN for the characters hf_regex_view replaces by U+FDD0, which otherwise carry
 * U+FDD0's bits), in a two-stage table of {len(blocks)} blocks of {BLOCK}.
 */
#ifndef TOKVIZ_SCAN_TABLES_H
#define TOKVIZ_SCAN_TABLES_H

#include <stdint.h>

#define SCAN_UNICODE_VERSION "{unicode_version()}"
#define SCAN_REGEX_VERSION "{regex.__version__}"
#define SCAN_BLOCK_SHIFT {BLOCK.bit_length() - 1}
#define SCAN_HIDE_AS 0x{HIDE:04X}

{bits}
#define SCAN_WS (1u << {WS_BIT})
#define SCAN_HIDDEN (1u << {HIDDEN_BIT})

/* feature word of each class id */
{_c_array("uint32_t", "scan_class_features", classes, per_line=6, fmt="0x{:08X}u")}
/* code point >> SCAN_BLOCK_SHIFT -> block */
{_c_array("uint16_t", "scan_stage1", stage1)}
/* block * {BLOCK} + (code point & {BLOCK - 1}) -> class id */
{_c_array("uint8_t", "scan_stage2", stage2, per_line=32)}
/* (letter, code point): the code points other than the letter's ASCII cases that (?i:letter) matches */
static const uint32_t scan_fold_extras[][2] = {{
{fold_rows}
}};
#define SCAN_N_FOLD_EXTRAS {len(folds)}

#endif
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the header is not up to date")
    args = ap.parse_args()
    text = render()
    if args.check:
        current = HEADER.read_text(encoding="utf-8") if HEADER.exists() else ""
        if current != text:
            print(f"{HEADER.relative_to(ROOT)} is not up to date: run tools/gen_scan_tables.py", file=sys.stderr)
            return 1
        return 0
    HEADER.write_text(text, encoding="utf-8")
    print(f"wrote {HEADER.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
