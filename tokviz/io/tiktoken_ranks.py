"""tiktoken rank files (``*.tiktoken``): one ``base64(token bytes) rank`` line per mergeable token.

A rank file holds only the mergeable tokens. The pre-tokenizer pattern and the special tokens
are not in it: for the published OpenAI encodings (r50k/gpt2, p50k, cl100k, o200k) we recognise
the file by the sha256 of its content and supply them from `PRESETS` (facts published in
tiktoken's ``tiktoken_ext/openai_public.py``); any other rank file needs ``pattern=`` (and
optionally ``special_tokens=``).

The tokenizer is assembled from ordinary engine components so that every stage shows in the
GUI exactly as for a tokenizer.json:

* pre-tokenizer ``Split(pattern, behavior="Removed", invert=True)`` then
  ``ByteLevel(use_regex=False)``. tiktoken encodes every regex match and silently drops the text
  between matches; "invert + Removed" keeps exactly the matches. (None of the published patterns
  leaves gaps, but a custom pattern may.)
* model BPE in *rank mode* (`BPE.from_ranks`): the pair whose concatenation has the lowest rank
  merges first, and a chunk that is itself a token is emitted whole, as tiktoken does.
* decoder ByteLevel; special tokens as special added tokens honoured only through
  ``allowed_special`` (``special_policy="tiktoken"``), so a literal ``<|endoftext|>`` in user
  text is ordinary text by default, like ``encode(text, disallowed_special=())``.

Token strings (``Encoding.tokens``) are the GPT-2 byte-to-unicode spelling of the token bytes
(``"Ġhello"``), which is also how a byte sequence that is not valid UTF-8 stays representable.
"""

from __future__ import annotations

import binascii
import codecs
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from itertools import accumulate
from pathlib import Path
from types import MappingProxyType

from ..engine.added_tokens import AddedToken
from ..engine.byte_alphabet import BYTE_TO_CHAR, proxy_to_bytes
from ..engine.errors import TokvizFormatError
from ..engine.fields import MAX_ID, id_error, is_id
from ..engine.patterns import trust_patterns
from ..engine.tokenizer import Tokenizer, TokenizerConfig
from .files import read_bytes, resolve_path

__all__ = [
    "TiktokenPreset",
    "PRESETS",
    "RankTable",
    "parse_ranks",
    "rank_table",
    "check_pattern",
    "check_specials",
    "looks_like_ranks",
    "preset_for",
    "load_tiktoken_ranks",
    "engine_pattern",
    "PatternPreset",
    "PATTERN_PRESETS",
    "pattern_preset",
    "preset_name_of",
    "needs_pattern",
    "RankFileGuess",
    "recognise_ranks",
    "preset_special_tokens",
    "qwen_specials",
]

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

# The published pre-tokenizer patterns (tiktoken_ext/openai_public.py). They rely on possessive
# quantifiers (``++``), which the ``regex`` module supports.
R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# Meta's Llama 3 and Llama 4 tokenizer.model files are tiktoken rank files; their patterns and
# special tokens are those of Meta's ``tokenizer.py`` (PyPI llama-models==0.3.0,
# llama_models/llama3/tokenizer.py and llama_models/llama4/tokenizer.py).
LLAMA3_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
LLAMA4_PATTERN = (
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
    r"""|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
    r"""|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
# openai-whisper (whisper/tokenizer.py, get_encoding): GPT-2's regex with a final "\s+"
WHISPER_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# Qwen's tiktoken file (qwen.tiktoken): the regex llama.cpp quotes as Qwen2's original one
QWEN_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)


@dataclass(frozen=True, slots=True)
class PatternPreset:
    """A named pre-tokenizer pattern a user can pick for a rank file that is not recognised."""

    name: str
    title: str
    pattern: str


# ``--pattern NAME`` on the command line, the presets of the GUI's pattern dialog
PATTERN_PRESETS: Mapping[str, PatternPreset] = MappingProxyType(
    {
        p.name: p
        for p in (
            PatternPreset("r50k", "GPT-2 / r50k_base / p50k_base", R50K_PATTERN),
            PatternPreset("cl100k", "cl100k_base (GPT-4, GPT-3.5)", CL100K_PATTERN),
            PatternPreset("o200k", "o200k_base (GPT-4o)", O200K_PATTERN),
            PatternPreset("llama3", "Llama 3 (Meta)", LLAMA3_PATTERN),
            PatternPreset("llama4", "Llama 4 (Meta)", LLAMA4_PATTERN),
            PatternPreset("qwen", "Qwen (qwen.tiktoken)", QWEN_PATTERN),
            PatternPreset("whisper", "Whisper (openai-whisper)", WHISPER_PATTERN),
        )
    }
)
_PATTERN_ALIASES = {"gpt2": "r50k", "r50k_base": "r50k", "p50k": "r50k", "p50k_base": "r50k",
                    "cl100k_base": "cl100k", "o200k_base": "o200k"}


def pattern_preset(name: str) -> PatternPreset | None:
    """The preset called ``name`` (``"cl100k"``, ``"gpt2"``, ``"llama3"`` ...), or None.

    >>> pattern_preset("gpt2").name, pattern_preset("not a preset") is None
    ('r50k', True)
    """
    key = name.strip().lower()
    return PATTERN_PRESETS.get(_PATTERN_ALIASES.get(key, key))


def preset_name_of(pattern: str) -> str | None:
    """The name of the preset whose pattern is exactly ``pattern``, if any."""
    return next((p.name for p in PATTERN_PRESETS.values() if p.pattern == pattern), None)


@dataclass(frozen=True, slots=True)
class TiktokenPreset:
    """A published encoding: what tiktoken adds around its rank file."""

    name: str
    sha256: str  # of the rank file's content (tiktoken's ``expected_hash``)
    pattern: str
    special_tokens: Mapping[str, int]
    explicit_n_vocab: int | None = None  # tiktoken's sanity check on the total size, when published
    aliases: tuple[str, ...] = field(default=())


def _preset(
    name: str,
    sha256: str,
    pattern: str,
    specials: dict[str, int],
    n_vocab: int | None = None,
    aliases: tuple[str, ...] = (),
) -> TiktokenPreset:
    return TiktokenPreset(name, sha256, pattern, MappingProxyType(dict(specials)), n_vocab, aliases)


def _llama3_specials(n_base: int) -> dict[str, int]:
    """Meta's Llama 3 specials: 12 named, then reserved ones up to 256, from id ``n_base``."""
    named = [
        "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
        "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|step_id|>",
        "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>",
        "<|python_tag|>", "<|image|>",
    ]
    reserved = [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(named))]
    return {t: n_base + i for i, t in enumerate(named + reserved)}


def _reserved(name: str, count: int, start: int = 0) -> list[str]:
    return [f"<|{name}_reserved_special_token_{i}|>" for i in range(start, start + count)]


def _llama4_specials(n_base: int) -> dict[str, int]:
    """Meta's Llama 4 specials: basic, text post-train, vision, reasoning, then reserved to 2048."""
    basic = ["<|begin_of_text|>", "<|end_of_text|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]
    text = [
        "<|header_start|>", "<|header_end|>", "<|eom|>", "<|eot|>", "<|step|>",
        *_reserved("text_post_train", 6), "<|python_start|>", "<|python_end|>", "<|finetune_right_pad|>",
        *_reserved("text_post_train", 61, 8),
    ]
    vision = [
        "<|image_start|>", "<|image_end|>", *_reserved("vision", 2), "<|tile_x_separator|>",
        "<|tile_y_separator|>", *_reserved("vision", 4, 2), "<|image|>", *_reserved("vision", 1, 6),
        "<|patch|>", *_reserved("vision", 1041, 7),
    ]
    reasoning = [*_reserved("reasoning", 8), "<|reasoning_thinking_start|>", "<|reasoning_thinking_end|>"]
    named = basic + text + vision + reasoning
    reserved = [f"<|reserved_special_token_{i}|>" for i in range(2048 - len(named))]
    return {t: n_base + i for i, t in enumerate(named + reserved)}


# whisper/tokenizer.py LANGUAGES, in order; multilingual models before large-v3 use the first 99
WHISPER_LANGUAGES = (
    "en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr "
    "bg lt la mi ml cy sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn "
    "yo so af oc ka be tg sd gu am yi lo uz fo ht ps tk nn mt sa lb my bo tl mg as tt haw ln ha ba jw su yue"
).split()


def whisper_specials(n_base: int, *, num_languages: int = 99) -> dict[str, int]:
    """openai-whisper's ``get_encoding`` specials (its default ``num_languages=99``)."""
    names = [
        ENDOFTEXT, "<|startoftranscript|>", *[f"<|{lang}|>" for lang in WHISPER_LANGUAGES[:num_languages]],
        "<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nospeech|>",
        "<|notimestamps|>", *[f"<|{i * 0.02:.2f}|>" for i in range(1501)],
    ]
    return {t: n_base + i for i, t in enumerate(names)}


# Keyed by sha256 of the (decompressed) rank file. gpt2 and r50k_base share one rank file; the
# r50k name is used (tiktoken's "gpt2" encoding is the same ranks, pattern and special token).
PRESETS: Mapping[str, TiktokenPreset] = MappingProxyType(
    {
        p.sha256: p
        for p in (
            _preset(
                "r50k_base",
                "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
                R50K_PATTERN,
                {ENDOFTEXT: 50256},
                50257,
                aliases=("gpt2",),
            ),
            _preset(
                "p50k_base",
                "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
                R50K_PATTERN,
                {ENDOFTEXT: 50256},
                50281,
            ),
            _preset(
                "cl100k_base",
                "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
                CL100K_PATTERN,
                {
                    ENDOFTEXT: 100257,
                    FIM_PREFIX: 100258,
                    FIM_MIDDLE: 100259,
                    FIM_SUFFIX: 100260,
                    ENDOFPROMPT: 100276,
                },
            ),
            _preset(
                "o200k_base",
                "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
                O200K_PATTERN,
                {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
            ),
            # Meta's tokenizer.model of Llama 3 / 3.1 / 3.2 / 3.3 (128000 ranks) and Llama 4 (200000)
            _preset(
                "llama3",
                "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
                LLAMA3_PATTERN,
                _llama3_specials(128000),
                128256,
            ),
            _preset(
                "llama4",
                "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed",
                LLAMA4_PATTERN,
                _llama4_specials(200000),
                202048,
            ),
            # openai-whisper's whisper/assets/multilingual.tiktoken (its last rank, 50256, is the
            # empty token "=")
            _preset(
                "whisper-multilingual",
                "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126",
                WHISPER_PATTERN,
                whisper_specials(50257),
                50257 + 2 + 99 + 6 + 1501,
            ),
        )
    }
)


def qwen_specials(n_base: int) -> dict[str, int]:
    """Qwen's (qwen.tiktoken) specials after its ranks: ``<|endoftext|>``, ``<|im_start|>``,
    ``<|im_end|>``, then ``<|extra_0|>`` ... ``<|extra_204|>`` (its tokenization_qwen.py)."""
    names = [ENDOFTEXT, "<|im_start|>", "<|im_end|>", *(f"<|extra_{i}|>" for i in range(205))]
    return {t: n_base + i for i, t in enumerate(names)}


# the special tokens a family puts after its ranks, as a function of their number
_FAMILY_SPECIALS = {"qwen": qwen_specials, "llama3": _llama3_specials, "llama4": _llama4_specials,
                    "whisper": whisper_specials}
# rank files recognised by their size (no published hash): ranks -> pattern preset
_KNOWN_SIZES = {151_643: ("qwen", "Qwen's qwen.tiktoken")}


def preset_special_tokens(name: str, n_ranks: int) -> dict[str, int]:
    """The special tokens of the pattern preset ``name``'s family for a rank file of ``n_ranks``
    ranks (ids from ``n_ranks`` on): Qwen's, Llama 3's, Llama 4's, Whisper's; ``{}`` for the
    OpenAI patterns, whose special ids are not a function of the rank count.

    >>> list(preset_special_tokens("qwen", 151643).items())[:2]
    [('<|endoftext|>', 151643), ('<|im_start|>', 151644)]
    """
    preset = pattern_preset(name)
    make = _FAMILY_SPECIALS.get(preset.name) if preset is not None else None
    return make(n_ranks) if make is not None else {}


@dataclass(frozen=True, slots=True)
class RankFileGuess:
    """What a rank file's content says it is: a published encoding (by hash) or a known family's
    file (by its number of ranks), with the pattern preset and special tokens to use."""

    name: str
    pattern_preset: str  # a `PATTERN_PRESETS` key
    special_tokens: Mapping[str, int]
    by: str  # "content hash" or "rank count"

    @property
    def exact(self) -> bool:
        return self.by == "content hash"


def recognise_ranks(data: bytes, *, entries: int | None = None) -> RankFileGuess | None:
    """What the (decompressed) rank file ``data`` is, when its content says: the published
    encoding with this sha256, or a family whose file has exactly ``entries`` ranks (counted
    from ``data`` when not given). The GUI pre-selects the guess; `load_tiktoken_ranks` takes
    only a published hash as settled.

    >>> recognise_ranks(b"YQ== 0\\n") is None
    True
    """
    preset = preset_for(data)
    if preset is not None:
        return RankFileGuess(preset.name, preset_name_of(preset.pattern) or "custom", preset.special_tokens, "content hash")
    n = entries if entries is not None else data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    known = _KNOWN_SIZES.get(n)
    if known is None:
        return None
    pattern, name = known
    return RankFileGuess(name, pattern, MappingProxyType(preset_special_tokens(pattern, n)), "rank count")


def preset_for(data: bytes) -> TiktokenPreset | None:
    """The published encoding whose rank file is exactly ``data``, if any."""
    return PRESETS.get(hashlib.sha256(data).hexdigest())


def needs_pattern(path: str | Path) -> bool:
    """True when ``path`` (a file or a folder) is a tiktoken rank file that no published
    encoding matches, so that loading it needs a pattern (the GUI then asks for one)."""
    try:
        p = resolve_path(Path(path))
        if p.stat().st_size > _NEEDS_PATTERN_MAX_BYTES:
            return False  # a rank file is a few MB; anything bigger is something else
        data = read_bytes(p.read_bytes(), source=str(p))
    except (OSError, TokvizFormatError):
        return False  # loading it will say what is wrong
    return looks_like_ranks(data) and preset_for(data) is None


_NEEDS_PATTERN_MAX_BYTES = 64 << 20


# decoding table for codecs.charmap_decode: byte b -> its GPT-2 proxy character
_CHARMAP = "".join(BYTE_TO_CHAR)


# ---------------------------------------------------------------------- parsing
@dataclass(frozen=True, slots=True, eq=False)
class RankTable:
    """The parsed rank file: token strings (byte-level spelling) and their ranks.

    ``tokens[i]`` has rank ``ranks[i]``; file order is kept. ``vocab`` maps token string to
    rank. Built in a few bulk operations (one charmap decode for all tokens) rather than one
    object pipeline per entry, so o200k's 200k entries load quickly.
    """

    tokens: list[str]
    ranks: list[int]
    vocab: dict[str, int]

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def max_rank(self) -> int:
        return max(self.ranks) if self.ranks else -1

    def token_bytes(self, i: int) -> bytes:
        """The raw bytes of entry ``i``."""
        return proxy_to_bytes(self.tokens[i])


_B64_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def looks_like_ranks(data: bytes) -> bool:
    """True when the first non-empty line is ``<base64> <integer>`` (cheap content sniff)."""
    start = 0
    n = len(data)
    while start < n and data[start] in b"\r\n":
        start += 1
    end = data.find(b"\n", start, start + 4096)
    line = data[start:] if end < 0 else data[start:end]
    line = line.rstrip(b"\r")
    tok, sep, rank = line.partition(b" ")
    return bool(sep) and bool(tok) and set(tok) <= _B64_CHARS and rank.strip().isdigit()


def parse_ranks(data: bytes, *, source: str = "<bytes>") -> RankTable:
    """Parse a rank file's bytes; malformed lines raise `TokvizFormatError` naming the line.

    >>> t = parse_ranks(b"YQ== 0\\nYg== 1\\nYWI= 2\\n")
    >>> t.tokens, t.ranks
    (['a', 'b', 'ab'], [0, 1, 2])
    """
    raw, ranks = _parse_fast(data)
    if raw is None:
        raw, ranks = _parse_slow(data, source)
    if not raw:
        raise TokvizFormatError("empty rank file (expected lines of '<base64 token> <rank>')", source=source)
    return rank_table(raw, ranks, source=source)


def rank_table(raw: list[bytes], ranks: list[int], *, source: str = "<bytes>") -> RankTable:
    """The `RankTable` of token bytes ``raw[i]`` with rank ``ranks[i]`` (duplicates refused)."""
    # One bulk decode of all token bytes into the byte-level alphabet (an 8-bit charmap codec,
    # C speed), then slicing: far cheaper than one translate per token for 200k entries.
    joined = codecs.charmap_decode(b"".join(raw), "strict", _CHARMAP)[0]
    ends = list(accumulate(map(len, raw)))
    tokens = list(map(joined.__getitem__, map(slice, [0, *ends[:-1]], ends)))
    vocab = dict(zip(tokens, ranks))
    if len(vocab) != len(tokens):
        _raise_duplicate_token(tokens, source)
    # (the published files number their lines 0, 1, 2 ...: one comparison rules out duplicates)
    first = ranks[0] if ranks else 0
    if ranks != list(range(first, first + len(ranks))) and len(set(ranks)) != len(ranks):
        _raise_duplicate_rank(ranks, source)
    if ranks and (min(ranks) < 0 or max(ranks) > MAX_ID):
        k = next(k for k, r in enumerate(ranks) if not is_id(r))
        raise TokvizFormatError(f"rank of {raw[k][:40]!r}: {id_error(ranks[k])}", source=source)
    return RankTable(tokens, ranks, vocab)


_A2B_STRICT = partial(binascii.a2b_base64, strict_mode=True)
# every byte but the ASCII white space `bytes.split` splits on
_NOT_WHITE = bytes(b for b in range(256) if b not in b" \t\n\r\x0b\x0c")


def _parse_fast(data: bytes) -> tuple[list[bytes], list[int]] | tuple[None, None]:
    """Whole-file bulk parse; ``(None, None)`` when anything is off (then `_parse_slow` locates it).

    Exactness check without a per-line loop: up to CRLF line ends and a missing final newline,
    the white space of the file, in order, must be exactly one space and one newline per line
    (no final newline), and ``split`` must find two fields per line (so none is empty): then
    every line is ``token rank``, single-spaced. Blank lines fail the check and simply take the
    slow path.
    """
    fields = data.split()
    tokens, rank_fields = fields[0::2], fields[1::2]
    if not fields or len(tokens) != len(rank_fields):
        return None, None
    body = data.replace(b"\r\n", b"\n") if b"\r" in data else data
    if body.endswith(b"\n"):
        body = body[:-1]
    if body.translate(None, _NOT_WHITE) != b" \n" * (len(tokens) - 1) + b" ":
        return None, None
    # the slow path names the line of a rank like "x1" or "+5" (int() would take "+5" and "1_0")
    if not b"".join(rank_fields).isdigit():
        return None, None
    try:
        # strict_mode rejects non-alphabet characters and bad padding
        if b"=" in tokens:
            raw = [_b64_token(t) for t in tokens]
        else:
            raw = list(map(_A2B_STRICT, tokens))
    except binascii.Error:
        return None, None
    return raw, list(map(int, rank_fields))


def _b64_token(token: bytes) -> bytes:
    """One token's bytes. A lone ``=`` is the empty token: tiktoken's ``base64.b64decode``
    reads it as ``b""`` (Whisper's multilingual.tiktoken ends with ``= 50256``)."""
    return b"" if token == b"=" else _A2B_STRICT(token)


def _parse_slow(data: bytes, source: str) -> tuple[list[bytes], list[int]]:
    """Line by line, to name the line that breaks the format (a truncated last line, say)."""
    raw: list[bytes] = []
    ranks: list[int] = []
    for lineno, line in enumerate(data.split(b"\n"), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 2 or not parts[1].isdigit():
            raise _line_error(line, lineno, len(parts) > 1, source)
        try:
            raw.append(_b64_token(parts[0]))
        except binascii.Error:
            raise _line_error(line, lineno, True, source) from None
        ranks.append(int(parts[1]))
    return raw, ranks


def _line_error(line: bytes, lineno: int, sep: bool, source: str) -> TokvizFormatError:
    shown = line[:60].decode("latin-1")
    if not sep:
        what = "expected '<base64 token> <rank>', the line has no rank (truncated file?)"
    else:
        what = "expected '<base64 token> <rank>' (bad base64 or rank; truncated file?)"
    return TokvizFormatError(f"{what}: {shown!r}", source=source, where=f"line {lineno}")


def _raise_duplicate_token(tokens: list[str], source: str) -> None:
    seen: set[str] = set()
    for i, t in enumerate(tokens):
        if t in seen:
            raise TokvizFormatError(
                f"token {proxy_to_bytes(t)!r} appears twice", source=source, where=f"entry {i + 1}"
            )
        seen.add(t)


def _raise_duplicate_rank(ranks: list[int], source: str) -> None:
    seen: set[int] = set()
    for i, r in enumerate(ranks):
        if r in seen:
            raise TokvizFormatError(f"rank {r} is given to two tokens", source=source, where=f"entry {i + 1}")
        seen.add(r)


# ---------------------------------------------------------------------- building
def load_tiktoken_ranks(
    data: bytes,
    *,
    source: str = "<bytes>",
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> Tokenizer:
    """Build a `Tokenizer` from a rank file's (decompressed) bytes.

    A published encoding is recognised by content hash and gets its pattern and special tokens;
    ``pattern``/``special_tokens`` override them. Any other rank file needs ``pattern``.

    >>> tok = load_tiktoken_ranks(open("cl100k_base.tiktoken", "rb").read())  # doctest: +SKIP
    >>> tok.encode("hello world").ids                                          # doctest: +SKIP
    [15339, 1917]
    """
    preset = preset_for(data)
    table = parse_ranks(data, source=source)
    named = pattern_preset(pattern) if pattern is not None else None
    if named is not None:
        pattern = named.pattern
    if pattern is None:
        if preset is None:
            guess = recognise_ranks(data, entries=len(table))
            hint = (f"; its {len(table):,} ranks are {guess.name}'s: pattern={guess.pattern_preset!r} (CLI: --pattern "
                    f"{guess.pattern_preset}) gives its pattern and special tokens" if guess is not None else "")
            raise TokvizFormatError(
                "not a published tiktoken encoding (r50k, p50k, cl100k, o200k, Meta's Llama 3 / 4, "
                "Whisper's multilingual): give its pre-tokenizer regex or a preset name with pattern= "
                f"(CLI: --pattern; presets: {', '.join(PATTERN_PRESETS)}) and its special tokens with "
                "special_tokens=" + hint,
                source=source,
            )
        pattern = preset.pattern
    # tiktoken checks the total size only of the tables it publishes; a table the user gives
    # (``p50k_edit``'s FIM ids past the ranks, a Whisper file's own specials) is taken as it is
    explicit_n_vocab = preset.explicit_n_vocab if preset is not None and special_tokens is None else None
    if special_tokens is None:
        if preset is not None:
            special_tokens = preset.special_tokens
        elif named is not None:
            # a family preset by name brings its specials, placed after this file's ranks
            special_tokens = preset_special_tokens(named.name, table.max_rank + 1)
        else:
            special_tokens = {}
    check_pattern(pattern, source)
    specials = check_specials(special_tokens, table, source)
    return build_tiktoken_tokenizer(
        table,
        pattern=pattern,
        special_tokens=specials,
        name=preset.name if preset is not None else _stem(source),
        source=source,
        explicit_n_vocab=explicit_n_vocab,
        recognised=preset.name if preset is not None else None,
    )


def build_tiktoken_tokenizer(
    table: RankTable,
    *,
    pattern: str,
    special_tokens: Mapping[str, int],
    name: str = "",
    source: str | None = None,
    explicit_n_vocab: int | None = None,
    recognised: str | None = None,
) -> Tokenizer:
    """Assemble the engine pipeline for a parsed rank table (see the module docstring).

    ``recognised`` is the published encoding the file was recognised as (by content hash).
    """
    from ..engine.decoders import decoder_from_json
    from ..engine.models.bpe import BPE
    from ..engine.pre_tokenizers import pre_tokenizer_from_json

    pre = pre_tokenizer_from_json(
        {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": engine_pattern(pattern)},
                    "behavior": "Removed",
                    "invert": True,
                },
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            ],
        },
        where="tiktoken pre_tokenizer",
    )
    decoder = decoder_from_json(
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        where="tiktoken decoder",
    )
    model = BPE.from_ranks(table.vocab)
    added = _added_specials(special_tokens)
    n_vocab = max([table.max_rank, *special_tokens.values()]) + 1
    if explicit_n_vocab is not None and explicit_n_vocab != n_vocab:
        raise TokvizFormatError(
            f"expected {explicit_n_vocab} ids in {name}, got max id + 1 = {n_vocab}", source=source
        )
    eos = next((t for t in (ENDOFTEXT, "<|end_of_text|>") if t in special_tokens), None)
    config = TokenizerConfig(
        bos_token="<|begin_of_text|>" if "<|begin_of_text|>" in special_tokens else None,
        eos_token=eos,
        extra={
            "format": "tiktoken",
            "pattern": pattern,
            "pattern_preset": preset_name_of(pattern) or "custom",
            "n_vocab": n_vocab,
            **({"published_as": recognised} if recognised else {}),
        },
    )
    return Tokenizer(
        model,
        pre_tokenizer=pre,
        decoder=decoder,
        added_tokens=added,
        special_policy="tiktoken",
        name=name,
        source=source,
        config=config,
    )


_MULTILINE_FLAG = re.compile(r"\(\?[a-zA-Z]*m[a-zA-Z]*[:)]")


def engine_pattern(pattern: str) -> str:
    r"""Rewrite a tiktoken pattern's anchors for the engine's Split, which follows HF.

    tiktoken runs patterns with Rust's fancy-regex, where ``^`` and ``$`` anchor at the start
    and end of the *text* (no multiline), ``\Z`` is "end, or before trailing newlines" (tested:
    ``(?=\n*\z)``) and ``\z`` is the very end. The engine's Split compiles patterns the way HF's
    Oniguruma reads them, with ``^``/``$`` as *line* anchors. So outside character classes
    ``^`` becomes ``\A``, ``$`` becomes ``\Z`` (the regex module's absolute end), ``\Z``
    becomes ``(?=\n*\Z)`` and ``\z`` becomes ``\Z``. A pattern that turns multiline on
    itself (``(?m)``) is left alone. The published patterns only use ``\s++$``, where both
    readings agree (the possessive run cannot stop before a newline), so this matters for
    custom rank files.

    >>> engine_pattern(r"^\w+|[$^]|\$|x$")
    '\\A\\w+|[$^]|\\$|x\\Z'
    """
    if _MULTILINE_FLAG.search(pattern):
        return pattern
    out: list[str] = []
    i, n, depth = 0, len(pattern), 0
    while i < n:
        c = pattern[i]
        if c == "\\":
            pair = pattern[i : i + 2]
            if depth == 0 and pair == "\\Z":
                out.append("(?=\\n*\\Z)")
            elif depth == 0 and pair == "\\z":
                out.append("\\Z")
            else:
                out.append(pair)
            i += 2
            continue
        if c == "[":
            # a class (or, inside one, a nested class as Rust allows); "]" right after the
            # opening "[" or "[^" is a literal
            depth += 1
            out.append(c)
            i += 1
            if pattern.startswith("^", i):
                out.append("^")
                i += 1
            if pattern.startswith("]", i):
                out.append("]")
                i += 1
            continue
        if c == "]" and depth:
            depth -= 1
        elif depth == 0 and c == "^":
            c = "\\A"
        elif depth == 0 and c == "$":
            c = "\\Z"
        out.append(c)
        i += 1
    return "".join(out)


def check_pattern(pattern: str, source: str) -> None:
    import regex

    try:
        regex.compile(pattern)
    except regex.error as exc:
        raise TokvizFormatError(f"bad pre-tokenizer pattern {pattern!r}: {exc}", source=source) from None


def check_specials(special_tokens: Mapping[str, int], table: RankTable, source: str) -> dict[str, int]:
    out: dict[str, int] = {}
    n = len(table)
    # published files use ranks 0..n-1: then "is a rank" is a bounds check, no set needed
    ranks: range | set[int] = range(n) if table.max_rank == n - 1 else set(table.ranks)
    for content, id in special_tokens.items():
        if not isinstance(content, str) or not content:
            raise TokvizFormatError(
                f"special token must be a non-empty string, got {content!r}", source=source
            )
        if not is_id(id):
            raise TokvizFormatError(f"special token {content!r:.60}: {id_error(id)}", source=source)
        if id in ranks:
            raise TokvizFormatError(
                f"special token {content!r}: id {id} is already a mergeable token's rank", source=source
            )
        out[content] = id
    return out


def _added_specials(special_tokens: Mapping[str, int]) -> list[AddedToken]:
    """The specials as added tokens. Several names may share one id (``o200k_harmony`` gives
    200018 both ``<|endofprompt|>`` and ``<|reserved_200018|>``): each name encodes to it, and it
    decodes to the first name given (tiktoken's decoder keeps an arbitrary one of them), so that
    name goes last, where the added vocabulary's id table keeps it."""
    first: dict[int, str] = {}
    for content, id_ in special_tokens.items():
        first.setdefault(id_, content)
    primary = set(first.values())
    ordered = [c for c in special_tokens if c not in primary] + [c for c in special_tokens if c in primary]
    return [AddedToken(c, special_tokens[c], special=True, normalized=False) for c in ordered]


def _stem(source: str) -> str:
    name = source.replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in (".gz", ".tiktoken"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


# The published patterns run as HF's and tiktoken's own do, without a timeout (patterns.py).
trust_patterns(*(q for p in (R50K_PATTERN, CL100K_PATTERN, O200K_PATTERN) for q in (p, engine_pattern(p))))
