"""Test data: GPT-2's vocab.json + merges.txt rebuilt from the r50k rank file.

The shared bundles hold GPT-2 only as a tiktoken rank file. GPT-2's original merges are
recoverable from it: merge number i created the token of rank 256 + i, and its two parts are
what rank-BPE over that token's bytes ends with when only lower ranks may merge. The result is
the published encoder.json/vocab.bpe pair (same ids, same merge order), written in the
byte-level spelling HF uses (``Ġ`` for a space).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from tokviz.engine.byte_alphabet import bytes_to_proxy

__all__ = ["write_gpt2_files"]


def _split_by_rank(token: bytes, ranks: dict[bytes, int], limit: int) -> list[bytes]:
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 2:
        best, best_i = limit, -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1], limit)
            if r < best:
                best, best_i = r, i
        if best_i < 0:
            break
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    return parts


def write_gpt2_files(rank_file: bytes, folder: Path) -> Path:
    """Write vocab.json and merges.txt into ``folder``; return the vocab.json path."""
    ranks = {
        base64.b64decode(tok): int(rank)
        for tok, rank in (line.split() for line in rank_file.splitlines() if line)
    }
    merges: list[str] = []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) < 2:
            continue
        parts = _split_by_rank(token, ranks, rank)
        if len(parts) != 2:
            raise ValueError(f"token {token!r} (rank {rank}) is not a merge of two lower-ranked tokens")
        merges.append(f"{bytes_to_proxy(parts[0])} {bytes_to_proxy(parts[1])}")
    vocab = {bytes_to_proxy(t): r for t, r in ranks.items()}
    vocab["<|endoftext|>"] = max(ranks.values()) + 1
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    return folder / "vocab.json"
