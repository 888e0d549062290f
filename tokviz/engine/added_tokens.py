"""Added tokens: literals matched in the text before normalization, the way HF does.

An added token (special or not) is found in the raw text (``normalized=False``) or in the
normalized text (``normalized=True``), with ``lstrip``/``rstrip``/``single_word`` rules, and
bypasses the model. tiktoken-style special tokens are added tokens that are only honoured when
``allowed_special`` admits them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AddedToken"]


@dataclass(frozen=True, slots=True)
class AddedToken:
    """One entry of tokenizer.json ``added_tokens`` (same field names)."""

    content: str
    id: int
    special: bool = False
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = True
