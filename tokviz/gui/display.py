"""How tokens and chunks are spelled on screen: visible whitespace, byte groups, token colors.

Pure functions (no Qt) shared by the panes, the token card and the exports, so every view spells
a token the same way. A *label* is a tuple of runs ``(text, style)``; the style tells the painter
how to draw the run (ordinary text, a visible-whitespace marker, hex bytes, a bracket that groups
the tokens of one split character, a special token).

Nothing here does offset arithmetic: byte spans come from the engine's ``Encoding.byte_offsets``
and are turned into characters through `tokviz.engine.text.OffsetMap`.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from operator import itemgetter

from ..engine.lattice import LatticeNode
from ..engine.text import OffsetMap

_NL_BYTES = re.compile(b"\n")
_NL = re.compile("\n")

__all__ = [
    "Style",
    "ViewMode",
    "Label",
    "visible_runs",
    "show_piece",
    "token_label",
    "chunk_label",
    "hex_bytes",
    "color_index",
    "neighbour_variant",
    "char_name",
    "counted",
    "LatticePicture",
    "PALETTE_SIZE",
]

PALETTE_SIZE = 20


class Style:
    """Run styles of a label (small ints: labels are cached and compared a lot)."""

    TEXT = 0
    MARK = 1  # a visible stand-in for whitespace or an invisible character
    HEX = 2  # raw bytes in hex
    BRACKET = 3  # the brackets around the tokens that split one character
    SPECIAL = 4  # a special token's vocab string
    OWN = 5  # the token's own characters where they are not the text under its span (see `token_label`)


class ViewMode(str, Enum):
    """The four spellings of the token pane (one toggle)."""

    TEXT = "text"  # the characters of the user's text each token covers (bytes decoded)
    VOCAB = "vocab"  # the vocab string as the model stores it (Ġ, ▁, ##, </w>)
    BYTES = "bytes"  # the token's UTF-8 bytes in hex (byte-fallback <0xNN> shows its byte)
    IDS = "ids"  # the token id

    @property
    def title(self) -> str:
        return {"text": "Text", "vocab": "Vocab strings", "bytes": "Bytes", "ids": "Ids"}[self.value]


Label = tuple[tuple[str, int], ...]

# Short names of the characters that would otherwise be invisible or ambiguous, each distinct so
# a space, a tab, a no-break space and a zero-width space never look alike. Painters draw these
# names themselves (boxed in the editor, tinted in token labels): no font needs a glyph for them.
_MARK_NAMES: dict[str, str] = {
    "\r": "CR",
    "\u000b": "VT",
    "\u000c": "FF",
    "\u0085": "NEL",
    "\u00a0": "NBSP",
    "\u202f": "NNBSP",
    "\u3000": "IDSP",
    "\u2028": "LS",
    "\u2029": "PS",
    "\u200b": "ZWSP",
    "\u200c": "ZWNJ",
    "\u200d": "ZWJ",
    "\u2060": "WJ",
    "\ufeff": "BOM",
    "\u00ad": "SHY",
    "\u200e": "LRM",
    "\u200f": "RLM",
    "\u061c": "ALM",
    "\u202a": "LRE",
    "\u202b": "RLE",
    "\u202c": "PDF",
    "\u202d": "LRO",
    "\u202e": "RLO",
    "\u2066": "LRI",
    "\u2067": "RLI",
    "\u2068": "FSI",
    "\u2069": "PDI",
    "\ufffc": "OBJ",
}
# ... and the three marks every text font has (Latin-1 and arrows).
_GLYPH_MARKS: dict[str, str] = {" ": "·", "\t": "→", "\n": "↵"}
_MARKS: dict[str, str] = {**_GLYPH_MARKS, **{ch: f"‹{name}›" for ch, name in _MARK_NAMES.items()}}

_NAMES: dict[str, str] = {
    " ": "SPACE",
    "\t": "CHARACTER TABULATION (tab)",
    "\n": "LINE FEED (LF)",
    "\r": "CARRIAGE RETURN (CR)",
    "\ufeff": "ZERO WIDTH NO-BREAK SPACE (BOM)",
}


def char_name(ch: str) -> str:
    """A readable name: ``U+00A0 NO-BREAK SPACE``."""
    name = _NAMES.get(ch) or unicodedata.name(ch, "") or unicodedata.category(ch)
    return f"U+{ord(ch):04X} {name}"


def _is_hidden(ch: str) -> bool:
    """Controls, format characters, line/paragraph separators and spaces other than U+0020."""
    cat = unicodedata.category(ch)
    return cat in ("Cc", "Cf", "Zl", "Zp") or (cat == "Zs" and ch != " ")


def mark_name(ch: str) -> str | None:
    """The short name a painter draws for an invisible character (None for ordinary ones).

    Named ones (CR, NBSP, ZWJ, BOM ...) by name, any other control or format character by its code
    point in hex, e.g. ``"1B"`` for ESC, ``"E0041"`` for a tag character.

    >>> mark_name("\\u00a0"), mark_name("\\x1b"), mark_name("a")
    ('NBSP', '1B', None)
    """
    name = _MARK_NAMES.get(ch)
    if name is not None:
        return name
    if ch == "\t":
        return "TAB"
    if ch in "\ufdd0\ufdd1" or _is_hidden(ch):
        return f"{ord(ch):02X}"
    return None


def _mark_for(ch: str) -> str | None:
    m = _MARKS.get(ch)
    if m is not None:
        return m
    if _is_hidden(ch):
        return f"‹U+{ord(ch):04X}›"
    return None


def visible_runs(text: str, style: int = Style.TEXT) -> list[tuple[str, int]]:
    """Split ``text`` into runs where whitespace and invisible characters are replaced by marks.

    >>> visible_runs("a b\\n")
    [('a', 0), ('·', 1), ('b', 0), ('↵', 1)]
    """
    runs: list[tuple[str, int]] = []
    buf: list[str] = []
    if text.isascii() and text.isprintable() and " " not in text:
        return [(text, style)] if text else []
    for ch in text:
        m = _mark_for(ch)
        if m is None:
            buf.append(ch)
            continue
        if buf:
            runs.append(("".join(buf), style))
            buf = []
        runs.append((m, Style.MARK))
    if buf:
        runs.append(("".join(buf), style))
    return runs


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun, singular for one: ``counted(1, "finding")`` -> ``'1 finding'``.

    >>> counted(1, "token"), counted(2_048, "match", "matches"), counted(0, "error")
    ('1 token', '2,048 matches', '0 errors')
    """
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def hex_bytes(data: bytes) -> str:
    """``b"\\xe4\\xbd"`` -> ``"E4 BD"``."""
    return " ".join(f"{b:02X}" for b in data)


def token_label(
    mode: ViewMode,
    *,
    token_id: int,
    vocab: str,
    special: bool,
    text_bytes: bytes,
    byte_span: tuple[int, int],
    offset_map: OffsetMap,
    surface: bytes | None = None,
) -> Label:
    """The label of one token in the given view mode.

    ``text_bytes`` is the whole original text in UTF-8 and ``byte_span`` the token's exact span in
    it. In the text view, a token whose span starts or ends inside a character (byte-level and
    byte-fallback models split rare characters) never shows U+FFFD: its partial bytes are shown
    in hex inside brackets, and the bracket that opens the group names the whole character, e.g.
    ``⟦😀 F0 9F`` + ``98 80⟧``.

    ``surface`` is the token's own bytes (`TokenizerFacts.surface`). The text and bytes views
    show the token itself: where its span holds other text than the token (Mistral's prepended
    ``▁`` gets the span of the next character; a normalizer lowercased or folded the text; a
    trainer's BPE dropped a character), the token's own characters are drawn in `Style.OWN`,
    and a token that only adds characters before the text under its span (``▁Hello`` over
    ``Hello``) draws the added ones in `Style.OWN` followed by that text.
    """
    bs, be = byte_span
    if mode is ViewMode.IDS:
        return ((str(token_id), Style.SPECIAL if special else Style.TEXT),)
    if special and (mode is ViewMode.VOCAB or bs == be):
        return ((vocab, Style.SPECIAL),)
    if mode is ViewMode.VOCAB:
        return tuple(visible_runs(vocab))
    if surface is not None and not special and surface != text_bytes[bs:be]:
        return _own_label(mode, surface, vocab, text_bytes, byte_span, offset_map)
    if bs == be:  # a token that covers no text and has no surface: show its vocab string
        return tuple(visible_runs(vocab, Style.MARK)) or (("∅", Style.MARK),)
    piece = text_bytes[bs:be]
    if mode is ViewMode.BYTES:
        return ((hex_bytes(piece), Style.HEX),)
    # ViewMode.TEXT: whole characters as text; partial characters as bracketed hex.
    c0 = offset_map.from_utf8(bs)
    c1 = offset_map.from_utf8(be)
    b0 = offset_map.to_utf8(c0)
    b1 = offset_map.to_utf8(c1)
    runs: list[tuple[str, int]] = []
    whole_start = bs
    if b0 != bs:  # starts inside character c0: continuation bytes, closes a bracket
        end_of_char = offset_map.to_utf8(c0 + 1)
        stop = min(end_of_char, be)
        runs.append((hex_bytes(text_bytes[bs:stop]), Style.HEX))
        if stop == end_of_char:
            runs.append(("⟧", Style.BRACKET))
        whole_start = stop
        c0 += 1
    if whole_start >= be:
        return tuple(runs)
    whole_end = b1 if b1 >= whole_start else whole_start
    if whole_end > whole_start:
        runs.extend(visible_runs(text_bytes[whole_start:whole_end].decode("utf-8")))
    if b1 != be and be > whole_start:  # ends inside character c1: opens a bracket
        tail_start = max(b1, whole_start)
        runs.append(("⟦", Style.BRACKET))
        runs.append((offset_map.text[c1], Style.TEXT))
        runs.append((" " + hex_bytes(text_bytes[tail_start:be]), Style.HEX))
    return tuple(runs)


def _own_label(
    mode: ViewMode, surface: bytes, vocab: str, text_bytes: bytes, byte_span: tuple[int, int], offset_map: OffsetMap
) -> Label:
    """`token_label` of a token whose own bytes differ from the text under its span."""
    bs, be = byte_span
    covered = text_bytes[bs:be]
    if covered and surface.endswith(covered):  # characters added before the text (▁Hello over Hello)
        head = _own_runs(mode, surface[: len(surface) - len(covered)])
        if mode is ViewMode.BYTES:
            head = ((head[0][0] + " ", Style.OWN),)
        return head + token_label(mode, token_id=0, vocab=vocab, special=False, text_bytes=text_bytes,
                                  byte_span=byte_span, offset_map=offset_map)
    return _own_runs(mode, surface) or (("∅", Style.OWN),)


def _own_runs(mode: ViewMode, data: bytes) -> Label:
    if mode is ViewMode.BYTES:
        return ((hex_bytes(data), Style.OWN),) if data else ()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ((hex_bytes(data), Style.OWN),)
    return tuple((run, Style.OWN) for run, _ in visible_runs(text))


CHUNK_LABEL_MAX = 120


def chunk_label(text: str) -> Label:
    """A pre-token chunk as the pre-tokenizer left it (e.g. ``Ġhello``), whitespace made visible.

    A tokenizer without a pre-tokenizer makes the whole text one chunk; its label keeps the
    start and the end and says how much is left out.

    >>> label_text(chunk_label("x" * 500))[:12], label_text(chunk_label("x" * 500))[-12:]
    ('xxxxxxxxxxxx', 'xxxxxxxxxxxx')
    """
    if len(text) > CHUNK_LABEL_MAX:
        head, tail = text[:80], text[-30:]
        runs = visible_runs(head) + [(f" …{len(text) - 110:,} more chars… ", Style.MARK)] + visible_runs(tail)
        return tuple(runs)
    return tuple(visible_runs(text)) or (("∅", Style.MARK),)


def label_text(label: Label) -> str:
    return "".join(t for t, _ in label)


# ---------------------------------------------------------------------------- colors
def color_index(key: int) -> int:
    """Stable palette slot for a token id (same in every pane, every run; no Python ``hash``).

    Knuth's multiplicative hash spreads consecutive ids (common in BPE vocabularies, where
    related tokens sit next to each other) across the palette.
    """
    return ((key * 2654435761) & 0xFFFFFFFF) % PALETTE_SIZE


def neighbour_variant(keys: Sequence[int], i: int) -> int:
    """0 or 1: the shade of item ``i`` so two neighbours never share a color.

    Items keep the hue of their id; when an item's slot equals its left neighbour's (the same id
    repeated, or two ids hashing to one slot) it takes the other shade. Decided from the run of
    equal slots ending at ``i`` so the result does not depend on where painting starts.
    """
    c = color_index(keys[i])
    run = 0
    j = i - 1
    while j >= 0 and run < 256 and color_index(keys[j]) == c:
        run += 1
        j -= 1
    return run & 1


# ---------------------------------------------------------------------------- line breaks
def token_line_ends(byte_offsets: Sequence[tuple[int, int]], text_bytes: bytes) -> list[int]:
    """Tokens after which a view breaks the line: a newline lies in the token or in the gap before the next.

    (Some tokenizers drop whitespace, so a newline can lie between tokens.) Found from the newline
    positions by bisecting the token byte starts, not by visiting every token; agrees with
    `token_is_break`.
    """
    n = len(byte_offsets)
    hi = n
    while hi > 0 and byte_offsets[hi - 1][0] == byte_offsets[hi - 1][1]:  # post-processor tokens at the end
        hi -= 1
    starts = list(map(itemgetter(0), byte_offsets[:hi]))
    out: list[int] = []
    last = -1
    for m in _NL_BYTES.finditer(text_bytes):
        i = bisect_right(starts, m.start()) - 1
        if 0 <= i < hi and i != last and byte_offsets[i][1] > byte_offsets[i][0]:
            out.append(i)
            last = i
    return out


def token_is_break(byte_offsets: Sequence[tuple[int, int]], text_bytes: bytes, i: int) -> bool:
    """Whether a newline lies in token ``i`` or between it and the next token (see `token_line_ends`)."""
    bs, be = byte_offsets[i]
    if be <= bs:
        return False
    nxt = byte_offsets[i + 1][0] if i + 1 < len(byte_offsets) else len(text_bytes)
    end = nxt if nxt >= be else be
    if nxt < be and i + 1 < len(byte_offsets):  # next is a post-processor token: the gap runs to the text end
        end = len(text_bytes) if all(s == e for s, e in byte_offsets[i + 1 : i + 4]) else be
    return text_bytes.find(b"\n", bs, end) >= 0


def chunk_line_ends(starts: Sequence[int], text: str) -> list[int]:
    """Chunks after which a view breaks the line (a newline in the chunk or before the next one);
    ``starts`` are the chunks' original starts (`tokviz.engine.pretokenized.pre_token_spans`).

    >>> chunk_line_ends([0, 2, 3, 5], "ab\\ncd\\n")
    [1, 3]
    """
    out: list[int] = []
    last = -1
    for m in _NL.finditer(text):
        i = bisect_right(starts, m.start()) - 1
        if 0 <= i and i != last:
            out.append(i)
            last = i
    return out


# ---------------------------------------------------------------------------- the editor's stand-ins
# QTextDocument cannot hold every character as itself: it turns CR, CRLF, U+2028, U+2029 and
# U+FDD0/U+FDD1 into its own block separators, ``toPlainText`` turns NBSP into a space, bidi
# controls and joiners act on the layout instead of showing. So the editors hold a *display
# text*: the user's text with each such character (every one `mark_name` names, LF and SPACE
# excepted) replaced by a private-use stand-in of the same UTF-16 length (BMP by BMP, astral by
# astral). Display and source are then parallel code point for code point (and UTF-16 unit for
# UTF-16 unit), so one OffsetMap of the source converts Qt positions of either; the app paints
# each stand-in's mark over it. The stand-ins are fixed by the Unicode tables, so mapping back
# is a lookup; a user's own private-use character in the stand-in range (U+E000.., U+F0000..)
# only reads back wrong if it reaches the editor other than through its edit methods.
def _hidden_chars() -> list[str]:
    bmp = [chr(c) for c in range(0x10000) if not 0xD800 <= c < 0xE000 and chr(c) not in " \n" and mark_name(chr(c))]
    astral_blocks = ((0x11000, 0x14000), (0x1BC00, 0x1BCB0), (0x1D100, 0x1D200), (0xE0000, 0xE0080))
    astral = [chr(c) for a, b in astral_blocks for c in range(a, b) if mark_name(chr(c))]
    return bmp + astral


def _build_stand_ins() -> tuple[dict[int, str], dict[int, str]]:
    to_display: dict[int, str] = {}
    bmp_next, astral_next = 0xE000, 0xF0000
    for ch in _hidden_chars():
        if ch < "\U00010000":
            to_display[ord(ch)] = chr(bmp_next)
            bmp_next += 1
        else:
            to_display[ord(ch)] = chr(astral_next)
            astral_next += 1
    # one-line editors show LF as a mark too (a stand-in after the others; multi-line ones never hold it)
    to_display[ord("\n")] = chr(bmp_next)
    return to_display, {ord(v): chr(k) for k, v in to_display.items()}


_TO_DISPLAY, _FROM_DISPLAY = _build_stand_ins()
_TO_LINE_DISPLAY = dict(_TO_DISPLAY)
del _TO_DISPLAY[ord("\n")]
_HIDDEN_RE = re.compile("[" + "".join(re.escape(chr(c)) for c in _TO_DISPLAY) + "]")
_LINE_HIDDEN_RE = re.compile("[\n" + "".join(re.escape(chr(c)) for c in _TO_DISPLAY) + "]")
_STAND_IN_RE = re.compile("[" + "".join(re.escape(chr(c)) for c in _FROM_DISPLAY) + "]")


def editor_text(text: str) -> str:
    """The display text an editor holds for ``text`` (same length in code points and UTF-16).

    >>> editor_text("a\\r\\nb") == "a" + stand_in("\\r") + "\\nb"
    True
    """
    if text.isascii() and text.isprintable():
        return text
    # Every character that gets a stand-in is unprintable, U+FFFC excepted: only the lines that
    # are not printable (or hold U+FFFC) are looked up, the rest of a long text is kept as it is.
    obj = "\ufffc" in text
    return "\n".join([
        line if line.isprintable() and not (obj and "\ufffc" in line) else line.translate(_TO_DISPLAY)
        for line in text.split("\n")
    ])


def line_editor_text(text: str) -> str:
    """The display text of a one-line editor: as `editor_text`, and LF a stand-in too (one line).

    >>> line_editor_text("a\\nb") == "a" + stand_in("\\n", one_line=True) + "b"
    True
    """
    if text.isascii() and text.isprintable():
        return text
    return text.translate(_TO_LINE_DISPLAY)


def source_text(display: str) -> str:
    """Inverse of `editor_text`: the user's characters for a display text.

    >>> source_text(editor_text("x\\u00a0\\u2028\\ufeffy"))
    'x\\xa0\\u2028\\ufeffy'
    """
    if display.isascii():
        return display
    return _STAND_IN_RE.sub(lambda m: _FROM_DISPLAY[ord(m.group())], display)


def stand_in(ch: str, *, one_line: bool = False) -> str:
    """The stand-in of one character (the character itself when it needs none)."""
    return (_TO_LINE_DISPLAY if one_line else _TO_DISPLAY).get(ord(ch), ch)


def hidden_pattern(*, one_line: bool = False) -> re.Pattern[str]:
    """A pattern matching any one character the editors show as a stand-in with a mark (LF too
    in a one-line editor)."""
    return _LINE_HIDDEN_RE if one_line else _HIDDEN_RE


def show_piece(piece: str) -> str:
    """A vocab string with whitespace/invisible characters made visible (``Ġ``/``▁`` stay as stored).

    >>> show_piece("")
    '∅'
    """
    return "".join(t for t, _ in visible_runs(piece)) or "∅"


@dataclass(frozen=True, slots=True)
class LatticePicture:
    """What the lattice canvas draws: the chunk text, its nodes, marginals and the two
    highlighted paths (built by the Lattice view-model, painted by `widgets.lattice_view`)."""

    text: str
    nodes: tuple[LatticeNode, ...]
    marginals: tuple[float, ...]  # log posterior per node
    viterbi: tuple[int, ...]  # node indices
    selected: tuple[int, ...] = ()  # node indices of the selected n-best path / sample
