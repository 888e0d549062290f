"""SentencePiece normalization: charsmap decoding, SentencePiece's whitespace rules and alignment,
HF's ``Precompiled`` normalizer; parity with sentencepiece and tokenizers."""

from __future__ import annotations

import struct
import sys

import pytest
from hypothesis import given, settings, strategies as st
from support import ModuleCache, build_charsmap, bundle_bytes, require_module

from tokviz.engine.errors import TokvizFormatError
from tokviz.engine.normalizers.precompiled import CharsMap, Precompiled, SentencePieceNormalizer
from tokviz.engine.text import NormalizedText

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
from parity.cases import TRICKY  # noqa: E402

SP_MODELS = ["sentencepiece-test/test_model.model", "albert-30k-clean/30k-clean.model"]


def sp_proto(rel: str):  # noqa: ANN201
    from tokviz.io.sentencepiece import parse_model_proto

    return parse_model_proto(bundle_bytes(rel), source=rel)


def sp_normalizer(rel: str) -> SentencePieceNormalizer:
    from tokviz.io.sentencepiece import load_sentencepiece_model

    return load_sentencepiece_model(bundle_bytes(rel), source=rel).normalizer  # type: ignore[return-value]


class TestCharsMap:
    def test_hand_built_double_array_decodes(self) -> None:
        cm = CharsMap.from_bytes(build_charsmap({"a": "b", "ab": "X", "ﬁ": "fi", "\u3000": " "}))
        assert cm.rules == {"a": "b", "ab": "X", "ﬁ": "fi", "\u3000": " "}
        assert cm.longest_match("xabc", 1) == (2, "X")  # longest rule wins
        assert cm.longest_match("xac", 1) == (1, "b")
        assert cm.longest_match("xyz", 0) is None
        assert cm.shortest_prefix_rule("ab") == "b"  # HF: the shortest prefix rule
        assert cm.start_sets() == (frozenset({"a", "ﬁ", "\u3000"}), frozenset({"a"}), frozenset({"b"}))

    def test_real_charsmap(self) -> None:
        proto = sp_proto("sentencepiece-test/test_model.model")
        cm = CharsMap.from_bytes(proto.normalizer_spec.precompiled_charsmap)
        assert cm.longest_match("ﬁ", 0) == (1, "fi")
        assert cm.longest_match("Ａ", 0) == (1, "A")
        assert cm.longest_match("e\u0301", 0) == (2, "é")  # composition is a 2-char rule

    def test_too_short(self) -> None:
        with pytest.raises(TokvizFormatError, match="too short"):
            CharsMap.from_bytes(b"\x01\x00", source="m.model")

    def test_trie_size_exceeds_blob(self) -> None:
        with pytest.raises(TokvizFormatError, match="exceeds the blob size"):
            CharsMap.from_bytes(struct.pack("<I", 4000) + b"\0" * 16)

    def test_trie_size_not_units(self) -> None:
        with pytest.raises(TokvizFormatError, match="multiple of 4"):
            CharsMap.from_bytes(struct.pack("<I", 6) + b"\0" * 16)

    def test_bad_replacement_offset(self) -> None:
        blob = bytearray(build_charsmap({"a": "b"}))
        # the value unit of "a" sits at region 2's base (512); point it past the table
        struct.pack_into("<I", blob, 4 + 4 * 512, (1 << 31) | 999)
        with pytest.raises(TokvizFormatError, match="replacement offset 999"):
            CharsMap.from_bytes(bytes(blob), source="x.model")

    def test_value_slot_outside_trie(self) -> None:
        blob = bytearray(build_charsmap({"a": "b"}))
        size = struct.unpack_from("<I", blob)[0] // 4
        pos = 256 + ord("a")
        unit = struct.unpack_from("<I", blob, 4 + 4 * pos)[0]
        bad = (unit & 0x3FF) | ((pos ^ (size + 5000)) << 10)
        struct.pack_into("<I", blob, 4 + 4 * pos, bad)
        with pytest.raises(TokvizFormatError, match="outside the trie"):
            CharsMap.from_bytes(bytes(blob))

    def test_bad_charsmap_in_model_file(self) -> None:
        from tokviz.io import sentencepiece_model_pb2 as pb
        from tokviz.io.sentencepiece import load_sentencepiece_model

        proto = pb.ModelProto()
        proto.ParseFromString(bundle_bytes("sentencepiece-test/test_model.model"))
        proto.normalizer_spec.precompiled_charsmap = struct.pack("<I", 10**6) + b"\0" * 64
        with pytest.raises(TokvizFormatError, match="precompiled_charsmap.*exceeds"):
            load_sentencepiece_model(proto.SerializeToString(), source="broken.model")


class TestSentencePieceNormalizer:
    def test_whitespace_rules(self) -> None:
        n = SentencePieceNormalizer(None)
        assert n.normalize_str("  Hello   world \t") == "▁Hello▁world▁\t"
        assert n.normalize_str("   ") == ""
        assert n.normalize_str("") == ""
        keep = SentencePieceNormalizer(None, remove_extra_whitespaces=False)
        assert keep.normalize_str(" a  b ") == "▁▁a▁▁b▁"
        raw = SentencePieceNormalizer(None, escape_whitespaces=False)
        assert raw.normalize_str("a b") == " a b"
        suffix = SentencePieceNormalizer(None, treat_whitespace_as_suffix=True)
        assert suffix.normalize_str("a  b ") == "a▁b▁"
        nodummy = SentencePieceNormalizer(None, add_dummy_prefix=False)
        assert nodummy.normalize_str("a b") == "a▁b"

    def test_alignment_is_norm_to_orig(self) -> None:
        n = SentencePieceNormalizer(CharsMap.from_rules({"ﬁ": "fi", "\u200b": ""}))
        nt = n.normalize(NormalizedText.identity(" ﬁx\u200b  y"))
        assert nt.text == "▁fix▁y"
        # the dummy ▁ is empty at the first kept char; "f" and "i" both come from "ﬁ";
        # the removed zero-width space and the extra space belong to the char before them
        assert nt.alignments() == [(1, 1), (1, 1), (1, 2), (2, 4), (4, 6), (6, 7)]
        assert nt.original_span(0, 4) == (1, 4)
        assert nt.original_span(4, 6) == (4, 7)
        assert nt.original_span(1, 1) == (1, 1)  # empty ranges map through the alignment

    def test_user_defined_kept_verbatim(self) -> None:
        n = SentencePieceNormalizer(CharsMap.from_rules({"Ａ": "A"}), user_defined=["ＡＢ"])
        assert n.normalize_str("ＡＢＡ") == "▁ＡＢA"

    def test_offset_piece(self) -> None:
        n = SentencePieceNormalizer(None)
        nt = n.normalize(NormalizedText.identity("xx a b", 3, 6))
        assert nt.text == "▁a▁b"
        assert nt.original_span(0, 2) == (3, 4)

    @pytest.mark.parametrize("rel", SP_MODELS, ids=lambda r: r.split("/")[0])
    def test_tricky_equal_sentencepiece(self, rel: str) -> None:
        spm = require_module("sentencepiece")
        sp = spm.SentencePieceProcessor(model_file=None, model_proto=bundle_bytes(rel))
        norm = sp_normalizer(rel)
        for case_id, text in TRICKY:
            assert norm.normalize_str(text) == sp.normalize(text), case_id

    @settings(max_examples=150, deadline=None)
    @given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=30))
    def test_hypothesis_equal_sentencepiece(self, text: str) -> None:
        spm = require_module("sentencepiece")
        sp = _sp_cached("albert-30k-clean/30k-clean.model", spm)
        norm = _norm_cached("albert-30k-clean/30k-clean.model")
        assert norm.normalize_str(text) == sp.normalize(text)

    def test_astral_characters_equal_sentencepiece(self) -> None:
        # The scan pattern treats every character beyond the BMP as worth a closer look (a class
        # with astral ranges is slow in `re`); rule starts and plain astral characters alike
        # must come out as sentencepiece has them, with the same alignment.
        spm = require_module("sentencepiece")
        rel = "albert-30k-clean/30k-clean.model"
        sp = _sp_cached(rel, spm)
        norm = _norm_cached(rel)
        starts = sorted(c for c in norm.charsmap.first_chars if ord(c) >= 0x10000)  # type: ignore[union-attr]
        assert len(starts) > 1000
        plain = ["😀", "🙂", "𓀀", "\U0001f3fb", "\U000e0041"]
        for c in starts + plain:
            for text in (c, f"a{c}b", f"{c}{c}", f" {c} x", f"{c}\u0301", f"x {c}  {c}"):
                want = sp.normalize(text, with_offsets=True)
                got_text, n2o = norm.normalize_with_map(text)
                assert (got_text, n2o) == (want[0], list(want[1])), repr(text)

    @pytest.mark.parametrize("rel", SP_MODELS, ids=lambda r: r.split("/")[0])
    def test_scan_shortcuts_equal_sentencepiece(self, rel: str) -> None:
        # the normalizer copies runs without rule lookups; mix the characters that decide where
        # a run ends (rule starts, second characters of longer rules, blanks, stop characters)
        # with plain letters, leading blanks and line ends, and compare text and alignment
        import random

        spm = require_module("sentencepiece")
        sp = _sp_cached(rel, spm)
        norm = _norm_cached(rel)
        rng = random.Random(11)
        pools = [sorted(norm._stop), sorted(norm._multi1), sorted(norm._multi2), sorted(norm._blank), list("ab xy\n")]
        pools = [p for p in pools if p]
        for _ in range(3000):
            text = "".join(rng.choice(rng.choice(pools)) for _ in range(rng.randint(1, 8)))
            if rng.random() < 0.3:
                text = "  " + text + "\n"
            want = sp.normalize(text, with_offsets=True)
            got = norm.normalize_with_map(text)
            if not want[0]:  # (all blank: no alignment to compare; ours is empty, theirs [0])
                assert got[0] == "", repr(text)
                continue
            assert got == (want[0], list(want[1])), repr(text)


_CACHE = ModuleCache()


def _sp_cached(rel: str, spm):  # noqa: ANN001, ANN202
    key = ("sp", rel)
    if key not in _CACHE:
        _CACHE[key] = spm.SentencePieceProcessor(model_proto=bundle_bytes(rel))
    return _CACHE[key]


def _norm_cached(rel: str) -> SentencePieceNormalizer:
    key = ("norm", rel)
    if key not in _CACHE:
        _CACHE[key] = sp_normalizer(rel)
    return _CACHE[key]


class TestPrecompiled:
    def _pair(self):  # noqa: ANN202
        tk = require_module("tokenizers")
        if "pair" not in _CACHE:
            blob = sp_proto("albert-30k-clean/30k-clean.model").normalizer_spec.precompiled_charsmap
            _CACHE["pair"] = (Precompiled(blob), tk.normalizers.Precompiled(blob))
        return _CACHE["pair"]

    def test_tricky_equal_hf(self) -> None:
        ours, hf = self._pair()
        for case_id, text in TRICKY:
            assert ours.normalize_str(text) == hf.normalize_str(text), case_id

    @settings(max_examples=150, deadline=None)
    @given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=30))
    def test_hypothesis_equal_hf(self, text: str) -> None:
        ours, hf = self._pair()
        assert ours.normalize_str(text) == hf.normalize_str(text)

    def test_grapheme_rule_and_alignment(self) -> None:
        p = Precompiled(CharsMap.from_rules({"ﬁ": "fi", "x": ""}))
        nt = p.normalize(NormalizedText.identity("aﬁxb"))
        assert nt.text == "afib"
        assert nt.original_span(1, 3) == (1, 3)  # "fi" <- "ﬁ" (+ the removed "x" folded in)
        assert nt.original_span(3, 4) == (3, 4)

    def test_json_round_trip(self) -> None:
        blob = build_charsmap({"a": "b"})
        import base64

        p = Precompiled.from_json({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(blob).decode()})
        assert p.normalize_str("cat") == "cbt"
        assert Precompiled.from_json(p.to_json()).normalize_str("a") == "b"
        with pytest.raises(TokvizFormatError):
            Precompiled.from_json({"type": "Precompiled", "precompiled_charsmap": "!!notbase64"})


class TestLongerRuleBeforeAStopCharacter:
    """A longer rule whose second character is itself a rule ("シ" + halfwidth "ﾞ" -> "ジ",
    "W" + U+0301 -> "Ẃ" in nmt_nfkc) must win over the one-character rule at that second
    character: the scan has to step back to the rule's first character."""

    @pytest.mark.parametrize("rel", SP_MODELS[:2], ids=lambda r: r.split("/")[0])
    def test_every_such_rule_equals_sentencepiece(self, rel: str) -> None:
        spm = require_module("sentencepiece")
        sp = _sp_cached(rel, spm)
        norm = _norm_cached(rel)
        assert norm.charsmap is not None
        single, _, _ = norm.charsmap.start_sets()
        longer = [k for k in norm.charsmap.rules if len(k) >= 2 and k[1] in single]
        assert longer, "the bundle's charsmap has such rules (nmt_nfkc does)"
        for key in longer:
            text = "x" + key + "y"
            assert norm.normalize_str(text) == sp.normalize(text), [hex(ord(c)) for c in key]

    def test_halfwidth_voiced_mark_pieces(self) -> None:
        spm = require_module("sentencepiece")
        rel = "sentencepiece-test/test_model.model"
        from tokviz.io.sentencepiece import load_sentencepiece_model

        tok = load_sentencepiece_model(bundle_bytes(rel), source=rel)
        sp = _sp_cached(rel, spm)
        text = "xシﾞy ﾊﾟﾝ"
        assert tok.encode(text).tokens == sp.encode(text, out_type=str)
        assert tok.encode(text).ids == sp.encode(text)
