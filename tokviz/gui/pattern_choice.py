"""What the user chose for a rank file that needs a pattern, and where that choice is kept.

A tiktoken rank file that is not one of the published encodings carries no pre-tokenizer
pattern and no special tokens. The GUI asks for them once (`pattern_dialog.PatternDialog`) and
remembers the answer per file in the app's settings, so reopening the file (picker, recent
files, drag and drop) just works. This module is the dialog's model: no widgets, no engine
calls beyond the rank-file facts and the pattern's split of a test text (`split_preview`); the settings object only needs ``value``/``setValue``/``remove``
(QSettings in the app, a dict-backed stand-in in tests).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..io.json_text import try_loads
from ..io.tiktoken_ranks import PATTERN_PRESETS, RankFileGuess, pattern_preset, preset_name_of

__all__ = ["RankPatternChoice", "RankFileFacts", "rank_file_facts", "remembered_choice", "remember_choice",
           "forget_choice", "check_choice", "split_preview", "PRESET_ITEMS", "CUSTOM"]

CUSTOM = "custom"
# (preset name, title) for the dialog's combo box, then the custom entry
PRESET_ITEMS: tuple[tuple[str, str], ...] = (
    *((p.name, p.title) for p in PATTERN_PRESETS.values()),
    (CUSTOM, "Custom regex"),
)
_GROUP = "rank_file_patterns"


class SettingsLike(Protocol):
    def value(self, key: str, default: Any = None) -> Any: ...  # noqa: D102
    def setValue(self, key: str, value: Any) -> None: ...  # noqa: D102, N802
    def remove(self, key: str) -> None: ...  # noqa: D102


@dataclass(frozen=True, slots=True)
class RankPatternChoice:
    """A pattern (a preset's or a custom regex) and the special tokens for one rank file."""

    pattern: str
    special_tokens: Mapping[str, int] = field(default_factory=dict)

    @property
    def preset(self) -> str:
        """The preset whose pattern this is, or ``"custom"``."""
        return preset_name_of(self.pattern) or CUSTOM

    def to_json(self) -> str:
        return json.dumps({"pattern": self.pattern, "special_tokens": dict(self.special_tokens)}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> RankPatternChoice | None:
        obj = try_loads(text) if isinstance(text, (str, bytes)) else None
        if not isinstance(obj, dict) or not isinstance(obj.get("pattern"), str):
            return None
        specials = obj.get("special_tokens") or {}
        if not isinstance(specials, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in specials.items()
        ):
            return None
        return cls(obj["pattern"], dict(specials))

    @classmethod
    def from_preset(cls, name: str) -> RankPatternChoice:
        p = pattern_preset(name)
        if p is None:
            raise ValueError(f"no pattern preset {name!r}")
        return cls(p.pattern, {})


@dataclass(frozen=True, slots=True)
class RankFileFacts:
    """What the dialog tells the user about the file: its size in ranks and the next free id."""

    entries: int
    max_rank: int
    guess: RankFileGuess | None = None  # what the content says the file is (Qwen's 151,643 ranks ...)

    @property
    def next_free_id(self) -> int:
        return self.max_rank + 1


def rank_file_facts(path: Path) -> RankFileFacts | None:
    """Count the ranks of a rank file (None when it does not parse: loading will say why)."""
    from ..engine.errors import TokvizFormatError
    from ..io.files import read_bytes, resolve_path
    from ..io.tiktoken_ranks import parse_ranks, recognise_ranks

    try:
        p = resolve_path(path)
        data = read_bytes(p.read_bytes(), source=str(p))
        table = parse_ranks(data, source=str(p))
    except (OSError, TokvizFormatError):
        return None
    return RankFileFacts(len(table), table.max_rank, recognise_ranks(data, entries=len(table)))


def _key(path: Path) -> str:
    # one settings key per file, whatever characters its path holds
    digest = hashlib.sha256(str(Path(path).expanduser().resolve()).encode("utf-8")).hexdigest()[:32]
    return f"{_GROUP}/{digest}"


def remembered_choice(settings: SettingsLike | None, path: Path) -> RankPatternChoice | None:
    """The choice saved for ``path``, if any (and readable)."""
    if settings is None:
        return None
    raw = settings.value(_key(path))
    return RankPatternChoice.from_json(raw) if isinstance(raw, str) else None


def remember_choice(settings: SettingsLike | None, path: Path, choice: RankPatternChoice) -> None:
    if settings is not None:
        settings.setValue(_key(path), choice.to_json())


def forget_choice(settings: SettingsLike | None, path: Path) -> None:
    if settings is not None:
        settings.remove(_key(path))


def check_choice(
    pattern: str, rows: list[tuple[str, str]], facts: RankFileFacts | None
) -> tuple[RankPatternChoice | None, str]:
    """Validate the dialog's fields: ``(choice, "")`` or ``(None, what is wrong)``.

    ``rows`` are the special-token table's (literal, id text) rows; empty rows are ignored.

    >>> check_choice(r"\\w+", [("<|end|>", "5")], RankFileFacts(5, 4))[0].special_tokens
    {'<|end|>': 5}
    >>> check_choice(r"\\w+", [("<|end|>", "3")], RankFileFacts(5, 4))[1]
    'special token <|end|>: id 3 is a rank of the file (ranks go up to 4)'
    """
    import regex

    if not pattern.strip():
        return None, "give a pattern (pick a preset or write a regex)"
    try:
        regex.compile(pattern)
    except regex.error as exc:
        return None, f"the pattern does not compile: {exc}"
    specials: dict[str, int] = {}
    for literal, id_text in rows:
        if not literal and not id_text.strip():
            continue
        if not literal:
            return None, f"special token with id {id_text.strip()} has no text"
        try:
            id_ = int(id_text.strip())
        except ValueError:
            return None, f"special token {literal}: id must be a whole number, got {id_text.strip()!r}"
        if id_ < 0:
            return None, f"special token {literal}: id must not be negative"
        if facts is not None and id_ <= facts.max_rank:
            return None, f"special token {literal}: id {id_} is a rank of the file (ranks go up to {facts.max_rank})"
        if literal in specials:
            return None, f"special token {literal} is listed twice"
        if id_ in specials.values():
            return None, f"two special tokens have id {id_}"
        specials[literal] = id_
    return RankPatternChoice(pattern, specials), ""


def split_preview(pattern: str, text: str) -> list[tuple[int, int]] | None:
    """The chunks (code point spans) the rank-file tokenizer would make of ``text`` with
    ``pattern``: the engine's Split as the rank-file loader builds it (tiktoken keeps the
    matches and drops the text between them). None when the pattern does not compile.

    >>> split_preview(r"\\w+", "ab, c")
    [(0, 2), (4, 5)]
    """
    import regex

    from ..engine.errors import TokvizFormatError
    from ..engine.pre_tokenizers.split import Split
    from ..io.tiktoken_ranks import engine_pattern

    try:
        split = Split(pattern=engine_pattern(pattern), is_regex=True, behavior="Removed", invert=True)
    except (regex.error, TokvizFormatError, ValueError):
        return None
    return [span for _piece, span in split.pre_tokenize_str(text)]
