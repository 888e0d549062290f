"""HF ``tokenizers``' Python API over tokviz, for the vendored binding tests: calls translated,
no answer computed here. A `Tokenizer` holds its components as adapter objects (each its
tokenizer.json object, see `_base`) and its added tokens, assembles them into a tokenizer.json
object and encodes, decodes and post-processes with the tokviz `Tokenizer` that
`tokviz.io.hf_json.load_hf_json` builds from it. The one piece of bookkeeping done here is HF's
``add_tokens`` id assignment (an added token not in the model takes the next free id), which
writes the ``added_tokens`` entries a tokenizer.json would hold.

Not offered by tokviz, so absent or refused here (tests/conformance/README.md lists the tests):
training, async methods, ``Tokenizer.save`` / ``to_str``, ``from_pretrained`` (a download),
DecodeStream, custom Python components, NormalizedString / PreTokenizedString, the ByteLevel
normalizer and the FixedLength pre-tokenizer (tokviz refuses their tokenizer.json types).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from tokviz.engine.model_inputs import PaddingParams, merge, pad, set_sequence_id, truncate
from tokviz.engine.tokenizer import Tokenizer as _EngineTokenizer
from tokviz.io.hf_json import load_hf_json

from . import decoders, implementations, models, normalizers, pre_tokenizers, processors
from ._base import from_file_json

__all__ = ["AddedToken", "Encoding", "NormalizedString", "PreTokenizedString", "Regex", "Tokenizer", "decoders",
           "implementations", "models", "normalizers", "pre_tokenizers", "processors", "BertWordPieceTokenizer"]


class Regex:
    """A pattern to be read as a regular expression (HF's ``tokenizers.Regex``)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern


class NormalizedString:
    def __init__(self, sequence: str) -> None:
        raise NotImplementedError("NormalizedString (editing normalized text from Python) is not offered by tokviz")


class PreTokenizedString:
    def __init__(self, sequence: str) -> None:
        raise NotImplementedError("PreTokenizedString (splitting from Python) is not offered by tokviz")


class AddedToken:
    """HF ``AddedToken``: the fields of a tokenizer.json ``added_tokens`` entry (no id: the
    tokenizer gives it one). ``normalized`` defaults to ``not special``."""

    def __init__(self, content: str = "", single_word: bool = False, lstrip: bool = False, rstrip: bool = False,
                 normalized: bool | None = None, special: bool = False) -> None:
        self.content = content
        self.single_word = single_word
        self.lstrip = lstrip
        self.rstrip = rstrip
        self._normalized = normalized
        self.special = special

    @property
    def normalized(self) -> bool:
        return (not self.special) if self._normalized is None else self._normalized

    @normalized.setter
    def normalized(self, value: bool) -> None:
        self._normalized = value

    def _entry(self, id_: int) -> dict[str, Any]:
        return {"id": id_, "content": self.content, "single_word": self.single_word, "lstrip": self.lstrip,
                "rstrip": self.rstrip, "normalized": self.normalized, "special": self.special}

    def _key(self) -> tuple:
        return (self.content, self.single_word, self.lstrip, self.rstrip, self.normalized, self.special)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AddedToken) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self.content)

    def __str__(self) -> str:
        return self.content

    def __repr__(self) -> str:
        b = {True: "True", False: "False"}
        return (f'AddedToken("{self.content}", rstrip={b[self.rstrip]}, lstrip={b[self.lstrip]}, '
                f"single_word={b[self.single_word]}, normalized={b[self.normalized]}, special={b[self.special]})")

    def __getstate__(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


class Encoding:
    """HF ``Encoding`` over a tokviz `tokviz.engine.encoding.Encoding` (``overflowing`` as a list
    of these, ``words`` the deprecated name of ``word_ids``, the in-place ``truncate`` / ``pad``
    / ``set_sequence_id`` of HF's API done by `tokviz.engine.model_inputs`)."""

    def __init__(self, enc: Any) -> None:
        self._enc = enc

    def __getattr__(self, name: str) -> Any:
        if name in ("ids", "tokens", "offsets", "type_ids", "special_tokens_mask", "attention_mask", "word_ids",
                    "sequence_ids", "n_sequences", "token_to_sequence", "token_to_chars", "token_to_word",
                    "word_to_tokens", "word_to_chars", "char_to_token", "char_to_word"):
            return getattr(self.__dict__["_enc"], name)
        raise AttributeError(f"Encoding has no attribute {name!r}")

    @property
    def words(self) -> list[int | None]:
        warnings.warn("`Encoding.words` is deprecated: use `word_ids`", DeprecationWarning, stacklevel=2)
        return self._enc.word_ids

    @property
    def overflowing(self) -> list[Encoding]:
        return [Encoding(e) for e in self._enc.overflowing]

    def __len__(self) -> int:
        return len(self._enc)

    def __repr__(self) -> str:
        return repr(self._enc)

    def truncate(self, max_length: int, stride: int = 0, direction: str = "right") -> None:
        self._enc = truncate(self._enc, max_length, stride=stride, direction=direction)

    def pad(self, length: int, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0,
            pad_token: str = "[PAD]") -> None:
        self._enc = pad(self._enc, length, PaddingParams(direction, pad_id, pad_type_id, pad_token))

    def set_sequence_id(self, sequence_id: int) -> None:
        self._enc = set_sequence_id(self._enc, sequence_id)

    @staticmethod
    def merge(encodings: list[Encoding], growing_offsets: bool = True) -> Encoding:
        if not growing_offsets:
            raise NotImplementedError("merging without growing offsets is not offered by tokviz")
        return Encoding(merge([e._enc for e in encodings]))


def _listed(value: Any) -> Any:
    """A numpy array of strings (which HF's encode methods accept) as the nested lists it holds."""
    return value.tolist() if hasattr(value, "tolist") and hasattr(value, "dtype") else value


class Tokenizer:
    """HF ``Tokenizer``: the components, the added tokens and the truncation / padding settings,
    run by the tokviz tokenizer built from them (rebuilt after any change)."""

    def __init__(self, model: models.Model) -> None:
        self._model = model
        self._normalizer: normalizers.Normalizer | None = None
        self._pre_tokenizer: pre_tokenizers.PreTokenizer | None = None
        self._post_processor: processors.PostProcessor | None = None
        self._decoder: decoders.Decoder | None = None
        self._added: list[tuple[AddedToken, int]] = []
        self._truncation: dict[str, Any] | None = None
        self._padding: dict[str, Any] | None = None
        self._built: _EngineTokenizer | None = None

    # ------------------------------------------------------------------ the tokviz tokenizer
    def _json(self) -> dict[str, Any]:
        def section(c: Any) -> Any:
            return None if c is None else c._json()

        return {
            "version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [t._entry(id_) for t, id_ in self._added],
            "normalizer": section(self._normalizer), "pre_tokenizer": section(self._pre_tokenizer),
            "post_processor": section(self._post_processor), "decoder": section(self._decoder),
            "model": self._model._json(),
        }

    def _engine(self) -> _EngineTokenizer:
        # Components are mutable adapter objects (HF's setters): their objects are read on every
        # use, and the tokviz tokenizer rebuilt when they changed.
        obj = self._json()
        if self._built is None or self._built_from != obj:
            tok = load_hf_json(obj, source="tokenizer.json")
            if self._truncation is not None:
                tok.enable_truncation(**self._truncation)
            if self._padding is not None:
                tok.enable_padding(**self._padding)
            self._built, self._built_from = tok, obj
        return self._built

    def _changed(self) -> None:
        self._built = None

    # ------------------------------------------------------------------ components
    def _component(name: str) -> property:  # noqa: N805 - a property factory
        attr = "_" + name

        def get(self: Tokenizer) -> Any:
            return getattr(self, attr)

        def set_(self: Tokenizer, value: Any) -> None:
            setattr(self, attr, value)
            self._changed()

        return property(get, set_)

    model = _component("model")
    normalizer = _component("normalizer")
    pre_tokenizer = _component("pre_tokenizer")
    post_processor = _component("post_processor")
    decoder = _component("decoder")
    del _component

    # ------------------------------------------------------------------ loading
    @staticmethod
    def from_str(json_str: str) -> Tokenizer:
        obj = json.loads(json_str)
        tok = load_hf_json(obj, source="tokenizer.json")  # tokviz reads (and checks) the file
        out = Tokenizer(from_file_json(obj["model"], "model"))
        for name in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
            setattr(out, "_" + name, from_file_json(obj.get(name), name))
        for entry in obj.get("added_tokens") or ():
            fields = {k: entry[k] for k in ("content", "single_word", "lstrip", "rstrip", "normalized", "special")
                      if k in entry}
            out._added.append((AddedToken(**fields), entry["id"]))
        out._truncation, out._padding = tok.truncation, tok.padding
        return out

    @staticmethod
    def from_file(path: str) -> Tokenizer:
        return Tokenizer.from_str(Path(path).read_text(encoding="utf-8"))

    @staticmethod
    def from_buffer(buffer: bytes) -> Tokenizer:
        return Tokenizer.from_str(buffer.decode("utf-8"))

    # ------------------------------------------------------------------ added tokens
    def _add(self, tokens: list[str | AddedToken], special: bool) -> int:
        """HF ``AddedVocabulary::add_tokens``: an empty token or one equal to an added one is
        ignored; a token keeps the id its content already has (added or in the model), else it
        takes the next id after the model and the added tokens. Returns how many were not ignored."""
        model = self._model._engine()
        ignored = 0
        for token in tokens:
            if isinstance(token, str):
                token = AddedToken(token, special=special)
            elif special:
                token.special = True  # HF sets it on the caller's object
            if not token.content or any(t == token for t, _ in self._added):
                ignored += 1
                continue
            same = [i for i, (t, _) in enumerate(self._added) if t.content == token.content]
            if same:
                self._added[same[0]] = (token, self._added[same[0]][1])
                continue
            id_ = model.token_to_id(token.content)
            if id_ is None:
                top = max((i for _, i in self._added), default=None)
                size = model.vocab_size
                id_ = size if top is None else (top + 1 if top >= size or size == 0 else size)
            self._added.append((token, id_))
        self._changed()
        return len(tokens) - ignored

    def add_tokens(self, tokens: list[str | AddedToken]) -> int:
        return self._add(list(tokens), special=False)

    def add_special_tokens(self, tokens: list[str | AddedToken]) -> int:
        return self._add(list(tokens), special=True)

    def get_added_tokens_decoder(self) -> dict[int, AddedToken]:
        return {id_: t for t, id_ in sorted(self._added, key=lambda p: p[1])}

    # ------------------------------------------------------------------ vocabulary
    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        tok = self._engine()
        return tok.get_vocab() if with_added_tokens else dict(tok.model.get_vocab())

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        tok = self._engine()
        return tok.vocab_size if with_added_tokens else tok.model.vocab_size

    def token_to_id(self, token: str) -> int | None:
        return self._engine().token_to_id(token)

    def id_to_token(self, id: int) -> str | None:  # noqa: A002 - HF's name
        return self._engine().id_to_token(id)

    # ------------------------------------------------------------------ encode / decode
    def encode(self, sequence: Any, pair: Any = None, is_pretokenized: bool = False,
               add_special_tokens: bool = True) -> Encoding:
        return Encoding(self._engine().encode(_listed(sequence), _listed(pair), is_pretokenized, add_special_tokens,
                                              keep_stages=False))

    def encode_batch(self, input: list[Any], is_pretokenized: bool = False,  # noqa: A002 - HF's name
                     add_special_tokens: bool = True) -> list[Encoding]:
        return [Encoding(e) for e in self._engine().encode_batch(_listed(input), is_pretokenized, add_special_tokens)]

    encode_batch_fast = encode_batch

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return self._engine().decode(ids, skip_special_tokens=skip_special_tokens)

    def decode_batch(self, sequences: list[list[int]], skip_special_tokens: bool = True) -> list[str]:
        return [self.decode(ids, skip_special_tokens) for ids in sequences]

    def post_process(self, encoding: Encoding, pair: Encoding | None = None, add_special_tokens: bool = True) -> Encoding:
        return Encoding(self._engine().post_process(encoding._enc, None if pair is None else pair._enc,
                                                    add_special_tokens))

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return self._engine().num_special_tokens_to_add(is_pair)

    # ------------------------------------------------------------------ truncation / padding
    def enable_truncation(self, max_length: int, stride: int = 0, strategy: str = "longest_first",
                          direction: str = "right") -> None:
        self._engine().enable_truncation(max_length, stride, strategy, direction)  # tokviz checks them
        self._truncation = {"max_length": max_length, "stride": stride, "strategy": strategy, "direction": direction}

    def no_truncation(self) -> None:
        self._engine().no_truncation()
        self._truncation = None

    @property
    def truncation(self) -> dict[str, Any] | None:
        return self._engine().truncation

    def enable_padding(self, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0, pad_token: str = "[PAD]",
                       length: int | None = None, pad_to_multiple_of: int | None = None) -> None:
        self._engine().enable_padding(direction, pad_id, pad_type_id, pad_token, length, pad_to_multiple_of)
        self._padding = {"direction": direction, "pad_id": pad_id, "pad_type_id": pad_type_id, "pad_token": pad_token,
                         "length": length, "pad_to_multiple_of": pad_to_multiple_of}

    def no_padding(self) -> None:
        self._engine().no_padding()
        self._padding = None

    @property
    def padding(self) -> dict[str, Any] | None:
        return self._engine().padding


from .implementations import BertWordPieceTokenizer  # noqa: E402 - it builds on Tokenizer
