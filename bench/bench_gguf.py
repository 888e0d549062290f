"""GGUF tokenizers: load time against the bare ``gguf`` reader, encode speed against the
equivalent published tokenizer.

* load: ``tokviz.load(file.gguf)`` vs ``gguf.GGUFReader(file)`` plus reading the token list
  (what any GGUF consumer pays before it can tokenize); ratio = reader time / tokviz time;
* encode: the mixed corpus (bench/corpus.py, scaled) with the GGUF tokenizer, cold (fresh
  load) and warm (second run), vs the same vocabulary's reference: tiktoken r50k for gpt-2, HF
  tokenizers on qwen3's tokenizer.json for qwen2, on bert-base-uncased's for bert-bge.
  Ratio = reference CPU time / tokviz CPU time (1.0 = as fast; 0.1 = ten times slower).

    python bench/bench_gguf.py [--scale 0.05] [--file other.gguf ...]

``--file`` adds GGUF files (e.g. llama.cpp's ggml-vocab-gemma-4.gguf from the fixture cache) to the
load and encode columns; they have no reference column.
"""

from __future__ import annotations

import argparse
import base64
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import mixed_corpus, shared_dir  # noqa: E402

import tokviz  # noqa: E402

GGUFS = ["gpt-2", "llama-spm", "bert-bge", "qwen2", "phi-3"]
REFERENCE = {"gpt-2": "tiktoken:gpt2/r50k_base.tiktoken", "qwen2": "hf:qwen3/tokenizer.json",
             "bert-bge": "hf:bert-base-uncased/tokenizer.json"}


def cpu(fn):  # noqa: ANN001, ANN201
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def reader_time(path: Path) -> float:
    import gguf

    def run():  # noqa: ANN202
        r = gguf.GGUFReader(str(path))
        return r.fields["tokenizer.ggml.tokens"].contents()

    return cpu(run)[0]


def reference(spec: str, bundles: Path):  # noqa: ANN201
    kind, rel = spec.split(":", 1)
    data = (bundles / rel).read_bytes()
    if kind == "hf":
        import tokenizers

        tk = tokenizers.Tokenizer.from_str(data.decode("utf-8"))
        return lambda text: tk.encode(text, add_special_tokens=False).ids
    import tiktoken

    from tokviz.io.tiktoken_ranks import preset_for

    preset = preset_for(data)
    ranks = {base64.b64decode(t): int(r) for t, r in (ln.split() for ln in data.splitlines() if ln)}
    enc = tiktoken.Encoding("r50k", pat_str=preset.pattern, mergeable_ranks=ranks,
                            special_tokens=dict(preset.special_tokens))
    return lambda text: enc.encode(text, allowed_special="all")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=0.05, help="fraction of the mixed corpus to encode")
    ap.add_argument("--file", type=Path, action="append", default=[], help="another GGUF file to time")
    args = ap.parse_args()
    shared = shared_dir()
    if shared is None:
        sys.exit("bench needs ../shared/bundles")
    bundles = shared / "bundles"
    text = mixed_corpus().text
    text = text[: int(len(text) * args.scale)]
    print(f"corpus: {len(text):,} chars")
    print(f"{'file':<12} {'load s':>8} {'reader s':>9} {'ratio':>6} {'cold s':>8} {'warm s':>8} {'ref s':>7} "
          f"{'cold':>6} {'warm':>6}")
    files = [(name, bundles / "gguf" / f"ggml-vocab-{name}.gguf") for name in GGUFS]
    files += [(p.stem.removeprefix("ggml-vocab-"), p) for p in args.file]
    for name, path in files:
        t_load, tok = cpu(lambda: tokviz.load(path))  # noqa: B023
        t_reader = reader_time(path)
        t_cold, ids = cpu(lambda: tok.encode(text, add_special_tokens=False).ids)  # noqa: B023
        t_warm, _ = cpu(lambda: tok.encode(text, add_special_tokens=False).ids)  # noqa: B023
        row = f"{name:<12} {t_load:8.2f} {t_reader:9.2f} {t_reader / t_load:6.2f} {t_cold:8.2f} {t_warm:8.2f}"
        if name in REFERENCE:
            ref = reference(REFERENCE[name], bundles)
            t_ref, want = cpu(lambda: ref(text))  # noqa: B023
            same = "" if want == ids or name == "qwen2" else "  (ids differ!)"
            row += f" {t_ref:7.2f} {t_ref / t_cold:6.2f} {t_ref / t_warm:6.2f}{same}"
        print(row)


if __name__ == "__main__":
    main()
