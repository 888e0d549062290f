"""``tokviz compare`` and ``tokviz diff``: the JSON shape of the issue, against the references."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import bundle_path, tiktoken_encoding

from tokviz.analysis.compare import Segmentation, TextIndex, cut_ratios, cut_set
from tokviz.cli import main

TEXT = "The naïve café in 東京 costs ¥1,234."
TIK = ["gpt2/r50k_base.tiktoken", "cl100k_base/cl100k_base.tiktoken", "o200k_base/o200k_base.tiktoken"]


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:  # type: ignore[type-arg]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


tiktoken_of = tiktoken_encoding


class TestCompareCommand:
    def test_shape_and_reference_values(self, capsys: pytest.CaptureFixture[str]) -> None:
        out = run_json(capsys, ["compare", *[str(bundle_path(r)) for r in TIK], "--text", TEXT, "--json"])
        assert set(out) >= {"text", "tokenizers", "boundary_f1", "vocab_overlap_l0"}
        # 34 code points; UTF-8: ï é ¥ take 2 bytes, 東 京 3 -> 34 + 3·1 + 2·2 = 41 bytes
        assert (out["text"]["chars"], out["text"]["bytes"]) == (34, 41)
        assert out["text"]["words"] == 8  # The naïve café in 東京 costs 1 234
        refs = [tiktoken_of(r) for r in TIK]
        segs = []
        for row, ref in zip(out["tokenizers"], refs):
            ids = ref.encode(TEXT, disallowed_special=())
            assert row["tokens"] == len(ids)
            assert row["chars_per_token"] == pytest.approx(len(TEXT) / len(ids), abs=1e-6)
            assert set(row["per_script"]) == {"Latin", "Common", "Han"}
            spans, pos = [], 0
            for i in ids:
                n = len(ref.decode_single_token_bytes(i))
                spans.append((pos, pos + n))
                pos += n
            segs.append(Segmentation.from_spans(row["name"], spans))
        ix = TextIndex(TEXT)
        for key, unit, collapse in (("char_raw", "char", False), ("char_collapsed", "char", True), ("byte", "byte", False)):
            cs = [cut_set(s, ix, unit=unit, collapse=collapse) for s in segs]
            want = [[round(cut_ratios(a, b).f1, 6) for b in cs] for a in cs]
            assert out["boundary_f1"][key] == want
        # L0 overlap with specials excluded = shared rank-table entries
        tables = [set(ref._mergeable_ranks) for ref in refs]  # noqa: SLF001
        assert out["vocab_overlap_l0"] == [[len(a & b) for b in tables] for a in tables]

    def test_order_is_the_given_order(self, capsys: pytest.CaptureFixture[str]) -> None:
        fwd = run_json(capsys, ["compare", str(bundle_path(TIK[0])), str(bundle_path(TIK[2])), "--text", TEXT, "--json"])
        rev = run_json(capsys, ["compare", str(bundle_path(TIK[2])), str(bundle_path(TIK[0])), "--text", TEXT, "--json"])
        assert [r["name"] for r in fwd["tokenizers"]] == [r["name"] for r in reversed(rev["tokenizers"])]
        assert fwd["vocab_overlap_l0"][0][0] == rev["vocab_overlap_l0"][1][1]

    def test_failed_load_keeps_its_row(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        bad = tmp_path / "bad.json"
        bad.write_text("{not json", encoding="utf-8")
        out = run_json(capsys, ["compare", str(bundle_path(TIK[0])), str(bad), str(bundle_path(TIK[1])),
                                "--text", "hello", "--json"])
        assert "error" in out["tokenizers"][1] and "bad.json" in out["tokenizers"][1]["error"]
        assert out["boundary_f1"]["byte"][1] == [None, None, None]
        assert out["tokenizers"][2]["tokens"] == 1

    def test_specials_are_not_counted(self, capsys: pytest.CaptureFixture[str]) -> None:
        bert = str(bundle_path("bert-base-uncased/tokenizer.json"))
        out = run_json(capsys, ["compare", bert, bert, "--text", "hello", "--json"])
        assert out["tokenizers"][0]["tokens"] == 1  # no [CLS]/[SEP]

    def test_file_modes(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        p = tmp_path / "h.txt"
        lines = ["hello world", "Hello, world!", "東京は晴れ"]
        p.write_bytes("\n".join(lines).encode())
        ref = tiktoken_of(TIK[0])
        out = run_json(capsys, ["compare", str(bundle_path(TIK[0])), str(bundle_path(TIK[1])),
                                "--file", str(p), "--mode", "lines", "--stats", "--json"])
        assert out["tokenizers"][0]["tokens"] == sum(len(ref.encode(t)) for t in lines)
        assert out["corpus"]["corpus"]["documents"] == 3
        # micro F1 over the lines: the cut sets of all lines pooled, from tiktoken's token bytes
        pooled: list[set[tuple[int, int]]] = [set(), set()]
        for k, rel in enumerate(TIK[:2]):
            enc = tiktoken_of(rel)
            for d, line in enumerate(lines):
                spans, pos = [], 0
                for i in enc.encode(line):
                    n = len(enc.decode_single_token_bytes(i))
                    spans.append((pos, pos + n))
                    pos += n
                seg = Segmentation.from_spans("x", spans)
                pooled[k] |= {(d, c) for c in cut_set(seg, TextIndex(line), unit="byte", collapse=False)}
        want = cut_ratios(pooled[0], pooled[1]).f1
        assert out["boundary_f1"]["byte"][0][1] == pytest.approx(want, abs=1e-6)
        whole = run_json(capsys, ["compare", str(bundle_path(TIK[0])), str(bundle_path(TIK[1])), "--file", str(p), "--json"])
        assert whole["tokenizers"][0]["tokens"] == len(ref.encode("\n".join(lines)))

    def test_progress_on_stderr_and_a_pool(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        p = tmp_path / "c.txt"
        lines = [f"line {i} 東京 {'x' * (i % 7)}" for i in range(3000)]
        p.write_bytes("\n".join(lines).encode())
        argv = ["compare", str(bundle_path(TIK[0])), str(bundle_path(TIK[1])), "--file", str(p), "--mode", "lines"]
        assert main([*argv, "--workers", "2", "--progress", "--json"]) == 0
        cap = capsys.readouterr()
        pooled = json.loads(cap.out)
        assert "MB read (100 %), 3,000 documents" in cap.err and "(2 local processes)" in cap.err
        assert main([*argv, "--workers", "1", "--json"]) == 0
        cap = capsys.readouterr()
        one = json.loads(cap.out)
        assert cap.err == ""  # no progress unless asked (stderr is no terminal here)
        assert pooled == one
        ref = tiktoken_of(TIK[0])
        assert one["tokenizers"][0]["tokens"] == sum(len(ref.encode(t)) for t in lines)

    def test_bad_input_is_one_line(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        p = tmp_path / "bad.txt"
        p.write_bytes(b"abc\xffdef")
        assert main(["compare", str(bundle_path(TIK[0])), str(bundle_path(TIK[1])), "--file", str(p)]) == 2
        err = capsys.readouterr().err
        assert "byte 3" in err and err.count("\n") == 1
        assert main(["compare", str(bundle_path(TIK[0])), "--text", "x"]) == 2

    def test_human_output(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["compare", str(bundle_path(TIK[0])), str(bundle_path(TIK[1])), "--text", TEXT]) == 0
        out = capsys.readouterr().out
        assert "chars/token" in out and "boundary F1" in out


class TestDiffCommand:
    def test_json(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        corpus = tmp_path / "c.txt"
        corpus.write_text("hello world\n東京", encoding="utf-8")
        out = run_json(capsys, ["diff", str(bundle_path(TIK[0])), str(bundle_path(TIK[1])), "--corpus", str(corpus), "--json"])
        assert out["entries"]["added"] > 0 and out["merges"]["comparable"]
        assert out["regression"]["documents"] == 2 and not out["regression"]["passed"]
        assert out["regression"]["cases"][0]["token_index"] == 0

    def test_text(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["diff", str(bundle_path("mistral-7b-v0.1/tokenizer.model")),
                     str(bundle_path("mistral-7b-v0.1/tokenizer.json"))]) == 0
        out = capsys.readouterr().out
        assert "added 0, deleted 0, remapped 0" in out
