"""BERT vocab.txt loader: reading the file like HF, cased/uncased, the assembled pipeline."""

from __future__ import annotations

import pytest
from support import bundle_bytes

from tokviz.engine.errors import TokvizFormatError
from tokviz.io.wordpiece_vocab import load_wordpiece_vocab, looks_cased, read_vocab_lines

SMALL = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n##s\nthe\nThe\n"


class TestReadVocab:
    def test_lines_like_hf(self) -> None:
        assert read_vocab_lines("a\r\nb \nc\u3000\nd") == {"a": 0, "b": 1, "c": 2, "d": 3}
        assert read_vocab_lines("x\ny\nx\n") == {"x": 2, "y": 1}  # a repeat keeps its last line
        assert read_vocab_lines("a\x1c\n") == {"a\x1c": 0}  # not White_Space: kept (Rust trim_end)

    def test_cased_detection(self) -> None:
        assert not looks_cased({"[CLS]": 0, "hello": 1, "The": 2})
        assert looks_cased({f"Word{i}": i for i in range(40)})


class TestLoader:
    def test_pipeline(self) -> None:
        tok = load_wordpiece_vocab(SMALL, source="vocab.txt")
        enc = tok.encode("Hello worlds")
        assert enc.tokens == ["[CLS]", "hello", "world", "##s", "[SEP]"]
        assert enc.offsets == [(0, 0), (0, 5), (6, 11), (11, 12), (0, 0)]
        assert tok.decode(enc.ids, skip_special_tokens=True) == "hello worlds"
        assert tok.decode(enc.ids) == "[CLS] hello worlds [SEP]"
        assert tok.config.extra["lowercase"] is True

    def test_lowercase_option(self) -> None:
        tok = load_wordpiece_vocab(SMALL, source="vocab.txt", lowercase=False)
        assert tok.encode("The", add_special_tokens=False).tokens == ["The"]
        assert tok.config.extra["lowercase_from"] == "option"

    def test_special_literals_are_added_tokens(self) -> None:
        tok = load_wordpiece_vocab(SMALL, source="vocab.txt")
        assert tok.encode("hello [MASK]", add_special_tokens=False).tokens == ["hello", "[MASK]"]

    def test_real_vocab_is_uncased(self) -> None:
        tok = load_wordpiece_vocab(bundle_bytes("bert-base-uncased/vocab.txt").decode("utf-8"), source="vocab.txt")
        assert tok.name.endswith("uncased") and tok.vocab_size == 30522

    def test_bad_files(self) -> None:
        with pytest.raises(TokvizFormatError, match="empty vocabulary"):
            load_wordpiece_vocab("", source="v.txt")
        with pytest.raises(TokvizFormatError, match=r"\[CLS\] is not in the vocabulary"):
            load_wordpiece_vocab("[SEP]\nhello\n", source="v.txt")
