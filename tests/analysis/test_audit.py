"""The glitch-token audit (spec §2): counts per shared bundle re-derived with the reference libraries.

Where a count comes from a reference library (tiktoken's token bytes and ``encode_ordinary``, HF
tokenizers' vocab, normalizer, pre-tokenizer and ``encode``, sentencepiece's pieces and
``encode``) the test runs that library and compares; the spec's [V-run] figures (2.iii-A..E) are
asserted beside them so a drift in either shows.
"""

from __future__ import annotations

import json
import re
import struct
from collections import Counter

import numpy as np
import pytest
from support import ModuleCache, bundle_bytes, bundle_path, require_module

import tokviz
from tokviz.analysis.audit import (
    PROBE_STEMS,
    audit_vocabulary,
    byte_class,
    magikarp_categories,
    superstrings,
)
from tokviz.engine.cancel import Cancelled, CancelToken

_AUDITS = ModuleCache()
_LOOKALIKE = re.compile(r"[\[<].*[A-Za-z].*[\]>]", re.DOTALL)


def plain_file(rel: str) -> str:
    """A bundle as an uncompressed file (the reference libraries cannot read the embedded .gz)."""
    p = bundle_path(rel)
    if p.suffix != ".gz":
        return str(p)
    import tempfile
    from pathlib import Path

    out = Path(tempfile.gettempdir()) / "tokviz-audit-tests" / rel
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(bundle_bytes(rel))
    return str(out)


def audit_of(rel: str):  # noqa: ANN201 - one audit per bundle per session (o200k takes seconds)
    if rel not in _AUDITS:
        _AUDITS[rel] = audit_vocabulary(tokviz.load(bundle_path(rel)))
    return _AUDITS[rel]


def _lookalike(s: str) -> bool:
    return len(s) >= 3 and bool(_LOOKALIKE.fullmatch(s)) and not s.startswith("<0x")


def _valid(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _byte_counts(surfaces: list[bytes]) -> tuple[dict[str, int], int]:
    """(single-byte classes, partial multi-byte) of a list of surfaces, by hand-written rules."""
    single = Counter(byte_class(s[0]) for s in surfaces if len(s) == 1)
    partial = sum(1 for s in surfaces if len(s) > 1 and not _valid(s))
    return {"ascii": single["ascii"], "utf8_lead": single["utf8-lead"],
            "utf8_continuation": single["utf8-continuation"], "never_valid": single["never-valid"]}, partial


class TestByteClass:
    def test_the_four_classes(self):
        # 0x00-0x7F ascii, 0x80-0xBF continuation, 0xC0/0xC1/0xF5-0xFF never valid, else lead
        classes = Counter(byte_class(b) for b in range(256))
        assert classes == {"ascii": 128, "utf8-continuation": 64, "never-valid": 2 + 11, "utf8-lead": 256 - 128 - 64 - 13}


class TestSurfaces:
    def test_byte_level_surface_is_the_bytes(self):
        a = audit_of("gpt2/r50k_base.tiktoken")
        require_module("tiktoken")
        from tiktoken.load import load_tiktoken_bpe

        ranks = load_tiktoken_bpe(plain_file("gpt2/r50k_base.tiktoken"))
        assert {r: a.get(r).surface for r in ranks.values()} == {r: b for b, r in ranks.items()}

    def test_sentencepiece_and_wordpiece_surfaces(self):
        m = audit_of("mistral-7b-v0.1/tokenizer.json")
        tok = tokviz.load(bundle_path("mistral-7b-v0.1/tokenizer.json"))
        assert m.get(tok.token_to_id("<0x41>")).surface == b"A"
        assert m.get(tok.token_to_id("<0x41>")).kind == "byte"
        assert m.get(tok.token_to_id("\u2581the")).surface == b" the"
        assert m.get(tok.token_to_id("\u2581")).kind == "marker"
        b = audit_of("bert-base-uncased/vocab.txt")
        btok = tokviz.load(bundle_path("bert-base-uncased/vocab.txt"))
        ing = b.get(btok.token_to_id("##ing"))
        assert (ing.surface, ing.continuation) == (b"ing", True)


def _tiktoken_encoding(rel: str):  # noqa: ANN202
    """tiktoken's own preset (pattern, special tokens) on the local rank file (no download)."""
    tiktoken = require_module("tiktoken")
    import tiktoken_ext.openai_public as presets
    from tiktoken.load import load_tiktoken_bpe

    name = rel.split("/")[1].split(".")[0]
    local = plain_file(rel)
    real = presets.load_tiktoken_bpe
    presets.load_tiktoken_bpe = lambda _url, expected_hash=None: load_tiktoken_bpe(local, expected_hash)
    try:
        return tiktoken.Encoding(**getattr(presets, name)())
    finally:
        presets.load_tiktoken_bpe = real


class TestTiktokenBundles:
    """r50k, cl100k, o200k: token bytes and ``encode_ordinary`` from tiktoken itself."""

    @pytest.mark.parametrize(
        "rel, partial, unreachable",
        [
            ("gpt2/r50k_base.tiktoken", 216, 0),
            ("cl100k_base/cl100k_base.tiktoken", 645, 0),
            ("o200k_base/o200k_base.tiktoken", 1434, 12),
        ],
        ids=["r50k", "cl100k", "o200k"],
    )
    def test_counts(self, rel, partial, unreachable):
        ref = _tiktoken_encoding(rel)
        ranks = ref._mergeable_ranks
        single, ref_partial = _byte_counts(list(ranks))
        # encode_ordinary: no special-token extraction, exactly spec G3 for tiktoken; every
        # ordinary token whose bytes are valid UTF-8 is tried, single ASCII bytes included
        ref_unreachable = sorted(
            b.decode() for b, r in ranks.items() if _valid(b) and ref.encode_ordinary(b.decode()) != [r]
        )
        s = audit_of(rel).summary()
        assert s["entries"] == len(ranks) + len(ref._special_tokens)
        assert s["single_byte"] == single == {"ascii": 128, "utf8_lead": 51, "utf8_continuation": 64, "never_valid": 13}
        assert s["partial_utf8"] == ref_partial == partial
        assert s["unreachable"] == len(ref_unreachable) == unreachable
        got = sorted(t.surface.decode() for t in audit_of(rel).tokens if t.unreachable)
        assert got == ref_unreachable
        assert s["unreachable_by_stage"]["P"] == unreachable  # o200k: all 12 split by the regex

    def test_o200k_unreachable_strings(self):
        got = {t.surface.decode() for t in audit_of("o200k_base/o200k_base.tiktoken").tokens if t.unreachable}
        assert got == {" I'", "\n//", "\r\n//", "\n///", "\n\n//", "\n//\n//", "\r\n\r\n//", "\n\n\n//",
                       " 亚洲AV", "亚洲AV", "无码AV", " 天天中彩票APP"}

    def test_never_valid_byte_ids(self):
        a = audit_of("gpt2/r50k_base.tiktoken")
        ids = sorted(t.id for t in a.tokens if t.byte_class == "never-valid")
        assert ids == [124, 125, *range(177, 188)]


def _hf(rel: str):  # noqa: ANN202
    tokenizers = require_module("tokenizers")
    return tokenizers.Tokenizer.from_file(plain_file(rel))


def _hf_byte_level_reference(rel: str) -> dict[str, object]:
    """Surfaces, lookalikes and G3/G4 for a byte-level tokenizer.json, all from HF tokenizers."""
    require_module("transformers")
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    hf = _hf(rel)
    dec = {c: b for b, c in bytes_to_unicode().items()}
    added = {t.content for t in hf.get_added_tokens_decoder().values()}
    model_vocab = {s: i for s, i in hf.get_vocab(with_added_tokens=False).items() if s not in added}
    surf = {i: bytes(dec[c] for c in s) for s, i in model_vocab.items()}
    look = Counter("added" if s in added else "ordinary" for s in hf.get_vocab(with_added_tokens=True) if _lookalike(s))
    # every ordinary entry with a valid UTF-8 surface, lookalikes included (categories overlap)
    todo = [(i, b.decode()) for i, b in surf.items() if _valid(b)]
    encs = hf.encode_batch([s for _, s in todo], add_special_tokens=False)
    unreachable = [(i, s) for (i, s), e in zip(todo, encs) if e.ids != [i]]
    stages = Counter()
    for _, s in unreachable:
        n = hf.normalizer.normalize_str(s) if hf.normalizer is not None else s
        if n != s:
            stages["N"] += 1
        elif len(hf.pre_tokenizer.pre_tokenize_str(n)) > 1:
            stages["P"] += 1
        else:
            stages["M"] += 1
    single, partial = _byte_counts(list(surf.values()))
    return {"entries": hf.get_vocab_size(with_added_tokens=True), "single": single, "partial": partial,
            "unreachable": len(unreachable), "stages": stages, "look": look}


class TestHfByteLevelBundles:
    @pytest.mark.parametrize(
        "rel, entries, partial, unreachable, stages, look",
        [
            # Qwen3: 1,909 = 1,658 P (Thai letter+mark, fullwidth digits) + 248 N (NFC) + the 3 ordinary
            # lookalikes <unk>, <s>, </s> (P: the regex splits "<", "s", ">")
            ("qwen3/tokenizer.json", 151_669, 1320, 1909, {"P": 1661, "N": 248}, {"added": 26, "ordinary": 3}),
            ("claude-legacy/tokenizer.json", 65_000, 625, 0, {}, {"added": 5, "ordinary": 0}),
        ],
        ids=["qwen3", "claude-legacy"],
    )
    def test_counts(self, rel, entries, partial, unreachable, stages, look):
        ref = _hf_byte_level_reference(rel)
        s = audit_of(rel).summary()
        assert s["entries"] == ref["entries"] == entries
        assert s["single_byte"] == ref["single"]
        assert sum(s["single_byte"].values()) == 256
        assert s["partial_utf8"] == ref["partial"] == partial
        assert s["unreachable"] == ref["unreachable"] == unreachable
        assert {k: v for k, v in s["unreachable_by_stage"].items() if v} == dict(ref["stages"]) == stages
        assert s["special_lookalike"] == dict(ref["look"], **{k: 0 for k in ("added", "ordinary") if k not in ref["look"]}) == look

    def test_qwen3_lookalikes_are_unreachable_and_counted(self):
        a = audit_of("qwen3/tokenizer.json")
        ordinary = {t.vocab: t for t in a.tokens if t.lookalike and t.kind == "normal"}
        assert set(ordinary) == {"<unk>", "<s>", "</s>"}
        assert {t.id for t in ordinary.values()} == {128244, 128245, 128247}
        assert all(t.unreachable and t.stage == "P" for t in ordinary.values())
        assert a.summary()["overlaps"]["lookalike & unreachable"] == 3


class TestSentencePieceBundles:
    def test_mistral_bytes_and_duplicates(self):
        spm = require_module("sentencepiece")
        sp = spm.SentencePieceProcessor(model_file=plain_file("mistral-7b-v0.1/tokenizer.model"))
        n = sp.get_piece_size()
        byte_ids = [i for i in range(n) if sp.is_byte(i)]
        ascii_chars = {sp.id_to_piece(i): i for i in range(n)
                       if not sp.is_byte(i) and not sp.is_control(i) and len(sp.id_to_piece(i)) == 1
                       and ord(sp.id_to_piece(i)) < 128}
        char_surfaces = set(ascii_chars) | {" "}  # the lone ▁ piece stands for a space
        dup = [i for i in byte_ids if chr(int(sp.id_to_piece(i)[3:5], 16)) in char_surfaces]
        for rel in ("mistral-7b-v0.1/tokenizer.json", "mistral-7b-v0.1/tokenizer.model"):
            s = audit_of(rel).summary()
            assert s["entries"] == n == 32_000
            assert sum(s["single_byte"].values()) == len(byte_ids) + len(ascii_chars) == 380
            assert s["single_byte"]["ascii"] == 128 + len(ascii_chars) == 252
            assert s["partial_utf8"] == 0
            assert s["duplicate_byte"] == len(dup) == 125
            # the duplicate byte pieces are unreachable (A gives the char piece A), and nothing else
            assert sorted(t.id for t in audit_of(rel).tokens if t.unreachable) == sorted(dup)
            assert s["overlaps"]["duplicate-byte & unreachable"] == s["unreachable"] == 125
            assert s["special_lookalike"] == {"added": 3, "ordinary": 0}

    def test_albert_six_viterbi_dominated(self):
        spm = require_module("sentencepiece")
        sp = spm.SentencePieceProcessor(model_file=plain_file("albert-30k-clean/30k-clean.model"))
        ref = []
        for i in range(sp.get_piece_size()):
            p = sp.id_to_piece(i)
            if sp.is_control(i) or sp.is_unknown(i) or p == "\u2581":
                continue
            if p.startswith("\u2581"):
                ok = sp.encode(p[1:]) == [i] or sp.encode(" " + p[1:]) == [i]
            else:
                ok = sp.encode(p) == [i]
                for stem in PROBE_STEMS:
                    ids = sp.encode(stem + p)
                    if len(ids) >= 2 and ids[-1] == i and sp.decode(ids[:-1]).strip() == stem:
                        ok = True
                        break
            if not ok:
                ref.append(p)
        a = audit_of("albert-30k-clean/30k-clean.model")
        got = sorted(t.vocab for t in a.tokens if t.unreachable)
        assert got == sorted(ref) == sorted(["▁hed", "▁ford", "▁peoples", "▁yours", "▁owns", "▁locals"])
        assert a.summary()["unreachable_by_stage"]["M"] == 6
        # score(▁peoples) = -11.6034 < score(▁people) + score(s) = -7.5884 - 3.9874
        t = a.get(sp.piece_to_id("▁peoples"))
        assert t.rank < sp.get_score(sp.piece_to_id("▁people")) + sp.get_score(sp.piece_to_id("s"))


class TestWordPiece:
    def test_bert_337_not_6823(self):
        hf = _hf("bert-base-uncased/tokenizer.json")
        vocab = hf.get_vocab(with_added_tokens=False)
        inv = {i: s for s, i in vocab.items()}
        added = {t.content for t in hf.get_added_tokens_decoder().values()}
        letters = [(u, vocab[u]) for u in "abcdefghijklmnopqrstuvwxyz" if u in vocab]
        ref = []
        for i in sorted(inv):
            s = inv[i]
            if s in added:
                continue
            if s.startswith("##") and len(s) > 2:
                ok = any(hf.encode(u + s[2:], add_special_tokens=False).ids == [uid, i] for u, uid in letters)
            else:
                ok = hf.encode(s, add_special_tokens=False).ids == [i]
            if not ok:
                ref.append(i)
        # magikarp's decode -> re-encode with the same library: every ##x comes back as #, #, x
        mk = Counter()
        for i, s in inv.items():
            d = hf.decode([i], skip_special_tokens=False)
            mk["ok" if hf.encode(d, add_special_tokens=False).ids == [i] or s in added else "unreachable"] += 1
        for rel in ("bert-base-uncased/tokenizer.json", "bert-base-uncased/vocab.txt"):
            a = audit_of(rel)
            assert sorted(t.id for t in a.tokens if t.unreachable) == ref
            # 1,331 = the spec's 337 (`...`, ##punctuation, ##CJK) + the 994 ordinary lookalikes
            # [unused0] .. [unused993], which the BERT pre-tokenizer splits at "[" and "]"
            assert a.summary()["unreachable"] == len(ref) == 337 + 994
            assert a.summary()["overlaps"]["lookalike & unreachable"] == 994
        assert mk["unreachable"] == 6823
        cats = Counter(magikarp_categories(tokviz.load(bundle_path("bert-base-uncased/tokenizer.json"))).values())
        assert cats["UNREACHABLE_MULTI_TOKEN"] + cats["UNREACHABLE_SPECIAL"] == mk["unreachable"]

    def test_bert_unreachable_are_punct_and_cjk(self):
        a = audit_of("bert-base-uncased/vocab.txt")
        un = [t for t in a.tokens if t.unreachable]
        assert [t.vocab for t in un if not t.continuation and not t.lookalike] == ["..."]
        assert all(t.stage == "P" for t in un)


class TestMagikarpMode:
    """Category totals of magikarp's published reports (spec 2.iii-A/B)."""

    @pytest.mark.parametrize(
        "rel, expected",
        [
            ("gpt2/r50k_base.tiktoken", {"OK": 49_912, "UNDECODEABLE": 344, "OK_SPECIAL": 1}),
            ("mistral-7b-v0.1/tokenizer.json",
             {"OK": 31_744, "OK_SPECIAL": 3, "UNREACHABLE_SINGLE_TOKEN": 125, "UNDECODEABLE": 128}),
        ],
        ids=["gpt2", "mistral"],
    )
    def test_totals(self, rel, expected):
        assert dict(Counter(magikarp_categories(tokviz.load(bundle_path(rel))).values())) == expected

    def test_qwen3_totals(self):
        cats = Counter(magikarp_categories(tokviz.load(bundle_path("qwen3/tokenizer.json"))).values())
        assert dict(cats) == {"OK": 148_298, "OK_SPECIAL": 14, "UNDECODEABLE": 1_448, "UNREACHABLE_MULTI_TOKEN": 1_716,
                              "UNREACHABLE_SINGLE_TOKEN": 190, "UNREACHABLE_SPECIAL": 3}
        # the same 1,909 as the default audit (its 3 ordinary lookalikes are magikarp's
        # UNREACHABLE_SPECIAL), and 1,448 = 128 high single bytes + 1,320 fragments
        s = audit_of("qwen3/tokenizer.json").summary()
        unreachable = ("UNREACHABLE_MULTI_TOKEN", "UNREACHABLE_SINGLE_TOKEN", "UNREACHABLE_SPECIAL")
        assert sum(cats[c] for c in unreachable) == s["unreachable"]
        assert cats["UNDECODEABLE"] == 128 + s["partial_utf8"]


class TestFragments:
    def _tiktoken_parents(self, rel: str, ids: list[int]) -> dict[int, tuple[int, ...]]:
        """Canonical parents with tiktoken itself: encode the token with only the lower ranks."""
        tiktoken = require_module("tiktoken")
        from tiktoken.load import load_tiktoken_bpe

        ranks = load_tiktoken_bpe(plain_file(rel))
        by_rank = {r: b for b, r in ranks.items()}
        out = {}
        for i in ids:
            lower = {b: r for b, r in ranks.items() if r < i}
            enc = tiktoken.Encoding(name=f"below{i}", pat_str=r"[\s\S]+", mergeable_ranks=lower, special_tokens={})
            out[i] = tuple(enc._encode_bytes(by_rank[i]))  # the token's bytes, no regex split
        return out

    def test_r50k(self):
        a = audit_of("gpt2/r50k_base.tiktoken")
        f1 = [t for t in a.tokens if t.is_fragment(1)]
        assert {t.surface for t in f1} == {
            b" toget", b" externalToEVA", b"reportprint", b"embedreportprint", b"rawdownload", b" RandomRedditor",
            b"quickShip", a.get(39820).surface, b"oreAndOnline", b"InstoreAndOnline", b" TheNitrome",
            " サーティ".encode(),
        }
        assert a.get(39820).surface.startswith("龍".encode())
        f64 = {t.surface_text for t in a.tokens if t.is_fragment(64)}
        magikarp_fragments = ["InstoreAndOnline", "rawdownload", "quickShip", "oreAndOnline", "embedreportprint",
                              " サーティ", " RandomRedditor", " externalToEVA", " TheNitrome", "reportprint",
                              " externalTo", "StreamerBot", "ActionCode", "Nitrome", "DeliveryDate",
                              "ThumbnailImage", "isSpecial", "oreAnd", "cloneembedreportprint", "Orderable"]
        assert [s for s in magikarp_fragments if s not in f64] == ["Orderable"]
        assert len(f64) == 34
        # ÃÂ's one child ÃÂÃÂ is the pair (ÃÂ, ÃÂ): it uses ÃÂ twice, so ÃÂ is no fragment
        assert a.get(5815).parents == (5808, 5808) and not a.get(5808).is_fragment(64)
        # parents agree with tiktoken limited to the ranks below each F_1 token's child
        children = sorted({t.children[0] for t in f1})
        ref = self._tiktoken_parents("gpt2/r50k_base.tiktoken", children)
        assert {c: a.get(c).parents for c in children} == ref
        # whole glitch tokens are not fragments: no children
        gold = a.get(43453)
        assert gold.surface == b" SolidGoldMagikarp" and gold.children == () and not gold.is_fragment(64)

    def test_cl100k(self):
        a = audit_of("cl100k_base/cl100k_base.tiktoken")
        f1 = {t.surface_text for t in a.tokens if t.is_fragment(1)}
        assert f1 == {"CLUD", " +#+#+#+", "webElementX", "omidou", "IntoConstraints", "雅黑", " ForCanBeConverted",
                      " ForCanBeConvertedToF", "useRal", "useRalative", "HomeAs", " semiclass"}
        assert a.get(80369).surface == b" ForCanBeConverted" and a.get(89472).surface == b"useRalative"
        f64 = [t for t in a.tokens if t.is_fragment(64)]
        assert len(f64) == 31 and a.get(85069).surface == b"PostalCodesNL" and a.get(85069).is_fragment(64)

    def test_superstrings(self):
        a = audit_of("gpt2/r50k_base.tiktoken")
        sup = superstrings(a, 30905)  # rawdownload
        assert 30906 in sup and all(b"rawdownload" in a.get(i).surface for i in sup)


class TestProgressAndCancel:
    def test_cancel_raises(self):
        tok = tokviz.load(bundle_path("bert-base-uncased/vocab.txt"))
        token = CancelToken()
        seen = []

        def progress(phase, done, total):
            seen.append((phase, done, total))
            if phase == "reachability" and done > 0:
                token.cancel()

        with pytest.raises(Cancelled) as info:
            audit_vocabulary(tok, progress=progress, cancel=token)
        assert info.value.stage == "reachability"
        assert seen[0][0] == "surfaces" and seen[-1][0] == "reachability" and seen[-1][1] > 0


class TestCli:
    def test_json_keys_and_numbers(self, capsys):
        from tokviz.cli import main

        assert main(["audit", str(bundle_path("gpt2/r50k_base.tiktoken")), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        for key in ("entries", "single_byte", "partial_utf8", "unreachable", "unreachable_by_stage",
                    "special_lookalike", "fragments", "tokens"):
            assert key in out
        assert set(out["single_byte"]) == {"ascii", "utf8_lead", "utf8_continuation", "never_valid"}
        assert set(out["unreachable_by_stage"]) == {"N", "P", "A", "M"}
        assert set(out["special_lookalike"]) == {"added", "ordinary"}
        assert set(out["fragments"]) == {"k1", "k64"}
        s = audit_of("gpt2/r50k_base.tiktoken").summary()
        assert {k: out[k] for k in s} == s
        rows = {t["id"]: t for t in out["tokens"]}
        assert set(rows[39820]) >= {"id", "surface_hex", "categories"}
        assert "partial-utf8" in rows[39820]["categories"] and "fragment-k1" in rows[39820]["categories"]

    def test_magikarp_mode_says_where_it_misleads(self, capsys):
        from tokviz.cli import main

        assert main(["audit", str(bundle_path("bert-base-uncased/vocab.txt")), "--magikarp", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["unreachable"] == 337 + 994  # the spec's 337 and the [unusedN] lookalikes (TestWordPiece)
        assert out["magikarp"]["UNREACHABLE_MULTI_TOKEN"] > 5000 and "misfiles WordPiece" in out["magikarp_warning"]
        assert main(["audit", str(bundle_path("bert-base-uncased/vocab.txt"))]) == 0
        text = capsys.readouterr().out
        assert "unreachable               1,331 (normalizer 0, pre-tokenizer 1331" in text
        assert "in two categories         lookalike & unreachable 994" in text

    def test_bad_embeddings_file(self, tmp_path, capsys):
        from tokviz.cli import main

        bad = tmp_path / "w.safetensors"
        _write_safetensors(bad, {"foo.weight": ("F32", [2, 2], np.zeros((2, 2), np.float32).tobytes())})
        rc = main(["audit", str(bundle_path("bert-base-uncased/vocab.txt")), "--embeddings", str(bad)])
        err = capsys.readouterr().err
        assert rc == 2 and "foo.weight [2, 2]" in err and "no recognisable embedding tensor" in err


# ---------------------------------------------------------------------- G8 embeddings
def _write_safetensors(path, tensors):  # noqa: ANN001 - {name: (dtype, shape, raw bytes)}, by hand
    header, blobs, offset = {}, [], 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    h = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))


_TOY = np.array([[3, 4], [0, 0], [1, 0], [0, 2]], dtype=np.float32)


def _toy_tokenizer(n: int = 4):  # noqa: ANN202 - a 4-entry WordLevel vocabulary
    from tokviz.engine.models.wordlevel import WordLevel
    from tokviz.engine.pre_tokenizers.whitespace import Whitespace
    from tokviz.engine.tokenizer import Tokenizer

    vocab = {w: i for i, w in enumerate(["aa", "bb", "cc", "dd", "ee"][:n])}
    return Tokenizer(WordLevel(vocab, unk_token="aa"), pre_tokenizer=Whitespace())


class TestEmbeddings:
    def test_toy_f32_and_bf16(self, tmp_path):
        from tokviz.analysis.embeddings import embedding_report

        audit = audit_vocabulary(_toy_tokenizer())
        f32 = tmp_path / "f32.safetensors"
        _write_safetensors(f32, {"model.embed_tokens.weight": ("F32", [4, 2], _TOY.tobytes())})
        bf16 = tmp_path / "bf16.safetensors"
        # bf16 = the high 16 bits of the f32 (exact for these small integers)
        _write_safetensors(bf16, {"model.embed_tokens.weight": ("BF16", [4, 2], (_TOY.view(np.uint32) >> 16).astype("<u2").tobytes())})
        for p in (f32, bf16):
            r = embedding_report(p, audit, reference_ids=[2])
            assert r.tied  # no lm_head.weight
            assert r.norms == (5.0, 0.0, 1.0, 2.0)
            # m = row 2 = (1, 0): 1 - 3/5 = 0.4; zero row: 1 - 0/1e-6 = 1; row 2: 0; (0, 2): 1
            assert [round(v, 6) for v in r.values] == [0.4, 1.0, 0.0, 1.0]
            z = embedding_report(p, audit, reference_ids=[1])
            assert z.values == (1.0, 1.0, 1.0, 1.0) and "reference rows are zero" in " ".join(z.warnings)

    def test_untied_sharded_and_padding(self, tmp_path):
        from tokviz.analysis.embeddings import embedding_report

        audit = audit_vocabulary(_toy_tokenizer(3))  # 3 ids: row 3 is padding
        _write_safetensors(tmp_path / "a.safetensors", {"model.embed_tokens.weight": ("F32", [4, 2], _TOY.tobytes())})
        _write_safetensors(tmp_path / "b.safetensors", {"lm_head.weight": ("F32", [4, 2], _TOY.tobytes())})
        index = tmp_path / "model.safetensors.index.json"
        index.write_text(json.dumps({"weight_map": {"model.embed_tokens.weight": "a.safetensors",
                                                    "lm_head.weight": "b.safetensors"}}), encoding="utf-8")
        (tmp_path / "config.json").write_text(json.dumps({"tie_word_embeddings": False}), encoding="utf-8")
        r = embedding_report(index, audit)
        assert not r.tied and r.indicator == "l2-norm"
        assert r.values == (5.0, 0.0, 1.0) and r.padding_rows == (3,)
        assert 3 not in r.candidates

    def test_unknown_tensor_lists_names(self, tmp_path):
        from tokviz.analysis.embeddings import EmbeddingTensorNotFound, embedding_report

        p = tmp_path / "x.safetensors"
        _write_safetensors(p, {"enc.emb": ("F32", [4, 2], _TOY.tobytes()), "enc.w": ("F32", [2, 2], bytes(16))})
        with pytest.raises(EmbeddingTensorNotFound) as exc:
            embedding_report(p, audit_vocabulary(_toy_tokenizer()))
        assert exc.value.tensors == [("enc.emb", (4, 2)), ("enc.w", (2, 2))]
        r = embedding_report(p, audit_vocabulary(_toy_tokenizer()), tensor="enc.emb", reference_ids=[2])
        assert r.tensor == "enc.emb"


    def test_truncated_file_is_a_clear_error(self, tmp_path):
        from tokviz.analysis.embeddings import embedding_report
        from tokviz.engine.errors import TokvizFormatError

        p = tmp_path / "t.safetensors"
        _write_safetensors(p, {"model.embed_tokens.weight": ("F32", [4, 2], _TOY.tobytes())})
        p.write_bytes(p.read_bytes()[:-8])
        with pytest.raises(TokvizFormatError, match="data_offsets"):
            embedding_report(p, audit_vocabulary(_toy_tokenizer()))


class TestEmbeddedBundles:
    """The bundles the app ships (resources/bundles/*.gz) give the same audit as the shared files."""

    @pytest.mark.parametrize(
        "rel",
        ["gpt2/r50k_base.tiktoken", "mistral-7b-v0.1/tokenizer.json", "bert-base-uncased/vocab.txt",
         "albert-30k-clean/30k-clean.model", "claude-legacy/tokenizer.json"],
        ids=["gpt2", "mistral", "bert", "albert", "claude"],
    )
    def test_same_counts(self, rel):
        from support import RESOURCES

        gz = RESOURCES / "bundles" / (rel + ".gz")
        if not gz.is_file():
            from tokviz.resources import resource_path

            gz = resource_path("bundles", *(rel + ".gz").split("/"))
        assert audit_vocabulary(tokviz.load(gz)).summary() == audit_of(rel).summary()
