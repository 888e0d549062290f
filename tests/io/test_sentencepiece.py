"""The .model loader: what it builds, what it records, and how it fails on bad files."""

from __future__ import annotations

import pytest
from support import bundle_bytes

from tokviz.engine.errors import TokvizFormatError
from tokviz.io import sentencepiece_model_pb2 as pb
from tokviz.io.sentencepiece import load_sentencepiece_model, parse_model_proto

MISTRAL = "mistral-7b-v0.1/tokenizer.model"
ALBERT = "albert-30k-clean/30k-clean.model"


def proto_of(rel: str) -> pb.ModelProto:
    p = pb.ModelProto()
    p.ParseFromString(bundle_bytes(rel))
    return p


class TestLoader:
    def test_mistral_bpe(self) -> None:
        tok = load_sentencepiece_model(bundle_bytes(MISTRAL), source=MISTRAL)
        assert type(tok.model).__name__ == "SentencePieceBPE"
        assert tok.vocab_size == 32000
        assert tok.config.bos_token == "<s>" and tok.config.eos_token == "</s>"
        assert tok.config.extra["bos_id"] == 1 and tok.config.add_bos_token is False
        enc = tok.encode("Hello world")
        assert enc.tokens == ["▁Hello", "▁world"]
        assert enc.offsets == [(0, 5), (5, 11)]
        assert tok.decode(enc.ids) == "Hello world"
        assert tok.decode([1, *enc.ids, 2]) == "Hello world"  # control pieces are invisible

    def test_albert_unigram_user_defined(self) -> None:
        tok = load_sentencepiece_model(bundle_bytes(ALBERT), source=ALBERT)
        assert type(tok.model).__name__ == "Unigram" and tok.model.sentencepiece
        assert tok.config.extra["user_defined_symbols"][:2] == ["(", ")"]
        assert tok.config.bos_token is None  # bos_id -1
        enc = tok.encode("(Hello)")
        assert enc.tokens[:2] == ["▁", "("]
        assert tok.decode(tok.encode("龘").ids) == " ⁇ "  # the unk surface

    def test_load_detects_model_by_content(self, tmp_path) -> None:  # noqa: ANN001
        import tokviz

        p = tmp_path / "weird-name.bin"
        p.write_bytes(bundle_bytes(MISTRAL))
        assert tokviz.load(p).encode("hi").tokens == ["▁hi"]

    def test_model_types_and_flags_recorded(self) -> None:
        tok = load_sentencepiece_model(bundle_bytes("sentencepiece-test/test_model.model"), source="t")
        extra = tok.config.extra
        assert extra["model_type"] == "UNIGRAM" and extra["normalizer"] == "nfkc"
        assert extra["add_dummy_prefix"] and extra["remove_extra_whitespaces"]


class TestBadInput:
    def test_truncated(self) -> None:
        data = bundle_bytes("sentencepiece-test/test_model.model")
        with pytest.raises(TokvizFormatError, match=r"cut\.model: .*does not parse"):
            load_sentencepiece_model(data[: len(data) // 2 + 3], source="cut.model")

    def test_wrong_message(self) -> None:
        other = pb.NormalizerSpec(name="nfkc", add_dummy_prefix=True).SerializeToString()
        with pytest.raises(TokvizFormatError, match="not a SentencePiece"):
            load_sentencepiece_model(other, source="spec.bin")
        with pytest.raises(TokvizFormatError):
            load_sentencepiece_model(b"\x0a\xff\xff\xff\xff\x0f garbage", source="junk.model")

    def test_no_unknown_piece(self) -> None:
        p = proto_of("sentencepiece-test/test_model.model")
        p.pieces[0].type = pb.ModelProto.SentencePiece.NORMAL
        with pytest.raises(TokvizFormatError, match="no UNKNOWN piece"):
            load_sentencepiece_model(p.SerializeToString(), source="x.model")

    def test_empty_piece(self) -> None:
        p = proto_of("sentencepiece-test/test_model.model")
        p.pieces[5].piece = ""
        with pytest.raises(TokvizFormatError, match=r"pieces\[5\]"):
            load_sentencepiece_model(p.SerializeToString(), source="x.model")

    def test_unsupported_model_type(self) -> None:
        p = proto_of("sentencepiece-test/test_model.model")
        p.trainer_spec.model_type = pb.TrainerSpec.WORD
        with pytest.raises(TokvizFormatError, match="WORD is not supported"):
            load_sentencepiece_model(p.SerializeToString(), source="x.model")

    def test_bad_charsmap_offsets(self) -> None:
        p = proto_of("sentencepiece-test/test_model.model")
        blob = bytearray(p.normalizer_spec.precompiled_charsmap)
        trie_units = int.from_bytes(blob[:4], "little") // 4
        # make every leaf value point far past the replacement table
        for k in range(trie_units):
            off = 4 + 4 * k
            u = int.from_bytes(blob[off : off + 4], "little")
            if u >> 31:
                blob[off : off + 4] = ((1 << 31) | 0x7FFFFFF0).to_bytes(4, "little")
        p.normalizer_spec.precompiled_charsmap = bytes(blob)
        with pytest.raises(TokvizFormatError, match="replacement offset"):
            load_sentencepiece_model(p.SerializeToString(), source="x.model")

    def test_parse_keeps_the_proto(self) -> None:
        proto = parse_model_proto(bundle_bytes(ALBERT), source=ALBERT)
        assert len(proto.pieces) == 30000 and proto.trainer_spec.unk_id == 1
