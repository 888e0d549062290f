"""The tokenizer registry (tokviz.io.registry): one object per file, LRU beyond the budget."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

from tokviz.io.registry import TokenizerRegistry
from tokviz.resources import resource_path


def _bundle(rel: str) -> Path:
    return resource_path("bundles", *(rel + ".gz").split("/"))


GPT2 = _bundle("gpt2/r50k_base.tiktoken")
BERT = _bundle("bert-base-uncased/tokenizer.json")


def test_one_object_per_file() -> None:
    reg = TokenizerRegistry()
    a = reg.get(GPT2)
    assert reg.get(GPT2) is a
    st = reg.stats()
    assert (st.loads, st.hits, st.kept) == (1, 1, 1)
    assert st.kept_bytes >= GPT2.stat().st_size  # at least the file's size


def test_concurrent_requests_load_once() -> None:
    reg = TokenizerRegistry()
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(reg.get(BERT))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and all(g is got[0] for g in got) and reg.stats().loads == 1


def test_beyond_the_budget_the_least_recent_goes_and_reloads_transparently() -> None:
    reg = TokenizerRegistry(budget_mb=0)  # nothing kept beyond the one just asked for
    a = reg.get(GPT2)
    ids = a.encode("Hello world").ids
    reg.get(BERT)
    assert not reg.holds(GPT2) and reg.holds(BERT) and reg.stats().evictions == 1
    # still held by a view: handed out again, the same object (never a second copy)
    assert reg.get(GPT2) is a and reg.stats().loads == 2
    del a
    reg.get(BERT)  # BERT was let go and nobody held it: load 3; GPT2 let go, nobody holds it now
    gc.collect()
    b = reg.get(GPT2)  # loaded again: load 4
    assert reg.stats().loads == 4 and b.encode("Hello world").ids == ids


def test_a_rewritten_file_is_loaded_anew(tmp_path: Path) -> None:
    import shutil

    reg = TokenizerRegistry()
    p = tmp_path / "r50k_base.tiktoken.gz"
    shutil.copy(GPT2, p)
    a = reg.get(p)
    p.write_bytes(GPT2.read_bytes())
    import os

    os.utime(p, ns=(1, 1))
    assert reg.get(p) is not a


def test_set_budget_lets_go_now() -> None:
    reg = TokenizerRegistry()
    reg.get(GPT2)
    reg.get(BERT)
    assert reg.stats().kept == 2
    reg.set_budget(mb=0)
    assert reg.stats().kept == 1 and reg.holds(BERT)


def test_a_bad_file_raises_as_load_does(tmp_path: Path) -> None:
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="tokenizer.json"):
        TokenizerRegistry().get(bad)
