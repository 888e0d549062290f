"""Normalizer and pre-tokenizer throughput on the mixed corpus: tokviz vs HF tokenizers.

For each component configuration (the ones the real bundles use, plus the other HF types) both
implementations run on every document of the mixed corpus (bench/corpus.py) in this process:
HF's ``pre_tokenize_str`` / ``normalize_str`` versus tokviz's ``pre_tokenize`` / ``normalize`` on
a `NormalizedText` (the pipeline's call, alignment included). Prints ms per MB of UTF-8 and the
ratio tokviz / HF (lower is better; 1.0 = as fast as Rust).

The first table is the split alone for the published patterns: the pieces the pipeline takes
(`tiling_chunks`, or `isolated_chunks` where matches leave gaps) from the native scanner
(tokviz.engine._scan) against the same call through the `regex` module (the pattern's
`HFRegex` with its scanner off), with tiktoken's whole ``encode_ordinary`` of the same text as a
yardstick for the rank-file patterns.

Run::

    python bench/bench_pre_tokenizers.py                      # full corpus (~2.9 MB)
    python bench/bench_pre_tokenizers.py --scale 0.2          # a fifth of each part
    python bench/bench_pre_tokenizers.py --corpus heldout     # the held-out mix
    python bench/bench_pre_tokenizers.py --split-only
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import corpus_named, shared_dir  # noqa: E402

from tokviz.engine.normalizers import normalizer_from_json  # noqa: E402
from tokviz.engine.pre_tokenizers import pre_tokenizer_from_json  # noqa: E402
from tokviz.engine.text import NormalizedText  # noqa: E402

QWEN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

PRE_TOKENIZERS: dict[str, dict] = {
    "ByteLevel (claude-legacy)": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True},
    "Split+ByteLevel (qwen3)": {
        "type": "Sequence",
        "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": QWEN}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        ],
    },
    "Metaspace": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
    "BertPreTokenizer": {"type": "BertPreTokenizer"},
    "Whitespace": {"type": "Whitespace"},
    "WhitespaceSplit": {"type": "WhitespaceSplit"},
    "Punctuation": {"type": "Punctuation", "behavior": "Isolated"},
    "Digits": {"type": "Digits", "individual_digits": True},
    "UnicodeScripts": {"type": "UnicodeScripts"},
}

NORMALIZERS: dict[str, dict] = {
    "NFKC (claude-legacy)": {"type": "NFKC"},
    "NFC (qwen3)": {"type": "NFC"},
    "Prepend+Replace (mistral)": {
        "type": "Sequence",
        "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        ],
    },
    "BertNormalizer (bert)": {
        "type": "BertNormalizer",
        "clean_text": True,
        "handle_chinese_chars": True,
        "strip_accents": None,
        "lowercase": True,
    },
    "NFD": {"type": "NFD"},
    "Lowercase": {"type": "Lowercase"},
}


def _hf_component(kind: str, config: dict):  # noqa: ANN202
    import tokenizers

    d = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": config if kind == "normalizer" else None,
        "pre_tokenizer": config if kind == "pre_tokenizer" else None,
        "post_processor": None,
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"},
    }
    tok = tokenizers.Tokenizer.from_str(json.dumps(d))
    return tok.normalizer if kind == "normalizer" else tok.pre_tokenizer


def best_of(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def _split_patterns() -> dict[str, tuple[str, str | None]]:
    """name -> (pattern as the pipeline compiles it, rank file for the tiktoken yardstick)."""
    from tokviz.engine.patterns import LLAMA3_PATTERN, QWEN2_PATTERN
    from tokviz.engine.pre_tokenizers.byte_level import GPT2_PATTERN
    from tokviz.io import gguf_pre, tiktoken_ranks as tr

    return {
        "gpt2 (ByteLevel)": (GPT2_PATTERN, None),
        "r50k (rank file)": (tr.engine_pattern(tr.R50K_PATTERN), "gpt2/r50k_base.tiktoken"),
        "cl100k (rank file)": (tr.engine_pattern(tr.CL100K_PATTERN), "cl100k_base/cl100k_base.tiktoken"),
        "o200k (rank file)": (tr.engine_pattern(tr.O200K_PATTERN), "o200k_base/o200k_base.tiktoken"),
        "llama3 (tokenizer.json)": (LLAMA3_PATTERN, None),
        "qwen2/3 (tokenizer.json)": (QWEN2_PATTERN, None),
        "deepseek-v3 main split": (gguf_pre.pre_spec("deepseek-v3").regexes[2], None),
        "deepseek-v3 digits split": (gguf_pre.pre_spec("deepseek-v3").regexes[0], None),
    }


def split_table(docs: list[str], mb: float, repeat: int) -> None:
    """The split alone: native scanner vs `regex`, same pieces (checked), ms per MB."""
    import regex
    from bench_encode import tiktoken_ref

    from tokviz.engine.patterns import HFRegex, compile_pattern, isolated_chunks, tiling_chunks

    print(f"{'split pattern':28} {'native ms/MB':>13} {'regex ms/MB':>12} {'regex/native':>13} {'tiktoken encode ms/MB':>22}")
    for name, (pattern, rank_file) in _split_patterns().items():
        fast = compile_pattern(pattern)
        slow = HFRegex(regex.compile(pattern, regex.MULTILINE | regex.VERSION0), native=None)
        if fast.native is None:
            print(f"{name:28} no native scanner (not built, or TOKVIZ_PURE_PYTHON=1)")
            continue

        def cut(compiled: HFRegex) -> list:
            return [tiling_chunks(compiled, d) or isolated_chunks(compiled, d) for d in docs]

        if cut(fast) != cut(slow):
            raise SystemExit(f"{name}: the native scanner and regex disagree")
        t_fast = best_of(lambda: cut(fast), repeat)  # noqa: B023
        t_slow = best_of(lambda: cut(slow), repeat)  # noqa: B023
        yardstick = ""
        if rank_file:
            enc = tiktoken_ref(shared_dir() / "bundles" / rank_file)
            t_ref = best_of(lambda: [enc.encode_ordinary(d) for d in docs], repeat)  # noqa: B023
            yardstick = f"{t_ref * 1e3 / mb:22.0f}"
        print(f"{name:28} {t_fast * 1e3 / mb:13.0f} {t_slow * 1e3 / mb:12.0f} {t_slow / t_fast:13.1f} {yardstick}")
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of each corpus part (default: all)")
    ap.add_argument("--repeat", type=int, default=2, help="runs per measurement; the best is kept")
    ap.add_argument("--corpus", choices=("mixed", "heldout"), default="mixed", help="which mix (bench/corpus.py)")
    ap.add_argument("--split-only", action="store_true", help="only the split table")
    args = ap.parse_args()
    corpus = corpus_named(args.corpus, scale=args.scale)
    docs = [t for _, t in corpus.parts]
    mb = sum(len(t.encode("utf-8")) for t in docs) / 1e6
    print(corpus.describe())
    split_table(docs, mb, args.repeat)
    if args.split_only:
        return
    print(f"{'component':34} {'tokviz ms/MB':>13} {'HF ms/MB':>10} {'ratio':>7}")

    for name, config in PRE_TOKENIZERS.items():
        ours = pre_tokenizer_from_json(config)
        ref = _hf_component("pre_tokenizer", config)
        pieces = [NormalizedText.identity(t) for t in docs]
        t_ours = best_of(lambda: [ours.pre_tokenize([p]) for p in pieces], args.repeat)  # noqa: B023
        t_ref = best_of(lambda: [ref.pre_tokenize_str(t) for t in docs], args.repeat)  # noqa: B023
        print(f"{name:34} {t_ours * 1e3 / mb:13.0f} {t_ref * 1e3 / mb:10.0f} {t_ours / t_ref:7.2f}")

    for name, config in NORMALIZERS.items():
        ours = normalizer_from_json(config)
        ref = _hf_component("normalizer", config)
        pieces = [NormalizedText.identity(t) for t in docs]
        t_ours = best_of(lambda: [ours.normalize(p) for p in pieces], args.repeat)  # noqa: B023
        t_ref = best_of(lambda: [ref.normalize_str(t) for t in docs], args.repeat)  # noqa: B023
        print(f"{name:34} {t_ours * 1e3 / mb:13.0f} {t_ref * 1e3 / mb:10.0f} {t_ours / t_ref:7.2f}")


if __name__ == "__main__":
    main()
