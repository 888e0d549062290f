"""Reference objects shared by the analysis tests (built from local bundle files, never downloaded)."""

from __future__ import annotations

import pytest
from support import bundle_bytes, require_module

import tokviz
from tokviz.io.tiktoken_ranks import preset_for

TIKTOKEN_BUNDLES = {
    "r50k_base": "gpt2/r50k_base.tiktoken",
    "cl100k_base": "cl100k_base/cl100k_base.tiktoken",
    "o200k_base": "o200k_base/o200k_base.tiktoken",
}
_PAIRS: dict[str, tuple] = {}


def tiktoken_pair(name: str, tmp_path_factory: pytest.TempPathFactory) -> tuple:
    """(tokviz tokenizer, tiktoken.Encoding) from the same local rank file."""
    if name not in _PAIRS:
        tiktoken = require_module("tiktoken")
        from tiktoken.load import load_tiktoken_bpe

        data = bundle_bytes(TIKTOKEN_BUNDLES[name])
        preset = preset_for(data)
        path = tmp_path_factory.mktemp(name) / "ranks.tiktoken"
        path.write_bytes(data)
        ref = tiktoken.Encoding(preset.name, pat_str=preset.pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
                                special_tokens=dict(preset.special_tokens), explicit_n_vocab=preset.explicit_n_vocab)
        _PAIRS[name] = (tokviz.load(data), ref)
    return _PAIRS[name]
