"""GGUF loader: tokenizers from a GGUF file's metadata (tokviz.io.gguf).

Small GGUF files are written in the test with the ``gguf`` package's own writer; the vocab-only
files of llama.cpp are in tests/parity/test_gguf_parity.py. Expected ids of the hand-made
vocabularies are worked out in comments.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from support import bundle_path, require_module

import tokviz
from tokviz.engine.errors import TokvizFormatError
from tokviz.io.detect import sniff
from tokviz.io.gguf import load_gguf, read_gguf_vocab
from tokviz.io.gguf_pre import known_pre_names, pre_spec

gguf = pytest.importorskip("gguf")

# A byte-level BPE over "hello": the 5 letters, then merges h+e, l+l, he+ll, hell+o.
# "hello" -> h e l l o -> he l l o -> he ll o -> hell o -> hello (id 8)
TOKENS = ["h", "e", "l", "o", "he", "ll", "hell", "hello", "<|endoftext|>", "[PAD9]", "[PAD10]"]
MERGES = ["h e", "l l", "he ll", "hell o"]
# normal, ..., control for <|endoftext|>, the padding rows as converters write them
TYPES = [1] * 8 + [3, 4, 4]


def write_gguf(path: Path, *, tokens=TOKENS, types=TYPES, merges=MERGES, pre="gpt-2", extra=None,  # noqa: ANN001
               embd_rows: int | None = None, model: str = "gpt2") -> Path:
    w = gguf.GGUFWriter(str(path), "gpt2")
    w.add_string("general.name", "tiny")
    w.add_tokenizer_model(model)
    if pre is not None:
        w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    if types is not None:
        w.add_token_types(types)
    if merges is not None:
        w.add_token_merges(merges)
    for key, value in (extra or {}).items():
        if isinstance(value, bool):
            w.add_bool(key, value)
        elif isinstance(value, int):
            w.add_uint32(key, value)
        elif isinstance(value, str):
            w.add_string(key, value)
        else:
            w.add_array(key, value)
    if embd_rows is not None:
        import numpy as np

        w.add_tensor("token_embd.weight", np.zeros((embd_rows, 2), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return write_gguf(tmp_path / "tiny.gguf", extra={"tokenizer.ggml.eos_token_id": 8, "tokenizer.chat_template": "{{ x }}"})


class TestLoad:
    def test_bpe_merges(self, tiny: Path) -> None:
        tok = tokviz.load(tiny)
        assert tok.encode("hello", add_special_tokens=False).ids == [7]
        # "hel" -> he l (no "he"+"l" merge) -> ids 4, 2
        assert tok.encode("hel", add_special_tokens=False).ids == [4, 2]
        assert tok.decode([7, 8]) == "hello<|endoftext|>"

    def test_control_token_is_special_padding_is_not_a_token(self, tiny: Path) -> None:
        tok = tokviz.load(tiny)
        assert tok.encode("hello<|endoftext|>", add_special_tokens=False).ids == [7, 8]
        assert tok.token_to_id("[PAD9]") is None
        assert tok.is_special_id(8)

    def test_info_numbers(self, tiny: Path) -> None:
        tok = load_gguf(tiny)
        info = tok.info()
        # 11 entries: 9 tokens (8 mergeable + <|endoftext|>) and 2 padding rows
        assert info["normal_entries"] == 9
        assert info["special_entries"] == 1
        assert info["id_space"] == 9
        assert info["embedding_rows"] == 11  # the token list: one entry per row
        extra = tok.config.extra
        assert (extra["token_list_entries"], extra["padding_entries"], extra["merges"]) == (11, 2, 4)
        assert tok.config.chat_template == "{{ x }}"
        assert tok.config.eos_token == "<|endoftext|>"

    def test_embedding_rows_from_the_tensor(self, tmp_path: Path) -> None:
        tok = load_gguf(write_gguf(tmp_path / "m.gguf", embd_rows=16))
        assert tok.info()["embedding_rows"] == 16

    def test_add_bos_from_the_file(self, tmp_path: Path) -> None:
        path = write_gguf(tmp_path / "b.gguf", extra={"tokenizer.ggml.bos_token_id": 8,
                                                       "tokenizer.ggml.add_bos_token": True})
        tok = load_gguf(path)
        assert tok.encode("hello").ids == [8, 7]
        assert tok.encode("hello", add_special_tokens=False).ids == [7]

    def test_bytes_and_sniff(self, tiny: Path) -> None:
        data = tiny.read_bytes()
        assert sniff(data) == "gguf"
        assert tokviz.load(data).encode("hello", add_special_tokens=False).ids == [7]

    def test_folder_with_a_gguf(self, tiny: Path) -> None:
        assert tokviz.load(tiny.parent).encode("hello", add_special_tokens=False).ids == [7]

    def test_llama3_pre_ignores_merges(self, tmp_path: Path) -> None:
        # "hello" is a token: with llama-bpe (ignore_merges) it is emitted whole even without
        # the merges that would build it
        path = write_gguf(tmp_path / "l3.gguf", pre="llama-bpe", merges=["h e"],
                          extra={"tokenizer.ggml.bos_token_id": 8})
        tok = load_gguf(path)
        assert tok.encode("hello", add_special_tokens=False).ids == [7]
        assert tok.encode("hello").ids == [8, 7]  # llama.cpp's add_bos default for llama-bpe

    def test_add_bos_without_a_bos_id(self, tmp_path: Path) -> None:
        with pytest.raises(TokvizFormatError, match="bos_token_id: add_bos is on"):
            load_gguf(write_gguf(tmp_path / "nb.gguf", pre="llama-bpe"))
        assert load_gguf(write_gguf(tmp_path / "g.gguf", merges=["h e"])).encode(
            "hello", add_special_tokens=False
        ).ids == [4, 2, 2, 3]


class TestPreTable:
    def test_every_regex_compiles(self) -> None:
        from tokviz.engine.patterns import compile_pattern

        for name in known_pre_names():
            for r in pre_spec(name).regexes:
                compile_pattern(r)

    def test_unknown_name_is_named(self) -> None:
        with pytest.raises(TokvizFormatError, match="'no-such-pre'"):
            pre_spec("no-such-pre")

    def test_custom_code_names_are_refused(self) -> None:
        with pytest.raises(TokvizFormatError, match="custom code"):
            pre_spec("kimi-k2")

    def test_unknown_pre_in_a_file(self, tmp_path: Path) -> None:
        path = write_gguf(tmp_path / "u.gguf", pre="brand-new-llm")
        with pytest.raises(TokvizFormatError, match=r"u\.gguf: tokenizer\.ggml\.pre: unknown pre-tokenizer 'brand-new-llm'"):
            load_gguf(path)


class TestBadFiles:
    def test_wrong_magic(self, tmp_path: Path) -> None:
        path = tmp_path / "bad.gguf"
        path.write_bytes(b"GGUX" + b"\0" * 40)
        with pytest.raises(TokvizFormatError, match="bad.gguf"):
            load_gguf(path)

    def test_truncated_header(self, tmp_path: Path) -> None:
        path = tmp_path / "t.gguf"
        path.write_bytes(b"GGUF\x03\x00")
        with pytest.raises(TokvizFormatError, match=r"t\.gguf: header: truncated"):
            tokviz.load(path)

    @pytest.mark.parametrize("keep", [60, 200, 400])
    def test_truncated_metadata_names_the_key(self, tiny: Path, tmp_path: Path, keep: int) -> None:
        path = tmp_path / "cut.gguf"
        path.write_bytes(tiny.read_bytes()[:keep])
        with pytest.raises(TokvizFormatError) as info:
            tokviz.load(path)
        assert "cut.gguf" in str(info.value)
        assert info.value.where is not None and ("key" in info.value.where or info.value.where == "header")

    def test_unknown_value_type(self, tiny: Path, tmp_path: Path) -> None:
        data = bytearray(tiny.read_bytes())
        key = b"general.name"
        at = data.index(key) + len(key)  # the uint32 value type follows the key
        data[at : at + 4] = struct.pack("<I", 99)
        path = tmp_path / "vt.gguf"
        path.write_bytes(bytes(data))
        with pytest.raises(TokvizFormatError, match=r"vt\.gguf: key 'general\.name': unknown GGUF value type"):
            load_gguf(path)

    def test_arrays_of_different_lengths(self, tmp_path: Path) -> None:
        path = write_gguf(tmp_path / "len.gguf", types=TYPES[:-1])
        with pytest.raises(TokvizFormatError, match=r"tokenizer\.ggml\.token_type: 10 entries but tokenizer\.ggml\.tokens has 11"):
            load_gguf(path)

    def test_special_id_out_of_range(self, tmp_path: Path) -> None:
        path = write_gguf(tmp_path / "id.gguf", extra={"tokenizer.ggml.bos_token_id": 999})
        with pytest.raises(TokvizFormatError, match=r"tokenizer\.ggml\.bos_token_id: id 999 is out of range"):
            load_gguf(path)

    def test_no_tokenizer(self, tmp_path: Path) -> None:
        w = gguf.GGUFWriter(str(tmp_path / "w.gguf"), "llama")
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        with pytest.raises(TokvizFormatError, match="tokenizer.ggml.model: no tokenizer"):
            load_gguf(tmp_path / "w.gguf")

    def test_unsupported_model(self, tmp_path: Path) -> None:
        with pytest.raises(TokvizFormatError, match="'rwkv' is not supported"):
            load_gguf(write_gguf(tmp_path / "r.gguf", model="rwkv"))

    def test_gpt2_without_merges(self, tmp_path: Path) -> None:
        with pytest.raises(TokvizFormatError, match="tokenizer.ggml.merges"):
            load_gguf(write_gguf(tmp_path / "nm.gguf", merges=None))

    def test_wrong_key_type(self, tmp_path: Path) -> None:
        path = write_gguf(tmp_path / "kt.gguf", extra={"tokenizer.ggml.add_bos_token": 1})
        with pytest.raises(TokvizFormatError, match=r"tokenizer\.ggml\.add_bos_token: expected bool"):
            load_gguf(path)


class TestUnigramFromSentencePiece:
    """A t5 (UGM) GGUF written from SentencePiece's own test model must tokenize as the
    sentencepiece library does with that model (the oracle runs in the test)."""

    def test_matches_sentencepiece(self, tmp_path: Path) -> None:
        spm = require_module("sentencepiece")
        from tokviz.io.sentencepiece import parse_model_proto

        data = bundle_path("sentencepiece-test/test_model.model").read_bytes()
        if data[:2] == b"\x1f\x8b":
            import gzip

            data = gzip.decompress(data)
        proto = parse_model_proto(data, source="test_model.model")
        w = gguf.GGUFWriter(str(tmp_path / "t5.gguf"), "t5")
        w.add_tokenizer_model("t5")
        w.add_token_list([p.piece for p in proto.pieces])
        w.add_token_scores([p.score for p in proto.pieces])
        w.add_token_types([int(p.type) for p in proto.pieces])
        w.add_add_space_prefix(proto.normalizer_spec.add_dummy_prefix)
        w.add_remove_extra_whitespaces(proto.normalizer_spec.remove_extra_whitespaces)
        w.add_precompiled_charsmap(proto.normalizer_spec.precompiled_charsmap)
        w.add_unk_token_id(proto.trainer_spec.unk_id)
        w.add_eos_token_id(proto.trainer_spec.eos_id)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        tok = load_gguf(tmp_path / "t5.gguf")
        ref = spm.SentencePieceProcessor(model_proto=data)
        texts = ["Hello world", "  two  spaces ", "ＡＢＣ full width", "I saw a girl with a telescope.", "東京"]
        for text in texts:
            assert tok.encode(text, add_special_tokens=False).ids == ref.encode(text), text
        # llama.cpp's default for t5: EOS appended by add_special_tokens
        assert tok.encode("Hello").ids[-1] == proto.trainer_spec.eos_id


def test_read_vocab_of_a_fixture() -> None:
    path = bundle_path("gguf/ggml-vocab-phi-3.gguf")
    v = read_gguf_vocab(path)
    assert (v.model, v.pre, len(v.tokens)) == ("llama", "default", 32064)
    assert v.chat_template is not None and "<|user|>" in v.chat_template


class TestCorruption:
    """Any damage to a GGUF file is a TokvizFormatError naming the file, never another exception."""

    def test_random_byte_damage(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        from hypothesis import HealthCheck, given, settings, strategies as st

        base = tmp_path_factory.mktemp("corrupt")
        good = write_gguf(base / "good.gguf", extra={"tokenizer.ggml.eos_token_id": 8}).read_bytes()
        target = base / "damaged.gguf"

        @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
        @given(
            edits=st.lists(st.tuples(st.integers(0, len(good) - 1), st.integers(0, 255)), min_size=1, max_size=4),
            cut=st.one_of(st.none(), st.integers(0, len(good))),
        )
        def check(edits: list[tuple[int, int]], cut: int | None) -> None:
            data = bytearray(good)
            for at, value in edits:
                data[at] = value
            target.write_bytes(bytes(data[:cut] if cut is not None else data))
            try:
                tokviz.load(target)
            except TokvizFormatError as exc:
                assert "damaged.gguf" in str(exc)

        check()


class TestCountsBounded:
    def test_damaged_array_count_is_an_error_not_unbounded_memory(self, tmp_path: Path) -> None:
        """Regression (found by the damage test): an array count past the end of the file made the
        gguf reader append empty views forever (the test run was OOM-killed at 24 GB)."""
        good = write_gguf(tmp_path / "good.gguf", extra={"tokenizer.ggml.eos_token_id": 8}).read_bytes()
        data = bytearray(good)
        key = b"tokenizer.ggml.token_type"
        at = data.index(key) + len(key) + 4 + 4  # value type ARRAY, item type, then the u64 count
        data[at : at + 8] = struct.pack("<Q", 1 << 60)
        path = tmp_path / "count.gguf"
        path.write_bytes(bytes(data))
        with pytest.raises(TokvizFormatError) as info:
            tokviz.load(path)
        assert "count.gguf" in str(info.value) and "tokenizer.ggml.token_type" in (info.value.where or "")
        assert "does not fit" in str(info.value)


# gemma4: SentencePiece-style BPE. The 4 specials, the 256 byte tokens, then the pieces below.
_G4_PIECES = ["\u2581", "h", "e", "l", "o", "he", "ll", "hell", "hello", "\u2581hello", "\n", "\n\n",
              "<|turn>", '<|"|>']
_G4_TOKENS = ["<pad>", "<eos>", "<bos>", "<unk>", *[f"<0x{b:02X}>" for b in range(256)], *_G4_PIECES]
_G4_TYPES = [3, 3, 3, 3, *[6] * 256, *[1] * 12, 3, 4]
_G4_MERGES = ["h e", "l l", "he ll", "hell o", "\u2581 hello", "\n \n"]
_G4_IDS = {"bos": 2, "eos": 1, "unk": 3, "pad": 0}


def _g4(tmp_path: Path, name: str = "g4.gguf", **kw) -> Path:  # noqa: ANN003
    extra = {"tokenizer.ggml.bos_token_id": 2, "tokenizer.ggml.eos_token_id": 1,
             "tokenizer.ggml.unknown_token_id": 3, "tokenizer.ggml.padding_token_id": 0,
             "tokenizer.ggml.add_bos_token": False, **kw.pop("extra", {})}
    args = {"tokens": _G4_TOKENS, "types": _G4_TYPES, "merges": _G4_MERGES, "pre": None, "model": "gemma4", **kw}
    return write_gguf(tmp_path / name, extra=extra, **args)


def _id(piece: str) -> int:
    return _G4_TOKENS.index(piece)


class TestGemma4:
    """llama.cpp's gemma4 tokenizer (llama-vocab.cpp: BPE with escape_whitespaces, no byte
    encoding, the newline-run split, <0xXX> byte fallback, add_bos forced on)."""

    def test_spaces_become_u2581_and_merge_by_rank(self, tmp_path: Path) -> None:
        tok = load_gguf(_g4(tmp_path))
        # "hello hello" -> "hello▁hello"; h+e twice, l+l twice, he+ll, hell+o, then ▁+hello
        assert tok.encode("hello hello", add_special_tokens=False).ids == [_id("hello"), _id("\u2581hello")]
        assert tok.decode([_id("hello"), _id("\u2581hello")]) == "hello hello"

    def test_byte_fallback_with_0x_tokens(self, tmp_path: Path) -> None:
        tok = load_gguf(_g4(tmp_path))
        # "x" is no piece: its byte 0x78 -> <0x78> (id 4 + 0x78); "é" is C3 A9
        assert tok.encode("x", add_special_tokens=False).ids == [4 + 0x78]
        assert tok.encode("\u00e9", add_special_tokens=False).ids == [4 + 0xC3, 4 + 0xA9]
        assert tok.decode([4 + 0xC3, 4 + 0xA9]) == "\u00e9"

    def test_newline_runs_are_their_own_chunks(self, tmp_path: Path) -> None:
        tok = load_gguf(_g4(tmp_path))
        ids = tok.encode("hello\n\nhello", add_special_tokens=False).ids
        assert ids == [_id("hello"), _id("\n\n"), _id("hello")]
        assert tok.stages("hello\n\nhello").pre_tokens[1].text == "\n\n"

    def test_bos_is_forced_on_over_the_file_key(self, tmp_path: Path) -> None:
        tok = load_gguf(_g4(tmp_path))  # the file says add_bos_token = false
        assert tok.encode("hello").ids == [2, _id("hello")]
        assert tok.config.add_bos_token is True

    def test_control_and_user_defined_tokens(self, tmp_path: Path) -> None:
        tok = load_gguf(_g4(tmp_path))
        ids = tok.encode('<|turn>hello<|"|>', add_special_tokens=False).ids
        assert ids == [_id("<|turn>"), _id("hello"), _id('<|"|>')]
        assert tok.is_special_id(_id("<|turn>")) and not tok.is_special_id(_id('<|"|>'))

    def test_info_says_gemma4(self, tmp_path: Path) -> None:
        from tokviz.io.detect import format_details

        details = format_details(tokviz.load(_g4(tmp_path)))
        assert details["tokenizer.ggml.model"] == "gemma4"
        assert details["llama.cpp pre-tokenizer"] == "gemma4"

    def test_some_byte_tokens_missing_is_refused(self, tmp_path: Path) -> None:
        tokens = [t for t in _G4_TOKENS if t != "<0x41>"]
        types = [ty for t, ty in zip(_G4_TOKENS, _G4_TYPES) if t != "<0x41>"]
        with pytest.raises(TokvizFormatError, match="255 of the 256 <0xXX> byte tokens"):
            load_gguf(_g4(tmp_path, tokens=tokens, types=types))

    def test_a_newline_token_the_merges_cannot_build_is_refused(self, tmp_path: Path) -> None:
        # "\n\n\n" is a token but no merge makes it: llama.cpp emits it whole, plain BPE would not
        tokens, types = [*_G4_TOKENS, "\n\n\n"], [*_G4_TYPES, 1]
        with pytest.raises(TokvizFormatError, match=r"tokenizer\.ggml\.merges: the merges do not build the newline token"):
            load_gguf(_g4(tmp_path, tokens=tokens, types=types))


class TestUnsupportedModelRefusedAtOnce:
    def test_refused_before_the_token_list_is_read(self, tmp_path: Path) -> None:
        """The model key is checked as soon as it is read: here the token list after it is damaged
        (a count past the end of the file), and the error is still the unsupported model."""
        good = write_gguf(tmp_path / "good.gguf", model="rwkv").read_bytes()
        data = bytearray(good)
        key = b"tokenizer.ggml.tokens"
        at = data.index(key) + len(key) + 4 + 4  # value type ARRAY, item type, then the u64 count
        data[at : at + 8] = struct.pack("<Q", 1 << 60)
        path = tmp_path / "rwkv.gguf"
        path.write_bytes(bytes(data))
        with pytest.raises(TokvizFormatError, match=r"rwkv\.gguf: tokenizer\.ggml\.model: tokenizer model 'rwkv' is not supported"):
            tokviz.load(path)
