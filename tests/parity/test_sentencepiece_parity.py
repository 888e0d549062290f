"""Parity with sentencepiece on the .model bundles, and with HF tokenizers on BERT's vocab.txt.

SentencePiece bundles (mistral BPE, albert / test_model / test_ja_model Unigram): ids, pieces,
decode and piece spans (``encode(..., return_type="proto")`` begin/end, converted from UTF-8
bytes to characters) on the tricky strings, both corpora line by line and as whole documents,
and hypothesis text; for the Unigram models also the n-best lists with their scores
(``nbest_encode``) and the sampling distributions (``enable_sampling=True`` with
``nbest_size=-1`` and ``> 1``), compared statistically against the exact distribution our
lattice computes. BERT: ``tokenizers.BertWordPieceTokenizer(vocab.txt)`` vs `load_wordpiece_vocab`
on the same inputs (ids, tokens, offsets, decode).

Every comparison is recorded in the parity report (tests/parity/conftest.py).
"""

from __future__ import annotations

import collections
import math
import struct
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support import bundle_bytes, bundle_path, require_module

from parity.cases import TRICKY, corpus_document, corpus_lines
from tokviz.engine.lattice import Lattice
from tokviz.engine.text import NormalizedText, OffsetMap

SP_BUNDLES = {
    "mistral-7b-v0.1": "mistral-7b-v0.1/tokenizer.model",
    "albert-30k-clean": "albert-30k-clean/30k-clean.model",
    "sp-test_model": "sentencepiece-test/test_model.model",
    "sp-test_ja_model": "sentencepiece-test/test_ja_model.model",
}
UNIGRAM = ["albert-30k-clean", "sp-test_model", "sp-test_ja_model"]
CORPORA = ["botchan.txt", "wagahaiwa_nekodearu.txt"]
LINES_PER_CORPUS = 1000
BERT = "bert-base-uncased"


def _label(name: str) -> str:
    return f"{name} (.model)"


@cache
def sp_pair(name: str) -> tuple[Any, Any]:
    """(tokviz tokenizer, sentencepiece processor) from the same .model bytes."""
    from tokviz.io.sentencepiece import load_sentencepiece_model

    spm = require_module("sentencepiece")
    data = bundle_bytes(SP_BUNDLES[name])
    return load_sentencepiece_model(data, source=SP_BUNDLES[name]), spm.SentencePieceProcessor(model_proto=data)


def _diff(a: list, b: list) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"at {i}: ours {a[max(0, i - 2):i + 3]!r} vs ref {b[max(0, i - 2):i + 3]!r}"
    return f"lengths {len(a)} vs {len(b)}"


def compare_sp(tok: Any, sp: Any, text: str) -> str:
    """'' when ids, pieces, spans and decode equal sentencepiece's, else what differs."""
    enc = tok.encode(text)
    ref = sp.encode(text, return_type="proto")
    ids = [p.id for p in ref.pieces]
    if enc.ids != ids:
        return f"ids differ {_diff(enc.tokens, [sp.id_to_piece(i) for i in ids])}"
    got = tok.encode_ids(text)
    if got != ids:
        return f"encode_ids differ {_diff(got, ids)}"
    # (an unknown run's piece is its normalized text in both)
    ours_p = list(enc.tokens)
    ref_p = [p.piece for p in ref.pieces]
    if ours_p != ref_p:
        return f"pieces differ {_diff(ours_p, ref_p)}"
    m = OffsetMap(text)
    spans = [(m.from_utf8(p.begin), m.from_utf8(p.end)) for p in ref.pieces]
    if [tuple(o) for o in enc.offsets] != spans:
        return f"spans differ {_diff([tuple(o) for o in enc.offsets], spans)}"
    ours_d, ref_d = tok.decode(enc.ids), sp.decode(ids)
    if ours_d != ref_d:
        return f"decode differs: {ours_d[:60]!r} vs {ref_d[:60]!r}"
    return ""


@pytest.mark.parity
@pytest.mark.parametrize("name", list(SP_BUNDLES))
def test_tricky(name: str, parity_report) -> None:  # noqa: ANN001
    tok, sp = sp_pair(name)
    bad = []
    for case_id, text in TRICKY:
        detail = compare_sp(tok, sp, text)
        parity_report.record(_label(name), f"tricky/{case_id}", not detail, detail)
        if detail:
            bad.append(f"{case_id}: {detail}")
    assert not bad, bad[:5]


@pytest.mark.parity
@pytest.mark.parametrize("corpus", CORPORA, ids=lambda c: c.split(".")[0])
@pytest.mark.parametrize("name", list(SP_BUNDLES))
def test_corpus_lines(name: str, corpus: str, parity_report) -> None:  # noqa: ANN001
    tok, sp = sp_pair(name)
    results = []
    for n, line in enumerate(corpus_lines(corpus, LINES_PER_CORPUS)):
        detail = compare_sp(tok, sp, line)
        results.append((f"{corpus}/line{n}", not detail, detail))
    parity_report.record_many(_label(name), results)
    bad = [r for r in results if not r[1]]
    assert not bad, bad[:3]


@pytest.mark.parity
@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPORA, ids=lambda c: c.split(".")[0])
@pytest.mark.parametrize("name", list(SP_BUNDLES))
def test_whole_document(name: str, corpus: str, parity_report) -> None:  # noqa: ANN001
    tok, sp = sp_pair(name)
    detail = compare_sp(tok, sp, corpus_document(corpus))
    parity_report.record(_label(name), f"{corpus}/document", not detail, detail)
    assert not detail


def _stdlib_source() -> str:
    """A long Python source file from the running interpreter (digit runs, long documents)."""
    import sysconfig
    from pathlib import Path

    return (Path(sysconfig.get_paths()["stdlib"]) / "_pydecimal.py").read_text(encoding="utf-8")


@pytest.mark.parity
@pytest.mark.slow
@pytest.mark.parametrize("name", list(SP_BUNDLES))
def test_python_source_document(name: str, parity_report) -> None:  # noqa: ANN001
    """A 200k-char Python file as one text: float32 score accumulation and ties over a long
    document (e.g. "000"+"0000" vs "0000"+"000" in Decimal literals)."""
    tok, sp = sp_pair(name)
    detail = compare_sp(tok, sp, _stdlib_source())
    parity_report.record(_label(name), "stdlib/_pydecimal.py/document", not detail, detail)
    assert not detail


@pytest.mark.parity
@pytest.mark.parametrize("name", list(SP_BUNDLES))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=40))
def test_hypothesis(name: str, text: str, parity_report) -> None:  # noqa: ANN001
    tok, sp = sp_pair(name)
    detail = compare_sp(tok, sp, text)
    parity_report.record(_label(name), f"hypothesis/{text[:20]!r}", not detail, detail)
    assert not detail


# ---------------------------------------------------------------------- n-best and sampling
def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def _lattice(tok: Any, text: str):  # noqa: ANN202
    norm = tok.normalizer.normalize(NormalizedText.identity(text))
    return norm, Lattice.build(tok.model, norm.text)


def _final_ids(tok: Any, norm: Any, lat: Any, seg: Any) -> list[int]:
    """A lattice path after SentencePiece's processor step (unknown runs merged)."""
    raw = [(lat.nodes[k].id, lat.nodes[k].start, lat.nodes[k].end) for k in seg.nodes]
    return [i for i, _, _ in tok.model.spm.finish(norm.text, raw)]


@pytest.mark.parity
@pytest.mark.parametrize("name", UNIGRAM)
def test_nbest(name: str, parity_report) -> None:  # noqa: ANN001
    tok, sp = sp_pair(name)
    texts = [t for _, t in TRICKY if t.strip()] + [
        line for line in corpus_lines("botchan.txt", 160)[100:160] if line.strip()
    ]
    bad = []
    for k, text in enumerate(texts):
        norm, lat = _lattice(tok, text)
        for n in (2, 8):
            ref = sp.nbest_encode(text, nbest_size=n, return_type="proto")
            ours = lat.nbest(n)
            ref_ids = [[p.id for p in nb.pieces] for nb in ref.nbests]
            ours_ids = [_final_ids(tok, norm, lat, s) for s in ours]
            detail = ""
            if ours_ids != ref_ids:
                detail = f"n={n} lists differ {_diff(ours_ids, ref_ids)}"
            elif [_f32(s.score) for s in ours] != [nb.score for nb in ref.nbests]:
                detail = f"n={n} scores differ {_diff([_f32(s.score) for s in ours], [nb.score for nb in ref.nbests])}"
            parity_report.record(_label(name), f"nbest{n}/{k}:{text[:20]!r}", not detail, detail)
            if detail:
                bad.append(detail)
    assert not bad, bad[:3]


SAMPLING = [(-1, 0.5), (-1, 0.1), (4, 1.0)]  # (nbest_size, alpha)


@pytest.mark.parity
@pytest.mark.parametrize("nbest_size,alpha", SAMPLING, ids=lambda v: str(v))
@pytest.mark.parametrize("name", ["sp-test_model", "albert-30k-clean"])
def test_sampling_distribution(name: str, nbest_size: int, alpha: float, parity_report) -> None:  # noqa: ANN001
    """sentencepiece's samples (fixed seed) follow the distribution our lattice computes."""
    spm = require_module("sentencepiece")
    tok, sp = sp_pair(name)
    word = "hello"
    norm, lat = _lattice(tok, word)
    if nbest_size < 0:
        segs = _all_paths(lat)
        weights = [math.exp(alpha * lat.path_score(p)) for p in segs]
        keys = [tuple(_final_ids(tok, norm, lat, _Seg(p))) for p in segs]
    else:
        best = lat.nbest(nbest_size)
        weights = [math.exp(alpha * s.score) for s in best]
        keys = [tuple(_final_ids(tok, norm, lat, s)) for s in best]
    z = sum(weights)
    expect: dict[tuple[int, ...], float] = collections.defaultdict(float)
    for key, w in zip(keys, weights):
        expect[key] += w / z
    spm.set_random_generator_seed(20241129)
    n = 6000
    counts = collections.Counter(
        tuple(sp.encode(word, enable_sampling=True, alpha=alpha, nbest_size=nbest_size)) for _ in range(n)
    )
    unexpected = set(counts) - set(expect)
    # pool rare outcomes so that every cell expects at least 5 draws
    chi2 = 0.0
    cells = 0
    rest_o = rest_e = 0.0
    for key, p in expect.items():
        if n * p >= 5:
            chi2 += (counts[key] - n * p) ** 2 / (n * p)
            cells += 1
        else:
            rest_o += counts[key]
            rest_e += n * p
    if rest_e > 0:
        chi2 += (rest_o - rest_e) ** 2 / max(rest_e, 1e-9)
        cells += 1
    tv = sum(abs(counts[k] / n - p) for k, p in expect.items()) / 2
    # chi-square critical value at p = 0.001 (Wilson-Hilferty approximation)
    dof = max(1, cells - 1)
    crit = dof * (1 - 2 / (9 * dof) + 3.09 * math.sqrt(2 / (9 * dof))) ** 3
    ok = not unexpected and chi2 < crit and tv < 0.05
    detail = "" if ok else f"chi2 {chi2:.1f} (crit {crit:.1f}, dof {dof}), TV {tv:.3f}, unexpected {sorted(unexpected)[:3]}"
    parity_report.record(_label(name), f"sampling/nbest{nbest_size}/alpha{alpha}", ok, detail)
    assert ok, detail


class _Seg:
    def __init__(self, nodes: list[int]) -> None:
        self.nodes = tuple(nodes)


def _all_paths(lat: Any, pos: int = 0) -> list[list[int]]:
    if pos == len(lat.text):
        return [[]]
    return [[k, *rest] for k in lat.begin[pos] for rest in _all_paths(lat, lat.nodes[k].end)]


# ---------------------------------------------------------------------- BERT vocab.txt
@cache
def bert_pair() -> tuple[Any, Any]:
    from tokviz.io.wordpiece_vocab import load_wordpiece_vocab

    tokenizers = require_module("tokenizers")
    rel = f"{BERT}/vocab.txt"
    text = bundle_bytes(rel).decode("utf-8")
    ref = tokenizers.BertWordPieceTokenizer(str(_plain_vocab_path(rel)))
    return load_wordpiece_vocab(text, source=rel), ref


@cache
def _plain_vocab_path(rel: str) -> Any:
    p = bundle_path(rel)
    if p.suffix != ".gz":
        return p
    import tempfile
    from pathlib import Path

    out = Path(tempfile.mkdtemp(prefix="tokviz-vocab-")) / "vocab.txt"
    out.write_bytes(bundle_bytes(rel))
    return out


def compare_bert(ours: Any, ref: Any, text: str) -> str:
    enc = ours.encode(text)
    r = ref.encode(text)
    for field, a, b in (
        ("ids", enc.ids, r.ids),
        ("tokens", enc.tokens, r.tokens),
        ("offsets", [tuple(o) for o in enc.offsets], [tuple(o) for o in r.offsets]),
    ):
        if a != b:
            return f"{field} differ {_diff(a, b)}"
    for skip in (True, False):
        a = ours.decode(enc.ids, skip_special_tokens=skip)
        b = ref.decode(r.ids, skip_special_tokens=skip)
        if a != b:
            return f"decode (skip_special_tokens={skip}) differs: {a[:60]!r} vs {b[:60]!r}"
    return ""


@pytest.mark.parity
def test_wordpiece_vocab_tricky_and_lines(parity_report) -> None:  # noqa: ANN001
    ours, ref = bert_pair()
    label = f"{BERT} (vocab.txt)"
    results = []
    inputs = [(f"tricky/{c}", t) for c, t in TRICKY]
    for corpus in CORPORA:
        inputs += [(f"{corpus}/line{n}", t) for n, t in enumerate(corpus_lines(corpus, 800))]
    inputs += [(f"{corpus}/document", corpus_document(corpus)) for corpus in CORPORA]
    for case_id, text in inputs:
        detail = compare_bert(ours, ref, text)
        results.append((case_id, not detail, detail))
    parity_report.record_many(label, results)
    bad = [r for r in results if not r[1]]
    assert not bad, bad[:3]


@pytest.mark.parity
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=40))
def test_wordpiece_vocab_hypothesis(text: str, parity_report) -> None:  # noqa: ANN001
    ours, ref = bert_pair()
    detail = compare_bert(ours, ref, text)
    parity_report.record(f"{BERT} (vocab.txt)", f"hypothesis/{text[:20]!r}", not detail, detail)
    assert not detail


# ---------------------------------------------------------------------- HF Unigram + Precompiled
@cache
def hf_unigram_pair() -> tuple[Any, Any]:
    """albert's .model as HF's converter lays it out in a tokenizer.json (Precompiled charsmap,
    extra-space Replace, Metaspace, Unigram), built with tokenizers' own classes."""
    from tokviz.io.hf_json import load_hf_json
    from tokviz.io.sentencepiece import parse_model_proto

    tk = require_module("tokenizers")
    proto = parse_model_proto(bundle_bytes(SP_BUNDLES["albert-30k-clean"]), source="albert")
    ref = tk.Tokenizer(tk.models.Unigram([(p.piece, p.score) for p in proto.pieces], proto.trainer_spec.unk_id, False))
    ref.normalizer = tk.normalizers.Sequence([
        tk.normalizers.Precompiled(proto.normalizer_spec.precompiled_charsmap),
        tk.normalizers.Replace(tk.Regex(" {2,}"), " "),
    ])
    ref.pre_tokenizer = tk.pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    ref.decoder = tk.decoders.Metaspace()
    return load_hf_json(ref.to_str().encode("utf-8"), source="albert-tokenizer.json"), ref


@pytest.mark.parity
def test_hf_unigram_precompiled(parity_report) -> None:  # noqa: ANN001
    ours, ref = hf_unigram_pair()
    label = "albert-30k-clean (tokenizer.json Unigram)"
    inputs = [(f"tricky/{c}", t) for c, t in TRICKY]
    for corpus in CORPORA:
        inputs += [(f"{corpus}/line{n}", t) for n, t in enumerate(corpus_lines(corpus, 300))]
    results = []
    for case_id, text in inputs:
        enc, r = ours.encode(text), ref.encode(text)
        detail = ""
        for field, a, b in (
            ("ids", enc.ids, r.ids),
            ("tokens", enc.tokens, r.tokens),
            ("offsets", [tuple(o) for o in enc.offsets], [tuple(o) for o in r.offsets]),
        ):
            if a != b:
                detail = f"{field} differ {_diff(a, b)}"
                break
        if not detail and ours.decode(enc.ids) != ref.decode(r.ids, skip_special_tokens=False):
            detail = "decode differs"
        results.append((case_id, not detail, detail))
    parity_report.record_many(label, results)
    bad = [x for x in results if not x[1]]
    assert not bad, bad[:3]
