"""Load time and memory of tokenizer files: tokviz vs the reference library, one subprocess each.

Every measurement runs in a fresh interpreter so that RSS deltas are honest: the child imports
the library, records its RSS, loads the file, records time and RSS again (and the peak), then
encodes one short text so lazily built structures are counted too. Targets (issue 2): o200k
loads in under 1 s and under 150 MB RSS.

    python bench/bench_load.py                 # o200k, cl100k, r50k (+ HF bundles with --all)
    python bench/bench_load.py --repeat 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
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
if lib == "tokviz":
    import tokviz
    gc.collect(); before = rss()
    t = time.perf_counter(); c = time.process_time(); tok = tokviz.load(path)
    t_load = time.perf_counter() - t; c_load = time.process_time() - c
    after_load = rss()
    tok.encode("Hello world, 世界!")
elif lib == "tiktoken":
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tokviz.io.tiktoken_ranks import preset_for
    preset = preset_for(open(path, "rb").read())
    gc.collect(); before = rss()
    t = time.perf_counter(); c = time.process_time()
    enc = tiktoken.Encoding(preset.name, pat_str=preset.pattern, mergeable_ranks=load_tiktoken_bpe(path),
                            special_tokens=dict(preset.special_tokens))
    t_load = time.perf_counter() - t; c_load = time.process_time() - c
    after_load = rss()
    enc.encode("Hello world, 世界!")
else:
    import tokenizers
    gc.collect(); before = rss()
    t = time.perf_counter(); c = time.process_time(); tk = tokenizers.Tokenizer.from_file(path)
    t_load = time.perf_counter() - t; c_load = time.process_time() - c
    after_load = rss()
    tk.encode("Hello world, 世界!")
gc.collect()
print(json.dumps({"load_s": t_load, "cpu_s": c_load, "rss_load": after_load - before,
                  "rss_used": rss() - before,
                  "peak": peak() - before}))
"""

TIKTOKEN_FILES = {
    "o200k_base": "o200k_base/o200k_base.tiktoken",
    "cl100k_base": "cl100k_base/cl100k_base.tiktoken",
    "gpt2 (r50k)": "gpt2/r50k_base.tiktoken",
}
HF_FILES = {
    "qwen3": "qwen3/tokenizer.json",
    "claude-legacy": "claude-legacy/tokenizer.json",
    "mistral-7b-v0.1": "mistral-7b-v0.1/tokenizer.json",
    "bert-base-uncased": "bert-base-uncased/tokenizer.json",
}


def measure(lib: str, path: Path, repeat: int) -> dict[str, float]:
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, lib, str(path)], capture_output=True, text=True, check=False
        )
        if out.returncode != 0:
            raise SystemExit(f"{lib} on {path}: {out.stderr.strip().splitlines()[-1]}")
        runs.append(json.loads(out.stdout))
    # median of each figure over the repeats
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description="tokviz load time and RSS vs the reference library")
    ap.add_argument("--repeat", type=int, default=1, help="subprocess runs per measurement (median)")
    ap.add_argument("--all", action="store_true", help="also the tokenizer.json bundles (vs HF tokenizers)")
    args = ap.parse_args()
    bundles = shared_dir() / "bundles"
    rows = [(name, "tiktoken", bundles / rel) for name, rel in TIKTOKEN_FILES.items()]
    if args.all:
        rows += [(name, "tokenizers", bundles / rel) for name, rel in HF_FILES.items()]
    mb = 1024 * 1024
    print(
        f"{'tokenizer':<18} {'tokviz wall':>11} {'cpu':>7} {'ref wall':>9} {'cpu':>7} {'ratio':>6}   "
        f"{'tokviz RSS':>10} {'peak':>8} {'ref RSS':>8}"
    )
    for name, ref_lib, path in rows:
        ours = measure("tokviz", path, args.repeat)
        ref = measure(ref_lib, path, args.repeat)
        print(
            f"{name:<18} {ours['load_s']:>10.3f}s {ours['cpu_s']:>6.3f}s {ref['load_s']:>8.3f}s "
            f"{ref['cpu_s']:>6.3f}s {ours['cpu_s'] / ref['cpu_s']:>5.1f}x   "
            f"{ours['rss_used'] / mb:>8.1f}MB {ours['peak'] / mb:>6.1f}MB {ref['rss_used'] / mb:>6.1f}MB"
        )
        if name == "o200k_base":
            ok_t = ours["cpu_s"] < 1.0
            ok_m = ours["rss_used"] < 150 * mb and ours["peak"] < 150 * mb
            verdict_t, verdict_m = ("met" if ok else "MISSED" for ok in (ok_t, ok_m))
            print(f"{'':<18} target < 1 s (cpu): {verdict_t}; target < 150 MB: {verdict_m}")
    print(
        "wall = elapsed load time, cpu = CPU time of the load (steadier on a busy machine);\n"
        "ratio = tokviz / reference CPU time (lower is better); RSS = resident memory added by the load\n"
        "and a first encode; peak = high-water mark during it. Medians over --repeat subprocess runs."
    )

if __name__ == "__main__":
    main()
