"""The pipeline: added tokens -> normalize -> pre-tokenize -> model -> post-process; and decode.

`Tokenizer` is the one engine behind the GUI, the CLI and the trainers. It is assembled from
components (see the family packages) by the loaders in `tokviz.io`, and keeps every stage of a
run in `Encoding.stages`.

Contract (other work depends on these names):
    Tokenizer(model, *, normalizer=None, pre_tokenizer=None, post_processor=None, decoder=None,
              added_tokens=(), special_policy="hf", name="", source=None, config=None)
    Tokenizer.encode(text, *, add_special_tokens=True, allowed_special=None, trace=False) -> Encoding
    Tokenizer.decode(ids, *, skip_special_tokens=False) -> str
    Tokenizer.vocab_size, token_to_id, id_to_token, get_vocab, info()

``special_policy="hf"`` extracts every added token from the text (HF tokenizers);
``"tiktoken"`` treats special-token literals as ordinary text unless ``allowed_special`` admits
them (``"all"`` or a set of literals), as tiktoken's ``encode(text, disallowed_special=())``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .added_tokens import AddedToken
from .decoders import Decoder
from .encoding import Encoding
from .models import Model
from .normalizers import Normalizer
from .pre_tokenizers import PreTokenizer
from .processors import PostProcessor

__all__ = ["Tokenizer", "TokenizerConfig"]


@dataclass(frozen=True, slots=True)
class TokenizerConfig:
    """What tokenizer_config.json (or a .model's trainer spec) adds around the pipeline."""

    bos_token: str | None = None
    eos_token: str | None = None
    pad_token: str | None = None
    unk_token: str | None = None
    add_bos_token: bool | None = None
    add_eos_token: bool | None = None
    chat_template: str | None = None
    embedding_rows: int | None = None  # known model embedding rows, when a config says so
    extra: Mapping[str, Any] = field(default_factory=dict)


class Tokenizer:
    def __init__(
        self,
        model: Model,
        *,
        normalizer: Normalizer | None = None,
        pre_tokenizer: PreTokenizer | None = None,
        post_processor: PostProcessor | None = None,
        decoder: Decoder | None = None,
        added_tokens: Sequence[AddedToken] = (),
        special_policy: Literal["hf", "tiktoken"] = "hf",
        name: str = "",
        source: str | None = None,
        config: TokenizerConfig | None = None,
    ) -> None:
        self.model = model
        self.normalizer = normalizer
        self.pre_tokenizer = pre_tokenizer
        self.post_processor = post_processor
        self.decoder = decoder
        self.added_tokens = tuple(added_tokens)
        self.special_policy = special_policy
        self.name = name
        self.source = source
        self.config = config or TokenizerConfig()

    def encode(
        self,
        text: str,
        *,
        add_special_tokens: bool = True,
        allowed_special: str | set[str] | frozenset[str] | None = None,
        trace: bool = False,
    ) -> Encoding:
        raise NotImplementedError  # the pipeline is being written (engine core issue)

    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = False) -> str:
        raise NotImplementedError
