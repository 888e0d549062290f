"""The native SentencePiece kernels (``spm_normalize``, ``spm_bpe_encode`` in _native/spm.c) against
their pure-Python references, which must give identical results: the normalized text and its
``norm_to_orig`` for every whitespace flag, charsmap and user-defined symbol set; the BPE
pieces of real and toy models; and the Python fallback wherever the C declines (a charsmap the
C cannot vouch for, UNUSED pieces).

A component built while ``kernels.native`` is None runs pure Python, so both run in one process
(`python_twin`); with ``TOKVIZ_PURE_PYTHON=1`` these tests skip (the parity suite covers Python).
"""

from __future__ import annotations

import itertools
import struct
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from support import ModuleCache, build_charsmap, bundle_bytes, python_twin

from tokviz.engine import kernels
from tokviz.engine.errors import TokvizFormatError
from tokviz.engine.models._spm import PieceType, merge_unknown_runs
from tokviz.engine.models.sentencepiece_bpe import SentencePieceBPE
from tokviz.engine.models.unigram import Unigram
from tokviz.engine.normalizers.precompiled import CharsMap, SentencePieceNormalizer
from tokviz.engine.text import NormalizedText
from tokviz.io.sentencepiece import load_sentencepiece_model, parse_model_proto

needs_native = pytest.mark.skipif(kernels.native is None, reason="native core not built or TOKVIZ_PURE_PYTHON=1")
pytestmark = needs_native

# Characters where normalization is subtle: spaces of every kind (NBSP, ideographic, tab, CR/LF),
# control chars and NUL, zero-width, the escaped space itself, combining marks, fullwidth and
# halfwidth forms (halfwidth katakana + voiced marks: two-character rules), ligatures, circled
# digits, U+FFFD, astral letters and emoji, Hangul jamo, and the user-defined symbols' chars.
ALPHABET = (
    " \u00a0\u3000\t\n\r\x00\x01\x7f\u200b\u2581abcAZ09()\"-.,"
    "\u0301\u0308\u00e9\u00f1\uff21\uff11\uff76\uff9e\uff9f\uff71\u30b7\ufb01\u2460\u2026\u2122"
    "\ufffd\U0001f600\U00010000\U0001d400\u1100\u1161\ud55c\u6f22\u306e"
)
texts = st.text(alphabet=ALPHABET, max_size=60)
FLAGS = list(itertools.product([False, True], repeat=4))  # dummy prefix, remove ws, escape ws, ws suffix
USER_DEFINED = ("(", ")", "ab", "abc", "a b", "\u2581x", "\U0001f600\U0001f600")
# hand-made rules: multi-character keys, a shorter rule inside a longer one, rules to spaces, to
# nothing, to several characters, an astral key
HAND_RULES = {
    "\uff76\uff9e": "\u30ac", "\uff76": "\u30ab", "\u00a0": " ", "\u3000": "  ", "\t": " ",
    "\u200b": "", "\ufb01": "fi", "A": "a", "aA": "x y ", "\U0001d400": "A", "\u2122": "TM",
}


def real_charsmap(rel: str) -> bytes:
    return parse_model_proto(bundle_bytes(rel), source=rel).normalizer_spec.precompiled_charsmap


CHARSMAPS = {
    "none": None,
    "nmt_nfkc": real_charsmap("sentencepiece-test/test_model.model"),
    "albert": real_charsmap("albert-30k-clean/30k-clean.model"),
    "hand": build_charsmap(HAND_RULES),
}


_BUILT = ModuleCache()


def normalizers(blob: bytes | None, flags: tuple[bool, ...], ud: tuple[str, ...]) -> tuple[Any, Any]:
    """A native normalizer and its pure-Python twin (built once per arguments: a real charsmap
    takes a while to decode)."""
    key = (blob, flags, ud)
    if key not in _BUILT:
        _BUILT[key] = _normalizers(blob, flags, ud)
    return _BUILT[key]


def _normalizers(blob: bytes | None, flags: tuple[bool, ...], ud: tuple[str, ...]) -> tuple[Any, Any]:
    def make() -> SentencePieceNormalizer:
        cm = CharsMap.from_bytes(blob, source="test") if blob is not None else None
        dummy, remove, escape, suffix = flags
        return SentencePieceNormalizer(cm, add_dummy_prefix=dummy, remove_extra_whitespaces=remove,
                                       escape_whitespaces=escape, treat_whitespace_as_suffix=suffix, user_defined=ud)

    return make(), python_twin(make)


def alignment(nt: NormalizedText) -> tuple[str, list[int] | None, list[int] | None]:
    return nt.text, None if nt.starts is None else list(nt.starts), None if nt.ends is None else list(nt.ends)


class TestSpmNormalize:
    @pytest.mark.parametrize("name", list(CHARSMAPS))
    @pytest.mark.parametrize("flags", FLAGS, ids=lambda f: "".join("DREX"[k] if v else "-" for k, v in enumerate(f)))
    @settings(max_examples=40, deadline=None)
    @given(text=texts)
    def test_same_map_as_python(self, name: str, flags: tuple[bool, ...], text: str) -> None:
        fast, ref = normalizers(CHARSMAPS[name], flags, USER_DEFINED if name != "albert" else ())
        assert fast._native_table() is not None and ref._native_table() is None
        assert fast.normalize_with_map(text) == ref.normalize_with_map(text) == fast.normalize_with_map_py(text)

    @pytest.mark.parametrize("name", ["nmt_nfkc", "hand"])
    @settings(max_examples=150, deadline=None)
    @given(text=texts, start=st.integers(0, 5))
    def test_same_alignment_inside_a_longer_text(self, name: str, text: str, start: int) -> None:
        # a piece of a longer original: positions are shifted by its start (the C adds `base`)
        fast, ref = normalizers(CHARSMAPS[name], (True, True, True, False), USER_DEFINED)
        original = "x\u00a0 y\uff76"[:start] + text
        piece = NormalizedText.identity(original, start)
        a, b = fast.normalize(piece), ref.normalize(piece)
        assert type(a) is type(b)
        assert (a.orig_start, a.orig_end) == (b.orig_start, b.orig_end)
        assert alignment(a) == alignment(b)
        for s in range(len(a.text) + 1):
            assert a.original_span(s, len(a.text)) == b.original_span(s, len(b.text))

    def test_hand_checked_cases(self) -> None:
        fast, _ = normalizers(CHARSMAPS["hand"], (True, True, True, False), USER_DEFINED)
        # "\u3000" -> "  " is not exactly " ", so it ends the leading-space loop; after the dummy
        # prefix both its spaces are stripped (they follow an emitted space). "aA" is the longer
        # rule at 2 ("x y "); its trailing space goes, and the end maps to where it began (2)
        assert fast.normalize_with_map("\u3000baA") == ("\u2581bx\u2581y", [0, 1, 2, 2, 2, 2])
        # the user-defined "a b" is copied verbatim (its space escaped), before the rule "aA"
        assert fast.normalize_with_map("a bA")[0] == "\u2581a\u2581ba"
        # the halfwidth pair is one rule, the lone halfwidth ka another
        assert fast.normalize_with_map("\uff76\uff9e\uff76")[0] == "\u2581\u30ac\u30ab"

    def test_real_model_files(self) -> None:
        for rel in ("albert-30k-clean/30k-clean.model", "sentencepiece-test/test_ja_model.model"):
            data = bundle_bytes(rel)
            fast = load_sentencepiece_model(data, source=rel).normalizer
            ref = python_twin(lambda: load_sentencepiece_model(data, source=rel)).normalizer  # noqa: B023
            for text in ("  Hello\u3000 World\u00a0!\r\n", "\uff76\uff9e\uff8a\uff9f ①…™ \ufb01x", "\U0001f600 a\u0301\n\n"):
                assert fast.normalize_with_map(text) == ref.normalize_with_map(text)

    def test_declines_a_charsmap_it_cannot_vouch_for(self) -> None:
        # a "diamond" trie (every level's two children share one base): 2**depth keys in a few
        # units. The Python's walk exceeds its step budget and says so; the native check sees the
        # budget would be exceeded and leaves the encode to the Python, so the error is the same.
        depth = 30
        units: dict[int, int] = {0: 256 << 10}
        for level in range(depth):
            base, nxt = 256 * (level + 1), 256 * (level + 2)
            for label in (0x61, 0x62):
                p = base ^ label
                units[p] = label | (int(level == depth - 1) << 8) | ((p ^ nxt) << 10)
        units[256 * (depth + 1)] = 1 << 31
        trie = struct.pack(f"<{max(units) + 1}I", *(units.get(i, 0) for i in range(max(units) + 1)))
        blob = struct.pack("<I", len(trie)) + trie + b"x\0"
        fast, ref = _normalizers(blob, (True, True, True, False), ())
        assert fast._native_table() is None
        for nz in (fast, ref):
            with pytest.raises(TokvizFormatError, match="steps"):
                nz.normalize_with_map("ab")

    def test_declines_a_replacement_that_is_not_utf8(self) -> None:
        # (a two-char key: a one-char rule is decoded, and fails, when the normalizer is built)
        blob = bytearray(build_charsmap({"qr": "Q"}))
        blob[blob.rindex(b"Q")] = 0xFF  # the replacement of "qr" becomes invalid UTF-8
        fast, ref = _normalizers(bytes(blob), (True, True, True, False), ())
        assert fast._native_table() is None
        for nz in (fast, ref):
            with pytest.raises(TokvizFormatError, match="not UTF-8"):
                nz.normalize_with_map("qr")


class TestSpmMergeUnknown:
    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.sampled_from([0, 0, 0, 1, 2, 7]), max_size=40))
    def test_same_as_python(self, ids: list[int]) -> None:
        starts = list(range(len(ids)))
        ends = [s + 1 for s in starts]
        got = kernels.native.spm_merge_unknown(ids, starts, ends, 0)  # type: ignore[union-attr]
        assert got == merge_unknown_runs(ids, starts, ends, 0)

    def test_hand_checked(self) -> None:
        # ids 5 0 0 6 0: the run of two unknowns at 1..3 becomes one piece (1, 3)
        got = kernels.native.spm_merge_unknown([5, 0, 0, 6, 0], [0, 1, 2, 3, 4], [1, 2, 3, 4, 5], 0)  # type: ignore[union-attr]
        assert got == ([5, 0, 6, 0], [0, 1, 3, 4], [1, 3, 4, 5])


class TestSpmFinish:
    """The processor's last step and the unknown values, native against Python."""

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.sampled_from(["a", "\u00e9", "\u3042", "\U0001f600", "?"]), max_size=12),
           st.lists(st.booleans(), max_size=12))
    def test_byte_fallback_same_as_python(self, chars: list[str], joins: list[bool]) -> None:
        # a toy vocab: "a" is a piece, every other char unknown; unknown runs may span chars
        pieces = ["<unk>", "a"] + [f"<0x{b:02X}>" for b in range(256)]
        types = [PieceType.UNKNOWN, PieceType.NORMAL] + [PieceType.BYTE] * 256
        text = "".join(chars)
        ids, starts, ends = [], [], []
        for k, c in enumerate(chars):
            i = 1 if c == "a" else 0
            if ids and i == 0 and ids[-1] == 0 and k < len(joins) and joins[k]:
                ends[-1] = k + 1  # one unknown piece over several chars
                continue
            ids.append(i)
            starts.append(k)
            ends.append(k + 1)

        def vocab() -> Any:
            from tokviz.engine.models._spm import SentencePieceVocab

            return SentencePieceVocab(pieces, [0.0] * len(pieces), [int(t) for t in types], byte_fallback=True)

        fast, ref = vocab(), python_twin(vocab)
        assert fast.finish_columns(text, ids, starts, ends) == ref.finish_columns(text, ids, starts, ends)
        assert list(zip(*fast.finish_columns(text, ids, starts, ends))) == ref.finish(text, list(zip(ids, starts, ends)))

    def test_byte_fallback_hand_checked(self) -> None:
        # "\u00e9" is C3 A9 in UTF-8: two byte pieces, the first with an empty span at 0
        got = kernels.native.spm_byte_fallback("\u00e9a", [0, 5], [0, 1], [1, 2], 0, list(range(100, 356)))  # type: ignore[union-attr]
        assert got == ([100 + 0xC3, 100 + 0xA9, 5], [0, 0, 1], [0, 1, 2])

    @settings(max_examples=200, deadline=None)
    @given(st.text(alphabet="ab\u00e9\U0001f600 ", max_size=30))
    def test_unknown_values_same_as_python(self, text: str) -> None:
        make = lambda: Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -2.0), ("ab", -2.5)], unk_id=0)  # noqa: E731
        fast, ref = make(), python_twin(make)
        ids, starts, ends = fast.tokenize_columns(text)
        values = [fast.id_to_token(i) for i in ids]
        assert fast.token_values_columns(text, ids, starts, ends, values) == ref.token_values_columns(
            text, ids, starts, ends, values)


def toy_bpe(**opts: Any) -> SentencePieceBPE:
    """A small SentencePiece BPE vocabulary: equal scores (leftmost wins), a USER_DEFINED piece
    (frozen), a CONTROL piece whose string is also a merge result (its id wins, as in
    ``PieceToId``), and optionally an UNUSED one."""
    pieces = ["<unk>", "<s>", "a", "b", "c", "\u2581", "ab", "bc", "abc", "\u2581a", "cc", "ccc", "<U>", "\u2581ab", "ccc"]
    scores = [0.0, 0.0, -1.0, -1.0, -1.0, -1.0, -2.0, -2.0, -3.0, -2.5, -2.0, -3.5, 0.0, -4.0, 0.0]
    types = [PieceType.UNKNOWN, PieceType.CONTROL] + [PieceType.NORMAL] * 10 + [
        PieceType.USER_DEFINED, PieceType.NORMAL, PieceType.CONTROL]
    if opts.pop("unused", False):
        types[pieces.index("bc")] = PieceType.UNUSED
    return SentencePieceBPE(pieces, scores, [int(t) for t in types], **opts)


class TestSpmBpe:
    @pytest.mark.parametrize("unused", [False, True])
    @settings(max_examples=300, deadline=None)
    @given(text=st.text(alphabet="abc\u2581x<U>", max_size=80))
    def test_toy_model_same_as_python(self, unused: bool, text: str) -> None:
        fast, ref = toy_bpe(unused=unused), python_twin(lambda: toy_bpe(unused=unused))
        assert fast._native_table() is not None and ref._native_table() is None
        assert fast.tokenize_columns(text) == ref.tokenize_columns(text)
        # traces stay in Python (the reference merge loop) and agree with the native pieces
        toks, _ = fast.tokenize_traced(text)
        assert list(toks) == list(zip(*fast.tokenize_columns(text)))

    def test_hand_checked_merges(self) -> None:
        m = toy_bpe()
        # "abc": the pairs "ab" and "bc" score -2.0 alike: the leftmost merges first, then "abc"
        # (-3.0) joins "ab" + "c"; "<U>" is user-defined: one frozen symbol
        assert [m.id_to_token(i) for i in m.tokenize_columns("abc<U>cc")[0]] == ["abc", "<U>", "cc"]
        # "x" is no piece: the unk id, spanning its char
        assert m.tokenize_columns("xab") == ([0, 6], [0, 1], [1, 3])
        # "ccc" merges as the NORMAL piece 11, and is the CONTROL piece 14's id
        assert m.tokenize_columns("ccc") == ([14], [0], [3])

    def test_unused_piece_falls_back_to_python(self) -> None:
        # "bc" is UNUSED: it still merges and is resegmented into "b" + "c" (Python's job)
        m = toy_bpe(unused=True)
        assert m._kernels.spm_bpe_encode(m._native_table(), "bc") is None
        assert [m.id_to_token(i) for i in m.tokenize_columns("bc")[0]] == ["b", "c"]

    @settings(max_examples=200, deadline=None)
    @given(text=st.text(alphabet=ALPHABET + "the quick brown fox \u3053\u3093\u306b\u3061\u306f", max_size=120))
    def test_mistral_same_as_python(self, text: str) -> None:
        data = bundle_bytes("mistral-7b-v0.1/tokenizer.model")
        fast, ref = MISTRAL.get(data)
        nt = fast.normalizer.normalize_with_map(text)[0]
        assert fast.model.tokenize_columns(nt) == ref.model.tokenize_columns(nt)
        assert fast.encode(text).ids == ref.encode(text).ids


class _Loaded:
    """Tokenizers loaded once per test session (native and pure-Python twin)."""

    def __init__(self) -> None:
        self._pair: tuple[Any, Any] | None = None

    def get(self, data: bytes) -> tuple[Any, Any]:
        if self._pair is None:
            self._pair = (load_sentencepiece_model(data, source="mistral"),
                          python_twin(lambda: load_sentencepiece_model(data, source="mistral")))
        return self._pair


MISTRAL = _Loaded()
