"""tokviz: a tokenizer visualizer and debugger with an exact pure-Python engine.

>>> import tokviz
>>> tok = tokviz.load("cl100k")
>>> tok.encode("hello world").ids
[15339, 1917]
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .engine.encoding import Encoding
from .engine.errors import TokvizFormatError
from .engine.sentencepiece_options import SentencePieceEncoder
from .engine.tokenizer import Tokenizer

__all__ = [
    "load", "get_encoding", "encoding_for_model", "Tokenizer", "Encoding", "SentencePieceEncoder", "TokvizFormatError",
    "__version__",
]
__version__ = "0.1.0"


def load(
    source: str | os.PathLike[str] | bytes,
    *,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> Tokenizer:
    """Load a tokenizer from a file or folder (any supported format, recognised by content), the
    bytes of a file, or a name that ``tokviz list`` shows: an embedded tokenizer (``"cl100k"``,
    ``"bert"``) or one found on this machine (an Ollama ``"model:tag"``). An existing path wins
    over a name, as on the command line.

    ``pattern``/``special_tokens`` are for a tiktoken rank file that is not one of the published
    encodings (see `tokviz.io.detect.load`).

    >>> load("bert").encode("Hello world").tokens
    ['[CLS]', 'hello', 'world', '[SEP]']
    """
    from .io.detect import load as load_file

    if not isinstance(source, (bytes, bytearray, memoryview)):
        from .io.embedded import resolve_tokenizer

        source = resolve_tokenizer(source)
    return load_file(source, pattern=pattern, special_tokens=special_tokens)


def get_encoding(name: str, *, ranks: str | os.PathLike[str] | bytes | None = None) -> Tokenizer:
    """tiktoken's ``get_encoding``: a published encoding by name (``"cl100k_base"``,
    ``"o200k_harmony"``, ``"p50k_edit"`` ...) from the rank files tokviz ships, or from ``ranks``
    for one it does not ship (`tokviz.io.tiktoken_encodings`). Nothing is downloaded.

    >>> get_encoding("cl100k_base").encode("hello world").ids
    [15339, 1917]
    """
    from .io.tiktoken_encodings import get_encoding as published

    return published(name, ranks=ranks)


def encoding_for_model(model_name: str, *, ranks: str | os.PathLike[str] | bytes | None = None) -> Tokenizer:
    """tiktoken's ``encoding_for_model``: the encoding of an OpenAI model name (``"gpt-4o"``).

    >>> encoding_for_model("gpt-4o").name
    'o200k_base'
    """
    from .io.tiktoken_encodings import encoding_for_model as for_model

    return for_model(model_name, ranks=ranks)
