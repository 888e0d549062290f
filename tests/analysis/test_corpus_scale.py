"""Every corpus command gives the same JSON in this process, on the local pool and on a real Dask
cluster (a ``distributed.LocalCluster`` of 2 workers on the loopback interface), and a worker
killed mid-run changes nothing.

The corpus mixes the formats (a text folder, gzip JSON lines, Parquet) and is cut into many small
shards, so every reduce sees several partials per file.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import threading
from pathlib import Path

import pytest
from support import bundle_path

from tokviz.analysis.corpus import TokenizerSpec, run_corpus
from tokviz.cli import main
from tokviz.io import executor as executor_mod, shards

distributed = pytest.importorskip("distributed")

R50K = str(bundle_path("gpt2/r50k_base.tiktoken"))
CL100K = str(bundle_path("cl100k_base/cl100k_base.tiktoken"))
_TIMING = ("seconds", "workers", "executor")


@pytest.fixture(scope="module")
def cluster():  # noqa: ANN201 - a DaskExecutor on a LocalCluster of 2 one-thread workers
    ex = executor_mod.DaskExecutor("local:2")
    yield ex
    ex.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = tmp_path_factory.mktemp("corpus")
    lines = [f"line {i}: naïve café 東京 {'x' * (i % 11)} 😀 the quick brown fox" for i in range(300)]
    (root / "a.txt").write_text("\n".join(lines[:120]) + "\n", encoding="utf-8")
    (root / "b.txt").write_text("\n\n".join(lines[120:160]), encoding="utf-8")
    rows = [json.dumps({"text": t, "n": i}) for i, t in enumerate(lines[160:260])]
    (root / "c.jsonl.gz").write_bytes(gzip.compress("\n".join(rows).encode()))
    pq.write_table(pa.table({"text": lines[260:]}), root / "d.parquet", row_group_size=10)
    return root


@pytest.fixture(autouse=True)
def small_shards(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shards, "_MIN_SHARD", 1024)  # many shards even for this small corpus


def _cli_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:  # type: ignore[type-arg]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _drop_timing(obj: object) -> object:
    """The JSON without what says which executor ran it and how long it took."""
    if isinstance(obj, dict):
        return {k: _drop_timing(v) for k, v in obj.items() if k not in _TIMING}
    if isinstance(obj, list):
        return [_drop_timing(v) for v in obj]
    return obj


COMMANDS = {
    "compare": ["compare", R50K, CL100K, "--file", "{corpus}", "--stats", "--mode", "lines", "--json"],
    "lint": ["lint", R50K, "--corpus", "{corpus}", "--json"],
    "diff": ["diff", R50K, CL100K, "--corpus", "{corpus}", "--json"],
    "audit": ["audit", R50K, "--corpus", "{corpus}", "--json"],
}


class TestSameJsonEverywhere:
    @pytest.mark.parametrize("command", sorted(COMMANDS))
    def test_dask_equals_the_local_pool(
        self, command: str, corpus: Path, cluster, capsys: pytest.CaptureFixture[str]  # noqa: ANN001
    ) -> None:
        """(One process against the pool: tests/analysis/test_corpus.py and TestLostWorkers.)"""
        argv = [a.format(corpus=corpus) for a in COMMANDS[command]]
        address = cluster.client.scheduler.address
        pool = _cli_json(capsys, [*argv, "--workers", "2"])
        dask = _cli_json(capsys, [*argv, "--scheduler", address])
        assert _drop_timing(dask) == _drop_timing(pool)
        if command == "compare":
            assert pool["corpus"]["corpus"]["documents"] == 300
            assert dask["corpus"]["corpus"]["executor"].startswith("Dask")
        if command == "audit":
            assert pool["corpus"]["documents"] == 300 and pool["corpus"]["never_seen"] > 0
            assert dask["corpus"]["executor"].startswith("Dask")


class TestTrain:
    def test_dask_trains_the_same_tokenizer_as_the_local_pool(
        self, corpus: Path, cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]  # noqa: ANN001
    ) -> None:
        out = {}
        for name, how in (("pool", ["--workers", "2"]), ("dask", ["--scheduler", cluster.client.scheduler.address])):
            out[name] = tmp_path / f"{name}.json"
            argv = ["train", "--corpus", str(corpus), "--byte-level", "--vocab-size", "400", "-o", str(out[name]), *how]
            assert main(argv) == 0
        capsys.readouterr()
        assert out["pool"].read_bytes() == out["dask"].read_bytes()
        assert len(json.loads(out["pool"].read_text())["model"]["merges"]) > 100


class TestAuditCounts:
    def test_token_counts_on_every_executor(self, corpus: Path, cluster) -> None:  # noqa: ANN001
        import numpy as np

        import tokviz
        from tokviz.analysis.corpus_jobs import token_counts

        tok = tokviz.load(R50K)
        spec = TokenizerSpec("r50k", R50K)
        here = token_counts(tok, corpus, spec=spec, workers=1)
        pool = token_counts(tok, corpus, spec=spec, workers=2)
        dask = token_counts(tok, corpus, spec=spec, executor=cluster)
        # the oracle: every document encoded here, its ids counted
        want = np.zeros(tok.vocab_size, dtype=np.int64)
        from tokviz.analysis.corpus import iter_documents

        for d in iter_documents(corpus, "lines"):
            for i in tok.encode(d.text, add_special_tokens=False).ids:
                want[i] += 1
        for got in (here, pool, dask):
            assert np.array_equal(got.counts, want) and got.documents == 300 and got.tokens == int(want.sum())
        # the same workers, the same tokenizer, another kind of job: each kind prepares its own state
        on_dask = _drop_timing(run_corpus([spec], corpus, mode="lines", executor=cluster).to_json())
        assert on_dask == _drop_timing(run_corpus([spec], corpus, mode="lines", workers=1).to_json())


def _kill_one_when_started(pids: callable, run: callable) -> tuple[object, list[int]]:  # type: ignore[valid-type]
    """Run ``run(progress)`` in a thread; kill one worker after the first shard finished."""
    killed: list[int] = []
    started = threading.Event()

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "bytes" and not started.is_set():
            started.set()

    result: list[object] = []
    t = threading.Thread(target=lambda: result.append(run(progress)))
    t.start()
    assert started.wait(300)
    pid = pids()[0]
    os.kill(pid, signal.SIGKILL)
    killed.append(pid)
    t.join(600)
    assert result, "the run did not finish"
    return result[0], killed


class TestLostWorkers:
    SPECS = [TokenizerSpec("r50k", R50K), TokenizerSpec("cl100k", CL100K)]

    def _run(self, corpus: Path, **kw: object) -> dict:  # type: ignore[type-arg]
        return _drop_timing(run_corpus(self.SPECS, corpus, mode="lines", cuts=True, **kw).to_json())  # type: ignore[return-value]

    def test_a_dask_worker_killed_mid_run(self, corpus: Path, cluster) -> None:  # noqa: ANN001
        want = self._run(corpus, workers=1)
        pids = lambda: sorted(cluster.client.run(os.getpid).values())  # noqa: E731
        got, killed = _kill_one_when_started(pids, lambda p: self._run(corpus, executor=cluster, progress=p))
        assert killed and got == want

    def test_a_pool_worker_killed_mid_run(self, corpus: Path) -> None:
        want = self._run(corpus, workers=1)
        with executor_mod.LocalPool(2) as pool:
            got, killed = _kill_one_when_started(pool.pids, lambda p: self._run(corpus, executor=pool, progress=p))
        assert killed and got == want


class TestWorkerCap:
    def test_too_many_workers_is_one_clear_error(self, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["lint", R50K, "--corpus", str(corpus), "--workers", "100000"]) == 2
        err = capsys.readouterr().err
        assert "--workers 100000: expected 1 to" in err and err.count("\n") == 1

    def test_local_cluster_size_is_capped_too(self, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["lint", R50K, "--corpus", str(corpus), "--scheduler", "local:100000"]) == 2
        assert "--scheduler local: 100000" in capsys.readouterr().err
