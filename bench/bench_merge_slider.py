"""Merge-slider scrubbing cost: the Train tab's step query on a 100 KB corpus (no Qt).

Trains byte-level BPE on the first 100 KB of botchan.txt, then times what the workers run for
one slider position, for consecutive steps (dragging / arrow keys) and random jumps:
``step`` = `compute_step` (merge k, the pair table before it, the 400 most frequent words
segmented after k merges) and ``probe`` (a sentence tokenized with the first k merges, which the
view-model runs in its own lane). Target: under 50 ms per step.

    /work/venv/bin/python bench/bench_merge_slider.py [--vocab 2000] [--kb 100] [--cutoff]

``--cutoff`` also times the rank-cutoff slider on real bundles (gpt2 r50k, cl100k, Qwen3): one
restricted tokenizer built for the 352-char sample text (only the merges that can occur in it)
and the text encoded, per slider position.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

from tokviz.gui.train_viewmodel import TrainConfig, TrainRun, _probe, compute_step, make_trainer
from tokviz.training.bpe import run_to_result

PROBE = "The lowest newest widest hugs: tokenization replays frozen ranks."


def _corpus(kb: int) -> str:
    for base in (Path(__file__).resolve().parents[2] / "shared" / "corpora", Path("/work/shared/corpora")):
        p = base / "botchan.txt"
        if p.is_file():
            return p.read_text(encoding="utf-8")[: kb * 1000]
    sys.exit("botchan.txt not found")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--kb", type=int, default=100)
    ap.add_argument("--algorithm", default="bpe-byte")
    args = ap.parse_args()
    text = _corpus(args.kb)
    cfg = TrainConfig(algorithm=args.algorithm, vocab_size=args.vocab)
    t0 = time.perf_counter()
    res = run_to_result(make_trainer(cfg).train(text.splitlines()))
    train_s = time.perf_counter() - t0
    run = TrainRun(cfg, res)
    n = res.num_merges
    print(f"corpus {len(text.encode('utf-8')):,} bytes, {len(res.words):,} distinct words; "
          f"{args.algorithm} to {args.vocab:,}: {n:,} merges in {train_s:.2f} s")
    compute_step(run, n, PROBE)  # first view builds the base tokenizer once (not a step cost)

    def timed(ks: list[int]) -> tuple[list[float], list[float]]:
        step, probe = [], []
        for k in ks:
            t = time.perf_counter()
            compute_step(run, k)
            t1 = time.perf_counter()
            _probe(run, k, PROBE)
            step.append((t1 - t) * 1000)
            probe.append((time.perf_counter() - t1) * 1000)
        return step, probe

    start = n // 3
    drag = timed(list(range(start, min(n, start + 60))))
    rng = random.Random(0)
    jumps = timed([rng.randrange(n + 1) for _ in range(40)])
    for name, pair in (("consecutive steps", drag), ("random jumps", jumps)):
        for part, xs in zip(("step", "probe"), pair):
            xs.sort()
            p95 = xs[int(0.95 * (len(xs) - 1))]
            print(f"{name:>18} {part:>5}: median {statistics.median(xs):5.1f} ms · p95 {p95:5.1f} ms · "
                  f"max {xs[-1]:5.1f} ms ({len(xs)} steps) · under 50 ms: {sum(x < 50 for x in xs)}/{len(xs)}")


def bench_cutoff() -> None:
    import tokviz
    from tokviz.engine.cutoff import RankCutoff
    from tokviz.gui.catalog import sample_text
    from tokviz.resources import resource_path

    text = sample_text()
    for rel in ("gpt2/r50k_base.tiktoken.gz", "cl100k_base/cl100k_base.tiktoken.gz", "qwen3/tokenizer.json.gz"):
        tok = tokviz.load(resource_path("bundles", *rel.split("/")))
        t = time.perf_counter()
        rc = RankCutoff(tok)
        prep = (time.perf_counter() - t) * 1000
        rng = random.Random(0)
        xs = []
        for k in [rng.randrange(rc.n) for _ in range(8)]:
            t = time.perf_counter()
            rc.tokenizer(k, text=text).encode(text, add_special_tokens=False)
            xs.append((time.perf_counter() - t) * 1000)
        print(f"cutoff {rel.split('/')[0]:>12}: prepare {prep:6.0f} ms once · per position median "
              f"{statistics.median(xs):6.1f} ms · max {max(xs):6.1f} ms ({rc.n:,} merges)")


if __name__ == "__main__":
    if "--cutoff" in sys.argv:
        sys.argv.remove("--cutoff")
        bench_cutoff()
    main()
