"""tokviz.analysis.facts: one answer per fact, checked against the reference libraries.

* every shared bundle: family, surfaces, unknown and special ids against tiktoken
  (``decode_single_token_bytes``), HF tokenizers (vocab + GPT-2 byte alphabet, read from the file
  itself) and sentencepiece (pieces, byte and control flags); and the four analyses that used to
  compute surfaces on their own (compare, lint, healing, audit) give the same bytes;
* toy tokenizers for the cases where the former rules disagreed (``<0x41>`` without byte
  fallback, a WordPiece ``##``, the unknown token, a replacement character other than ``▁``);
* canonical merges whatever the file order, and the same merge facts for a rank file and its HF
  conversion (which lists every split, not in rank order);
* the facts and the analyses keep no tokenizer alive.

The cross-format audits (rank file, its HF conversion, a DeepSeek-V3-shaped tokenizer.json with
ByteLevel inside a Sequence of Splits, a char-level BPE) run on a prefix of r50k in the normal
run; `test_audit_full_*` (marked slow) run them on the whole vocabularies.
"""

from __future__ import annotations

import base64
import gc
import json
import re
import weakref
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest
from support import ModuleCache, bundle_bytes, bundle_path, fixture_extract, require_module

import tokviz
from tokviz.analysis import compare, healing, lint
from tokviz.analysis.audit import audit_vocabulary, byte_class
from tokviz.analysis.facts import TokenizerFacts
from tokviz.engine.added_tokens import AddedToken
from tokviz.engine.models.bpe import BPE
from tokviz.engine.models.unigram import Unigram
from tokviz.engine.models.wordpiece import WordPiece
from tokviz.engine.normalizers.basic import Replace
from tokviz.engine.pre_tokenizers.byte_level import ByteLevel
from tokviz.engine.pre_tokenizers.metaspace import Metaspace
from tokviz.engine.pre_tokenizers.sequence import Sequence
from tokviz.engine.pre_tokenizers.split import Split
from tokviz.engine.tokenizer import Tokenizer
from tokviz.io.tiktoken_ranks import R50K_PATTERN

BUNDLES = {
    "r50k": "gpt2/r50k_base.tiktoken",
    "cl100k": "cl100k_base/cl100k_base.tiktoken",
    "o200k": "o200k_base/o200k_base.tiktoken",
    "qwen3": "qwen3/tokenizer.json",
    "claude": "claude-legacy/tokenizer.json",
    "mistral-json": "mistral-7b-v0.1/tokenizer.json",
    "mistral-model": "mistral-7b-v0.1/tokenizer.model",
    "albert": "albert-30k-clean/30k-clean.model",
    "sp-test": "sentencepiece-test/test_model.model",
    "sp-ja": "sentencepiece-test/test_ja_model.model",
    "bert-json": "bert-base-uncased/tokenizer.json",
    "bert-vocab": "bert-base-uncased/vocab.txt",
}
FAMILIES = {
    "r50k": "rank-file", "cl100k": "rank-file", "o200k": "rank-file", "qwen3": "byte-level", "claude": "byte-level",
    "mistral-json": "metaspace", "mistral-model": "metaspace", "albert": "metaspace", "sp-test": "metaspace",
    "sp-ja": "metaspace", "bert-json": "wordpiece", "bert-vocab": "wordpiece",
}
SAMPLE = "The naïve café in 東京 costs ¥1,234.\n  indent\tand 😀 <s> [UNK] ##ing"
# DeepSeek-V3's pre-tokenizer (its tokenizer.json; llama.cpp's DEEPSEEK3_LLM lists the same three)
DEEPSEEK_SPLITS = (
    r"\p{N}{1,3}",
    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
)
_LOOKALIKE = re.compile(r"[\[<].*[A-Za-z].*[\]>]", re.DOTALL)
_TOKS = ModuleCache()


def load(name: str) -> Tokenizer:
    if name not in _TOKS:
        _TOKS[name] = tokviz.load(bundle_path(BUNDLES[name]))
    return _TOKS[name]


def plain(rel: str, tmp: Path) -> str:
    """A bundle as an uncompressed file (the reference libraries cannot read the embedded .gz)."""
    out = tmp / rel.replace("/", "--")
    if not out.is_file():
        out.write_bytes(bundle_bytes(rel))
    return str(out)


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("facts")


def assert_same(got: dict, want: dict) -> None:
    """``got == want``, with the first few differences (not two whole vocabularies) on failure."""
    if got != want:
        keys = sorted(got.keys() ^ want.keys())[:5] + [k for k in sorted(got.keys() & want.keys()) if got[k] != want[k]][:5]
        pytest.fail(f"{len(got)} vs {len(want)} entries; first differences: " +
                    "; ".join(f"{k}: {got.get(k)!r} != {want.get(k)!r}" for k in keys))


def _valid(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _gpt2_decoder() -> dict[str, int]:
    require_module("transformers")
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    return {c: b for b, c in bytes_to_unicode().items()}


# ---------------------------------------------------------------------- references
def _ref_tiktoken(rel: str, tmp: Path) -> tuple[dict[int, bytes], set[int]]:
    """(id -> bytes, unknown ids) from tiktoken: ``decode_single_token_bytes`` of every rank, the
    special tokens' literals."""
    tiktoken = require_module("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(plain(rel, tmp))
    enc = tiktoken.Encoding("ref", pat_str=R50K_PATTERN, mergeable_ranks=ranks, special_tokens={})
    out = {r: enc.decode_single_token_bytes(r) for r in ranks.values()}
    for t in load(next(k for k, v in BUNDLES.items() if v == rel)).added_tokens:
        out[t.id] = t.content.encode()
    return out, set()


def _ref_hf(rel: str, tmp: Path) -> tuple[dict[int, bytes], set[int]]:
    """(id -> bytes, unknown ids) from HF tokenizers' vocab, with the rules the file itself states:
    ByteLevel -> the GPT-2 byte alphabet; a Replace(" ", c) normalizer or Metaspace -> c is a
    space; byte_fallback -> ``<0xNN>`` is one byte; WordPiece -> the model's prefix is dropped."""
    tokenizers = require_module("tokenizers")
    path = plain(rel, tmp)
    hf = tokenizers.Tokenizer.from_file(path)
    spec = json.loads(Path(path).read_text(encoding="utf-8"))
    text = json.dumps([spec.get("pre_tokenizer"), spec.get("decoder")])
    model = spec["model"]
    mark = _space_mark(spec.get("normalizer")) or _space_mark(spec.get("pre_tokenizer"))
    dec = _gpt2_decoder()
    added = {t.content: i for i, t in hf.get_added_tokens_decoder().items()}
    out: dict[int, bytes] = {}
    for s, i in hf.get_vocab(with_added_tokens=False).items():
        if s in added:
            continue
        if model["type"] == "WordPiece" and s.startswith(model["continuing_subword_prefix"]) and len(s) > 2:
            out[i] = s[2:].encode()
        elif '"ByteLevel"' in text:
            out[i] = bytes(dec[c] for c in s)
        elif model.get("byte_fallback") and re.fullmatch(r"<0x[0-9A-F]{2}>", s):
            out[i] = bytes([int(s[3:5], 16)])
        else:
            out[i] = (s.replace(mark, " ") if mark else s).encode()
    out.update({i: c.encode() for c, i in added.items()})
    unk = model.get("unk_token")
    return out, ({hf.token_to_id(unk)} if unk else set())


def _space_mark(obj: object) -> str | None:
    """The character a tokenizer.json stage puts for a space: a Replace(" ", c) or a Metaspace."""
    if isinstance(obj, dict):
        if obj.get("type") == "Replace" and obj.get("pattern") == {"String": " "}:
            return obj["content"]
        if obj.get("type") == "Metaspace":
            return obj["replacement"]
        for child in obj.get("normalizers") or obj.get("pretokenizers") or ():
            found = _space_mark(child)
            if found:
                return found
    return None


def _ref_sentencepiece(rel: str, tmp: Path) -> tuple[dict[int, bytes], set[int]]:
    """(id -> bytes, unknown ids) from sentencepiece: byte pieces are their byte, control and
    unknown pieces their literal, ``▁`` a space."""
    spm = require_module("sentencepiece")
    sp = spm.SentencePieceProcessor(model_file=plain(rel, tmp))
    out = {}
    for i in range(sp.get_piece_size()):
        p = sp.id_to_piece(i)
        if sp.is_byte(i):
            out[i] = bytes([int(p[3:5], 16)])
        elif sp.is_control(i) or sp.is_unknown(i):
            out[i] = p.encode()
        else:
            out[i] = p.replace("\u2581", " ").encode()
    return out, {sp.unk_id()}


def _ref_vocab_txt(rel: str, tmp: Path) -> tuple[dict[int, bytes], set[int]]:
    tokenizers = require_module("tokenizers")
    hf = tokenizers.BertWordPieceTokenizer(plain(rel, tmp))
    out = {i: (s[2:] if s.startswith("##") and len(s) > 2 else s).encode() for s, i in hf.get_vocab().items()}
    return out, {hf.token_to_id("[UNK]")}


def reference(name: str, tmp: Path) -> tuple[dict[int, bytes], set[int]]:
    rel = BUNDLES[name]
    if rel.endswith(".tiktoken"):
        return _ref_tiktoken(rel, tmp)
    if rel.endswith(".model"):
        return _ref_sentencepiece(rel, tmp)
    if rel.endswith("vocab.txt"):
        return _ref_vocab_txt(rel, tmp)
    return _ref_hf(rel, tmp)


# ---------------------------------------------------------------------- every bundle
class TestBundles:
    @pytest.mark.parametrize("name", list(BUNDLES))
    def test_family_surfaces_and_unknown_against_the_reference(self, name: str, tmp: Path) -> None:
        tok = load(name)
        facts = TokenizerFacts.of(tok)
        ref, unk = reference(name, tmp)
        assert facts.family == FAMILIES[name]
        assert_same(facts.surfaces(), ref)
        assert facts.unknown_ids == unk
        assert all(not facts.is_ordinary(i) for i in facts.added_ids | facts.unknown_ids)

    @pytest.mark.parametrize("name", list(BUNDLES))
    def test_the_former_views_agree(self, name: str, tmp: Path) -> None:
        """compare (segments and Σ), lint, healing: the same bytes as the facts and the reference."""
        tok = load(name)
        facts = TokenizerFacts.of(tok)
        ref, _ = reference(name, tmp)
        seg = compare.segment(tok, SAMPLE)
        assert list(seg.surfaces) == [ref[i] for i in seg.ids]
        sigma = compare.surface_ids(tok)
        assert {i for ids in sigma.values() for i in ids} <= set(facts.ordinary_ids())
        assert all(ref[i] == s for s, ids in sigma.items() for i in ids)
        index = healing.surface_index(tok)
        assert set(index.surface) == set(facts.ordinary_ids())
        assert all(ref[i] == s for i, s in index.surface.items())
        assert index.continuation == {i for i in index.surface if facts.is_continuation(i)}
        for i in seg.ids:
            assert lint.surface(tok, i).data == ref[i]
            assert lint.surface(tok, i).unk == (i in facts.unknown_ids)

    def test_special_ids(self) -> None:
        # a .model's reserved pieces are its special tokens, as its tokenizer.json's added ones
        spm = TokenizerFacts.of(load("mistral-model"))
        js = TokenizerFacts.of(load("mistral-json"))
        assert spm.special_ids == js.special_ids == {0, 1, 2}
        assert TokenizerFacts.of(load("r50k")).special_ids == {50256}
        bert = TokenizerFacts.of(load("bert-json"))
        assert bert.unknown_id == 100 and {0, 100, 101, 102, 103} == bert.special_ids


# ---------------------------------------------------------------------- toy families
def _vocab(*tokens: str) -> dict[str, int]:
    return {t: i for i, t in enumerate(tokens)}


def _views(tok: Tokenizer, text: str) -> dict[str, dict[int, bytes]]:
    """The surfaces each former view gives for the ids it shows."""
    seg = compare.segment(tok, text)
    audit = audit_vocabulary(tok)
    return {
        "compare.segment": dict(zip(seg.ids, seg.surfaces)),
        "compare.surface_ids": {i: s for s, ids in compare.surface_ids(tok).items() for i in ids},
        "lint": {i: lint.surface(tok, i).data for i in seg.ids},
        "healing": dict(healing.surface_index(tok).surface),
        "audit": {t.id: t.surface for t in audit.tokens},
    }


def _assert_views(tok: Tokenizer, text: str) -> TokenizerFacts:
    facts = TokenizerFacts.of(tok)
    for view, got in _views(tok, text).items():
        assert got == {i: facts.surface(i) for i in got}, view
    return facts


class TestToyFamilies:
    def test_unigram_byte_piece_only_with_byte_fallback(self) -> None:
        vocab = [("<unk>", 0.0), ("▁A", -1.0), ("<0x41>", -2.0), ("A", -3.0)]
        for fallback, expected in ((False, b"<0x41>"), (True, b"A")):
            tok = Tokenizer(Unigram(vocab, unk_id=0, byte_fallback=fallback), pre_tokenizer=Metaspace())
            facts = _assert_views(tok, "A A")
            assert facts.surface(2) == expected
            assert facts.byte_piece_ids == (frozenset({2}) if fallback else frozenset())
            assert facts.surface(1) == b" A" and facts.unknown_ids == {0} and facts.surface(0) == b"<unk>"

    def test_wordpiece_prefix_alone_is_text(self) -> None:
        tok = Tokenizer(WordPiece(_vocab("[UNK]", "##", "un", "##able", "#"), unk_token="[UNK]"))
        facts = _assert_views(tok, "unable ## x")
        assert (facts.surface(1), facts.is_continuation(1)) == (b"##", False)
        assert (facts.surface(3), facts.is_continuation(3)) == (b"able", True)
        assert facts.unknown_ids == {0} and facts.surface(0) == b"[UNK]"

    def test_replacement_character_is_the_configured_one(self) -> None:
        # Metaspace with "_" (not ▁): "_the" is " the", a literal ▁ stays ▁
        tok = Tokenizer(BPE(_vocab("_", "t", "h", "e", "▁", "_t", "_th", "_the"), [("_", "t"), ("_t", "h"), ("_th", "e")]),
                        pre_tokenizer=Metaspace(replacement="_"))
        facts = _assert_views(tok, "the")
        assert facts.family == "metaspace" and facts.replacement == "_"
        assert facts.surface(7) == b" the" and facts.surface(4) == "▁".encode()
        # Mistral's shape: no pre-tokenizer, a normalizer that replaces " " by ▁
        tok = Tokenizer(BPE(_vocab("▁", "a", "▁a")), normalizer=Replace(pattern=" ", content="▁"))
        facts = _assert_views(tok, " a")
        assert facts.replacement == "▁" and facts.surface(2) == b" a"

    def test_char_bpe_with_an_end_of_word_suffix(self) -> None:
        tok = Tokenizer(BPE(_vocab("a", "b", "b</w>", "ab</w>"), [("a", "b</w>")], end_of_word_suffix="</w>"))
        facts = _assert_views(tok, "ab")
        assert facts.family == "char" and facts.surface(3) == b"ab" and facts.surface(1) == b"b"

    def test_byte_level_inside_a_sequence(self) -> None:
        # DeepSeek's shape: the model vocab also holds added literals that are not byte proxies
        bos = "<｜begin▁of▁sentence｜>"
        tok = Tokenizer(BPE(_vocab("Ġ", "h", "Ġh", bos), [("Ġ", "h")]),
                        pre_tokenizer=Sequence([Split(pattern=r"\p{N}{1,3}", is_regex=True),
                                                ByteLevel(add_prefix_space=False, use_regex=False)]),
                        added_tokens=[AddedToken(bos, 3, special=True)])
        facts = _assert_views(tok, " h")
        assert facts.family == "byte-level" and facts.surface(2) == b" h" and facts.surface(3) == bos.encode()
        assert [c.type_name for c in facts.components("pre_tokenizer")] == ["Sequence", "Split", "ByteLevel"]
        assert [c.path for c in facts.components("pre_tokenizer")] == [(), (0,), (1,)]
        assert facts.has("ByteLevel") and not facts.has("ByteLevel", stage="decoder")


# ---------------------------------------------------------------------- canonical merges
class TestCanonicalMerges:
    def test_the_merge_the_rule_reaches_not_the_first_listed(self) -> None:
        # merges in this order: 0 ab+c, 1 b+c, 2 a+bc, 3 a+b. BPE of "abc": pairs (a,b)=3, (b,c)=1
        # -> b+c; then (a,bc)=2 -> abc. So abc's canonical merge is a+bc, although ab+c is listed
        # first; merge ranks by first appearance: abc 0, bc 1, ab 2
        vocab = _vocab("a", "b", "c", "ab", "bc", "abc")
        tok = Tokenizer(BPE(vocab, [("ab", "c"), ("b", "c"), ("a", "bc"), ("a", "b")]))
        facts = TokenizerFacts.of(tok)
        assert facts.canonical_merge(5) == (0, 4)
        assert facts.canonical_merge(4) == (1, 2) and facts.canonical_merge(3) == (0, 1)
        assert {i: facts.merge_rank(i) for i in (3, 4, 5)} == {5: 0, 4: 1, 3: 2}
        assert facts.canonical_merge(0) is None and facts.merge_rank(0) is None
        hf_tokenizers = require_module("tokenizers")
        hf = hf_tokenizers.Tokenizer(hf_tokenizers.models.BPE(vocab, [("ab", "c"), ("b", "c"), ("a", "bc"), ("a", "b")]))
        assert hf.encode("abc").ids == tok.encode("abc").ids == [5]
        # bc's one child abc comes before it (gap -1): not a fragment
        a = audit_vocabulary(tok)
        assert a.get(4).fragment_gap == -1 and not a.get(4).is_fragment(64)

    def test_rank_file_and_its_hf_conversion_have_the_same_merge_facts(self, tmp: Path) -> None:
        rank_file, conv, _ = _prefix_files(tmp, 3000)
        a = TokenizerFacts.of(tokviz.load(rank_file, pattern=R50K_PATTERN)).merges
        b = TokenizerFacts.of(tokviz.load(conv)).merges
        assert (a.kind, b.kind) == ("ranks", "merges")
        assert dict(a.rank) == dict(b.rank) and dict(a.parents) == dict(b.parents)
        n_merges = len(json.loads(Path(conv).read_text())["model"]["merges"])
        assert n_merges > len(b.rank)  # the conversion lists several splits per token


# ---------------------------------------------------------------------- nothing kept alive
class TestWeakMemo:
    def test_no_analysis_keeps_a_tokenizer_alive(self) -> None:
        from tokviz.analysis import chat, specials, vocab_diff

        tok = tokviz.load(bundle_path("sentencepiece-test/test_model.model"))
        ref = weakref.ref(tok)
        facts = TokenizerFacts.of(tok)
        assert TokenizerFacts.of(tok) is facts  # memoised
        audit = audit_vocabulary(tok)
        seg = compare.segment(tok, SAMPLE)
        compare.surface_ids(tok)
        report = lint.lint_text(tok, SAMPLE)
        index = healing.surface_index(tok)
        healing.analyze_caret(tok, SAMPLE, len(SAMPLE))
        chat.encode_as_text(tok, SAMPLE)
        specials.analyze_specials(tok, SAMPLE)
        diff = vocab_diff.vocab_diff(tok, tok)
        del tok
        gc.collect()
        assert ref() is None, gc.get_referrers(ref()) if ref() is not None else None
        assert audit.tokens and seg.ids and report is not None and index.surface and diff is not None
        assert facts.surface(5)  # the facts outlive their tokenizer (they hold its components)

    def test_a_replaced_stage_rebuilds_the_facts(self) -> None:
        tok = Tokenizer(BPE(_vocab("Ġ", "h", "Ġh"), [("Ġ", "h")]))
        assert TokenizerFacts.of(tok).family == "char"
        tok.pre_tokenizer = ByteLevel()
        assert TokenizerFacts.of(tok).family == "byte-level" and TokenizerFacts.of(tok).surface(2) == b" h"


# ---------------------------------------------------------------------- audits against brute force
def _prefix_files(tmp: Path, n: int) -> tuple[str, str, str]:
    """The first ``n`` ranks of r50k as a rank file, its tokenizer.json as HF's TikTokenConverter
    makes it (every split listed, not in rank order), and a DeepSeek-V3-shaped tokenizer.json of the
    same vocabulary (ByteLevel inside a Sequence of three Splits, two added tokens that the model
    vocab holds too, as DeepSeek's does)."""
    require_module("transformers")
    from tiktoken.load import load_tiktoken_bpe
    from transformers.convert_slow_tokenizer import TikTokenConverter

    folder = tmp / f"r50k-{n}"
    rank_file, conv, deep = folder / "ranks.tiktoken", folder / "converted.json", folder / "deepseek.json"
    if deep.is_file():
        return str(rank_file), str(conv), str(deep)
    folder.mkdir()
    ranks = load_tiktoken_bpe(plain(BUNDLES["r50k"], tmp))
    lines = [f"{base64.b64encode(b).decode()} {r}" for b, r in sorted(ranks.items(), key=lambda kv: kv[1]) if r < n]
    rank_file.write_text("\n".join(lines) + "\n")
    hf = TikTokenConverter(vocab_file=str(rank_file), pattern=R50K_PATTERN).converted()
    hf.save(str(conv))
    spec = json.loads(conv.read_text())
    spec["normalizer"] = {"type": "Sequence", "normalizers": []}
    spec["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        *({"type": "Split", "pattern": {"Regex": r}, "behavior": "Isolated", "invert": False} for r in DEEPSEEK_SPLITS),
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
    ]}
    for k, content in enumerate(("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>")):
        spec["model"]["vocab"][content] = n + k
        spec["added_tokens"].append({"id": n + k, "content": content, "single_word": False, "lstrip": False,
                                     "rstrip": False, "normalized": False, "special": True})
    deep.write_text(json.dumps(spec, ensure_ascii=False))
    return str(rank_file), str(conv), str(deep)


def _brute_force_rank_file(rank_file: str, *, pattern: str = R50K_PATTERN,
                           specials: dict[str, int] | None = None) -> dict[str, object]:
    """The audit's counts through tiktoken alone: token bytes, ``encode_ordinary`` of every
    ordinary surface, canonical parents with tiktoken's educational BPE on the lower ranks."""
    tiktoken = require_module("tiktoken")
    import regex
    from tiktoken._educational import bpe_encode
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(rank_file)
    enc = tiktoken.Encoding("ref", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    surf = {r: enc.decode_single_token_bytes(r) for r in ranks.values()}
    todo = sorted(surf)
    unreachable = {}
    for i in todo:
        b = surf[i]
        if _valid(b) and enc.encode_ordinary(b.decode()) != [i]:
            unreachable[i] = "P" if len(regex.findall(pattern, b.decode())) > 1 else "M"
    below: dict[bytes, int] = {}
    parents = {}
    for b, r in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(b) > 1:
            got = bpe_encode(below, b, visualise=None)
            if len(got) == 2:
                parents[r] = tuple(got)
        below[b] = r
    # every token longer than a byte splits into two tokens here, so its merge rank is its rank
    # minus the 256 byte ranks below it: the fragment gap is the rank difference
    assert all(any(b[:k] in ranks and b[k:] in ranks for k in range(1, len(b))) for b in ranks if len(b) > 1)
    specials = specials or {}
    dec = {b: c for c, b in _gpt2_decoder().items()}
    names = {**{i: "".join(dec[x] for x in b) for i, b in surf.items()}, **{i: s for s, i in specials.items()}}
    return _counts(surf, todo, unreachable, parents, {r: r for r in ranks.values()}, set(surf) | set(specials.values()),
                   added=set(specials.values()), names=names)


def _brute_force_hf(path: str) -> dict[str, object]:
    """The audit's counts through HF tokenizers alone: vocab + byte alphabet, ``encode`` of every
    ordinary surface, stages from HF's normalizer and pre-tokenizer, canonical parents by merging
    each token's symbols with the file's merge ranks."""
    tokenizers = require_module("tokenizers")
    hf = tokenizers.Tokenizer.from_file(path)
    spec = json.loads(Path(path).read_text(encoding="utf-8"))
    dec = _gpt2_decoder()
    added = {t.content: i for i, t in hf.get_added_tokens_decoder().items()}
    vocab = spec["model"]["vocab"]
    ordinary = {i: s for s, i in vocab.items() if s not in added}
    surf = {i: bytes(dec[c] for c in s) for i, s in ordinary.items()}
    todo = sorted(surf)
    unreachable = {}
    for i in todo:
        b = surf[i]
        if not _valid(b):
            continue
        text = b.decode()
        if hf.encode(text, add_special_tokens=False).ids != [i]:
            norm = hf.normalizer.normalize_str(text) if hf.normalizer is not None else text
            stage = "A" if any(a in text for a in added) else "N" if norm != text else "M"
            if stage == "M" and len(hf.pre_tokenizer.pre_tokenize_str(norm)) > 1:
                stage = "P"
            unreachable[i] = stage
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in spec["model"]["merges"]]
    pair_rank = {m: r for r, m in enumerate(merges)}
    first: dict[int, int] = {}
    for a, b in merges:
        first.setdefault(vocab[a + b], len(first))
    parents = {}
    for i in first:
        parts = list(ordinary[i])
        last = None
        while len(parts) > 1:
            cands = [(pair_rank.get((x, y), 1 << 60), k) for k, (x, y) in enumerate(pairwise(parts))]
            r, k = min(cands)
            if r == 1 << 60:
                break
            last = (vocab[parts[k]], vocab[parts[k + 1]])
            parts[k : k + 2] = [parts[k] + parts[k + 1]]
        if len(parts) == 1 and last is not None:
            parents[i] = last
    entries = set(surf) | set(added.values())
    return _counts(surf, todo, unreachable, parents, first, entries, added=set(added.values()),
                   names={**{i: s for s, i in added.items()}, **ordinary})


def _counts(surf: dict[int, bytes], todo: list[int], unreachable: dict[int, str], parents: dict, rank: dict,
            entries: set[int], *, added: set[int] = frozenset(), names: dict[int, str] | None = None,
            ks: tuple[int, ...] = (1, 64)) -> dict[str, object]:
    """The summary's figures from brute-force ingredients (the spec's G1, G2, G3, G5, G6 rules)."""
    dec = {b: c for c, b in _gpt2_decoder().items()}
    names = names or {i: "".join(dec[x] for x in b) for i, b in surf.items()}
    singles = Counter(byte_class(surf[i][0]) for i in todo if len(surf[i]) == 1)
    uses: dict[int, list[int]] = {}
    for child, (a, b) in parents.items():
        uses.setdefault(a, []).append(child)
        uses.setdefault(b, []).append(child)
    frag = {k: sum(1 for i, u in uses.items() if i in todo and len(u) == 1 and i in rank and 0 <= rank[u[0]] - rank[i] <= k)
            for k in ks}
    look = Counter("added" if i in added else "ordinary" for i, s in names.items()
                   if len(s) >= 3 and _LOOKALIKE.fullmatch(s) and not s.startswith("<0x"))
    return {
        "entries": len(entries),
        "single_byte": {"ascii": singles["ascii"], "utf8_lead": singles["utf8-lead"],
                        "utf8_continuation": singles["utf8-continuation"], "never_valid": singles["never-valid"]},
        "partial_utf8": sum(1 for i in todo if len(surf[i]) > 1 and not _valid(surf[i])),
        "unreachable": len(unreachable),
        "unreachable_by_stage": {s: sum(1 for v in unreachable.values() if v == s) for s in "ANPM"},
        "special_lookalike": {"added": look["added"], "ordinary": look["ordinary"]},
        "fragments": {f"k{k}": v for k, v in frag.items()},
    }


_COMPARED = ("entries", "single_byte", "partial_utf8", "unreachable", "unreachable_by_stage", "special_lookalike",
             "fragments")


def _summary(path: str, **load_options: object) -> dict[str, object]:
    s = audit_vocabulary(tokviz.load(path, **load_options)).summary()
    return {k: s[k] for k in _COMPARED}


class TestAuditAgainstBruteForce:
    """The audit's counts equal a brute force through the reference library, on one file of each
    family that test_audit.py does not already cover, on the first 3,000 ranks of r50k."""

    N = 3000

    def test_rank_file_and_its_conversion(self, tmp: Path) -> None:
        rank_file, conv, _ = _prefix_files(tmp, self.N)
        ref = _brute_force_rank_file(rank_file)
        got = _summary(rank_file, pattern=R50K_PATTERN)
        assert got == ref
        assert _summary(conv) == ref == _brute_force_hf(conv)  # same vocabulary, same counts

    def test_deepseek_shaped_sequence(self, tmp: Path) -> None:
        *_, deep = _prefix_files(tmp, self.N)
        tok = tokviz.load(deep)
        assert TokenizerFacts.of(tok).family == "byte-level"
        s = audit_vocabulary(tok).summary()
        assert s["family"] == "byte-level" and sum(s["single_byte"].values()) == 256
        assert {k: s[k] for k in _COMPARED} == _brute_force_hf(deep)

    def test_char_level_bpe(self, tmp: Path) -> None:
        path = _char_bpe(tmp)
        tok = tokviz.load(path)
        facts = TokenizerFacts.of(tok)
        assert facts.family == "char" and facts.end_of_word_suffix == "</w>"
        a = audit_vocabulary(tok)
        ref = _brute_force_char(path)
        assert sorted(t.id for t in a.tokens if t.unreachable) == ref["unreachable"]
        assert {t.id: t.surface for t in a.tokens} == ref["surfaces"]


def _char_bpe(tmp: Path) -> str:
    """A char-level BPE (Whitespace pre-tokenizer, ``</w>`` suffix) trained by HF on the toy corpus."""
    tokenizers = require_module("tokenizers")
    out = tmp / "char-bpe.json"
    if not out.is_file():
        lines = (Path(__file__).resolve().parents[2] / "resources" / "corpora" / "toy.txt").read_text().splitlines()
        hf = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
        hf.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
        hf.decoder = tokenizers.decoders.BPEDecoder(suffix="</w>")
        trainer = tokenizers.trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>"], end_of_word_suffix="</w>",
                                                 show_progress=False)
        hf.train_from_iterator(lines, trainer)
        hf.save(str(out))
    return str(out)


def _brute_force_char(path: str) -> dict[str, object]:
    """Surfaces (suffix dropped) and G3 through HF: a word-final token alone, a word-inner token
    before a letter (the audit's probe), accepted when HF's first token is it."""
    tokenizers = require_module("tokenizers")
    hf = tokenizers.Tokenizer.from_file(path)
    added = {t.content for t in hf.get_added_tokens_decoder().values()}
    vocab = {s: i for s, i in hf.get_vocab(with_added_tokens=False).items()}
    surfaces = {i: (s[:-4] if s.endswith("</w>") and len(s) > 4 else s).encode() for s, i in vocab.items()}
    unreachable = []
    for s, i in vocab.items():
        if s in added:
            continue
        text = surfaces[i].decode()
        if s.endswith("</w>"):
            ok = hf.encode(text).ids == [i]
        else:
            ok = any(hf.encode(text + u).ids[:1] == [i] for u in "abcdefghijklmnopqrstuvwxyz")
        if not ok:
            unreachable.append(i)
    return {"surfaces": surfaces, "unreachable": sorted(unreachable)}


# ---------------------------------------------------------------------- the whole vocabularies
def _bare(summary: dict) -> dict:
    """A summary without the figures that count special tokens."""
    return {k: v for k, v in summary.items() if k not in ("entries", "special_lookalike")}


@pytest.mark.slow
class TestAuditFull:
    """The same cross-checks on whole vocabularies (minutes): r50k as a rank file, as HF's
    conversion and DeepSeek-shaped; Llama 3's tokenizer.model and its HF conversion."""

    def test_audit_full_r50k_three_ways(self, tmp: Path) -> None:
        rank_file, conv, deep = _prefix_files(tmp, 50_256)
        # the whole table is r50k itself: tokviz adds its <|endoftext|>; the conversion has none
        ref = _brute_force_rank_file(rank_file, specials={"<|endoftext|>": 50_256})
        assert _summary(rank_file, pattern=R50K_PATTERN) == ref
        conv_ref = _brute_force_hf(conv)
        assert _summary(conv) == conv_ref and _bare(conv_ref) == _bare(ref)
        assert ref["fragments"] == {"k1": 12, "k64": 34}
        deep_ref = _brute_force_hf(deep)
        assert _summary(deep) == deep_ref
        print("\nr50k rank file = HF conversion:", json.dumps(ref), "\nr50k DeepSeek-shaped:", json.dumps(deep_ref))

    def test_audit_full_llama3_both_formats(self, tmp: Path) -> None:
        require_module("transformers")
        from transformers.convert_slow_tokenizer import TikTokenConverter

        root = fixture_extract("llama_models-0.3.0-*.whl", tmp / "llama")
        model = root / "llama_models" / "llama3" / "tokenizer.model"
        conv = tmp / "llama3.json"
        pattern = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                   r"|\s*[\r\n]+|\s+(?!\S)|\s+")
        TikTokenConverter(vocab_file=str(model), pattern=pattern).converted().save(str(conv))
        tok = tokviz.load(model)
        a = _summary(str(model))
        b = _summary(str(conv))
        assert a["fragments"] == b["fragments"] == {"k1": 14, "k64": 43}
        specials = {t.content: t.id for t in tok.added_tokens}
        assert a == _brute_force_rank_file(str(model), pattern=pattern, specials=specials)
        assert _bare(a) == _bare(b)  # the conversion carries no special tokens
        print("\nLlama 3 tokenizer.model = its HF conversion:", json.dumps(a))
