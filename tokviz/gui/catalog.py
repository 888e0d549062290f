"""The tokenizer picker's entries: embedded bundles, locally discovered files, recent files.

No Qt here; the main window turns entries into combo-box items.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..io.discovery import discover
from ..resources import resource_path

__all__ = ["Entry", "embedded_bundles", "local_entries", "DEFAULT_BUNDLE", "sample_text"]

# Bundle file -> display name. Files missing from resources/bundles are simply not listed.
_BUNDLES: list[tuple[str, str]] = [
    ("cl100k_base/cl100k_base.tiktoken.gz", "cl100k_base — GPT-4 (tiktoken)"),
    ("o200k_base/o200k_base.tiktoken.gz", "o200k_base — GPT-4o (tiktoken)"),
    ("gpt2/r50k_base.tiktoken.gz", "r50k_base — GPT-2 (tiktoken)"),
    ("qwen3/tokenizer.json.gz", "Qwen3 (tokenizer.json)"),
    ("claude-legacy/tokenizer.json.gz", "Claude legacy (tokenizer.json)"),
    ("mistral-7b-v0.1/tokenizer.json.gz", "Mistral 7B v0.1 (tokenizer.json)"),
    ("mistral-7b-v0.1/tokenizer.model.gz", "Mistral 7B v0.1 (SentencePiece .model)"),
    ("bert-base-uncased/tokenizer.json.gz", "BERT base uncased (tokenizer.json)"),
    ("bert-base-uncased/vocab.txt.gz", "BERT base uncased (vocab.txt)"),
    ("albert-30k-clean/30k-clean.model.gz", "ALBERT 30k clean (SentencePiece Unigram)"),
    ("sentencepiece-test/test_model.model.gz", "SentencePiece test model"),
    ("sentencepiece-test/test_ja_model.model.gz", "SentencePiece test model (Japanese)"),
]
DEFAULT_BUNDLE = "cl100k_base/cl100k_base.tiktoken.gz"


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    path: Path
    group: str  # "Embedded", "Local cache", "Recent"


def embedded_bundles() -> list[Entry]:
    out = []
    for rel, name in _BUNDLES:
        p = resource_path("bundles", *rel.split("/"))
        if p.is_file():
            out.append(Entry(name, p, "Embedded"))
    return out


def local_entries() -> list[Entry]:
    return [Entry(d.name, d.path, "Local cache") for d in discover()]


def sample_text() -> str:
    p = resource_path("samples", "mixed.txt")
    try:
        return p.read_text(encoding="utf-8")
    except OSError:
        return "Hello, world! 你好，世界 🙂"
