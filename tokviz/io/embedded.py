"""The tokenizers shipped inside tokviz (resources/bundles), by short name.

``tokviz encode cl100k "text"``, ``tokviz.load("cl100k")`` and ``tokviz list`` use these names; a
name is only listed when its file is present. The GUI's picker lists the same tokenizers under
their titles (`tokviz.gui.catalog`).

>>> embedded_path("cl100k").name
'cl100k_base.tiktoken.gz'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["EmbeddedTokenizer", "EMBEDDED", "embedded_path", "embedded_tokenizers"]


@dataclass(frozen=True, slots=True)
class EmbeddedTokenizer:
    """One shipped tokenizer: its name (and aliases) on the command line, its file, its title."""

    name: str
    rel: str  # path under resources/bundles
    title: str
    aliases: tuple[str, ...] = ()


EMBEDDED: tuple[EmbeddedTokenizer, ...] = (
    EmbeddedTokenizer("cl100k", "cl100k_base/cl100k_base.tiktoken.gz", "cl100k_base — GPT-4 (tiktoken)", ("cl100k_base",)),
    EmbeddedTokenizer("o200k", "o200k_base/o200k_base.tiktoken.gz", "o200k_base — GPT-4o (tiktoken)", ("o200k_base",)),
    EmbeddedTokenizer("r50k", "gpt2/r50k_base.tiktoken.gz", "r50k_base — GPT-2 (tiktoken)", ("r50k_base", "gpt2")),
    EmbeddedTokenizer("qwen3", "qwen3/tokenizer.json.gz", "Qwen3 (tokenizer.json)"),
    EmbeddedTokenizer("claude-legacy", "claude-legacy/tokenizer.json.gz", "Claude legacy (tokenizer.json)"),
    EmbeddedTokenizer("mistral-7b-v0.1", "mistral-7b-v0.1/tokenizer.json.gz", "Mistral 7B v0.1 (tokenizer.json)",
                      ("mistral",)),
    EmbeddedTokenizer("mistral-7b-v0.1-spm", "mistral-7b-v0.1/tokenizer.model.gz",
                      "Mistral 7B v0.1 (SentencePiece .model)"),
    EmbeddedTokenizer("bert-base-uncased", "bert-base-uncased/tokenizer.json.gz", "BERT base uncased (tokenizer.json)",
                      ("bert",)),
    EmbeddedTokenizer("bert-base-uncased-vocab", "bert-base-uncased/vocab.txt.gz", "BERT base uncased (vocab.txt)"),
    EmbeddedTokenizer("albert-30k-clean", "albert-30k-clean/30k-clean.model.gz", "ALBERT 30k clean (SentencePiece Unigram)",
                      ("albert",)),
    EmbeddedTokenizer("sentencepiece-test", "sentencepiece-test/test_model.model.gz", "SentencePiece test model"),
    EmbeddedTokenizer("sentencepiece-test-ja", "sentencepiece-test/test_ja_model.model.gz",
                      "SentencePiece test model (Japanese)"),
)


def _path(e: EmbeddedTokenizer) -> Path:
    from ..resources import resource_path

    return resource_path("bundles", *e.rel.split("/"))


def embedded_tokenizers() -> list[tuple[EmbeddedTokenizer, Path]]:
    """The embedded tokenizers whose files are present, with their paths."""
    return [(e, p) for e in EMBEDDED if (p := _path(e)).is_file()]


def embedded_path(name: str) -> Path | None:
    """The file of the embedded tokenizer called ``name`` (or one of its aliases), if present."""
    key = name.strip().lower()
    for e in EMBEDDED:
        if key == e.name or key in e.aliases:
            p = _path(e)
            return p if p.is_file() else None
    return None


def resolve_tokenizer(arg: str | Path) -> Path:
    """What a command-line tokenizer argument names: an existing path first, else an embedded
    tokenizer (``cl100k``), else a discovered one by its listed name (an Ollama ``model:tag``).
    Anything else is returned unchanged (loading it then says "no such file")."""
    p = Path(arg)
    if p.exists():
        return p
    found = embedded_path(str(arg))
    if found is not None:
        return found
    from .discovery import find_discovered

    d = find_discovered(str(arg))
    return d.path if d is not None else p
