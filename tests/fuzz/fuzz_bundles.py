"""Small tokenizer files made from the real bundles, for the fuzz families to mutate.

A real tokenizer.json takes a tenth of a second to parse, which is too slow for tens of thousands
of mutated copies; these keep each bundle's whole pipeline (normalizer, pre-tokenizer,
post-processor, decoder, added tokens, model options) and cut the model to a few hundred
entries that stay consistent (every kept merge's parts and result are kept tokens).
"""

from __future__ import annotations

import base64
import json
import struct
from functools import lru_cache
from typing import Any

from support import build_charsmap, bundle_bytes

from tokviz.io import sentencepiece_model_pb2 as pb

JSON_BUNDLES = ("bert-base-uncased", "mistral-7b-v0.1", "qwen3", "claude-legacy")

#: a few SentencePiece-style normalization rules (NFKC-like), built into a real double array
CHARSMAP_RULES = {"ﬁ": "fi", "Ａ": "A", "①": "1", "\u3000": " ", "ｶﾞ": "ガ", "™": "TM", "…": "..."}


def _shrink_bpe(model: dict[str, Any], keep_ids: int, n_merges: int) -> dict[str, Any]:
    vocab: dict[str, int] = model["vocab"]
    kept = {t: i for t, i in vocab.items() if i < keep_ids or len(t) == 1}
    merges = []
    for m in model["merges"]:
        a, b = m.split(" ") if isinstance(m, str) else m
        result = a + b
        if a in kept and b in kept and result in vocab:
            kept[result] = vocab[result]
            merges.append(m)
            if len(merges) >= n_merges:
                break
    return {**model, "vocab": kept, "merges": merges}


@lru_cache(maxsize=None)
def json_bundle_text(name: str) -> str:
    """The small version of ``bundles/<name>/tokenizer.json`` as JSON text."""
    obj = json.loads(bundle_bytes(f"{name}/tokenizer.json"))
    model = obj["model"]
    if model.get("type", "BPE") == "BPE" and "merges" in model:
        obj["model"] = _shrink_bpe(model, 300, 400)
    elif model.get("type") == "WordPiece":
        # the specials and [unused*] come first; keep them, common words, and every 1-char piece
        keep = {t: i for t, i in model["vocab"].items() if i < 3000 or len(t.removeprefix("##")) == 1}
        obj["model"] = {**model, "vocab": keep}
    return json.dumps(obj, ensure_ascii=False)


def json_bundle(name: str) -> dict[str, Any]:
    """A fresh (mutable) copy of a small tokenizer.json."""
    return json.loads(json_bundle_text(name))


@lru_cache(maxsize=None)
def spm_pieces() -> tuple[tuple[str, float, int], ...]:
    """(piece, score, type) of the first pieces of SentencePiece's own test model."""
    proto = pb.ModelProto.FromString(bundle_bytes("sentencepiece-test/test_model.model"))
    return tuple((p.piece, p.score, int(p.type)) for p in proto.pieces[:300])


@lru_cache(maxsize=None)
def small_charsmap() -> bytes:
    return build_charsmap(CHARSMAP_RULES)


@lru_cache(maxsize=None)
def unigram_json_text() -> str:
    """An ALBERT/T5-style tokenizer.json (Precompiled + Metaspace + Unigram) from the test model."""
    pieces = spm_pieces()
    obj = {
        "version": "1.0",
        "added_tokens": [{"id": 0, "content": "<unk>", "special": True, "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False}],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(small_charsmap()).decode()},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
        ]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
        "post_processor": {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}},
                           {"SpecialToken": {"id": "</s>", "type_id": 0}}], "pair": None,
                           "special_tokens": {"</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}},
        "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": 0, "vocab": [[p, s] for p, s, _ in pieces], "byte_fallback": False},
    }
    return json.dumps(obj, ensure_ascii=False)


def all_json_bundles() -> list[str]:
    return [json_bundle_text(n) for n in JSON_BUNDLES] + [unigram_json_text()]


@lru_cache(maxsize=None)
def rank_file() -> bytes:
    """The first 400 ranks of GPT-2's r50k_base (a custom rank file: it needs a pattern)."""
    lines = bundle_bytes("gpt2/r50k_base.tiktoken").splitlines(keepends=True)
    return b"".join(lines[:400])


@lru_cache(maxsize=None)
def vocab_txt() -> bytes:
    lines = bundle_bytes("bert-base-uncased/vocab.txt").splitlines(keepends=True)
    return b"".join(lines[:1500])


# ---------------------------------------------------------------- raw protobuf, for .model files


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative int32/enum values are ten-byte varints in protobuf
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number: int, wire: int, payload: bytes) -> bytes:
    key = _varint(number << 3 | wire)
    if wire == 2:
        return key + _varint(len(payload)) + payload
    return key + payload


def encode_piece(piece: bytes, score: float | None, type_: int | None) -> bytes:
    """One ``ModelProto.pieces`` entry with any bytes as its piece (protobuf would refuse
    non-UTF-8 text through its API, but a file can hold it)."""
    body = _field(1, 2, piece)
    if score is not None:
        body += _field(2, 5, struct.pack("<f", score))
    if type_ is not None:
        body += _field(3, 0, _varint(type_))
    return _field(1, 2, body)


def model_file(
    pieces: list[tuple[bytes, float | None, int | None]],
    *,
    trainer: dict[str, Any] | None = None,
    normalizer: dict[str, Any] | None = None,
) -> bytes:
    """The bytes of a ``.model`` file: raw pieces, then the specs set through protobuf."""
    proto = pb.ModelProto()
    proto.trainer_spec.model_type = pb.TrainerSpec.UNIGRAM
    for k, v in (trainer or {}).items():
        setattr(proto.trainer_spec, k, v)
    proto.normalizer_spec.name = "fuzz"
    for k, v in (normalizer or {}).items():
        setattr(proto.normalizer_spec, k, v)
    return b"".join(encode_piece(*p) for p in pieces) + proto.SerializeToString()


def base_model_pieces() -> list[tuple[bytes, float | None, int | None]]:
    return [(p.encode("utf-8"), s, t) for p, s, t in spm_pieces()]


@lru_cache(maxsize=None)
def model_bytes() -> bytes:
    """A small valid Unigram .model with the small charsmap."""
    return model_file(base_model_pieces(), normalizer={"precompiled_charsmap": small_charsmap()})


def diamond_charsmap(depth: int) -> bytes:
    """A charsmap whose trie is a "diamond": every level's two children ('a', 'b') share one
    base, so ``depth`` levels hold 2**depth keys in a few hundred units (the hang of issue #11)."""
    units: dict[int, int] = {}
    bases = [256 * (i + 1) for i in range(depth + 1)]
    units[0] = bases[0] << 10  # the root: offset to the first base
    for level in range(depth):
        base, nxt = bases[level], bases[level + 1]
        last = level == depth - 1
        for label in (0x61, 0x62):
            p = base ^ label
            units[p] = label | (int(last) << 8) | ((p ^ nxt) << 10)
    units[bases[depth]] = 1 << 31  # the value of the deepest keys: offset 0 in the table
    size = max(units) + 1
    trie = struct.pack(f"<{size}I", *(units.get(i, 0) for i in range(size)))
    return struct.pack("<I", len(trie)) + trie + b"x\0"
