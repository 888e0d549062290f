"""Mistral tekken.json (tokviz.io.tekken) on small hand-made files; the real files and
mistral-common as the reference are in tests/parity/test_tekken_parity.py."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest

import tokviz
from tokviz.engine.errors import TokvizFormatError
from tokviz.io.detect import format_details

PATTERN = r"\p{L}+|\s+|[^\s\p{L}]+"


def tekken(*, version: str = "v7", specials: list[str] | None = ["<unk>", "<s>", "</s>"], num_special: int = 4,  # noqa: B006
           extra_vocab: tuple[bytes, ...] = (b"ab",)) -> dict:  # type: ignore[type-arg]
    vocab = [bytes([i]) for i in range(256)] + list(extra_vocab)
    obj = {
        "config": {"pattern": PATTERN, "num_vocab_tokens": len(vocab), "default_vocab_size": num_special + len(vocab),
                   "default_num_special_tokens": num_special, "version": version},
        "vocab": [{"rank": i, "token_bytes": base64.b64encode(b).decode(), "token_str": None} for i, b in enumerate(vocab)],
    }
    if specials is not None:
        obj["special_tokens"] = [{"rank": i, "token_str": t, "is_control": True} for i, t in enumerate(specials)]
    return obj


def write(tmp_path: Path, obj: dict, name: str = "tekken.json") -> Path:  # type: ignore[type-arg]
    path = tmp_path / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


class TestLoad:
    def test_ids_are_ranks_after_the_specials(self, tmp_path: Path) -> None:
        tok = tokviz.load(write(tmp_path, tekken()))
        # 4 special ids (3 named + <SPECIAL_3>); rank r is id r + 4: "ab" (rank 256) = 260,
        # "ba" has no merge: b (98) + 4, a (97) + 4
        assert tok.encode("ab", add_special_tokens=False).ids == [260]
        assert tok.encode("ba", add_special_tokens=False).ids == [102, 101]
        assert tok.encode("ab").ids == [1, 260]  # <s> first
        assert tok.id_to_token(3) == "<SPECIAL_3>" and tok.is_special_id(3)

    def test_literal_specials_are_text(self, tmp_path: Path) -> None:
        tok = tokviz.load(write(tmp_path, tekken()))
        assert tok.encode("<s>", add_special_tokens=False).ids == [ord(c) + 4 for c in "<s>"]

    def test_decode_keep_and_ignore(self, tmp_path: Path) -> None:
        tok = tokviz.load(write(tmp_path, tekken()))
        assert tok.decode([1, 260, 2]) == "<s>ab</s>"
        assert tok.decode([1, 260, 2], skip_special_tokens=True) == "ab"

    def test_old_files_get_the_twenty_default_specials(self, tmp_path: Path) -> None:
        tok = tokviz.load(write(tmp_path, tekken(version="v3", specials=None, num_special=25)))
        assert tok.token_to_id("[INST]") == 3 and tok.token_to_id("[TOOL_CONTENT]") == 19
        assert tok.token_to_id("<SPECIAL_24>") == 24
        assert format_details(tok)["special ids"] == "25 (20 named, 5 <SPECIAL_n> fillers)"

    def test_only_the_first_ranks_are_used(self, tmp_path: Path) -> None:
        obj = tekken(extra_vocab=(b"ab", b"abab"))
        obj["config"]["default_vocab_size"] = 4 + 257  # "abab" (rank 257) is cut off
        tok = tokviz.load(write(tmp_path, obj))
        assert tok.encode("abab", add_special_tokens=False).ids == [260, 260]
        assert tok.vocab_size == 261

    def test_gzip_folder_and_info(self, tmp_path: Path) -> None:
        (tmp_path / "tekken.json.gz").write_bytes(gzip.compress(json.dumps(tekken()).encode()))
        tok = tokviz.load(tmp_path)
        assert tok.encode("ab").ids == [1, 260]
        details = format_details(tok)
        assert details["format"].startswith("Mistral tekken.json") and details["tekken version"] == "v7"


class TestBadFiles:
    def test_new_version_without_specials(self, tmp_path: Path) -> None:
        with pytest.raises(TokvizFormatError, match=r"tekken\.json: special_tokens: a v11 tekken file must list"):
            tokviz.load(write(tmp_path, tekken(version="v11", specials=None)))

    def test_rank_out_of_order(self, tmp_path: Path) -> None:
        obj = tekken()
        obj["vocab"][5]["rank"] = 6
        with pytest.raises(TokvizFormatError, match=r"vocab\[5\]: expected"):
            tokviz.load(write(tmp_path, obj))

    def test_first_ranks_must_be_the_bytes(self, tmp_path: Path) -> None:
        obj = tekken()
        obj["vocab"][65]["token_bytes"] = base64.b64encode(b"B").decode()
        with pytest.raises(TokvizFormatError, match=r"vocab\[65\]: rank 65 must be the byte"):
            tokviz.load(write(tmp_path, obj))

    def test_too_many_specials(self, tmp_path: Path) -> None:
        with pytest.raises(TokvizFormatError, match="3 special tokens, but default_num_special_tokens is 2"):
            tokviz.load(write(tmp_path, tekken(num_special=2)))

    def test_unknown_version(self, tmp_path: Path) -> None:
        with pytest.raises(TokvizFormatError, match=r"config\.version: unknown tekken version 'v99'"):
            tokviz.load(write(tmp_path, tekken(version="v99")))


def test_found_in_the_hub_cache(tmp_path: Path) -> None:
    from tokviz.io.discovery import discover

    snap = tmp_path / "hub" / "models--mistralai--Mistral-Nemo" / "snapshots" / "abc"
    snap.mkdir(parents=True)
    write(snap, tekken())
    found = discover(hf_hub=tmp_path / "hub", tiktoken_dir=tmp_path / "x", ollama_dir=tmp_path / "x", lmstudio_dirs=())
    assert [(d.name, d.path.name) for d in found] == [("mistralai/Mistral-Nemo (tekken.json)", "tekken.json")]
    assert tokviz.load(found[0].path).encode("ab").ids == [1, 260]
