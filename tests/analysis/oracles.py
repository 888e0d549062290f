"""Reference objects shared by the analysis tests (built from local bundle files, never downloaded)."""

from __future__ import annotations

import pytest
from support import ModuleCache, bundle_bytes, tiktoken_encoding

import tokviz

TIKTOKEN_BUNDLES = {
    "r50k_base": "gpt2/r50k_base.tiktoken",
    "cl100k_base": "cl100k_base/cl100k_base.tiktoken",
    "o200k_base": "o200k_base/o200k_base.tiktoken",
}
_PAIRS = ModuleCache()


def tiktoken_pair(name: str, tmp_path_factory: pytest.TempPathFactory) -> tuple:  # noqa: ARG001
    """(tokviz tokenizer, tiktoken.Encoding) from the same local rank file (support.tiktoken_encoding)."""
    if name not in _PAIRS:
        rel = TIKTOKEN_BUNDLES[name]
        _PAIRS[name] = (tokviz.load(bundle_bytes(rel)), tiktoken_encoding(rel))
    return _PAIRS[name]
