"""The one seam every corpus job runs through: in this process, on a local process pool, or on Dask.

A corpus job (`ShardJob`: the corpus statistics, the offset lint, the regression check, the audit's
token counts, the trainers' word counts) says how to *prepare* a worker (load its tokenizers,
once per process) and how to *map* one shard (`tokviz.io.shards.Shard`) to a small partial result.
An `Executor` runs the map over the shards and hands the partials back **in shard order**, and the
job's caller reduces them in that order. Shards come from the corpus alone and each map is a pure
function of its shard, so the reduced result is the same whichever executor ran it and however
many workers it had; a shard whose worker died is simply mapped again.

* `InProcess`: here, one shard after another (optionally with state the caller already has: the
  Compare tab's loaded tokenizers);
* `LocalPool`: N processes started by ``forkserver`` (``spawn`` where there is none), each
  preparing itself from the job (tokenizers are loaded from their files in the worker, never
  forked from a GUI process with threads); at most two shards per worker in flight;
* `DaskExecutor`: a Dask ``distributed`` cluster at an address (``tcp://host:8786``; the
  ``TOKVIZ_DASK_SCHEDULER`` variable), or ``local:N``, a ``LocalCluster`` of N one-thread worker
  processes on the loopback interface. Needs ``pip install "tokviz[dask]"``; every worker must
  see the corpus and tokenizer paths (a shared file system) and have tokviz installed.

`executor_for` picks one from the command line's ``--scheduler`` / ``--workers``.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from ..engine.cancel import CancelToken
from .shards import LineBases, PartStats, ReadOptions, Shard, ShardReader

__all__ = [
    "SCHEDULER_ENV",
    "CorpusCancelled",
    "DaskExecutor",
    "Executor",
    "InProcess",
    "LocalPool",
    "ShardJob",
    "ShardOutput",
    "ShardPlace",
    "WorkersLost",
    "executor_for",
    "max_workers",
    "run_shards",
]

SCHEDULER_ENV = "TOKVIZ_DASK_SCHEDULER"
_RETRIES = 3  # a pool that lost a worker is started again this many times per run
_SMALL_CORPUS = 1 << 20  # below this, starting processes costs more than the work


class CorpusCancelled(Exception):
    """A corpus job was cancelled (its `CancelToken` was set)."""


class WorkersLost(OSError):
    """Workers kept dying on the same shards (out of memory?): the run gave up."""


class ShardJob(ABC):
    """A corpus job: picklable (it travels to the workers), deterministic per shard."""

    read: ReadOptions

    @abstractmethod
    def key(self) -> Hashable:
        """What identifies the prepared state (a worker prepares once per key)."""

    @abstractmethod
    def prepare(self) -> Any:
        """The worker-side state (the loaded tokenizers), made once per worker process."""

    @abstractmethod
    def map(self, state: Any, records: ShardReader, cancel: CancelToken | None) -> Any:
        """The partial result of one shard's records (small: it is sent back to the caller)."""


@dataclass(frozen=True, slots=True)
class ShardOutput:
    """One mapped shard: the job's partial, the records read and what the reader counted."""

    index: int
    partial: Any
    records: int
    stats: tuple[PartStats, ...]


@dataclass(frozen=True, slots=True)
class ShardPlace:
    """Where a shard sits in the corpus: the index of its first record and, per part, the lines
    of its file before the part (to turn part-local lines into the file's)."""

    first_record: int
    line_bases: tuple[int, ...]


_PREPARED: dict[Hashable, Any] = {}
_PREPARED_LOCK = threading.Lock()


def _state_of(job: ShardJob) -> Any:
    """The job's prepared state in this worker (made on its first shard; the last two kept). Keys
    are per kind of job: two kinds may load the same tokenizers into different states."""
    key = (type(job).__module__, type(job).__qualname__, job.key())
    with _PREPARED_LOCK:
        if key not in _PREPARED:
            if len(_PREPARED) >= 2:
                _PREPARED.pop(next(iter(_PREPARED)))
            _PREPARED[key] = job.prepare()
            # the tokenizers' many objects live as long as the worker: the cyclic GC need not
            # visit them at every collection
            gc.freeze()
        return _PREPARED[key]


def map_shard(job: ShardJob, shard: Shard, state: Any = None, cancel: CancelToken | None = None) -> ShardOutput:
    """Map one shard (what a worker runs); ``state``: the prepared state when the caller has it."""
    if state is None:
        state = _state_of(job)
    reader = ShardReader(shard, job.read)
    partial = job.map(state, reader, cancel)
    return ShardOutput(shard.index, partial, reader.records, tuple(reader.stats))


# ---------------------------------------------------------------------- executors
class Executor(ABC):
    """Runs a job's map over shards; `map` yields the outputs in shard order."""

    label: str = ""
    workers: int = 1

    @abstractmethod
    def map(
        self,
        job: ShardJob,
        shards: Sequence[Shard],
        *,
        cancel: CancelToken | None = None,
        done: Callable[[ShardOutput], None] | None = None,
    ) -> Iterator[ShardOutput]:
        """The outputs in shard order; ``done(output)`` as each finishes (in any order)."""

    def close(self) -> None:
        """Release the workers (a pool's processes, a cluster started here)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class InProcess(Executor):
    """Every shard here, in order; ``state``: the job's prepared state when the caller has it."""

    def __init__(self, state: Any = None) -> None:
        self.state = state
        self.label = "in-process"
        self.workers = 1

    def map(self, job, shards, *, cancel=None, done=None):
        state = self.state if self.state is not None else job.prepare()
        for shard in shards:
            if cancel is not None and cancel.cancelled:
                raise CorpusCancelled()
            out = map_shard(job, shard, state, cancel)
            if done is not None:
                done(out)
            yield out


def _pool_context() -> multiprocessing.context.BaseContext:
    """forkserver where there is one (a fresh process forks the workers: no inherited threads)."""
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    return multiprocessing.get_context(method)


class LocalPool(Executor):
    """``workers`` local processes (forkserver or spawn); a pool broken by a dead worker is started
    again and its unfinished shards mapped again (`_RETRIES` times per run)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.label = f"{workers} local processes"
        self._ctx = _pool_context()
        if self._ctx.get_start_method() == "forkserver":
            self._ctx.set_forkserver_preload(["tokviz.io.executor", "tokviz.io.shards", "numpy", "regex"])
        self._pool: ProcessPoolExecutor | None = None

    def _fresh(self) -> ProcessPoolExecutor:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=self._ctx)
        return self._pool

    def pids(self) -> list[int]:
        """The worker processes' ids (a test kills one)."""
        procs = getattr(self._pool, "_processes", None) or {}
        return sorted(procs)

    def map(self, job, shards, *, cancel=None, done=None):
        pool = self._pool or self._fresh()
        todo = iter(shards)
        pending: dict[int, tuple[Future, Shard]] = {}
        ready: dict[int, ShardOutput] = {}
        order = [s.index for s in shards]
        next_pos = 0
        retries = 0
        exhausted = False
        while next_pos < len(order):
            while not exhausted and len(pending) < 2 * self.workers:
                shard = next(todo, None)
                if shard is None:
                    exhausted = True
                    break
                pending[shard.index] = (pool.submit(map_shard, job, shard), shard)
            finished, _ = wait([f for f, _ in pending.values()], timeout=0.2, return_when=FIRST_COMPLETED)
            if cancel is not None and cancel.cancelled:
                if self._pool is not None:  # (queued shards cancelled; running ones end unwaited)
                    self._pool.shutdown(wait=False, cancel_futures=True)
                    self._pool = None
                raise CorpusCancelled()
            broken = False
            for index in [i for i, (f, _) in pending.items() if f in finished]:
                fut, shard = pending[index]
                try:
                    out = fut.result()
                except BrokenProcessPool:
                    broken = True
                    continue
                del pending[index]
                ready[index] = out
                if done is not None:
                    done(out)
            if broken:
                retries += 1
                if retries > _RETRIES:
                    raise WorkersLost(
                        f"a worker process died {retries} times on the same shards (out of memory?); "
                        "try fewer --workers or a smaller --max-record-mb"
                    )
                pool = self._fresh()  # every unfinished shard goes to the new pool
                pending = {i: (pool.submit(map_shard, job, s), s) for i, (_, s) in pending.items()}
            while next_pos < len(order) and order[next_pos] in ready:
                yield ready.pop(order[next_pos])
                next_pos += 1

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskExecutor(Executor):
    """A Dask ``distributed`` cluster: at ``address``, or ``local:N`` (a LocalCluster started here,
    N worker processes of one thread on 127.0.0.1, closed with the executor)."""

    def __init__(self, address: str) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ValueError(
                f'--scheduler {address}: running on Dask needs distributed: pip install "tokviz[dask]"'
            ) from None
        import logging

        self._cluster = None
        if address.startswith("local:"):
            n = _local_count(address)
            self._cluster = LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address=":0", scheduler_kwargs={"dashboard": False}, silence_logs=logging.ERROR,
            )
            self.client = Client(self._cluster)
        else:
            try:
                self.client = Client(address, timeout=30)
            except (OSError, TimeoutError) as exc:
                raise OSError(f"--scheduler {address}: cannot reach the Dask scheduler ({exc})") from None
        self.workers = max(1, sum(self.client.nthreads().values()))
        self.label = f"Dask at {address} ({self.workers} worker threads)"

    def map(self, job, shards, *, cancel=None, done=None):
        from distributed import as_completed
        from distributed.scheduler import KilledWorker

        run = uuid.uuid4().hex[:12]
        todo = iter(shards)
        order = [s.index for s in shards]
        ready: dict[int, ShardOutput] = {}
        live = as_completed()
        futures = []

        def submit() -> bool:
            shard = next(todo, None)
            if shard is None:
                return False
            fut = self.client.submit(map_shard, job, shard, key=f"tokviz-{run}-{shard.index}", pure=False)
            futures.append(fut)
            live.add(fut)
            return True

        for _ in range(2 * self.workers):
            if not submit():
                break
        next_pos = 0
        try:
            while next_pos < len(order):
                for fut in _next_done(live, cancel):
                    try:
                        out = fut.result()
                    except KilledWorker as exc:
                        raise WorkersLost(f"Dask gave up on a shard: its workers kept dying ({exc})") from None
                    ready[out.index] = out
                    if done is not None:
                        done(out)
                    submit()
                while next_pos < len(order) and order[next_pos] in ready:
                    yield ready.pop(order[next_pos])
                    next_pos += 1
        finally:
            self.client.cancel([f for f in futures if not f.done()])

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def _next_done(live: Any, cancel: CancelToken | None) -> Iterable[Any]:
    """The futures finished so far (waiting at most 0.2 s), or CorpusCancelled."""
    while True:
        batch = live.next_batch(block=False)
        if batch:
            return batch
        if cancel is not None and cancel.cancelled:
            raise CorpusCancelled()
        if live.is_empty():
            return []
        time.sleep(0.02)


# ---------------------------------------------------------------------- choosing one
def max_workers() -> int:
    """The most local worker processes allowed: twice the cores (each loads every tokenizer)."""
    return max(2, 2 * (os.cpu_count() or 1))


def _check_workers(n: int, what: str) -> int:
    cap = max_workers()
    if not 1 <= n <= cap:
        raise ValueError(
            f"{what} {n}: expected 1 to {cap} on this machine ({os.cpu_count() or 1} cores; "
            "each worker process loads every tokenizer)"
        )
    return n


def _local_count(address: str) -> int:
    try:
        n = int(address[len("local:") :])
    except ValueError:
        raise ValueError(f"--scheduler {address}: expected local:N with N a number of workers") from None
    return _check_workers(n, "--scheduler local:")


def executor_for(
    *, scheduler: str | None = None, workers: int | None = None, corpus_bytes: int = 0, state: Any = None
) -> Executor:
    """The executor of a command's options: ``--scheduler`` first, then ``--workers``, then the
    ``TOKVIZ_DASK_SCHEDULER`` variable, else every core (in this process for a small corpus).

    ``state``: the job's prepared state for the in-process executor (tokenizers already loaded).
    """
    if scheduler is None and workers is None:
        scheduler = os.environ.get(SCHEDULER_ENV, "").strip() or None
    if scheduler:
        return DaskExecutor(scheduler)
    if workers is None:
        workers = 1 if corpus_bytes < _SMALL_CORPUS else min(max_workers(), os.cpu_count() or 1)
    _check_workers(workers, "--workers")
    return InProcess(state) if workers == 1 else LocalPool(workers)


def run_shards(
    job: ShardJob,
    shards: Sequence[Shard],
    executor: Executor,
    *,
    progress: Callable[[str, int, int], None] | None = None,
    cancel: CancelToken | None = None,
) -> Iterator[tuple[ShardOutput, ShardPlace]]:
    """Every shard's output in corpus order with its `ShardPlace`; ``progress(stage, done,
    total)`` as shards finish: ``("documents", read, 0)`` then ``("bytes", read, total)``."""
    total = sum(s.size for s in shards)
    sizes = {s.index: s.size for s in shards}
    counted = [0, 0]

    def done(out: ShardOutput) -> None:
        counted[0] += sizes[out.index]
        counted[1] += out.records
        if progress is not None:
            progress("documents", counted[1], 0)
            progress("bytes", counted[0], total)

    bases = LineBases()
    first = 0
    by_index = {s.index: s for s in shards}
    for out in executor.map(job, shards, cancel=cancel, done=done):
        parts = by_index[out.index].parts
        place = ShardPlace(first, tuple(bases.base(p.path, p.start) for p in parts))
        for p, st in zip(parts, out.stats):
            bases.advance(p.path, p.start, st.newlines)
        first += out.records
        yield out, place
