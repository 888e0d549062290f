"""Compare-tab speed: corpus statistics on all cores vs one, tokviz vs the reference batch encoders,
and the time to add a fifth tokenizer to a 100 KB comparison. Ratios come from one run.

* corpus: `tokviz.analysis.corpus.run_corpus` for 4 tokenizers (r50k, cl100k, o200k, Qwen3) over
  the mixed corpus (bench/corpus.py) in ``lines`` mode, with 1 process and with every core;
  the speed-up target is close to the core count.
* throughput: tokens/s of that run (all four tokenizers, C9 statistics included: decode for the
  lossless check, per-script sweep) vs tiktoken ``encode_ordinary_batch`` and HF tokenizers
  ``encode_batch`` on the same documents (their own thread pools, every core).
* fifth tokenizer: a Compare tab showing 4 analysed rows over 100 KB of the corpus; time from
  ``add_loaded`` (tokenizer in memory, never used on this text: encode + incremental analysis +
  the tab's update + one paint) to five rows painted, and from ``add_tokenizer(path)`` (plus the
  load); the ratio is to HF tokenizers encoding the same text. Target: under 1 s.

    python bench/bench_compare.py                # 10 % of the mixed corpus
    python bench/bench_compare.py --scale 1.0    # all of it (~2.9 MB)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from corpus import mixed_corpus, shared_dir  # noqa: E402

BUNDLES = {
    "r50k": "gpt2/r50k_base.tiktoken",
    "cl100k": "cl100k_base/cl100k_base.tiktoken",
    "o200k": "o200k_base/o200k_base.tiktoken",
    "qwen3": "qwen3/tokenizer.json",
}
FIFTH = "mistral-7b-v0.1/tokenizer.json"


def bundle(rel: str) -> Path:
    return shared_dir() / "bundles" / rel


def corpus_bench(path: Path, lines: list[str]) -> None:
    import tokviz
    from tokviz.analysis.corpus import TokenizerSpec, run_corpus

    specs = [TokenizerSpec(k, str(bundle(rel))) for k, rel in BUNDLES.items()]
    cores = os.cpu_count() or 1
    # encode only (fresh tokenizers, as a run has): what the statistics add is measured against it
    c0 = _cpu()
    toks = [tokviz.load(bundle(rel)) for rel in BUNDLES.values()]
    c1 = _cpu()
    for tok in toks:
        for line in lines:
            tok.encode(line, add_special_tokens=False)
    c2 = _cpu()
    del toks
    load_cpu, encode_cpu = c1 - c0, c2 - c1
    one = run_corpus(specs, path, mode="lines", workers=1)
    c3 = _cpu()
    p0 = _cpu(children=False)
    many = run_corpus(specs, path, mode="lines", workers=cores)
    c4 = _cpu()
    parent_cpu = _cpu(children=False) - p0
    assert [t.n_tok for t in one.tokenizers] == [t.n_tok for t in many.tokenizers]
    tokens = sum(t.n_tok for t in one.tokenizers)
    one_cpu = c3 - c2
    print(f"corpus: {one.n_doc:,} documents, {one.n_byte / 1e6:.2f} MB, 4 tokenizers, {tokens:,} tokens")
    print(f"  encode only    {encode_cpu:7.2f} s CPU (+ {load_cpu:.2f} s loading the 4 tokenizers)")
    print(f"  1 process      {one.seconds:7.2f} s wall, {one_cpu:7.2f} s CPU: the C9 statistics (lossless "
          f"decode included) add {(one_cpu - load_cpu - encode_cpu) / encode_cpu:.2f}x the encode's CPU")
    print(f"  {cores} processes    {many.seconds:7.2f} s wall, {c4 - c3:7.2f} s CPU ({parent_cpu:.2f} s parent, "
          f"{c4 - c3 - parent_cpu:.2f} s workers; workers load their own tokenizers)   "
          f"speed-up {one.seconds / many.seconds:.2f}x (target ~{cores}x)")
    print(f"  CPU this run got: {(c4 - c3) / many.seconds:.2f} of {cores} cores (a loaded machine caps the "
          f"speed-up); pool CPU / one-process CPU = {(c4 - c3) / one_cpu:.2f}")
    # both runs load the 4 tokenizers once in this process first (a fixed cost a long corpus amortizes)
    load_s = load_cpu  # loading is single-threaded CPU work: its CPU time is its wall time
    print(f"  without the load (~{load_s:.2f} s each): 1 process {one.seconds - load_s:.2f} s, {cores} processes "
          f"{many.seconds - load_s:.2f} s -> speed-up {(one.seconds - load_s) / (many.seconds - load_s):.2f}x")
    ref_s = reference_seconds(lines)
    ours = tokens / many.seconds
    theirs = tokens / ref_s
    print(f"throughput: tokviz {ours:,.0f} tokens/s (C9 stats, {cores} processes) vs references "
          f"{theirs:,.0f} tokens/s (batch encoders, {cores} threads) -> ratio {ours / theirs:.3f}")


def _cpu(*, children: bool = True) -> float:
    """CPU seconds of this process and (``children``) its finished children (the pool's workers)."""
    t = os.times()
    return t.user + t.system + ((t.children_user + t.children_system) if children else 0.0)


def reference_seconds(lines: list[str]) -> float:
    import tiktoken
    import tokenizers
    from tiktoken.load import load_tiktoken_bpe

    from tokviz.io.tiktoken_ranks import preset_for

    total = 0.0
    cores = os.cpu_count() or 1
    for name, rel in BUNDLES.items():
        data = bundle(rel).read_bytes()
        if rel.endswith(".tiktoken"):
            preset = preset_for(data)
            with tempfile.NamedTemporaryFile(suffix=".tiktoken", delete=False) as fh:
                fh.write(data)
            enc = tiktoken.Encoding(preset.name, pat_str=preset.pattern, mergeable_ranks=load_tiktoken_bpe(fh.name),
                                    special_tokens=dict(preset.special_tokens), explicit_n_vocab=preset.explicit_n_vocab)
            t0 = time.perf_counter()
            enc.encode_ordinary_batch(lines, num_threads=cores)
        else:
            tok = tokenizers.Tokenizer.from_str(data.decode("utf-8"))
            t0 = time.perf_counter()
            tok.encode_batch(lines, add_special_tokens=False)
        dt = time.perf_counter() - t0
        print(f"  reference {name:<7} {dt:7.3f} s")
        total += dt
    return total


def fifth_bench(text: str) -> None:
    """Time from adding a fifth tokenizer to the Compare tab showing (and painting) five rows.

    Loading is not timed in the main figure ("already loaded": the tokenizer object exists, it
    has never encoded this text): encode + segmentation + the incremental analysis + the tab's
    update and one paint. The reference is HF tokenizers encoding the same 100 KB with the same
    tokenizer.json (a fresh object as well).
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import tokenizers
    from PySide6.QtWidgets import QApplication

    import tokviz
    from tokviz.gui.compare_tab import CompareTab

    app = QApplication.instance() or QApplication([])
    tab = CompareTab()
    tab.resize(1400, 900)
    tab.show()
    vm = tab.vm
    vm.set_text(text)
    for name, rel in BUNDLES.items():
        vm.add_loaded(tokviz.load(bundle(rel)), name=name, path=str(bundle(rel)))

    def shown(n: int) -> bool:
        a = tab.rows_view.analysis
        return a is not None and len(a.names) == n

    def wait(n: int, *, idle: bool) -> None:
        while not (shown(n) and (not idle or not vm.is_busy())):
            app.processEvents()
            time.sleep(0.0005)

    wait(4, idle=True)
    timings = []
    for label in ("already loaded", "from a file"):
        tok = tokviz.load(bundle(FIFTH)) if label == "already loaded" else None
        t0 = time.perf_counter()
        if tok is not None:
            vm.add_loaded(tok, name="mistral", path=str(bundle(FIFTH)))
        else:
            vm.add_tokenizer(bundle(FIFTH), name="mistral")
        wait(5, idle=False)
        tab.rows_view.repaint()
        timings.append((label, time.perf_counter() - t0))
        wait(5, idle=True)
        vm.remove(4)
        wait(4, idle=True)
    ref = tokenizers.Tokenizer.from_file(str(bundle(FIFTH)))
    t0 = time.perf_counter()
    ref.encode(text, add_special_tokens=False)
    ref_s = time.perf_counter() - t0
    kb = len(text.encode()) / 1e3
    print(f"fifth tokenizer (mistral) on {kb:.0f} KB, 4 rows shown -> 5 rows shown and painted:")
    for label, dt in timings:
        print(f"  {label:<15} {dt:6.3f} s wall (target < 1 s)" + (" incl. load" if label == "from a file" else ""))
    warm = timings[0][1]
    print(f"  HF tokenizers encode of the same text {ref_s:.3f} s -> tokviz view update / HF encode = "
          f"{warm / ref_s:.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.1, help="fraction of the mixed corpus")
    ap.add_argument("--skip-corpus", action="store_true")
    ap.add_argument("--skip-fifth", action="store_true")
    args = ap.parse_args()
    corpus = mixed_corpus(scale=args.scale)
    text = corpus.text
    lines = [x for x in text.split("\n") if x]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "mixed.txt"
        path.write_bytes(text.encode("utf-8"))
        if not args.skip_corpus:
            corpus_bench(path, lines)
    if not args.skip_fifth:
        full = mixed_corpus(scale=1.0).text
        fifth_bench(full.encode("utf-8")[:100_000].decode("utf-8", "ignore"))


if __name__ == "__main__":
    main()
