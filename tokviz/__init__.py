"""tokviz: a tokenizer visualizer and debugger with an exact pure-Python engine.

>>> import tokviz
>>> tok = tokviz.load("tokenizer.json")          # doctest: +SKIP
>>> tok.encode("Hello world").ids                # doctest: +SKIP
[9906, 1917]
"""

from __future__ import annotations

from .engine.encoding import Encoding
from .engine.errors import TokvizFormatError
from .engine.tokenizer import Tokenizer
from .io.detect import load

__all__ = ["load", "Tokenizer", "Encoding", "TokvizFormatError", "__version__"]
__version__ = "0.1.0"
