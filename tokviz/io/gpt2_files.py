"""GPT-2 style ``vocab.json`` (token -> id) + ``merges.txt`` (one ``left right`` merge per line).

The pair is how GPT-2, RoBERTa and many byte-level BPE models were published before
tokenizer.json. tokviz assembles the same pipeline HF builds for GPT-2 (``GPT2TokenizerFast``'s
tokenizer.json): ByteLevel pre-tokenizer with the GPT-2 regex (no prefix space), BPE with the
merges in file order (line order = rank), ByteLevel post-processor (offsets not trimmed) and
ByteLevel decoder, with ``<|endoftext|>`` as a special added token when the vocabulary has it.

Unlike a tiktoken rank file (`tiktoken_ranks`), merges.txt gives the merge *pairs* explicitly,
so the model is an ordinary merges BPE, not the rank mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..engine.added_tokens import AddedToken
from ..engine.errors import TokvizFormatError
from ..engine.fields import id_error, is_id
from ..engine.tokenizer import Tokenizer, TokenizerConfig
from .json_text import loads

__all__ = ["parse_vocab_json", "parse_merges", "load_gpt2_files", "looks_like_merges", "GPT2_SPECIALS"]

# Literals HF's GPT-2/RoBERTa tokenizers register as special when the vocabulary has them.
GPT2_SPECIALS = ("<|endoftext|>",)


def parse_vocab_json(text: str | Mapping[str, Any], *, source: str = "vocab.json") -> dict[str, int]:
    """Parse vocab.json (a JSON object token -> id), checking every entry.

    >>> parse_vocab_json('{"a": 0, "b": 1}')
    {'a': 0, 'b': 1}
    """
    if isinstance(text, str):
        obj = loads(text, source=source)
    else:
        obj = text
    if not isinstance(obj, Mapping):
        raise TokvizFormatError(
            f"expected a JSON object token -> id, got {type(obj).__name__}", source=source
        )
    vocab: dict[str, int] = {}
    seen: dict[int, str] = {}
    for token, id in obj.items():
        if not is_id(id):
            raise TokvizFormatError(id_error(id), source=source, where=f"entry {token[:40]!r}")
        if id in seen:
            raise TokvizFormatError(
                f"id {id} is given to both {seen[id]!r} and {token!r}",
                source=source,
                where=f"entry {token!r}",
            )
        seen[id] = token
        vocab[token] = id
    if not vocab:
        raise TokvizFormatError("empty vocabulary", source=source)
    return vocab


def looks_like_merges(text: str) -> bool:
    """True when the text starts like a merges.txt (``#version`` header or ``a b`` pairs)."""
    lines = [ln for ln in text.split("\n", 8)[:8] if ln.strip()]
    if not lines:
        return False
    if lines[0].startswith("#version"):
        return True
    return all(len(ln.rstrip("\r").split(" ")) == 2 for ln in lines[:-1] or lines)


def parse_merges(
    text: str, *, source: str = "merges.txt", vocab: Mapping[str, int] | None = None
) -> list[tuple[str, str]]:
    """Parse merges.txt into ``(left, right)`` pairs in rank order.

    A first line starting with ``#version`` is a header (HF skips it too). With ``vocab`` given,
    both sides and their concatenation must be in it, as HF requires.

    >>> parse_merges("#version: 0.2\\nĠ t\\nh e\\n")
    [('Ġ', 't'), ('h', 'e')]
    """
    merges: list[tuple[str, str]] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line or (lineno == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise TokvizFormatError(
                f"expected 'left right', got {line[:60]!r}", source=source, where=f"line {lineno}"
            )
        a, b = parts
        if vocab is not None:
            for piece in (a, b, a + b):
                if piece not in vocab:
                    raise TokvizFormatError(
                        f"merge {a!r} + {b!r}: {piece!r} is not in vocab.json",
                        source=source,
                        where=f"line {lineno}",
                    )
        merges.append((a, b))
    return merges


def load_gpt2_files(
    vocab_text: str | Mapping[str, Any],
    merges_text: str,
    *,
    source: str = "vocab.json",
    merges_source: str = "merges.txt",
    config: TokenizerConfig | None = None,
) -> Tokenizer:
    """Build the GPT-2 pipeline from the two files' texts (vocab.json may be given parsed).

    >>> tok = load_gpt2_files(open("vocab.json").read(), open("merges.txt").read())  # doctest: +SKIP
    >>> tok.encode("Hello world").ids                                                # doctest: +SKIP
    [15496, 995]
    """
    from ..engine.decoders import decoder_from_json
    from ..engine.models import model_from_json
    from ..engine.pre_tokenizers import pre_tokenizer_from_json
    from ..engine.processors import post_processor_from_json

    vocab = parse_vocab_json(vocab_text, source=source)
    merges = parse_merges(merges_text, source=merges_source, vocab=vocab)
    # These are the component settings of HF's GPT-2 tokenizer.json.
    model = model_from_json(
        {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": "",
            "end_of_word_suffix": "",
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": [[a, b] for a, b in merges],
        },
        where=source,
    )
    pre = pre_tokenizer_from_json(
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    )
    post = post_processor_from_json(
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True}
    )
    decoder = decoder_from_json(
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
    )
    added = [AddedToken(t, vocab[t], special=True, normalized=True) for t in GPT2_SPECIALS if t in vocab]
    if config is None:
        eos = GPT2_SPECIALS[0] if GPT2_SPECIALS[0] in vocab else None
        config = TokenizerConfig(bos_token=eos, eos_token=eos, unk_token=eos, extra={"format": "gpt2-files"})
    name = source.replace("\\", "/").rsplit("/", 2)
    return Tokenizer(
        model,
        pre_tokenizer=pre,
        post_processor=post,
        decoder=decoder,
        added_tokens=added,
        special_policy="hf",
        name=name[-2] if len(name) >= 2 else "gpt2",
        source=source,
        config=config,
    )
