"""tokviz.analysis.corpus: documents, C9 numbers (spec 1.iii-H against tiktoken), pool, cancel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import bundle_path, tiktoken_encoding

from tokviz.analysis.corpus import CorpusCancelled, TokenizerSpec, iter_documents, run_corpus
from tokviz.engine.errors import TokvizFormatError

H_LINES = ["hello world", "Hello, world!", "東京は晴れ"]
TIKTOKEN = {
    "r50k": ("gpt2/r50k_base.tiktoken", "r50k_base"),
    "cl100k": ("cl100k_base/cl100k_base.tiktoken", "cl100k_base"),
    "o200k": ("o200k_base/o200k_base.tiktoken", "o200k_base"),
}


def specs() -> list[TokenizerSpec]:
    return [TokenizerSpec(k, str(bundle_path(rel))) for k, (rel, _) in TIKTOKEN.items()]


tiktoken_encoder = tiktoken_encoding


class TestDocuments:
    def test_modes(self, tmp_path: Path) -> None:
        p = tmp_path / "c.txt"
        p.write_bytes(b"a b\r\n\r\nc\nd\n\n\ne\n")
        # lines: split on \n, the CR stays (byte-exact), empty lines skipped
        assert [d.text for d in iter_documents(p, "lines")] == ["a b\r", "\r", "c", "d", "e"]
        assert [d.line for d in iter_documents(p, "lines")] == [1, 2, 3, 4, 7]
        assert [d.text for d in iter_documents(p, "paragraphs")] == ["a b\r", "c\nd", "e\n"]
        assert [d.text for d in iter_documents(p, "whole")] == ["a b\r\n\r\nc\nd\n\n\ne\n"]

    def test_byte_offsets(self, tmp_path: Path) -> None:
        p = tmp_path / "c.txt"
        p.write_bytes("é\nab\n".encode())
        docs = list(iter_documents(p, "lines"))
        assert [(d.text, d.byte_offset) for d in docs] == [("é", 0), ("ab", 3)]  # é\n = 3 bytes

    def test_jsonl(self, tmp_path: Path) -> None:
        p = tmp_path / "c.jsonl"
        p.write_text('{"text": "x y"}\n{"other": 1}\n{"text": "z"}\n', encoding="utf-8")
        assert [d.text for d in iter_documents(p, "jsonl:text")] == ["x y", "z"]
        p.write_text('{"text": "x"}\n{oops\n', encoding="utf-8")
        with pytest.raises(TokvizFormatError, match="line 2 column 2: not valid JSON"):
            list(iter_documents(p, "jsonl:text"))

    @pytest.mark.parametrize("mode", ["lines", "paragraphs"])
    @pytest.mark.parametrize("block", [1, 2, 7])
    def test_streaming_across_blocks(self, tmp_path: Path, mode: str, block: int, monkeypatch: pytest.MonkeyPatch) -> None:
        from tokviz.io import shards

        text = "東京\n\nab\n\n\n\nc\r\nd" * 5
        p = tmp_path / "c.txt"
        p.write_bytes(text.encode())
        # tiny blocks split characters and paragraph separators; the documents stay the same
        with monkeypatch.context() as m:
            m.setattr(shards, "_BLOCK", block)
            small = [(d.text, d.byte_offset, d.line) for d in iter_documents(p, mode)]
        whole = [(d.text, d.byte_offset, d.line) for d in iter_documents(p, mode)]
        assert small == whole
        for text_, off, _ in whole:
            assert p.read_bytes()[off:].startswith(text_.encode())

    def test_invalid_utf8_names_the_byte(self, tmp_path: Path) -> None:
        p = tmp_path / "bad.txt"
        p.write_bytes(b"ok\nbad \xff here\n")
        with pytest.raises(TokvizFormatError, match="byte 7"):
            list(iter_documents(p, "lines"))

    def test_unknown_mode(self, tmp_path: Path) -> None:
        (tmp_path / "a.txt").write_text("x", encoding="utf-8")
        with pytest.raises(ValueError, match="unknown document mode"):
            list(iter_documents(tmp_path / "a.txt", "sentences"))

    def test_folder(self, tmp_path: Path) -> None:
        (tmp_path / "b.txt").write_text("two", encoding="utf-8")
        (tmp_path / "a.txt").write_text("one", encoding="utf-8")
        (tmp_path / ".hidden").write_text("no", encoding="utf-8")
        assert [d.text for d in iter_documents(tmp_path, "whole")] == ["one", "two"]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:  # type: ignore[type-arg]
    """The corpus report of case H (computed once for `TestCaseH`)."""
    p = tmp_path_factory.mktemp("h") / "h.txt"
    p.write_bytes("\n".join(H_LINES).encode())
    return run_corpus(specs(), p, mode="lines", workers=1).to_json()


class TestCaseH:
    """1.iii-H: three lines; numbers recomputed from tiktoken's encodings in the test."""

    def test_totals(self, report: dict) -> None:  # type: ignore[type-arg]
        c = report["corpus"]
        # chars 11 + 13 + 5 = 29; bytes 11 + 13 + 5·3 = 39; words hello world Hello world 東京は晴れ = 5
        assert (c["documents"], c["chars"], c["bytes"], c["words"]) == (3, 29, 39, 5)

    def test_per_tokenizer_against_tiktoken(self, report: dict) -> None:  # type: ignore[type-arg]
        for row, (rel, _) in zip(report["tokenizers"], TIKTOKEN.values()):
            enc = tiktoken_encoder(rel)
            per_line = [len(enc.encode(t)) for t in H_LINES]
            total = sum(per_line)
            assert row["tokens"] == total
            assert row["chars_per_token"] == pytest.approx(29 / total, abs=1e-6)
            assert row["bytes_per_token"] == pytest.approx(39 / total, abs=1e-6)
            assert row["tokens_per_word"] == pytest.approx(total / 5, abs=1e-6)
            assert row["distinct_ids"] == len({i for t in H_LINES for i in enc.encode(t)})
            assert row["tokens_per_document"]["max"] == max(per_line)
            assert row["tokens_per_document"]["min"] == min(per_line)
            assert row["lossless_rate"] == 1.0

    def test_premium_and_divergent(self, report: dict) -> None:  # type: ignore[type-arg]
        rows = report["tokenizers"]
        assert rows[0]["premium_vs_reference"] == 1.0
        assert rows[2]["premium_vs_reference"] == pytest.approx(rows[2]["tokens"] / rows[0]["tokens"], abs=1e-6)
        top = report["most_divergent_documents"][0]
        assert top["preview"] == "東京は晴れ"  # the Japanese line differs most between r50k and o200k

    def test_whole_mode_counts_the_newlines(self, tmp_path: Path) -> None:
        p = tmp_path / "h.txt"
        p.write_bytes("\n".join(H_LINES).encode())
        rows = run_corpus(specs(), p, mode="whole", workers=1).to_json()["tokenizers"]
        for row, (rel, _) in zip(rows, TIKTOKEN.values()):
            assert row["tokens"] == len(tiktoken_encoder(rel).encode("\n".join(H_LINES)))


class TestRun:
    def test_pool_equals_one_process(self, tmp_path: Path) -> None:
        p = tmp_path / "c.txt"
        lines = [f"line {i} 東京 {'x' * (i % 7)}" for i in range(400)]
        p.write_text("\n".join(lines), encoding="utf-8")
        from tokviz.analysis import corpus

        bad = tmp_path / "broken.json"
        bad.write_text("{", encoding="utf-8")
        both = [*specs()[:2], TokenizerSpec("broken", str(bad))]
        old = corpus.BATCH_CHARS
        corpus.BATCH_CHARS = 2000  # several batches
        try:
            one = run_corpus(both, p, mode="lines", workers=1).to_json()
            two = run_corpus(both, p, mode="lines", workers=2).to_json()
        finally:
            corpus.BATCH_CHARS = old
        for d in (one, two):
            for key in ("seconds", "workers", "executor"):
                d["corpus"].pop(key)
        assert one == two
        assert "error" in two["tokenizers"][2] and two["tokenizers"][0]["top_ids"][0]["token"]

    def test_failed_tokenizer_keeps_its_row(self, tmp_path: Path) -> None:
        p = tmp_path / "c.txt"
        p.write_text("hello", encoding="utf-8")
        bad = tmp_path / "broken.json"
        bad.write_text("{", encoding="utf-8")
        rows = run_corpus([*specs()[:1], TokenizerSpec("broken", str(bad))], p, workers=1).to_json()["tokenizers"]
        assert rows[0]["tokens"] == 1
        assert rows[1]["name"] == "broken" and "broken.json" in rows[1]["error"]

    def test_cancel(self, tmp_path: Path) -> None:
        p = tmp_path / "c.txt"
        p.write_text("a\n" * 10, encoding="utf-8")
        with pytest.raises(CorpusCancelled):
            run_corpus(specs()[:1], p, mode="lines", workers=1, cancelled=lambda: True)

    def test_progress_reaches_total(self, tmp_path: Path) -> None:
        p = tmp_path / "c.txt"
        p.write_text("a b\n" * 100, encoding="utf-8")
        seen: list[tuple[str, int, int]] = []
        run_corpus(specs()[:1], p, mode="lines", workers=1, progress=lambda *a: seen.append(a))
        assert [a for a in seen if a[0] == "bytes"][-1] == ("bytes", 400, 400)
        assert [a for a in seen if a[0] == "documents"][-1] == ("documents", 100, 0)

    def test_exports(self, tmp_path: Path) -> None:
        p = tmp_path / "c.txt"
        p.write_text("hello world\nhi", encoding="utf-8")
        rep = run_corpus(specs()[:2], p, mode="lines", workers=1)
        json.dumps(rep.to_json())
        csv_lines = rep.to_csv().splitlines()
        assert csv_lines[0].startswith("name,path,error,tokens")
        assert len(csv_lines) == 3


class TestStrr:
    def test_single_token_words_against_tiktoken(self, tmp_path: Path) -> None:
        import regex

        from tokviz.analysis.compare import WORD_PATTERN

        p = tmp_path / "h.txt"
        p.write_bytes("\n".join(H_LINES).encode())
        rel = TIKTOKEN["r50k"][0]
        row = run_corpus(specs()[:1], p, mode="lines", workers=1, strr=True).to_json()["tokenizers"][0]
        enc = tiktoken_encoder(rel)
        kept = words = 0
        for line in H_LINES:  # the Latin words of H, each checked against tiktoken's token spans
            spans, pos = set(), 0
            data = line.encode()
            for t in enc.encode(line):
                n = len(enc.decode_single_token_bytes(t))
                piece = data[pos : pos + n].decode("utf-8", "replace")
                lead = len(piece) - len(piece.lstrip())
                start = len(data[:pos].decode("utf-8", "ignore")) + lead
                spans.add((start, start + len(piece.strip())))
                pos += n
            for m in regex.finditer(WORD_PATTERN, line):
                if m.group().isascii():
                    words += 1
                    kept += m.span() in spans
        assert row["per_script"]["Latin"]["strr"] == pytest.approx(kept / words)
        off = run_corpus(specs()[:1], p, mode="lines", workers=1).to_json()["tokenizers"][0]
        assert off["per_script"]["Latin"]["strr"] is None  # not computed unless asked


class TestBatches:
    """A batch's documents are counted as one joined text; the numbers must be those of the
    documents counted one by one (`per_script` on each document is the oracle here; it is
    checked against the spec's definitions in test_compare)."""

    LINES = [
        "\u0301 starts with a combining mark",  # Inherited at a document start: Common
        "東京は晴れ、今日は2024年",
        "   ",
        "naïve café 😀 ¥1,234",
        "def f(x):\treturn x  # Python",
        "Ελληνικά и русский текст",
    ]

    def test_joined_batches_equal_documents_one_by_one(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        import re

        import tokviz
        from tokviz.analysis import corpus
        from tokviz.analysis.compare import TextIndex, per_script, segment

        lines = [f"{self.LINES[i % len(self.LINES)]} {i}" if i % 3 else self.LINES[i % len(self.LINES)]
                 for i in range(60)]
        p = tmp_path / "c.txt"
        p.write_bytes("\n".join(lines).encode())
        monkeypatch.setattr(corpus, "BATCH_CHARS", 300)  # several batches of several documents
        rels = ["gpt2/r50k_base.tiktoken", "mistral-7b-v0.1/tokenizer.model"]
        spec = [TokenizerSpec(r.split("/")[0], str(bundle_path(r))) for r in rels]
        rows = run_corpus(spec, p, mode="lines", workers=1, strr=True).to_json()["tokenizers"]
        for row, rel in zip(rows, rels):
            tok = tokviz.load(bundle_path(rel))
            want: dict[str, list[float]] = {}
            lengths, ids, fallback = [], set(), 0
            for line in lines:
                seg = segment(tok, line)
                lengths.append(seg.n_tokens)
                ids |= {i for i, sp in zip(seg.ids, seg.special) if not sp}
                fallback += sum(1 for t in seg.tokens if re.fullmatch(r"<0x[0-9A-F]{2}>", t))
                for name, st in per_script(seg, TextIndex(line)).items():
                    acc = want.setdefault(name, [0.0, 0, 0, 0, 0])
                    for k, v in enumerate((st.tokens, st.chars, st.bytes, st.words, st.single_token_words)):
                        acc[k] += v
            assert row["tokens"] == sum(lengths)
            assert row["tokens_per_document"]["max"] == max(lengths)
            assert row["distinct_ids"] == len(ids)
            assert row["byte_fallback_rate"] == pytest.approx(fallback / sum(lengths), abs=1e-6)
            assert set(row["per_script"]) == set(want)
            for name, (tokens, chars, nbytes, words, single) in want.items():
                got = row["per_script"][name]
                assert (got["chars"], got["bytes"], got["words"]) == (chars, nbytes, words), name
                assert got["tokens"] == pytest.approx(tokens, abs=1e-6), name
                if got["strr"] is not None:
                    assert got["strr"] == pytest.approx(single / words, abs=1e-6), name
        assert rows[1]["byte_fallback_rate"] > 0  # the emoji and the rare letters fall back to bytes

    def test_loaded_tokenizers_count_here_and_workers_load_their_own(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        import tokviz
        from tokviz.analysis import corpus
        from tokviz.io import executor

        p = tmp_path / "c.txt"
        p.write_text("\n".join(f"line {i} 東京 {'x' * (i % 7)}" for i in range(300)), encoding="utf-8")
        monkeypatch.setattr(corpus, "BATCH_CHARS", 1000)
        good = specs()[:2]
        loaded = [tokviz.load(s.path) for s in good]
        # paths that cannot load: only the given tokenizers can produce numbers in this process
        gone = [TokenizerSpec(s.name, str(tmp_path / "missing.json")) for s in good]
        here = run_corpus(gone, p, mode="lines", workers=1, tokenizers=loaded).to_json()
        monkeypatch.setattr(executor, "_SMALL_CORPUS", 0)
        pooled = run_corpus(good, p, mode="lines", workers=2).to_json()
        assert pooled["corpus"]["workers"] == 2 and pooled["corpus"]["executor"] == "2 local processes"
        for a, b in zip(here["tokenizers"], pooled["tokenizers"]):
            a.pop("path"), b.pop("path")
            assert a == b

    def test_boundary_f1_of_joined_batches_equals_pooled_documents(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """White_Space at document edges runs on through the joining newline: the collapsed cuts
        must still be each document's own (a run at a document start collapses onto 0: no cut)."""
        import tokviz
        from tokviz.analysis import corpus
        from tokviz.analysis.compare import CUT_UNITS, TextIndex, cut_ratios, cut_set, segment

        lines = ["  leading spaces", "trailing spaces   ", "\t tab and 東京  ", "   ", " a  b ", "x", "é  ",
                 " \u3000全角"] * 8
        p = tmp_path / "c.txt"
        p.write_bytes("\n".join(lines).encode())
        monkeypatch.setattr(corpus, "BATCH_CHARS", 120)
        rels = ["gpt2/r50k_base.tiktoken", "bert-base-uncased/tokenizer.json", "mistral-7b-v0.1/tokenizer.json"]
        spec = [TokenizerSpec(r.split("/")[0], str(bundle_path(r))) for r in rels]
        got = run_corpus(spec, p, mode="lines", workers=1, cuts=True).boundary_f1
        toks = [tokviz.load(bundle_path(r)) for r in rels]
        for key, unit, collapse in CUT_UNITS:
            pooled = [set() for _ in toks]
            for d, line in enumerate(lines):
                ix = TextIndex(line)
                for k, tok in enumerate(toks):
                    pooled[k] |= {(d, c) for c in cut_set(segment(tok, line), ix, unit=unit, collapse=collapse)}
            want = [[round(cut_ratios(a, b).f1, 6) for b in pooled] for a in pooled]
            assert got[key] == want, key


class TestHugeRecords:
    def test_one_huge_line_is_documents_of_at_most_two_pieces(self, tmp_path: Path) -> None:
        """``whole`` mode on a 3.4 MB file without a newline: cut at spaces, no document over 2 MiB,
        nothing lost (tokviz.io.shards); the encoder never sees the whole line at once."""
        p = tmp_path / "line.txt"
        data = ("naïve café 東京 " * 170_000).encode()  # 20 bytes each: 3.4 MB
        p.write_bytes(data)
        docs = list(iter_documents(p, "whole"))
        assert len(docs) >= 2 and all(len(d.text.encode()) <= 2 << 20 for d in docs)
        assert "".join(d.text for d in docs).encode() == data
        assert [d.piece for d in docs] == list(range(len(docs)))
        assert all(d.text.endswith(" ") for d in docs[:-1])  # cut after the last space of each MiB
