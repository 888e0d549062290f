"""Corpus throughput on the executor seam: MB/s of tokviz's corpus jobs in one process, on 1 and 2
local processes and on a 2-worker Dask LocalCluster, beside HF tokenizers' ``encode_batch`` and
tiktoken's ``encode_ordinary_batch`` on the same shards; and the peak memory of a corpus command
on one huge line.

* shards: the mixed corpus (bench/corpus.py; ``--scale`` copies of it) written as 8 text files,
  read in ``lines`` mode; every run reads the files (cold page cache aside) and loads its
  tokenizers (a pool's workers load their own: that start-up is in the wall time, and shown).
* jobs: ``counts`` (the audit's token counts: encode + an id histogram, the leanest job) and
  ``stats`` (the C9 statistics of ``tokviz compare --file --stats``: decode for the lossless
  check, per-script sweep, cut sets), each for one tokenizer: cl100k (a tiktoken file) and
  Mistral 7B (a tokenizer.json).
* references: tiktoken ``encode_ordinary_batch`` (cl100k) and HF ``encode_batch`` (Mistral's
  tokenizer.json, ``add_special_tokens=False``) over the same lines, with 1 and 2 threads.
* memory (``--memory``): peak RSS of the whole process tree of ``tokviz compare --file`` on a file
  that is one line of 8 and of 32 MB (``--mode whole``: the line is cut into pieces), and of
  ``tokviz lint --corpus`` on a JSON line of 50 MB with ``--max-record-mb 16`` (refused) and
  its default (parsed, then linted by pieces: stopped after 60 s, lint's speed being the limit).

    python bench/bench_corpus.py                 # 2 copies of the mixed corpus (~6 MB)
    python bench/bench_corpus.py --memory
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from corpus import mixed_corpus  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TOKENIZERS = {
    "cl100k": ROOT / "resources" / "bundles" / "cl100k_base" / "cl100k_base.tiktoken.gz",
    "mistral": ROOT / "resources" / "bundles" / "mistral-7b-v0.1" / "tokenizer.json.gz",
}


def write_shards(folder: Path, scale: int, n: int = 8) -> tuple[list[str], int]:
    folder.mkdir()
    text = mixed_corpus().text * scale
    lines = text.split("\n")
    per = -(-len(lines) // n)
    for k in range(n):
        (folder / f"shard-{k:02d}.txt").write_text("\n".join(lines[k * per : (k + 1) * per]) + "\n", encoding="utf-8")
    docs = [line for line in lines if line]
    return docs, sum(f.stat().st_size for f in folder.iterdir())


def _cpu_of(pids: list[int]) -> float:
    import psutil

    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def _cpu_now(cluster) -> float:  # noqa: ANN001
    """CPU seconds so far of this process, its ended children and the cluster's workers (a pool's
    workers are the forkserver's children: `_cpu_of` their pids before the pool closes)."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    workers = _cpu_of(list(cluster.client.run(os.getpid).values())) if cluster is not None else 0.0
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime + workers


def run_job(job: str, name: str, folder: Path, executor) -> tuple[float, object]:  # noqa: ANN001
    import tokviz
    from tokviz.analysis.corpus import TokenizerSpec, run_corpus
    from tokviz.analysis.corpus_jobs import token_counts
    from tokviz.io.shards import ReadOptions

    spec = TokenizerSpec(name, str(TOKENIZERS[name]))
    t = time.perf_counter()
    if job == "counts":
        tok = tokviz.load(spec.path)
        out: object = token_counts(tok, folder, spec=spec, read=ReadOptions(mode="lines"), executor=executor).counts
    else:
        rep = run_corpus([spec], folder, mode="lines", executor=executor, cuts=True).to_json()
        for key in ("seconds", "workers", "executor"):
            rep["corpus"].pop(key)
        out = rep
    return time.perf_counter() - t, out


_REFERENCE = """
import gzip, json, sys, time
name, path, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
docs = [line for line in open(sys.argv[4], encoding="utf-8").read().split("\\n") if line]
if name == "cl100k":  # (get_encoding would download: the bundle's ranks with tokviz's preset)
    import tempfile, tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tokviz.io.tiktoken_ranks import preset_for
    data = gzip.decompress(open(path, "rb").read())
    p = preset_for(data)
    with tempfile.NamedTemporaryFile(suffix=".tiktoken") as f:
        f.write(data); f.flush()
        ranks = load_tiktoken_bpe(f.name)
    enc = tiktoken.Encoding(p.name, pat_str=p.pattern, mergeable_ranks=ranks, special_tokens=dict(p.special_tokens),
                            explicit_n_vocab=p.explicit_n_vocab)
    run = lambda: enc.encode_ordinary_batch(docs, num_threads=threads)
else:
    from tokenizers import Tokenizer
    tok = Tokenizer.from_str(gzip.decompress(open(path, "rb").read()).decode())
    run = lambda: tok.encode_batch(docs, add_special_tokens=False)
t, c = time.perf_counter(), time.process_time()
run()
print(json.dumps([time.perf_counter() - t, time.process_time() - c]))
"""


def references(name: str, docs_file: Path, threads: int) -> tuple[float, float]:
    """(wall, CPU) seconds of the reference batch encoder over the lines, in a fresh process
    (``RAYON_NUM_THREADS`` is read once per process)."""
    env = {**os.environ, "RAYON_NUM_THREADS": str(threads)}
    out = subprocess.run([sys.executable, "-c", _REFERENCE, name, str(TOKENIZERS[name]), str(threads), str(docs_file)],
                         env=env, capture_output=True, text=True, check=True).stdout
    wall, cpu = json.loads(out)
    return wall, cpu


def throughput(scale: int) -> None:
    from tokviz.io.executor import DaskExecutor, InProcess, LocalPool

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        docs, nbytes = write_shards(folder / "shards", scale)
        docs_file = folder / "lines.txt"
        docs_file.write_text("\n".join(docs), encoding="utf-8")
        mb = nbytes / 1e6
        print(f"== {mb:.1f} MB in 8 shards, {len(docs):,} lines; machine: {os.popen('uptime').read().strip()}")
        t = time.perf_counter()
        cluster = DaskExecutor("local:2")
        print(f"  (LocalCluster of 2 started in {time.perf_counter() - t:.1f} s, not counted below)")
        try:
            for name in TOKENIZERS:
                for job in ("counts", "stats"):
                    rows = []
                    results = []
                    for label, make in (("1 process", lambda: InProcess()), ("2 local processes", lambda: LocalPool(2)),
                                        ("Dask LocalCluster, 2 workers", lambda: cluster)):
                        c0 = _cpu_now(cluster)
                        ex = make()
                        try:
                            sec, out = run_job(job, name, folder / "shards", ex)
                            pool_cpu = _cpu_of(ex.pids()) if isinstance(ex, LocalPool) else 0.0
                        finally:
                            if ex is not cluster:
                                ex.close()
                        rows.append((label, sec, _cpu_now(cluster) - c0 + pool_cpu))
                        results.append(out)
                    same = all(_equal(results[0], r) for r in results[1:])
                    print(f"  {name:<8} {job:<6} results identical: {same}")
                    for lab, sec, cpu in rows:
                        print(f"      {lab:<30} {mb / sec:6.3f} MB/s wall, {mb / cpu:6.3f} MB per CPU-second "
                              f"({sec:6.1f} s wall, {cpu:6.1f} s CPU in every process)")
                if name == "cl100k":
                    refs = [(f"tiktoken encode_ordinary_batch ({n} thread{'s' * (n > 1)})", references(name, docs_file, n)) for n in (1, 2)]
                else:
                    refs = [(f"HF encode_batch (RAYON_NUM_THREADS={n})", references(name, docs_file, n)) for n in (1, 2)]
                for lab, (sec, cpu) in refs:
                    print(f"      {lab:<30} {mb / sec:6.3f} MB/s wall, {mb / cpu:6.3f} MB per CPU-second")
        finally:
            cluster.close()


def _equal(a: object, b: object) -> bool:
    import numpy as np

    if isinstance(a, np.ndarray):
        return bool(np.array_equal(a, b))
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def peak_rss(argv: list[str], *, limit: float | None = None) -> tuple[float, float, int]:
    """(peak RSS of the process tree in MB, seconds, exit code) of a command, sampled every 0.1 s."""
    import psutil

    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    root = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        try:
            procs = [root, *root.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in procs if p.is_running()))
        except psutil.Error:
            pass
        if limit is not None and time.perf_counter() - t > limit:
            for p in root.children(recursive=True):
                p.kill()
            proc.kill()
            break
        time.sleep(0.1)
    proc.wait()
    return peak / 1e6, time.perf_counter() - t, proc.returncode


def memory() -> None:
    tok = str(TOKENIZERS["cl100k"])
    other = str(ROOT / "resources" / "bundles" / "gpt2" / "r50k_base.tiktoken.gz")
    base, _, _ = peak_rss([sys.executable, "-m", "tokviz", "info", tok])
    print(f"== peak RSS (process tree): loading cl100k alone {base:.0f} MB; "
          f"machine: {os.popen('uptime').read().strip()}")
    words = (mixed_corpus().text.replace("\n", " ") * 12).encode()
    with tempfile.TemporaryDirectory() as tmp:
        for mb in (8, 32):
            p = Path(tmp) / f"line{mb}.txt"
            p.write_bytes(words[: mb << 20])
            peak, sec, rc = peak_rss([sys.executable, "-m", "tokviz", "compare", tok, other, "--file", str(p),
                                      "--stats", "--json", "--workers", "2"])
            print(f"  compare --file, one line of {mb} MB, 2 workers: peak {peak:6.0f} MB in {sec:5.1f} s (exit {rc})")
        j = Path(tmp) / "line.jsonl"
        j.write_bytes(b'{"text": "' + words[: 50 << 20].replace(b"\\", b" ").replace(b'"', b" ") + b'"}\n')
        peak, sec, rc = peak_rss([sys.executable, "-m", "tokviz", "lint", tok, "--corpus", str(j), "--max-record-mb", "16"])
        print(f"  lint --corpus, a 50 MB JSON line, --max-record-mb 16: peak {peak:6.0f} MB in {sec:5.1f} s (exit {rc}: refused)")
        peak, sec, rc = peak_rss([sys.executable, "-m", "tokviz", "lint", tok, "--corpus", str(j), "--workers", "1"], limit=60)
        print(f"  lint --corpus, a 50 MB JSON line, default limit: peak {peak:6.0f} MB over the first {sec:4.0f} s "
              "(parsed, then linted by 256 KiB pieces; stopped)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=2, help="copies of the mixed corpus (~2.9 MB each)")
    ap.add_argument("--memory", action="store_true", help="only the peak-memory runs")
    args = ap.parse_args()
    if args.memory:
        memory()
    else:
        throughput(args.scale)


if __name__ == "__main__":
    main()
