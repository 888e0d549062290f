"""The BPE pair queue: the C kernel (tokviz.training._count) and its pure-Python twin agree step
for step (every pop, every merge's counts, every word), and so do whole training runs."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings, strategies as st

from tokviz.training import merges
from tokviz.training.bpe import BpeTrainer
from tokviz.training.merges import PyPairQueue

native = merges.native_kernel()
needs_native = pytest.mark.skipif(
    native is None and os.environ.get("TOKVIZ_EXPECT_NATIVE") != "1", reason="the C kernel is not built"
)


def _drive(queue, n_symbols: int, steps: int) -> list[object]:  # noqa: ANN001
    """Pop and merge ``steps`` times (new ids after the base symbols): everything observable."""
    seen: list[object] = [len(queue)]
    next_id = n_symbols
    for _ in range(steps):
        top = queue.pop()
        seen.append(top)
        if top is None:
            break
        a, b, _ = top
        touched, removed, changed = queue.merge(a, b, next_id, changed=True)
        seen.append((touched, removed, sorted(changed), [list(queue.word(w)) for w in sorted(changed)]))
        next_id += 1 if next_id % 5 else 0  # now and then an id reused: HF's duplicate merges
    seen.append([list(w) for w in queue.segments()])
    return seen


@needs_native
class TestTwins:
    @settings(max_examples=200, deadline=None)
    @given(
        words=st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=9), min_size=1, max_size=30),
        counts=st.lists(st.integers(1, 9), min_size=30, max_size=30),
        max_len=st.sampled_from([None, 2, 3, 5]),
    )
    def test_step_for_step(self, words: list[list[int]], counts: list[int], max_len: int | None) -> None:
        assert native is not None, "TOKVIZ_EXPECT_NATIVE=1 but tokviz.training._count is missing"
        counts = counts[: len(words)]
        py = PyPairQueue([list(w) for w in words], counts, [1] * 6, max_len)
        c = native.PairQueue([list(w) for w in words], counts, [1] * 6, -1 if max_len is None else max_len)
        assert _drive(c, 6, 40) == _drive(py, 6, 40)

    @pytest.mark.parametrize("kw", [{}, {"max_token_length": 4}, {"continuing_subword_prefix": "##"},
                                    {"end_of_word_suffix": "</w>", "min_frequency": 2}])
    def test_whole_runs(self, kw: dict, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[type-arg]
        text = open(os.path.join(os.path.dirname(__file__), "..", "..", "resources", "corpora", "toy.txt"),
                    encoding="utf-8").read()
        lines = text.splitlines() * 3 + ["aaaa aaaa abab", "ababab abcabc"]
        with_c = BpeTrainer(vocab_size=400, **kw).run(lines)
        monkeypatch.setenv("TOKVIZ_PURE_PYTHON", "1")
        assert merges.native_kernel() is None
        with_py = BpeTrainer(vocab_size=400, **kw).run(lines)
        assert with_c.merges == with_py.merges and with_c.vocab == with_py.vocab
        assert with_c.tokens_after == with_py.tokens_after
        assert [sorted(t) for t in with_c._touched_by] == [sorted(t) for t in with_py._touched_by]
        assert with_c._hist_seg == with_py._hist_seg


def test_the_queue_in_use_is_the_kernel_unless_pure_python(monkeypatch: pytest.MonkeyPatch) -> None:
    q = merges.pair_queue([[0, 1]], [1], [1, 1], None)
    assert isinstance(q, PyPairQueue) == (native is None)
    monkeypatch.setenv("TOKVIZ_PURE_PYTHON", "1")
    assert isinstance(merges.pair_queue([[0, 1]], [1], [1, 1], None), PyPairQueue)
