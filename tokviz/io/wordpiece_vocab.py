"""BERT ``vocab.txt`` loader: one token per line -> the pipeline HF's ``BertWordPieceTokenizer`` builds.

``tokenizers.BertWordPieceTokenizer(vocab_path)`` assembles: WordPiece (unk ``[UNK]``, prefix
``##``, max 100 chars per word) over the vocab file read like ``WordPiece.read_file`` (split on
``\\n``, a trailing ``\\r`` and trailing Unicode whitespace dropped, a repeated token keeps its
last line number); ``[UNK] [SEP] [CLS] [PAD] [MASK]`` as special added tokens when present;
BertNormalizer (clean text, Chinese chars spaced, ``lowercase``, accents stripped when
lowercasing); BertPreTokenizer; BertProcessing (``[CLS] $A [SEP]``, pairs ``... [SEP] $B
[SEP]``); the WordPiece decoder (``##`` glued back, cleanup on). We build exactly that, as a
tokenizer.json object, through the same component registry as every other file.

Cased or uncased: ``lowercase`` when given, else from the content -- a vocabulary whose ordinary
tokens contain upper-case letters (bert-base-cased has thousands) is cased.
"""

from __future__ import annotations

from itertools import compress
from operator import methodcaller, ne, not_
from typing import Any

from ..engine.errors import TokvizFormatError
from ..engine.tokenizer import Tokenizer, TokenizerConfig
from .hf_json import load_hf_json
from .json_text import CheckedObject, check_unicode

__all__ = ["load_wordpiece_vocab", "read_vocab_lines", "looks_cased", "bert_tokenizer_json"]

_SPECIALS = ("[UNK]", "[SEP]", "[CLS]", "[PAD]", "[MASK]")
# Unicode White_Space (what Rust's str::trim_end removes); Python's str.isspace adds U+001C..1F.
_WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
# A vocabulary with at least this many tokens holding an upper-case letter is cased.
_CASED_MIN_TOKENS = 20


def read_vocab_lines(text: str) -> dict[str, int]:
    """``WordPiece.read_file``: token -> line number (a repeated token keeps its last line).

    Each line loses its trailing Unicode white space (a CRLF line's ``\\r`` with it)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline ending the last line does not start another one
    return dict(zip(map(methodcaller("rstrip", _WHITE_SPACE), lines), range(len(lines))))


def looks_cased(vocab: dict[str, int]) -> bool:
    """True when ordinary (non-bracketed) tokens contain upper-case letters."""
    # (only tokens that lower() changes, or that are not ASCII, can hold one: C-level passes
    # leave the few worth a look)
    tokens = list(vocab)
    maybe = set(compress(tokens, map(ne, tokens, map(str.lower, tokens))))
    maybe.update(compress(tokens, map(not_, map(str.isascii, tokens))))
    count = 0
    for tok in maybe:
        if tok.startswith("[") and tok.endswith("]"):
            continue
        if any(c.isupper() for c in tok):
            count += 1
            if count >= _CASED_MIN_TOKENS:
                return True
    return False


def load_wordpiece_vocab(text: str, *, source: str, lowercase: bool | None = None) -> Tokenizer:
    """A BERT tokenizer from the text of a ``vocab.txt``.

    >>> tok = load_wordpiece_vocab("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nhello\\nworld\\n##s\\n", source="vocab.txt")
    >>> tok.encode("Hello worlds").tokens  # doctest: +SKIP
    ['[CLS]', 'hello', 'world', '##s', '[SEP]']
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    vocab = read_vocab_lines(text)
    if not vocab or (len(vocab) == 1 and "" in vocab):
        raise TokvizFormatError("empty vocabulary: a vocab.txt needs one token per line", source=source)
    for needed in ("[SEP]", "[CLS]"):
        if needed not in vocab:
            raise TokvizFormatError(
                f"{needed} is not in the vocabulary (BertWordPieceTokenizer needs [CLS] and [SEP])", source=source
            )
    decided_by = "option"
    if lowercase is None:
        lowercase = not looks_cased(vocab)
        decided_by = "content"
    # every string of the object comes from ``text`` or is ours: checking the text once checks it
    check_unicode(text, source=source)
    obj = CheckedObject(bert_tokenizer_json(vocab, lowercase=lowercase))
    tok = load_hf_json(obj, source=source)
    tok.name = "bert-wordpiece-" + ("uncased" if lowercase else "cased")
    tok.config = TokenizerConfig(
        unk_token="[UNK]" if "[UNK]" in vocab else None,
        pad_token="[PAD]" if "[PAD]" in vocab else None,
        extra={"format": "vocab.txt", "lowercase": lowercase, "lowercase_from": decided_by},
    )
    return tok


def bert_tokenizer_json(
    vocab: dict[str, int],
    *,
    lowercase: bool,
    cls: str = "[CLS]",
    sep: str = "[SEP]",
    unk: str = "[UNK]",
    specials: list[str] | None = None,
) -> dict[str, Any]:
    """The tokenizer.json object of ``BertWordPieceTokenizer`` over ``vocab`` (token -> id).

    ``specials`` are the special added tokens (default: those of ``[UNK] [SEP] [CLS] [PAD]
    [MASK]`` that the vocabulary has).
    """
    names = specials if specials is not None else [t for t in _SPECIALS if t in vocab]
    added = [
        {"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
        for t in names
        if t in vocab
    ]
    return {
        "version": "1.0",
        "added_tokens": sorted(added, key=lambda a: a["id"]),
        "normalizer": {
            "type": "BertNormalizer",
            "clean_text": True,
            "handle_chinese_chars": True,
            "strip_accents": None,
            "lowercase": lowercase,
        },
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": [sep, vocab[sep]], "cls": [cls, vocab[cls]]},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {
            "type": "WordPiece",
            "unk_token": unk,
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": vocab,
        },
    }
