"""tokviz.analysis.compare: the spec's cases 1.iii-A..G (toy by hand, real against the references)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st
from support import bundle_path, require_module, tiktoken_encoding

import tokviz
from tokviz.analysis.compare import (
    Segmentation,
    TextIndex,
    atoms,
    collapse_whitespace,
    cut_ratios,
    cut_set,
    cuts_byte,
    cuts_char,
    f1_matrix,
    per_script,
    same_surface_tokens,
    script_runs,
    segment,
    span_agreement,
    surface_ids,
    vocab_overlap,
    votes,
)
from tokviz.engine.byte_alphabet import CHAR_TO_BYTE

REAL_TEXT = "The naïve café in 東京 costs ¥1,234."


def byte_spans_of_chars(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    ix = TextIndex(text)
    return [(ix.boundaries[s], ix.boundaries[e]) for s, e in spans]


# ---------------------------------------------------------------------- A. toy cut sets
class TestToyCutSets:
    """T = "unhappy cats" (12 chars, ASCII: chars = bytes; index 7 is the space)."""

    T = "unhappy cats"
    A = Segmentation.from_spans("A", [(0, 2), (2, 7), (7, 12)], surfaces=[b"un", b"happy", b" cats"])
    B = Segmentation.from_spans("B", [(0, 2), (2, 5), (5, 7), (8, 12)], surfaces=[b"un", b"hap", b"py", b"cats"])

    def test_cut_sets_raw_and_collapsed(self) -> None:
        ix = TextIndex(self.T)
        assert cuts_char(self.A, ix) == {2, 7}
        assert cuts_char(self.B, ix) == {2, 5, 7, 8}
        # the White_Space run [7, 8): cut 8 moves to 7
        assert cut_set(self.B, ix, collapse=True) == {2, 5, 7}

    def test_pairwise_raw(self) -> None:
        ix = TextIndex(self.T)
        s = cut_ratios(cut_set(self.A, ix, collapse=False), cut_set(self.B, ix, collapse=False))
        # |A∩B| = |{2,7}| = 2; F1 = 2·2/(2+4) = 4/6; P(B|A) = 2/4; R(B|A) = 2/2
        assert s.common == 2
        assert s.f1 == pytest.approx(4 / 6)
        assert s.precision == pytest.approx(0.5)
        assert s.recall == pytest.approx(1.0)

    def test_pairwise_collapsed(self) -> None:
        ix = TextIndex(self.T)
        s = cut_ratios(cut_set(self.A, ix), cut_set(self.B, ix))
        # {2,7} vs {2,5,7}: F1 = 2·2/(2+3) = 4/5; Jaccard = 2/3
        assert s.f1 == pytest.approx(0.8)
        assert s.jaccard == pytest.approx(2 / 3)

    def test_span_agreement(self) -> None:
        ix = TextIndex(self.T)
        # exact: A shares (0,2) of 3 spans; B shares (0,2) of 4
        assert span_agreement([self.A, self.B], ix) == pytest.approx([1 / 3, 1 / 4])
        # trimmed: " cats" (7,12) -> (8,12) matches B's "cats": A 2/3, B 2/4
        assert span_agreement([self.A, self.B], ix, trimmed=True) == pytest.approx([2 / 3, 2 / 4])

    def test_atoms(self) -> None:
        ix = TextIndex(self.T)
        got = [(a.start, a.end, a.status) for a in atoms([self.A, self.B], ix)]
        assert got == [(0, 2, "same"), (2, 5, "boundary"), (5, 7, "boundary"), (7, 8, "gap"), (8, 12, "boundary")]

    def test_id_only_needs_a_shared_id_space(self) -> None:
        ix = TextIndex("ab")
        x = Segmentation.from_spans("x", [(0, 2)], surfaces=[b"ab"], ids=[5])
        y = Segmentation.from_spans("y", [(0, 2)], surfaces=[b"ab"], ids=[9])
        assert atoms([x, y], ix)[0].status == "same"
        assert atoms([x, y], ix, compare_ids=True)[0].status == "id-only"


# ---------------------------------------------------------------------- B. byte cut inside a char
class TestByteCutInsideCharacter:
    """T = "é!": é = C3 A9, so 2 code points, 3 bytes, CB = {0, 2, 3}."""

    T = "é!"
    X = Segmentation.from_spans("X", [(0, 1), (1, 3)])  # [C3] [A9 21]
    Y = Segmentation.from_spans("Y", [(0, 2), (2, 3)])  # [é] [!]

    def test_cuts(self) -> None:
        ix = TextIndex(self.T)
        assert cuts_byte(self.X, ix.n_bytes) == {1}
        assert cuts_char(self.X, ix) == set()  # byte 1 is inside é
        assert cuts_byte(self.Y, ix.n_bytes) == {2}
        assert cuts_char(self.Y, ix) == {1}

    def test_f1_zero_in_both_units(self) -> None:
        ix = TextIndex(self.T)
        # char: {} vs {1} -> 0/(0+1) = 0; byte: {1} vs {2} -> 0
        assert cut_ratios(cut_set(self.X, ix), cut_set(self.Y, ix)).f1 == 0.0
        assert cut_ratios(cut_set(self.X, ix, unit="byte"), cut_set(self.Y, ix, unit="byte")).f1 == 0.0

    def test_hf_char_offsets_would_fake_agreement(self) -> None:
        # HF char spans of X are (0,1),(0,2): reading cuts from them gives {1} -> a false F1 of 1
        hf_cuts = {p for s, e in [(0, 1), (0, 2)] for p in (s, e) if 0 < p < 2}
        ix = TextIndex(self.T)
        assert cut_ratios(hf_cuts, cut_set(self.Y, ix)).f1 == 1.0
        assert cut_ratios(cut_set(self.X, ix), cut_set(self.Y, ix)).f1 != 1.0

    def test_real_byte_level_token_splitting_a_character(self) -> None:
        # r50k encodes " 東" as " \xe6" + "\x9d" + "\xb1": HF-style char spans claim the whole
        # character, the byte spans do not; the char cut set has no cut inside 東
        tok = tokviz.load(bundle_path("gpt2/r50k_base.tiktoken"))
        text = "a 東"
        seg = segment(tok, text)
        ix = TextIndex(text)
        assert cuts_char(seg, ix) == {1}  # only the cut after "a"; " \xe6" | "\x9d" | "\xb1" cut inside 東
        assert any(ix.char_of_byte(b) is None for b in cuts_byte(seg, ix.n_bytes))


# ---------------------------------------------------------------------- C. toy vocab overlap
class TestToyOverlap:
    def test_surfaces(self) -> None:
        from tokviz.engine.added_tokens import AddedToken
        from tokviz.engine.models.bpe import BPE
        from tokviz.engine.models.wordpiece import WordPiece
        from tokviz.engine.pre_tokenizers.byte_level import ByteLevel
        from tokviz.engine.pre_tokenizers.metaspace import Metaspace
        from tokviz.engine.tokenizer import Tokenizer

        def vocab(*tokens: str) -> dict[str, int]:
            return {t: i for i, t in enumerate(tokens)}

        bl = Tokenizer(BPE(vocab("Ġthe", "the", "Ġcat", "Ã©", "<|endoftext|>")), pre_tokenizer=ByteLevel(),
                       added_tokens=[AddedToken("<|endoftext|>", 4, special=True)])
        sp = Tokenizer(BPE(vocab("<s>", "▁the", "the", "▁cat", "é", "<0xC3>"), byte_fallback=True),
                       pre_tokenizer=Metaspace(), added_tokens=[AddedToken("<s>", 0, special=True)])
        wp = Tokenizer(WordPiece(vocab("[UNK]", "the", "##the", "cat", "##é"), unk_token="[UNK]"))
        a, b = set(surface_ids(bl)), set(surface_ids(sp))  # <|endoftext|> special, <s> added: out
        assert a == {b" the", b"the", b" cat", b"\xc3\xa9"}
        assert b == a | {b"\xc3"}
        # |A∩B| = 4, |A∪B| = 5 -> Jaccard 0.8
        assert len(a & b) == 4 and len(a & b) / len(a | b) == pytest.approx(0.8)
        assert vocab_overlap(bl, sp).jaccard == pytest.approx(0.8)
        # WordPiece at L1: word-initial x -> b" x", ##x -> b"x"; [UNK] is the unknown token: out
        c = set(surface_ids(wp, level="L1"))
        assert c == {b" the", b"the", b" cat", b"\xc3\xa9"}
        assert len(a & c) == 4


# ---------------------------------------------------------------------- D. toy per-script
class TestToyPerScript:
    """T = "ab 東京": scripts Latin Latin Common Han Han; 5 chars, 2+1+3+3 = 9 bytes."""

    T = "ab 東京"
    # tokens "ab" (0,2) | " 東" (2,6) | "京" (6,9), as byte spans
    S = Segmentation.from_spans("t", [(0, 2), (2, 6), (6, 9)])

    def test_runs(self) -> None:
        assert script_runs(self.T) == [(0, 2, "Latin"), (2, 3, "Common"), (3, 5, "Han")]

    def test_weights_and_ratios(self) -> None:
        got = per_script(self.S, TextIndex(self.T))
        lat, han, com = got["Latin"], got["Han"], got["Common"]
        # "ab" -> Latin 1; " 東" -> Han 1 (its only non-Common bytes are Han); "京" -> Han 1
        assert (lat.tokens, lat.chars, lat.bytes, lat.words) == (1.0, 2, 2, 1)
        assert lat.tokens_per_char == pytest.approx(0.5)  # 1/2
        assert lat.tokens_per_byte == pytest.approx(0.5)  # 1/2
        assert lat.tokens_per_word == pytest.approx(1.0)  # 1/1
        assert (han.tokens, han.chars, han.bytes) == (2.0, 2, 6)
        assert han.tokens_per_char == pytest.approx(1.0)  # 2/2
        assert han.tokens_per_byte == pytest.approx(2 / 6)
        assert han.tokens_per_word is None  # Han is written without separators: n/a
        assert (com.tokens, com.chars) == (0.0, 1)

    def test_split_weight(self) -> None:
        # one token over "aé東" (1 + 2 + 3 bytes, Latin 3 bytes, Han 3): half to each
        got = per_script(Segmentation.from_spans("t", [(0, 6)]), TextIndex("aé東"))
        assert got["Latin"].tokens == pytest.approx(0.5) and got["Han"].tokens == pytest.approx(0.5)

    def test_inherited_takes_previous_script(self) -> None:
        # U+0301 COMBINING ACUTE is Inherited: it joins the Cyrillic run before it
        assert script_runs("д\u0301") == [(0, 2, "Cyrillic")]
        assert script_runs("\u0301a") == [(0, 1, "Common"), (1, 2, "Latin")]


# ---------------------------------------------------------------------- E-G. real tokenizers
def _tiktoken_reference(name: str, rel: str):  # noqa: ANN202, ARG001 - name kept for the call sites
    return tiktoken_encoding(rel)


def _ref_tiktoken_seg(name: str, rel: str, text: str) -> Segmentation:
    enc = _tiktoken_reference(name, rel)
    ids = enc.encode(text, disallowed_special=())
    spans, pos, surf = [], 0, []
    for i in ids:
        b = enc.decode_single_token_bytes(i)
        spans.append((pos, pos + len(b)))
        surf.append(b)
        pos += len(b)
    return Segmentation.from_spans(name, spans, surfaces=surf, ids=ids)


def _ref_hf_seg(name: str, rel: str, text: str) -> Segmentation:
    tokenizers = require_module("tokenizers")
    path = bundle_path(rel)
    data = path.read_bytes()
    if path.suffix == ".gz":
        import gzip

        data = gzip.decompress(data)
    tok = tokenizers.Tokenizer.from_str(data.decode("utf-8"))
    enc = tok.encode(text, add_special_tokens=False)
    if name == "qwen3":  # byte-level: the token strings are the bytes, which tile the (NFC) text
        spans, pos = [], 0
        for t in enc.tokens:
            n = len(bytes(CHAR_TO_BYTE[c] for c in t))
            spans.append((pos, pos + n))
            pos += n
    else:  # BERT / Mistral: no token splits a character here, char offsets convert exactly
        spans = byte_spans_of_chars(text, [tuple(o) for o in enc.offsets])
    return Segmentation.from_spans(name, spans, ids=enc.ids)


REAL = {
    "r50k": ("tiktoken", "gpt2/r50k_base.tiktoken"),
    "cl100k": ("tiktoken", "cl100k_base/cl100k_base.tiktoken"),
    "o200k": ("tiktoken", "o200k_base/o200k_base.tiktoken"),
    "bert": ("hf", "bert-base-uncased/tokenizer.json"),
    "mistral": ("hf", "mistral-7b-v0.1/tokenizer.json"),
    "qwen3": ("hf", "qwen3/tokenizer.json"),
}


@pytest.fixture(scope="module")
def engine_segs() -> dict[str, Segmentation]:
    return {k: segment(tokviz.load(bundle_path(rel)), REAL_TEXT, name=k) for k, (_, rel) in REAL.items()}


@pytest.fixture(scope="module")
def ref_segs() -> dict[str, Segmentation]:
    out = {}
    for k, (kind, rel) in REAL.items():
        out[k] = _ref_tiktoken_seg(k, rel, REAL_TEXT) if kind == "tiktoken" else _ref_hf_seg(k, rel, REAL_TEXT)
    return out


class TestRealSixTokenizers:
    """1.iii-E: the engine's cut sets, F1 matrices and votes equal those of the reference outputs."""

    def test_token_counts(self, engine_segs, ref_segs) -> None:  # noqa: ANN001
        for k in REAL:
            assert engine_segs[k].n_tokens == len(ref_segs[k]), k
            assert list(engine_segs[k].ids) == list(ref_segs[k].ids), k

    @pytest.mark.parametrize(("unit", "collapse"), [("char", False), ("char", True), ("byte", False)])
    def test_cut_sets_and_f1(self, engine_segs, ref_segs, unit: str, collapse: bool) -> None:  # noqa: ANN001
        ix = TextIndex(REAL_TEXT)
        mine = [cut_set(engine_segs[k], ix, unit=unit, collapse=collapse) for k in REAL]
        ref = [cut_set(ref_segs[k], ix, unit=unit, collapse=collapse) for k in REAL]
        assert mine == ref
        assert f1_matrix(mine) == f1_matrix(ref)

    def test_bert_agrees_with_r50k_once_whitespace_collapses(self, engine_segs) -> None:  # noqa: ANN001
        ix = TextIndex(REAL_TEXT)
        r, b = engine_segs["r50k"], engine_segs["bert"]
        assert cut_set(r, ix) == cut_set(b, ix)
        assert cut_ratios(cut_set(r, ix, collapse=False), cut_set(b, ix, collapse=False)).f1 < 1.0

    def test_votes(self, engine_segs, ref_segs) -> None:  # noqa: ANN001
        ix = TextIndex(REAL_TEXT)
        v = votes([cut_set(engine_segs[k], ix) for k in REAL])
        ref_sets = [cut_set(ref_segs[k], ix) for k in REAL]
        consensus = set.intersection(*ref_sets)
        assert {p for p, c in v.items() if c == len(REAL)} == consensus
        for p, c in v.items():
            assert c == sum(p in s for s in ref_sets)

    def test_per_script_han(self, engine_segs, ref_segs) -> None:  # noqa: ANN001
        ix = TextIndex(REAL_TEXT)
        for k in REAL:
            mine = per_script(engine_segs[k], ix)
            ref = per_script(ref_segs[k], ix)
            for name in mine:
                assert mine[name].tokens == pytest.approx(ref[name].tokens), (k, name)
        # chars per script by definition: 東京 are the only Han code points
        han = per_script(engine_segs["o200k"], ix)["Han"]
        assert han.chars == 2 and han.bytes == 6


class TestSameSurfaceDifferentId:
    """1.iii-G: r50k vs cl100k tokens with equal byte spans and surfaces; compare with tiktoken."""

    def test_against_tiktoken(self, engine_segs, ref_segs) -> None:  # noqa: ANN001
        mine = same_surface_tokens(engine_segs["r50k"], engine_segs["cl100k"])
        ref = same_surface_tokens(ref_segs["r50k"], ref_segs["cl100k"])
        assert mine == ref
        single_byte = [m for m in mine if len(m[0]) == 1]
        assert all(a == b for _, _, a, b in single_byte)  # single bytes keep their id across the family
        assert any(a != b for _, _, a, b in mine)


class TestRealOverlap:
    """1.iii-F: |Σ|, intersections and id agreement, against the reference libraries' vocabularies."""

    @staticmethod
    def tiktoken_sigma(name: str, rel: str) -> dict[bytes, int]:
        enc = _tiktoken_reference(name, rel)
        return dict(enc._mergeable_ranks)  # noqa: SLF001 - the rank table is what a vocab is here

    def test_r50k_cl100k(self) -> None:
        a = self.tiktoken_sigma("r50k", "gpt2/r50k_base.tiktoken")
        b = self.tiktoken_sigma("cl100k", "cl100k_base/cl100k_base.tiktoken")
        got = vocab_overlap(tokviz.load(bundle_path("gpt2/r50k_base.tiktoken")),
                            tokviz.load(bundle_path("cl100k_base/cl100k_base.tiktoken")))
        common = a.keys() & b.keys()
        assert (got.size_a, got.size_b, got.common) == (len(a), len(b), len(common))
        assert got.same_id == sum(1 for s in common if a[s] == b[s])
        assert got.jaccard == pytest.approx(len(common) / len(a.keys() | b.keys()))

    def test_mistral_duplicates_collapse(self) -> None:
        sentencepiece = require_module("sentencepiece")
        sp = sentencepiece.SentencePieceProcessor(model_file=str(bundle_path("mistral-7b-v0.1/tokenizer.model")))
        ref: set[bytes] = set()
        for i in range(sp.get_piece_size()):
            if sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i):
                continue
            p = sp.id_to_piece(i)
            ref.add(bytes([int(p[3:5], 16)]) if sp.is_byte(i) else p.replace("▁", " ").encode())
        mine = surface_ids(tokviz.load(bundle_path("mistral-7b-v0.1/tokenizer.model")))
        assert set(mine) == ref
        dup = [s for s, ids in mine.items() if len(ids) > 1]
        assert dup and all(len(s) == 1 for s in dup)  # a byte piece and a char piece of one byte
        json_side = surface_ids(tokviz.load(bundle_path("mistral-7b-v0.1/tokenizer.json")))
        assert set(json_side) == ref


# ---------------------------------------------------------------------- properties
seg_strategy = st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=20)
texts = st.text(alphabet=st.sampled_from(list("ab é東😀\n")), min_size=1, max_size=30)


def _random_byte_segmentation(text: str, lengths: list[int]) -> Segmentation:
    n = len(text.encode())
    spans, pos, k = [], 0, 0
    while pos < n:
        step = lengths[k % len(lengths)]
        spans.append((pos, min(n, pos + step)))
        pos = min(n, pos + step)
        k += 1
    return Segmentation.from_spans("r", spans)


class TestProperties:
    @settings(max_examples=200, deadline=None)
    @given(texts, seg_strategy, seg_strategy)
    def test_f1_symmetric(self, text: str, la: list[int], lb: list[int]) -> None:
        ix = TextIndex(text)
        a = cut_set(_random_byte_segmentation(text, la), ix)
        b = cut_set(_random_byte_segmentation(text, lb), ix)
        assert cut_ratios(a, b).f1 == cut_ratios(b, a).f1

    @settings(max_examples=200, deadline=None)
    @given(texts, seg_strategy, st.sampled_from(["char", "byte"]), st.booleans())
    def test_f1_one_on_identical(self, text: str, la: list[int], unit: str, collapse: bool) -> None:
        ix = TextIndex(text)
        s = _random_byte_segmentation(text, la)
        assert cut_ratios(cut_set(s, ix, unit=unit, collapse=collapse), cut_set(s, ix, unit=unit, collapse=collapse)).f1 == 1.0

    @settings(max_examples=200, deadline=None)
    @given(texts, seg_strategy)
    def test_char_cuts_never_inside_a_code_point(self, text: str, la: list[int]) -> None:
        ix = TextIndex(text)
        for p in cut_set(_random_byte_segmentation(text, la), ix, collapse=False):
            assert 0 < p < len(text)
            assert len(text[:p].encode()) in set(ix.boundaries)

    @settings(max_examples=100, deadline=None)
    @given(texts)
    def test_engine_cuts_never_inside_a_code_point(self, text: str) -> None:
        tok = _r50k()
        ix = TextIndex(text)
        seg = segment(tok, text)
        for p in cuts_char(seg, ix):
            assert ix.boundaries[p] in cuts_byte(seg, ix.n_bytes)

    def test_collapse_keeps_cuts_outside_runs(self) -> None:
        ix = TextIndex("a  b")
        assert collapse_whitespace({1, 2, 3}, ix) == {1}


_TOK: list = []


def _r50k():  # noqa: ANN202
    if not _TOK:
        _TOK.append(tokviz.load(bundle_path("gpt2/r50k_base.tiktoken")))
    return _TOK[0]


# ---------------------------------------------------------------------- columns vs the definitions
# The module computes cuts, units, trimmed spans and script weights in numpy columns; these
# are the spec's definitions (C1, C2, C4, C6) written token by token, as the oracle.
def _ref_byte_cuts(seg: Segmentation, n_bytes: int) -> set[int]:
    out = set()
    for (s, e), sp in zip(seg.byte_spans, seg.special):
        if not sp and s != e:
            out |= {s, e}
    return {b for b in out if 0 < b < n_bytes}


def _ref_collapse(cuts: set[int], text: str, bounds: list[int], unit: str) -> set[int]:
    import regex

    out = set()
    runs = [m.span() for m in regex.finditer(r"\p{White_Space}+", text)]
    if unit == "byte":
        runs = [(bounds[a], bounds[b]) for a, b in runs]
    for p in cuts:
        for a, b in runs:
            if a <= p <= b:
                p = a
                break
        out.add(p)
    return out - {0}


def _ref_units(seg: Segmentation, bounds: list[int]) -> list[tuple[int, int, list[int]]]:
    """Char spans of the counted tokens; a token starting inside the previous unit joins it."""
    char_at = {b: p for p, b in enumerate(bounds)}
    units: list[tuple[int, int, list[int]]] = []
    for i, ((s, e), sp) in enumerate(zip(seg.byte_spans, seg.special)):
        if sp or s == e:
            continue
        cs = max(p for p, b in enumerate(bounds) if b <= s)
        ce = char_at.get(e, max(p for p, b in enumerate(bounds) if b <= e) + 1)
        if units and cs < units[-1][1]:
            ps, pe, members = units[-1]
            units[-1] = (ps, max(pe, ce), [*members, i])
        else:
            units.append((cs, ce, [i]))
    return units


def _ref_trim(text: str, s: int, e: int) -> tuple[int, int]:
    import regex

    while s < e and regex.match(r"\p{White_Space}", text[s]):
        s += 1
    while e > s and regex.match(r"\p{White_Space}", text[e - 1]):
        e -= 1
    return s, e


def _ref_script_tokens(seg: Segmentation, text: str, bounds: list[int]) -> dict[str, float]:
    """C6: a token's bytes by resolved script; shared among its non-Common scripts by bytes."""
    script_of_byte = []
    for s, e, name in script_runs(text):
        script_of_byte += [name] * (bounds[e] - bounds[s])
    out: dict[str, float] = {}
    for (s, e), sp in zip(seg.byte_spans, seg.special):
        if sp or s == e:
            continue
        by: dict[str, int] = {}
        for b in range(s, e):
            by[script_of_byte[b]] = by.get(script_of_byte[b], 0) + 1
        rest = {k: v for k, v in by.items() if k != "Common"}
        if not rest:
            out["Common"] = out.get("Common", 0.0) + 1.0
        elif len(rest) == 1:
            k = next(iter(rest))
            out[k] = out.get(k, 0.0) + 1.0
        else:
            for k, v in rest.items():
                out[k] = out.get(k, 0.0) + v / sum(rest.values())
    return out


def _messy_segmentation(text: str, lengths: list[int], flags: list[int]) -> Segmentation:
    """Byte tokens of the given lengths (cuts inside code points allowed), with some zero-width
    tokens and some special tokens mixed in (flag 1 = a zero-width token first, 2 = special)."""
    n = len(text.encode())
    spans, special, pos, k = [], [], 0, 0
    while pos < n:
        flag = flags[k % len(flags)]
        if flag == 1:
            spans.append((pos, pos))
            special.append(False)
        end = min(n, pos + lengths[k % len(lengths)])
        spans.append((pos, end))
        special.append(flag == 2)
        pos, k = end, k + 1
    return Segmentation.from_spans("m", spans, special=special)


mixed_texts = st.text(alphabet=st.sampled_from(list("ab Zé東\u3000😀\n\u0301.'")), min_size=1, max_size=40)
flag_lists = st.lists(st.integers(min_value=0, max_value=2), min_size=1, max_size=5)


class TestColumnsAgainstDefinitions:
    @settings(max_examples=300, deadline=None)
    @given(mixed_texts, seg_strategy, flag_lists)
    def test_cuts(self, text: str, lengths: list[int], flags: list[int]) -> None:
        seg = _messy_segmentation(text, lengths, flags)
        ix = TextIndex(text)
        bounds = [len(text[:p].encode("utf-8")) for p in range(len(text) + 1)]
        assert ix.boundaries == bounds
        byte = _ref_byte_cuts(seg, bounds[-1])
        char = {bounds.index(b) for b in byte if b in bounds}
        assert cuts_byte(seg, ix.n_bytes) == byte
        assert cuts_char(seg, ix) == char
        assert cut_set(seg, ix, unit="char", collapse=True) == _ref_collapse(char, text, bounds, "char")
        assert cut_set(seg, ix, unit="byte", collapse=True) == _ref_collapse(byte, text, bounds, "byte")

    @settings(max_examples=300, deadline=None)
    @given(mixed_texts, seg_strategy, flag_lists, seg_strategy)
    def test_units_and_span_agreement(self, text: str, lengths: list[int], flags: list[int], other: list[int]) -> None:
        from tokviz.analysis.compare import UnitTable

        seg = _messy_segmentation(text, lengths, flags)
        seg2 = _messy_segmentation(text, other, [0])
        ix = TextIndex(text)
        bounds = ix.boundaries
        ref = _ref_units(seg, bounds)
        table = UnitTable.of(seg, ix)
        assert [(u.start, u.end, list(u.indices)) for u in table] == ref
        assert [u.ids for u in table] == [tuple(seg.ids[i] for i in m) for _, _, m in ref]
        ref2 = _ref_units(seg2, bounds)
        for trimmed in (False, True):
            spans = [[(s, e) for s, e, _ in r] for r in (ref, ref2)]
            if trimmed:
                spans = [[_ref_trim(text, s, e) for s, e in sp] for sp in spans]
            want = [sum(1 for x in sp if all(x in o for o in spans)) / len(sp) if sp else 1.0 for sp in spans]
            assert span_agreement([seg, seg2], ix, trimmed=trimmed) == pytest.approx(want)

    @settings(max_examples=300, deadline=None)
    @given(mixed_texts, seg_strategy, flag_lists)
    def test_script_weights(self, text: str, lengths: list[int], flags: list[int]) -> None:
        seg = _messy_segmentation(text, lengths, flags)
        ix = TextIndex(text)
        got = {k: v.tokens for k, v in per_script(seg, ix).items() if v.tokens}
        assert got == pytest.approx(_ref_script_tokens(seg, text, ix.boundaries))
