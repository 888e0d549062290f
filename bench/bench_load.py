"""Load time and memory of tokenizer files: tokviz vs the reference library, one subprocess each.

Every measurement runs in a fresh interpreter so that RSS deltas are honest: the child imports
the library, records its RSS, loads the file, records time and RSS again (and the peak), then
encodes one short text so lazily built structures are counted too. Targets (issue 2): o200k
loads in under 1 s and under 150 MB RSS.

    python bench/bench_load.py                 # o200k, cl100k, r50k
    python bench/bench_load.py --all           # every bundle kind: rank files, tokenizer.json,
                                               # SentencePiece .model, WordPiece vocab.txt
    python bench/bench_load.py --repeat 3

A GGUF file's vocabulary has no reference loader installed (llama.cpp), so GGUF is not here.

The children import compiled bytecode, as an installed package does: tokviz is byte-compiled
into a temporary ``PYTHONPYCACHEPREFIX`` first (a shell with ``PYTHONDONTWRITEBYTECODE`` set
would otherwise recompile every module that a load imports, in every run, and count it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import shared_dir  # noqa: E402

_CHILD = r"""
import gc, json, os, resource, sys, time
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
lib, path = sys.argv[1], sys.argv[2]
FIRST = "Hello world, 世界! Pneumonoultramicroscopic xyzzyq"  # needs merges: builds lazy structures
c = time.process_time()
if lib == "tokviz":
    import tokviz
    # every module a load may import (the first load of a process imports them otherwise), as the
    # reference's import brings all of its own: the loaders and each component family's types
    import importlib
    import tokviz.io.clip, tokviz.io.detect, tokviz.io.hf_json, tokviz.io.sentencepiece, tokviz.io.tiktoken_ranks
    import tokviz.io.wordpiece_vocab, tokviz.io.gguf
    from tokviz.engine import decoders, models, normalizers, pre_tokenizers, processors
    for family in (decoders, models, normalizers, pre_tokenizers, processors):
        for target in family.TYPES.values():
            importlib.import_module(target.partition(":")[0])
    c_import = time.process_time() - c
    gc.collect(); before = rss()
    t = time.perf_counter(); c = time.process_time(); tok = tokviz.load(path)
    t_load = time.perf_counter() - t; c_load = time.process_time() - c
    after_load = rss()
    c = time.process_time(); tok.encode(FIRST); c_first = time.process_time() - c
elif lib == "tiktoken":
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    c_import = time.process_time() - c
    from tokviz.io.tiktoken_ranks import preset_for
    preset = preset_for(open(path, "rb").read())
    gc.collect(); before = rss()
    t = time.perf_counter(); c = time.process_time()
    enc = tiktoken.Encoding(preset.name, pat_str=preset.pattern, mergeable_ranks=load_tiktoken_bpe(path),
                            special_tokens=dict(preset.special_tokens))
    t_load = time.perf_counter() - t; c_load = time.process_time() - c
    after_load = rss()
    c = time.process_time(); enc.encode(FIRST); c_first = time.process_time() - c
elif lib == "sentencepiece":
    import sentencepiece as spm
    c_import = time.process_time() - c
    gc.collect(); before = rss()
    t = time.perf_counter(); c = time.process_time(); sp = spm.SentencePieceProcessor(model_file=path)
    t_load = time.perf_counter() - t; c_load = time.process_time() - c
    after_load = rss()
    c = time.process_time(); sp.encode(FIRST); c_first = time.process_time() - c
elif lib == "wordpiece":
    import tokenizers
    c_import = time.process_time() - c
    gc.collect(); before = rss()
    t = time.perf_counter(); c = time.process_time(); tk = tokenizers.BertWordPieceTokenizer(path, lowercase=True)
    t_load = time.perf_counter() - t; c_load = time.process_time() - c
    after_load = rss()
    c = time.process_time(); tk.encode(FIRST); c_first = time.process_time() - c
else:
    import tokenizers
    c_import = time.process_time() - c
    gc.collect(); before = rss()
    t = time.perf_counter(); c = time.process_time(); tk = tokenizers.Tokenizer.from_file(path)
    t_load = time.perf_counter() - t; c_load = time.process_time() - c
    after_load = rss()
    c = time.process_time(); tk.encode(FIRST); c_first = time.process_time() - c
gc.collect()
print(json.dumps({"import_s": c_import, "load_s": t_load, "cpu_s": c_load, "first_s": c_first, "rss_load": after_load - before,
                  "rss_used": rss() - before,
                  "peak": peak() - before}))
"""

TIKTOKEN_FILES = {
    "o200k_base": "o200k_base/o200k_base.tiktoken",
    "cl100k_base": "cl100k_base/cl100k_base.tiktoken",
    "gpt2 (r50k)": "gpt2/r50k_base.tiktoken",
}
SP_FILES = {
    "albert-30k (spm)": "albert-30k-clean/30k-clean.model",
    "mistral-7b (spm)": "mistral-7b-v0.1/tokenizer.model",
    "spm test_model": "sentencepiece-test/test_model.model",
}
WORDPIECE_FILES = {
    "bert vocab.txt": "bert-base-uncased/vocab.txt",
}
HF_FILES = {
    "qwen3": "qwen3/tokenizer.json",
    "claude-legacy": "claude-legacy/tokenizer.json",
    "mistral-7b-v0.1": "mistral-7b-v0.1/tokenizer.json",
    "bert-base-uncased": "bert-base-uncased/tokenizer.json",
}


def compiled_env(cache_dir: str) -> dict[str, str]:
    """The children's environment: bytecode read from (and written to) ``cache_dir``, with
    tokviz compiled there already."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache_dir
    package = Path(__file__).resolve().parent.parent / "tokviz"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], env=env, check=True)
    return env


# issue 24: the most tokviz may take, as a multiple of the reference's load time and RSS growth
TARGETS = {"tiktoken": 1.0, "tokenizers": 1.0, "wordpiece": 1.0, "sentencepiece": 2.0}


def measure(lib: str, path: Path, repeat: int, env: dict[str, str]) -> dict[str, float]:
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, lib, str(path)], capture_output=True, text=True, check=False, env=env
        )
        if out.returncode != 0:
            raise SystemExit(f"{lib} on {path}: {out.stderr.strip().splitlines()[-1]}")
        runs.append(json.loads(out.stdout))
    # median of each figure over the repeats
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description="tokviz load time and RSS vs the reference library")
    ap.add_argument("--repeat", type=int, default=1, help="subprocess runs per measurement (median)")
    ap.add_argument("--all", action="store_true", help="every bundle kind (tokenizer.json, .model, vocab.txt too)")
    ap.add_argument("--only", default="", help="only the rows whose name contains this text")
    args = ap.parse_args()
    bundles = shared_dir() / "bundles"
    rows = [(name, "tiktoken", bundles / rel) for name, rel in TIKTOKEN_FILES.items()]
    if args.all:
        rows += [(name, "tokenizers", bundles / rel) for name, rel in HF_FILES.items()]
        rows += [(name, "sentencepiece", bundles / rel) for name, rel in SP_FILES.items()]
        rows += [(name, "wordpiece", bundles / rel) for name, rel in WORDPIECE_FILES.items()]
    rows = [r for r in rows if args.only in r[0]]
    mb = 1024 * 1024
    cache = tempfile.TemporaryDirectory(prefix="bench_load_pyc_")
    env = compiled_env(cache.name)
    backend = subprocess.run(
        [sys.executable, "-c", "from tokviz.engine import kernels; print(kernels.backend())"],
        capture_output=True, text=True, check=True, env=env,
    ).stdout.strip()
    print(f"tokviz backend: {backend}")
    print(
        f"{'tokenizer':<18} {'import':>7} {'tokviz wall':>11} {'cpu':>7} {'+1st enc':>8} {'import':>7} {'ref wall':>9} "
        f"{'cpu':>7} {'+1st enc':>8} {'ratio':>6}   {'tokviz RSS':>10} {'peak':>8} {'ref RSS':>8} {'ratio':>6}  target"
    )
    for name, ref_lib, path in rows:
        ours = measure("tokviz", path, args.repeat, env)
        ref = measure(ref_lib, path, args.repeat, env)
        ours_ready = ours["cpu_s"] + ours["first_s"]
        ref_ready = ref["cpu_s"] + ref["first_s"]
        t_ratio = ours_ready / ref_ready
        m_ratio = ours["rss_used"] / max(ref["rss_used"], 1)
        limit = TARGETS[ref_lib]
        verdict = "met" if t_ratio <= limit and m_ratio <= limit else "MISSED"
        print(
            f"{name:<18} {ours['import_s']:>6.3f}s {ours['load_s']:>10.3f}s {ours['cpu_s']:>6.3f}s {ours['first_s']:>7.3f}s "
            f"{ref['import_s']:>6.3f}s {ref['load_s']:>8.3f}s {ref['cpu_s']:>6.3f}s {ref['first_s']:>7.3f}s "
            f"{t_ratio:>5.1f}x   "
            f"{ours['rss_used'] / mb:>8.1f}MB {ours['peak'] / mb:>6.1f}MB {ref['rss_used'] / mb:>6.1f}MB "
            f"{m_ratio:>5.1f}x  <= {limit:g}x {verdict}"
        )
        if name == "o200k_base":
            ok_t = ours_ready < 1.0
            ok_m = ours["rss_used"] < 150 * mb and ours["peak"] < 150 * mb
            verdict_t, verdict_m = ("met" if ok else "MISSED" for ok in (ok_t, ok_m))
            print(
                f"{'':<18} target < 1 s (cpu, load + first encode): {verdict_t}; "
                f"target < 150 MB: {verdict_m}"
            )
    print(
        "import = CPU time of importing the library (tokviz: every module a load may import), not in the load;\n"
        "wall = elapsed load time; cpu = CPU time of the load (steadier on a busy machine);\n"
        "+1st enc = CPU time of the first encode that needs merges (lazily built structures);\n"
        "ratio = tokviz / reference CPU time of load + first encode (lower is better);\n"
        "RSS = resident memory added by the load and a first encode; peak = high-water mark during it;\n"
        "target = issue 24's bound on both ratios for the kind. Medians over --repeat subprocess runs."
    )
    cache.cleanup()


if __name__ == "__main__":
    main()
