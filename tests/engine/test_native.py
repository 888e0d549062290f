"""The native core (tokviz.engine._native) against the pure-Python kernels, which are the
reference: same tokens on toy models in every mode, and traces (merge history, lattice) that
stay in Python and agree with what the native kernels encode.

A model built while ``kernels.native`` is None runs pure Python, so both run in one process.
With ``TOKVIZ_PURE_PYTHON=1`` (CI's second run) only the pure-Python half runs.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from support import python_twin

from tokviz.engine import backend, kernels
from tokviz.engine.lattice import Lattice
from tokviz.engine.models._spm import PieceType
from tokviz.engine.models.bpe import BPE
from tokviz.engine.models.unigram import Unigram

needs_native = pytest.mark.skipif(kernels.native is None, reason="native core not built or TOKVIZ_PURE_PYTHON=1")
ROOT = Path(__file__).resolve().parents[2]


def grown_merges(alphabet: str, count: int, seed: int, *, prefix: str = "") -> tuple[dict[str, int], list]:
    """A vocab and merges grown by joining random pairs of existing tokens (results may repeat,
    so two merges can make one token, as in real merges lists)."""
    rng = random.Random(seed)
    plain = list(alphabet)
    vocab = {c: k for k, c in enumerate(plain)}
    if prefix:
        for c in alphabet:
            vocab[prefix + c] = len(vocab)
    merges = []
    for _ in range(count):
        a, b = rng.choice(plain), rng.choice(plain)
        left = rng.choice([a, prefix + a]) if prefix else a
        right = prefix + b if prefix else b
        new = left + b
        if (left, right) in merges or left not in vocab or right not in vocab:
            continue
        merges.append((left, right))
        vocab.setdefault(new, len(vocab))
        if not new.startswith(prefix) or not prefix:
            plain.append(new)
    return vocab, merges


texts = st.text(alphabet="abcd", max_size=400)


class TestBackend:
    def test_backend_names_the_kernels(self) -> None:
        assert backend() == ("native" if kernels.native is not None else "python")

    def test_pure_python_switch(self) -> None:
        env = {**os.environ, "TOKVIZ_PURE_PYTHON": "1", "PYTHONPATH": str(ROOT)}
        out = subprocess.run(
            [sys.executable, "-c", "import tokviz.engine as e; print(e.backend())"],
            env=env, cwd=ROOT, capture_output=True, text=True, check=True,
        )
        assert out.stdout.strip() == "python"

    @pytest.mark.skipif(os.environ.get("TOKVIZ_EXPECT_NATIVE") != "1", reason="only where the build must have a compiler")
    def test_native_core_was_built(self) -> None:
        # CI sets TOKVIZ_EXPECT_NATIVE=1: there a silently failed build would leave pure Python
        assert backend() == "native"


@needs_native
class TestBpeNative:
    VOCAB, MERGES = grown_merges("abcd", 60, seed=1)

    def make(self, **opts: Any) -> BPE:
        return BPE(self.VOCAB, self.MERGES, **opts)

    @settings(max_examples=300, deadline=None)
    @given(texts)
    def test_merges_mode(self, text: str) -> None:
        fast, ref = self.make(), python_twin(self.make)
        assert fast.tokenize(text) == ref.tokenize(text)
        assert list(zip(*fast.tokenize_columns(text))) == list(ref.tokenize(text))

    @settings(max_examples=300, deadline=None)
    @given(texts)
    def test_rank_mode(self, text: str) -> None:
        tokens = list(self.VOCAB)
        ranks = list(range(len(tokens)))
        random.Random(7).shuffle(ranks[4:])  # single chars keep low ranks; the rest shuffled
        table = dict(zip(tokens, ranks))
        fast = BPE.from_ranks(table)
        ref = python_twin(lambda: BPE.from_ranks(table))
        assert fast.tokenize(text) == ref.tokenize(text)
        assert list(zip(*fast.tokenize_columns(text))) == list(ref.tokenize(text))

    def test_long_pieces_take_the_heap(self) -> None:
        rng = random.Random(3)
        for text in ("ab" * 5000, "a" * 3000, "".join(rng.choice("abcd") for _ in range(20_000))):
            fast, ref = self.make(cache_capacity=0), python_twin(lambda: self.make(cache_capacity=0))
            assert fast.tokenize(text) == ref.tokenize(text)

    @settings(max_examples=200, deadline=None)
    @given(st.text(alphabet="abcdé€", max_size=300))
    def test_byte_fallback_and_unk(self, text: str) -> None:
        vocab = dict(self.VOCAB)
        for b in range(256):
            vocab[f"<0x{b:02X}>"] = len(vocab)
        vocab["<unk>"] = len(vocab)
        for opts in ({"byte_fallback": True}, {"unk_token": "<unk>"}, {"unk_token": "<unk>", "fuse_unk": True}):
            fast = BPE(vocab, self.MERGES, **opts)
            ref = python_twin(lambda: BPE(vocab, self.MERGES, **opts))
            assert fast.tokenize(text) == ref.tokenize(text), opts

    @settings(max_examples=200, deadline=None)
    @given(st.text(alphabet="abc", min_size=1, max_size=60))
    def test_prefix_and_suffix(self, text: str) -> None:
        vocab, merges = grown_merges("abc", 40, seed=5, prefix="##")
        fast = BPE(vocab, merges, continuing_subword_prefix="##")
        ref = python_twin(lambda: BPE(vocab, merges, continuing_subword_prefix="##"))
        assert fast.tokenize(text) == ref.tokenize(text)

    @settings(max_examples=200, deadline=None)
    @given(texts)
    def test_merge_trace_equals_native_tokens(self, text: str) -> None:
        model = self.make()
        tokens, traces = model.tokenize_traced(text)
        assert tuple(tokens) == model.tokenize(text)
        # each trace's initial symbols spell its token's text
        assert ["".join(t.initial) for t in traces] == [text[s:e] for _, s, e in tokens]


def toy_unigram(seed: int, *, sentencepiece: bool, low: float = -8.0, high: float = -0.5) -> Unigram:
    rng = random.Random(seed)
    alphabet = "▁abcd"
    # "▁" only at the start of a piece, as in real models: SentencePiece's chunked Python path
    # (cuts before each "▁") then runs on the reference side
    pieces = {rng.choice(("", "▁")) + "".join(rng.choice("abcd") for _ in range(rng.randint(1, 3))) for _ in range(40)}
    pieces -= set(alphabet)
    vocab = [("<unk>", 0.0)] + [(c, rng.uniform(low, high)) for c in alphabet]
    vocab += [(p, rng.uniform(low, high)) for p in sorted(pieces)]
    if not sentencepiece:
        return Unigram(vocab, unk_id=0)
    types = [PieceType.UNKNOWN] + [PieceType.NORMAL] * (len(vocab) - 1)
    types[-1] = PieceType.USER_DEFINED
    types[-2] = PieceType.UNUSED
    return Unigram(vocab, unk_id=0, piece_types=types, sentencepiece=True)


def wide_unigram(seed: int, *, sentencepiece: bool, byte_fallback: bool, alphabet: str) -> Unigram:
    """A Unigram model over a wide alphabet: every character, every two-character piece that
    starts with one of three characters (their nodes have len(alphabet) children), random
    longer pieces; with byte fallback the 256 ``<0xNN>`` pieces."""
    rng = random.Random(seed)
    pieces = set(alphabet) | {a + b for a in alphabet[:3] for b in alphabet}
    pieces |= {"".join(rng.choice(alphabet) for _ in range(rng.randint(2, 5))) for _ in range(300)}
    vocab = [("<unk>", 0.0)] + [(p, rng.uniform(-9.0, -0.5)) for p in sorted(pieces)]
    types = [PieceType.UNKNOWN] + [PieceType.NORMAL] * (len(vocab) - 1)
    if byte_fallback:
        vocab += [(f"<0x{b:02X}>", 0.0) for b in range(256)]
        types += [PieceType.BYTE] * 256
    if not sentencepiece:
        return Unigram(vocab, unk_id=0, byte_fallback=byte_fallback)
    return Unigram(vocab, unk_id=0, piece_types=types, sentencepiece=True, byte_fallback=byte_fallback)


@needs_native
class TestUnigramNative:
    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet="▁abcdx", max_size=300), st.booleans())
    def test_same_tokens(self, text: str, sentencepiece: bool) -> None:
        fast = toy_unigram(11, sentencepiece=sentencepiece)
        ref = python_twin(lambda: toy_unigram(11, sentencepiece=sentencepiece))
        assert fast.tokenize(text) == ref.tokenize(text)

    def test_float32_re_basing(self) -> None:
        # piece scores of -300..-900 pass sentencepiece's re-basing threshold (1e5) after a few
        # hundred pieces, so these texts exercise the re-basing branch several times
        rng = random.Random(2)
        fast = toy_unigram(4, sentencepiece=True, low=-900.0, high=-300.0)
        ref = python_twin(lambda: toy_unigram(4, sentencepiece=True, low=-900.0, high=-300.0))
        for n in (500, 2000, 9000):
            text = "".join(rng.choice("▁abcd") for _ in range(n))
            assert fast.tokenize(text) == ref.tokenize(text)

    @settings(max_examples=150, deadline=None)
    @given(st.data(), st.booleans(), st.booleans())
    def test_wide_alphabet(self, data: Any, sentencepiece: bool, byte_fallback: bool) -> None:
        # 40 characters (Latin, CJK, emoji: astral code points take the native trie's table,
        # not its array) and pieces that give the root and several inner nodes more children
        # than get a sorted edge run, so dense rows and edge runs both decide; "?" and "😀"
        # are in no piece (unknown runs: merged, or byte fallback)
        alphabet = "abcdefghijklmnopqrstuvwxyzあいう日本語🙂🚀▁" + "0123"
        text = data.draw(st.text(alphabet=alphabet + "?😀", max_size=200))
        fast = wide_unigram(5, sentencepiece=sentencepiece, byte_fallback=byte_fallback, alphabet=alphabet)
        ref = python_twin(lambda: wide_unigram(5, sentencepiece=sentencepiece, byte_fallback=byte_fallback,
                                               alphabet=alphabet))
        assert fast.tokenize(text) == ref.tokenize(text)

    @pytest.mark.parametrize("sentencepiece", [True, False], ids=["sentencepiece", "hf"])
    @pytest.mark.parametrize("byte_fallback", [False, True], ids=["unk", "byte-fallback"])
    def test_unknown_runs_at_the_edges(self, sentencepiece: bool, byte_fallback: bool) -> None:
        # unknown runs first, last, alone and next to each other (the native merge of runs)
        alphabet = "abc日🙂"
        for text in ("??", "??ab", "ab??", "?a?", "😀?😀a", "a😀", "?", "a??b???c"):
            fast = wide_unigram(3, sentencepiece=sentencepiece, byte_fallback=byte_fallback, alphabet=alphabet)
            ref = python_twin(lambda: wide_unigram(3, sentencepiece=sentencepiece, byte_fallback=byte_fallback,
                                                   alphabet=alphabet))
            assert fast.tokenize(text) == ref.tokenize(text), text

    def test_lattice_agrees_with_native_tokens(self) -> None:
        # HF flavour (float64 in both); texts without unknown chars, so the encoder's tokens are
        # the lattice's best path node for node
        rng = random.Random(9)
        model = toy_unigram(13, sentencepiece=False)
        for _ in range(200):
            text = "".join(rng.choice("▁abcd") for _ in range(rng.randint(1, 40)))
            best = Lattice.build(model, text).viterbi()
            assert list(best.ids) == [i for i, _, _ in model.tokenize(text)]


def utf8_reference(model: BPE, text: str) -> tuple:
    """`tokenize_utf8` computed the plain way: tokenize the proxies, then map bytes to chars."""
    from tokviz.engine.byte_alphabet import bytes_to_proxy

    data = text.encode("utf-8")
    spans = model.tokenize(bytes_to_proxy(data))
    char_of = [k for k, ch in enumerate(text) for _ in ch.encode("utf-8")]
    return (
        [i for i, _, _ in spans], [s for _, s, _ in spans], [e for _, _, e in spans],
        [char_of[s] for _, s, _ in spans], [char_of[e - 1] + 1 for _, _, e in spans], len(data),
    )


@needs_native
class TestByteLevelNative:
    """The native byte-level entry (`BPE.tokenize_utf8`) against the proxies through Python."""

    @staticmethod
    def vocab_and_merges() -> tuple[dict[str, int], list[tuple[str, str]]]:
        from tokviz.engine.byte_alphabet import bytes_to_proxy

        rng = random.Random(21)
        proxies = [bytes_to_proxy(bytes([b])) for b in range(256)]
        vocab = {p: k for k, p in enumerate(proxies)}
        common = [bytes_to_proxy(c.encode()) for c in "ab é日😀"]
        parts = [p for c in common for p in c]  # the proxies of those chars' bytes
        merges: list[tuple[str, str]] = []
        for _ in range(80):
            a, b = rng.choice(parts), rng.choice(parts)
            if (a, b) not in merges:
                merges.append((a, b))
                vocab.setdefault(a + b, len(vocab))
                parts.append(a + b)
        return vocab, merges

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet="ab é日😀", max_size=200), st.sampled_from(["merges", "merges-ignore", "ranks"]))
    def test_same_as_proxies(self, text: str, mode: str) -> None:
        vocab, merges = self.vocab_and_merges()

        def make() -> BPE:
            if mode == "ranks":
                return BPE.from_ranks(vocab)
            return BPE(vocab, merges, ignore_merges=mode == "merges-ignore")

        fast, ref = make(), python_twin(make)
        assert ref.tokenize_utf8(text) is None  # (pure Python offers no such entry)
        assert tuple(fast.tokenize_utf8(text)) == utf8_reference(ref, text)

    @pytest.mark.parametrize("mode", ["merges", "ranks"])
    def test_scratch_boundary(self, mode: str) -> None:
        """Chunks of 127..130 UTF-8 bytes, where the stack scratch (128 bytes) gives way to
        allocated columns, ASCII and not: the same tokens either side of the boundary."""
        vocab, merges = self.vocab_and_merges()

        def make() -> BPE:
            return BPE.from_ranks(vocab) if mode == "ranks" else BPE(vocab, merges)

        fast, ref = make(), python_twin(make)
        for size in range(124, 134):
            for text in ("ab" * 70)[:size], ("日" + "é" * 70)[: size // 2], "😀" * (size // 4) + "a" * (size % 4):
                assert tuple(fast.tokenize_utf8(text)) == utf8_reference(ref, text), (size, text)

    def test_lone_surrogate_is_an_encode_error(self) -> None:
        """A lone surrogate has no UTF-8: the error Python's own encoder raises, short or long."""
        fast = BPE.from_ranks(self.vocab_and_merges()[0])
        for text in ("a\ud800b", "x" * 300 + "\udfff"):
            with pytest.raises(UnicodeEncodeError):
                fast.tokenize_utf8(text)
