"""``make_trainer``: one trainer from a model name and the common options, the choice that
``tokviz train`` and the GUI's Train tab make the same way.
"""

from __future__ import annotations

from typing import Any

__all__ = ["make_trainer"]


def make_trainer(
    model: str,
    *,
    vocab_size: int,
    byte_level: bool = False,
    min_frequency: int = 0,
    special_tokens: list[str] | None = None,
    record_history: bool = True,
) -> Any:
    """The trainer for ``model`` (``bpe``, ``wordpiece`` or ``unigram``) with the options that
    ``tokviz train`` and the GUI's Train tab share.

    >>> make_trainer("wordpiece", vocab_size=100).special_tokens
    ['[UNK]']
    """
    from ..engine.errors import TokvizFormatError

    specials = list(special_tokens or [])
    if vocab_size <= 0:
        raise TokvizFormatError(f"--vocab-size must be positive, got {vocab_size}")
    if model == "bpe":
        from .bpe import BpeTrainer
        from .words import whitespace_spec

        if byte_level:
            return BpeTrainer.byte_level(
                vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=specials,
                record_history=record_history,
            )
        return BpeTrainer(
            vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=specials,
            spec=whitespace_spec(), record_history=record_history,
        )
    if byte_level:
        raise TokvizFormatError(f"--byte-level applies to --model bpe only, not {model}")
    if model == "wordpiece":
        from .wordpiece import WordPieceTrainer

        return WordPieceTrainer(
            vocab_size=vocab_size, min_frequency=min_frequency,
            special_tokens=specials or ["[UNK]"], record_history=record_history,
        )
    if model == "unigram":
        from .unigram import UnigramTrainer

        return UnigramTrainer(vocab_size=vocab_size, special_tokens=specials or ["<unk>"], min_frequency=min_frequency)
    raise TokvizFormatError(f"unknown model {model!r} (bpe, wordpiece, unigram)")
