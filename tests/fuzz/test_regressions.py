"""One named regression test per crash, hang and interop class the fuzzer found (issue #11).

Each builds the smallest file that showed the class and asserts the documented outcome: a
`TokvizFormatError` naming the file and the JSON path (or a `PatternTimeoutError`), never a
RecursionError, TypeError or a hang.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys

import pytest
from fuzz_bundles import (
    base_model_pieces,
    diamond_charsmap,
    json_bundle,
    model_bytes,
    model_file,
    small_charsmap,
)
from fuzzkit import run_case

import tokviz
from tokviz.engine.errors import TokvizFormatError
from tokviz.engine.fields import MAX_NESTING
from tokviz.engine.normalizers.precompiled import CharsMap
from tokviz.engine.patterns import PatternTimeoutError
from tokviz.io.hf_json import load_hf_json
from tokviz.io.json_text import MAX_JSON_DEPTH

SOURCE = "fuzz/tokenizer.json"


def load_json(obj: dict) -> tokviz.Tokenizer:
    return load_hf_json(json.dumps(obj).encode(), source=SOURCE)


def error_of(fn) -> str:  # noqa: ANN001
    with pytest.raises(TokvizFormatError) as info:
        run_case("regress", swallow=False, fn=fn)
    return str(info.value)


class TestDeepNesting:
    def test_json_2000_arrays_deep_in_detect(self) -> None:
        data = b'{"model": ' + b"[" * 2000 + b"]" * 2000 + b"}"
        msg = error_of(lambda: tokviz.load(data))
        assert msg.startswith("<bytes>: JSON nested 2001 levels deep") and f"at most {MAX_JSON_DEPTH}" in msg

    def test_json_100000_deep_inside_an_object(self) -> None:
        msg = error_of(lambda: tokviz.load(b'{"a": ' + b"[" * 100_000))
        assert "nested" in msg

    def test_unclosed_arrays_are_no_vocab_either(self) -> None:
        # "[" opens every BERT vocab.txt ("[PAD]"), so this falls through to the vocab.txt check
        error_of(lambda: tokviz.load(b"[" * 100_000))

    def test_post_processor_sequence_400_deep(self) -> None:
        obj = json_bundle("bert-base-uncased")
        node = obj["post_processor"]
        for _ in range(400):
            node = {"type": "Sequence", "processors": [node]}
        obj["post_processor"] = node
        # 400 Sequences nest 801 JSON levels (object + list per level): refused by the JSON scan
        assert "nested" in error_of(lambda: load_json(obj))
        # shallow enough for JSON but deeper than the component limit: refused by the registry
        node = obj["post_processor"] = {"type": "ByteLevel"}
        for _ in range(MAX_NESTING + 1):
            node = {"type": "Sequence", "processors": [node]}
        msg = error_of(lambda: load_hf_json({**obj, "post_processor": node}, source=SOURCE))
        assert f"nested more than {MAX_NESTING} deep" in msg and msg.startswith(f"{SOURCE}: post_processor.processors[0]")


class TestWrongJsonTypes:
    def test_type_that_is_an_object(self) -> None:
        obj = json_bundle("qwen3")
        obj["decoder"] = {"type": {"ByteLevel": True}}
        msg = error_of(lambda: load_json(obj))
        assert msg.startswith(f"{SOURCE}: decoder: unknown decoder type an object")

    def test_model_null(self) -> None:
        # found by the long json run: "model": null reached the added-token code as None
        obj = json_bundle("bert-base-uncased")
        obj["model"] = None
        assert error_of(lambda: load_json(obj)) == f"{SOURCE}: model: expected a model object, got null"

    def test_single_template_with_sequence_b(self) -> None:
        # found by the long file run: $B in the single template was an IndexError at encode time
        obj = json_bundle("mistral-7b-v0.1")
        obj["post_processor"]["single"][1] = {"Sequence": {"id": "B", "type_id": 0}}
        assert error_of(lambda: load_json(obj)) == (
            f"{SOURCE}: post_processor.single: the single template uses $B, but a single sequence has only $A"
        )

    def test_lone_surrogate_in_a_file_string(self) -> None:
        # found by the long json run: a Prepend of "\udcff" crashed BPE's byte fallback at encode
        obj = json_bundle("mistral-7b-v0.1")
        obj["normalizer"] = {"type": "Prepend", "prepend": "\udcff"}
        for load in (lambda: load_json(obj), lambda: load_hf_json(obj, source=SOURCE)):
            assert "lone surrogate U+DCFF" in error_of(load)

    def test_escaped_surrogate_pair_is_fine(self) -> None:
        data = b'{"model": {"type": "WordLevel", "vocab": {"\\ud83d\\ude00": 0}, "unk_token": "\\ud83d\\ude00"}}'
        assert load_hf_json(data, source=SOURCE).encode("\U0001F600").ids == [0]

    def test_bpe_end_of_word_suffix_object(self) -> None:
        obj = json_bundle("qwen3")
        obj["model"]["end_of_word_suffix"] = {"x": 1}
        assert error_of(lambda: load_json(obj)) == f"{SOURCE}: model.end_of_word_suffix: expected a string, got an object"

    def test_bpe_unk_token_object(self) -> None:
        obj = json_bundle("mistral-7b-v0.1")
        obj["model"]["unk_token"] = {"content": "<unk>"}
        assert error_of(lambda: load_json(obj)) == f"{SOURCE}: model.unk_token: expected a string, got an object"

    def test_bpe_decoder_suffix_list_names_the_path(self) -> None:
        obj = json_bundle("qwen3")
        obj["decoder"] = {"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "BPEDecoder", "suffix": ["</w>"]}]}
        assert error_of(lambda: load_json(obj)) == f"{SOURCE}: decoder.decoders[1].suffix: expected a string, got a list"

    def test_ctc_word_delimiter_bool(self) -> None:
        obj = json_bundle("qwen3")
        obj["decoder"] = {"type": "CTC", "word_delimiter_token": True}
        assert error_of(lambda: load_json(obj)) == (
            f"{SOURCE}: decoder.word_delimiter_token: expected a string, got a boolean"
        )

    def test_metaspace_replacement_list(self) -> None:
        obj = json_bundle("mistral-7b-v0.1")
        obj["decoder"] = {"type": "Metaspace", "replacement": ["▁"]}
        assert error_of(lambda: load_json(obj)) == (
            f"{SOURCE}: decoder.replacement: expected a one-character string, got a list"
        )

    def test_wordpiece_decoder_prefix_bool(self) -> None:
        obj = json_bundle("bert-base-uncased")
        obj["decoder"] = {"type": "WordPiece", "prefix": False}
        assert error_of(lambda: load_json(obj)) == f"{SOURCE}: decoder.prefix: expected a string, got a boolean"

    def test_sentencepiece_byte_piece_not_hex(self) -> None:
        # found by the long spm run: a BYTE piece "<0x>" was an int() ValueError in the decoder
        pieces = base_model_pieces() + [(f"<0x{b:02X}>".encode(), 0.0, 6) for b in range(256)]
        pieces[20] = (b"<0x>", 0.0, 6)
        msg = error_of(lambda: tokviz.load(model_file(pieces, trainer={"byte_fallback": True})))
        assert msg == "<bytes>: pieces[20]: byte piece '<0x>' is not of the form <0xNN>"

    def test_sentencepiece_piece_not_utf8(self) -> None:
        pieces = base_model_pieces()
        pieces[10] = (b"\xff\xfe", -3.0, 1)
        msg = error_of(lambda: tokviz.load(model_file(pieces)))
        assert msg.startswith("<bytes>: pieces[10]: piece 10 is not valid UTF-8")


class TestHostileRegexes:
    HANG = r"(?x)(a{1,10}) {1,10}$"  # verbose mode: the outer {1,10} quantifies the group
    TEXT = "a" * 40 + "b"

    def test_split_pre_tokenizer_regex_times_out(self) -> None:
        obj = json_bundle("qwen3")
        obj["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {"Regex": self.HANG}
        tok = load_json(obj)
        with pytest.raises(PatternTimeoutError, match=r"took too long"):
            run_case("regress", swallow=False, fn=lambda: tok.encode(self.TEXT) and None)

    def test_replace_normalizer_regex_times_out(self) -> None:
        obj = json_bundle("mistral-7b-v0.1")
        obj["normalizer"] = {"type": "Replace", "pattern": {"Regex": self.HANG}, "content": "x"}
        tok = load_json(obj)
        with pytest.raises(PatternTimeoutError):
            run_case("regress", swallow=False, fn=lambda: tok.encode(self.TEXT))

    def test_replace_decoder_regex_times_out(self) -> None:
        obj = json_bundle("mistral-7b-v0.1")
        # Fuse first: the pattern then runs over the whole decoded string, not token by token
        obj["decoder"] = {"type": "Sequence", "decoders": [
            {"type": "Fuse"}, {"type": "Replace", "pattern": {"Regex": self.HANG}, "content": "x"}]}
        tok = load_json(obj)
        token = tok.token_to_id("a")
        with pytest.raises(PatternTimeoutError):
            run_case("regress", swallow=False, fn=lambda: tok.decode([tok.token_to_id("▁")] + [token] * 40 + [tok.token_to_id("b")]))

    def test_pattern_that_does_not_compile(self) -> None:
        obj = json_bundle("qwen3")
        obj["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {"Regex": "(unclosed"}
        msg = error_of(lambda: load_json(obj))
        assert msg.startswith(f"{SOURCE}: pre_tokenizer.pretokenizers[0]: pattern '(unclosed' does not compile")


class TestSentencePieceCharsmap:
    def test_diamond_trie_24_deep_is_refused(self) -> None:
        cm = CharsMap.from_bytes(diamond_charsmap(24), source="m.model")
        with pytest.raises(TokvizFormatError, match=r"^m\.model: precompiled_charsmap: trie walk took more than"):
            run_case("regress", swallow=False, fn=lambda: cm.longest_match("ab" * 12, 0))

    def test_diamond_in_a_model_file(self) -> None:
        data = model_file(base_model_pieces(), normalizer={"precompiled_charsmap": diamond_charsmap(24)})
        with pytest.raises(TokvizFormatError, match="precompiled_charsmap"):
            run_case("regress", swallow=False, fn=lambda: tokviz.load(data).encode("ab" * 12))

    def test_trie_size_past_the_end_by_the_header(self) -> None:
        # found by the file family: the trie size fit the blob but not blob minus its header
        blob = small_charsmap()
        cut = blob[: 4 + struct.unpack_from("<I", blob)[0] - 3]
        with pytest.raises(TokvizFormatError, match="exceeds the blob size"):
            run_case("regress", swallow=False, fn=lambda: CharsMap.from_bytes(cut))

    def test_small_diamond_still_decodes(self) -> None:
        # a shared subtree is legal (darts-clone builds DAWGs): 2**10 keys are within budget
        cm = CharsMap.from_bytes(diamond_charsmap(10))
        assert cm.longest_match("ab" * 5, 0) == (10, "x")

    def test_small_model_with_charsmap_loads(self) -> None:
        tok = tokviz.load(model_bytes())
        assert tok.encode("ﬁ").tokens == ["▁f", "i"] or "".join(tok.encode("ﬁ").tokens) == "▁fi"
        assert small_charsmap()  # the real double array the fuzz families mutate


class TestProtobufInterop:
    @pytest.mark.parametrize(
        "first,second",
        [("tokviz.io.sentencepiece", "sentencepiece.sentencepiece_model_pb2"),
         ("sentencepiece.sentencepiece_model_pb2", "tokviz.io.sentencepiece")],
        ids=["tokviz-first", "sentencepiece-first"],
    )
    def test_import_together_in_either_order(self, first: str, second: str) -> None:
        from support import require_module

        require_module("sentencepiece")
        code = (
            f"import {first}, {second}\n"
            "import tokviz\n"
            "from tokviz.io.sentencepiece import parse_model_proto\n"
            "import sentencepiece.sentencepiece_model_pb2 as spb\n"
            "m = spb.ModelProto(); p = m.pieces.add(); p.piece = '<unk>'; p.type = 2\n"
            "m.trainer_spec.model_type = 1\n"
            "print(parse_model_proto(m.SerializeToString(), source='x').pieces[0].piece)\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "<unk>"

    def test_generated_module_is_up_to_date(self) -> None:
        from pathlib import Path

        tool = Path(__file__).resolve().parents[2] / "tools" / "regen_sentencepiece_pb2.py"
        out = subprocess.run([sys.executable, str(tool), "--check"], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr
