"""tokenizer.json files the offset tests need that are not shipped as bundles, built with the
reference libraries exactly as spec §0 of the wave-2 design notes says: GPT-2 and a Llama-3-like
tokenizer via transformers' ``TikTokenConverter`` (r50k / cl100k ranks; the converter's default
pattern is Llama-3's, and it sets ``ignore_merges`` like Llama-3), ALBERT via ``AlbertConverter``
on ``30k-clean.model``, the roberta-like setup of tokenizers #1300 (GPT-2 vocabulary,
``ByteLevel(add_prefix_space=True)``, ``RobertaProcessing(trim_offsets=True)``, two added tokens)
and a character BPE without unk token. Each builder writes into ``folder`` and returns the path.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support import bundle_path, require_module

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def _converter():  # noqa: ANN202
    require_module("transformers")
    from transformers.convert_slow_tokenizer import TikTokenConverter

    return TikTokenConverter


def gpt2_json(folder: Path) -> Path:
    out = folder / "gpt2.json"
    if not out.exists():
        tiktoken_converter = _converter()
        tiktoken_converter(vocab_file=str(bundle_path("gpt2/r50k_base.tiktoken")), pattern=GPT2_PATTERN).converted().save(str(out))
    return out


def llama3_like_json(folder: Path) -> Path:
    out = folder / "llama3-like.json"
    if not out.exists():
        tiktoken_converter = _converter()
        tiktoken_converter(vocab_file=str(bundle_path("cl100k_base/cl100k_base.tiktoken"))).converted().save(str(out))
    return out


_ALBERT_SCRIPT = """
import sys, types
import sentencepiece as spm
from transformers.convert_slow_tokenizer import AlbertConverter
model, out = sys.argv[1], sys.argv[2]
sp = spm.SentencePieceProcessor(model_file=model)
original = types.SimpleNamespace(vocab_file=model, do_lower_case=True, keep_accents=False, remove_space=True,
                                 convert_tokens_to_ids=sp.piece_to_id)
AlbertConverter(original).converted().save(out)
"""


def albert_json(folder: Path) -> Path:
    """ALBERT's tokenizer.json from ``AlbertConverter``, built in a subprocess: the converter's
    protobuf module registers ``sentencepiece_model.proto`` in the process-wide descriptor pool,
    and so does tokviz's .model reader, so both cannot be loaded in one process."""
    out = folder / "albert.json"
    if not out.exists():
        _converter()
        require_module("sentencepiece")
        model = str(bundle_path("albert-30k-clean/30k-clean.model"))
        subprocess.run([sys.executable, "-c", _ALBERT_SCRIPT, model, str(out)], check=True, capture_output=True)
    return out


def roberta_like_json(folder: Path) -> Path:
    out = folder / "roberta-like.json"
    if not out.exists():
        tk = require_module("tokenizers")
        t = tk.Tokenizer.from_file(str(gpt2_json(folder)))
        t.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=True)
        eot = ("<|endoftext|>", 50256)
        t.post_processor = tk.processors.RobertaProcessing(eot, eot, trim_offsets=True, add_prefix_space=True)
        t.add_tokens([tk.AddedToken("<device_name>"), tk.AddedToken("</device_name>")])
        t.save(str(out))
    return out


def char_bpe_json(folder: Path) -> Path:
    """A character BPE whose vocabulary lacks ``T`` and that has no unk token."""
    out = folder / "char-bpe.json"
    if not out.exists():
        tk = require_module("tokenizers")
        t = tk.Tokenizer(tk.models.BPE(vocab={"h": 0, "i": 1, "s": 2, "hi": 3}, merges=[("h", "i")]))
        t.pre_tokenizer = tk.pre_tokenizers.Whitespace()
        t.save(str(out))
    return out
