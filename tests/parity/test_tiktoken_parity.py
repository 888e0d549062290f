"""Parity with tiktoken for the rank-file bundles (r50k/gpt2, cl100k_base, o200k_base).

The oracle is a `tiktoken.Encoding` built from the *same* rank file with the published pattern
and special tokens (`tiktoken.load.load_tiktoken_bpe` on the local file; `get_encoding` would
download, which tests never do). Compared: ids (default = ``encode(text, disallowed_special=())``),
``allowed_special`` behaviour, decode, and that token byte spans tile the text's UTF-8 bytes,
each token's bytes being exactly the text's bytes at its span.

Every comparison is recorded in the session's parity report (tests/parity/conftest.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support import ModuleCache, bundle_bytes, require_module

import tokviz
from tokviz.engine.byte_alphabet import proxy_to_bytes
from tokviz.engine.encoding import token_spans_tile
from tokviz.io.tiktoken_ranks import preset_for

from .cases import TRICKY, corpus_document, corpus_lines, llamacpp_vectors

pytestmark = pytest.mark.parity

BUNDLES = {
    "gpt2": "gpt2/r50k_base.tiktoken",
    "cl100k_base": "cl100k_base/cl100k_base.tiktoken",
    "o200k_base": "o200k_base/o200k_base.tiktoken",
}
CORPORA = ["botchan.txt", "wagahaiwa_nekodearu.txt"]


@dataclass(frozen=True, slots=True)
class Pair:
    name: str
    tok: tokviz.Tokenizer
    ref: object  # tiktoken.Encoding


_PAIRS = ModuleCache()


def get_pair(name: str, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    if name not in _PAIRS:
        tiktoken = require_module("tiktoken")
        from tiktoken.load import load_tiktoken_bpe

        data = bundle_bytes(BUNDLES[name])
        preset = preset_for(data)
        assert preset is not None, f"{name}: bundle not recognised by content hash"
        path = tmp_path_factory.mktemp(name) / "ranks.tiktoken"
        path.write_bytes(data)
        ref = tiktoken.Encoding(
            preset.name,
            pat_str=preset.pattern,
            mergeable_ranks=load_tiktoken_bpe(str(path)),
            special_tokens=dict(preset.special_tokens),
            explicit_n_vocab=preset.explicit_n_vocab,
        )
        _PAIRS[name] = Pair(name, tokviz.load(data), ref)
    return _PAIRS[name]


@pytest.fixture(scope="module", params=list(BUNDLES))
def pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    return get_pair(request.param, tmp_path_factory)


def compare(p: Pair, text: str, *, allowed_special: object = None) -> str:
    """'' when tokviz equals tiktoken on ``text``, else what differed first."""
    ref = p.ref
    if allowed_special is None:
        want = ref.encode(text, disallowed_special=())  # type: ignore[attr-defined]
        enc = p.tok.encode(text)
    else:
        want = ref.encode(text, allowed_special=allowed_special, disallowed_special=())  # type: ignore[attr-defined]
        enc = p.tok.encode(text, allowed_special=allowed_special)  # type: ignore[arg-type]
    got = enc.ids
    if got != want:
        i = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        return f"ids differ at {i}: tokviz {got[i : i + 5]} tiktoken {want[i : i + 5]}"
    if p.tok.encode_ids(text, allowed_special=allowed_special) != want:  # type: ignore[arg-type]
        return "encode_ids differs from tiktoken's encode"
    dec = p.tok.decode(got)
    want_dec = ref.decode(want)  # type: ignore[attr-defined]
    if dec != want_dec:
        return f"decode differs: {dec[:60]!r} vs {want_dec[:60]!r}"
    data = text.encode("utf-8")
    if not token_spans_tile(enc.byte_offsets, len(data)):
        return f"byte spans do not tile {len(data)} bytes: {enc.byte_offsets[:8]}"
    for k, ((bs, be), tid) in enumerate(zip(enc.byte_offsets, got)):
        piece = ref.decode_single_token_bytes(tid)  # type: ignore[attr-defined]
        if data[bs:be] != piece:
            return f"token {k} (id {tid}) bytes {piece!r} but its span holds {data[bs:be]!r}"
        if not enc.special_tokens_mask[k] and proxy_to_bytes(enc.tokens[k]) != piece:
            return f"token {k} string {enc.tokens[k]!r} does not spell {piece!r}"
    return ""


def check(p: Pair, report, case_id: str, text: str, **kw: object) -> str:  # noqa: ANN001
    detail = compare(p, text, **kw)
    report.record(p.name, case_id, not detail, detail)
    return detail


class TestTricky:
    @pytest.mark.parametrize(("case_id", "text"), TRICKY, ids=[c for c, _ in TRICKY])
    def test_default_policy(self, pair: Pair, parity_report, case_id: str, text: str) -> None:  # noqa: ANN001
        assert check(pair, parity_report, f"tricky/{case_id}", text) == ""

    @pytest.mark.parametrize(("case_id", "text"), TRICKY, ids=[c for c, _ in TRICKY])
    def test_allowed_all(self, pair: Pair, parity_report, case_id: str, text: str) -> None:  # noqa: ANN001
        assert check(pair, parity_report, f"tricky-allowed/{case_id}", text, allowed_special="all") == ""


class TestAllowedSpecial:
    def test_literal_is_text_by_default(self, pair: Pair) -> None:
        text = "a<|endoftext|>b"
        eot = pair.ref.encode_single_token("<|endoftext|>")  # type: ignore[attr-defined]
        assert eot not in pair.tok.encode(text).ids
        assert pair.tok.encode(text, allowed_special="all").ids == pair.ref.encode(
            text, allowed_special="all"
        )  # type: ignore[attr-defined]
        assert eot in pair.tok.encode(text, allowed_special={"<|endoftext|>"}).ids

    def test_only_the_allowed_literal_becomes_special(self, pair: Pair, parity_report) -> None:  # noqa: ANN001
        specials = sorted(pair.ref.special_tokens_set)  # type: ignore[attr-defined]
        text = "x".join(specials) + " tail"
        for allowed in specials:
            assert check(pair, parity_report, f"allowed/{allowed}", text, allowed_special={allowed}) == ""

    def test_special_decodes_to_its_literal(self, pair: Pair) -> None:
        ids = pair.tok.encode("hi<|endoftext|>", allowed_special="all").ids
        assert pair.tok.decode(ids) == "hi<|endoftext|>"
        assert pair.tok.decode(ids, skip_special_tokens=True) == "hi"

    def test_unknown_allowed_literal_is_an_error(self, pair: Pair) -> None:
        with pytest.raises(ValueError):
            pair.tok.encode("x", allowed_special={"<|not a special|>"})

    def test_n_vocab(self, pair: Pair) -> None:
        assert pair.tok.info()["id_space"] == pair.ref.n_vocab  # type: ignore[attr-defined]


class TestLlamaCppVectors:
    def test_gpt2_expected_ids(self, tmp_path_factory: pytest.TempPathFactory, parity_report) -> None:  # noqa: ANN001
        """The ids HF gave for GPT-2 on llama.cpp's hard strings equal r50k's."""
        p = get_pair("gpt2", tmp_path_factory)
        bad = []
        for k, (text, ids) in enumerate(llamacpp_vectors("gpt-2")):
            got = p.tok.encode(text).ids
            ok = got == ids
            parity_report.record("gpt2", f"llamacpp/{k}", ok, "" if ok else f"{text[:40]!r}: {got} != {ids}")
            if not ok:
                bad.append(text)
        assert bad == []

    def test_vector_texts(self, pair: Pair, parity_report) -> None:  # noqa: ANN001
        bad = [
            t
            for k, (t, _) in enumerate(llamacpp_vectors("gpt-2"))
            if check(pair, parity_report, f"llamacpp-text/{k}", t)
        ]
        assert bad == []


class TestCorpora:
    @pytest.mark.parametrize("corpus", CORPORA)
    def test_line_by_line(self, pair: Pair, parity_report, corpus: str) -> None:  # noqa: ANN001
        bad = []
        for k, line in enumerate(corpus_lines(corpus)):
            if check(pair, parity_report, f"{corpus}/line{k + 1}", line):
                bad.append(k + 1)
        assert bad == [], f"{len(bad)} lines differ, first {bad[:10]}"

    @pytest.mark.parametrize("corpus", CORPORA)
    def test_whole_document(self, pair: Pair, parity_report, corpus: str) -> None:  # noqa: ANN001
        assert check(pair, parity_report, f"{corpus}/document", corpus_document(corpus)) == ""


# Text that stresses pre-tokenization: mixed scripts, whitespace runs, digits, apostrophes.
_ALPHABET = st.sampled_from(
    list("aZ é'sdt llve re")
    + [
        "\n",
        "\r\n",
        "\t",
        "\u00a0",
        "\u200d",
        " " * 3,
        "123",
        "1234",
        "日本",
        "語",
        "👍🏽",
        "🏳️‍🌈",
        "\u0301",
        "ß",
        "İ",
        "Ǆ",
        "ﬁ",
        "!?",
        "...",
        "<|endoftext|>",
        "\x00",
        "\ufeff",
        "ا",
        "ส",
        "क्",
        "'S",
        "'LL",
        "/",
        "\\",
    ]
)
_TEXT = st.one_of(st.text(max_size=60), st.lists(_ALPHABET, max_size=25).map("".join))


@pytest.mark.parametrize("name", list(BUNDLES))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXT)
def test_hypothesis(name: str, text: str, tmp_path_factory: pytest.TempPathFactory, parity_report) -> None:  # noqa: ANN001
    p = get_pair(name, tmp_path_factory)
    assert check(p, parity_report, "hypothesis", text) == ""
    assert check(p, parity_report, "hypothesis-allowed", text, allowed_special="all") == ""


class TestVocabulary:
    """Every id: the token string spells tiktoken's bytes, and decoding it alone agrees
    (many tokens are fragments of a UTF-8 character; both decoders put U+FFFD for them)."""

    def test_every_token(self, pair: Pair, parity_report) -> None:  # noqa: ANN001
        ref = pair.ref
        bad = []
        ids = range(ref.n_vocab)  # type: ignore[attr-defined]
        for i in ids:
            try:
                want = ref.decode_single_token_bytes(i)  # type: ignore[attr-defined]
            except KeyError:  # a hole in the id space (cl100k 100261..100275)
                assert pair.tok.id_to_token(i) is None, i
                continue
            tok = pair.tok.id_to_token(i)
            spelled = tok.encode("utf-8") if pair.tok.is_special_id(i) else proxy_to_bytes(tok)
            if spelled != want or pair.tok.decode([i]) != ref.decode([i]):  # type: ignore[attr-defined]
                bad.append(i)
        parity_report.record(pair.name, "vocabulary/every-id", not bad, f"ids {bad[:10]}" if bad else "")
        assert bad == []


class TestUnicodeVersion:
    """Characters whose category differs between the engine's regex tables and tiktoken's Rust
    regex (Unicode 16) must still give tiktoken's ids.

    Measured over every code point: the only difference in the classes the published patterns
    use (\\p{L}, \\p{Lu}, \\p{Ll}, \\p{Lt}, \\p{Lm}, \\p{Lo}, \\p{M}, \\p{N}, \\s) is U+0295 ʕ, Ll for
    tiktoken but Lo for the engine (HF's older tables). o200k's letter classes contain Lo on both
    sides of the case split, so its chunks cannot change; this pins that down.
    """

    PARTS = ["ʕ", "A", "a", "'s", " ", "1", "ǅ", "ʰ", "中", "\u0301", "!"]

    def test_pharyngeal_letter_in_context(self, pair: Pair, parity_report) -> None:  # noqa: ANN001
        import itertools

        bad = []
        for n in (1, 2, 3):
            for combo in itertools.product(self.PARTS, repeat=n):
                text = "".join(combo)
                if "ʕ" in text and compare(pair, text):
                    bad.append(text)
        parity_report.record(pair.name, "unicode/U+0295-contexts", not bad, f"{bad[:5]!r}" if bad else "")
        assert bad == []
