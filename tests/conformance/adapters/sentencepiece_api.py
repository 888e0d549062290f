"""``sentencepiece.SentencePieceProcessor`` over tokviz, for the vendored sentencepiece tests: calls
translated to `tokviz.io.sentencepiece.load_sentencepiece_model` and
`tokviz.engine.sentencepiece_options.SentencePieceEncoder`; no answer is computed here.

Not offered (tests listed in tests/conformance/README.md): training (``SentencePieceTrainer``),
the protobuf outputs (``out_type="serialized_proto"``/``"immutable_proto"``), changing the
normalizer spec at load time, pickling, threads.
"""

from __future__ import annotations

import os
from typing import Any

from support import ModuleCache

from tokviz.engine.models._spm import PieceType
from tokviz.engine.sentencepiece_options import SentencePieceEncoder
from tokviz.engine.text import NormalizedText
from tokviz.io.sentencepiece import load_sentencepiece_model

__all__ = ["SentencePieceProcessor", "__version__"]
__version__ = "tokviz"


_LOADED = ModuleCache()


def _each(x: Any, f: Any) -> Any:
    return [f(v) for v in x] if isinstance(x, list) else f(x)


class SentencePieceProcessor:
    def __init__(self, model_file: str | None = None, model_proto: bytes | None = None, out_type: type = int,
                 add_bos: bool = False, add_eos: bool = False, reverse: bool = False, emit_unk_piece: bool = False,
                 enable_sampling: bool = False, nbest_size: int = -1, alpha: float = 0.1,
                 num_threads: int = -1) -> None:
        self._defaults = {"out_type": out_type, "add_bos": add_bos, "add_eos": add_eos, "reverse": reverse,
                          "emit_unk_piece": emit_unk_piece, "enable_sampling": enable_sampling,
                          "nbest_size": nbest_size, "alpha": alpha}
        self._sp: SentencePieceEncoder | None = None
        if model_file or model_proto:
            self.Load(model_file=model_file, model_proto=model_proto)

    # ------------------------------------------------------------------ loading
    def Load(self, model_file: str | None = None, model_proto: bytes | None = None) -> bool:  # noqa: N802
        if model_proto is None:
            with open(os.fspath(model_file), "rb") as f:  # type: ignore[arg-type]
                model_proto = f.read()
        self._proto = model_proto
        if model_proto not in _LOADED:  # the suite loads the same two files in every setUp
            _LOADED[model_proto] = SentencePieceEncoder(
                load_sentencepiece_model(model_proto, source=str(model_file or "<proto>")))
        self._sp = _LOADED[model_proto]
        return True

    def LoadFromSerializedProto(self, serialized: bytes) -> bool:  # noqa: N802
        return self.Load(model_proto=serialized)

    def LoadFromFile(self, arg: str) -> bool:  # noqa: N802
        return self.Load(model_file=arg)

    def serialized_model_proto(self) -> bytes:
        return self._proto

    @property
    def _model(self) -> Any:
        return self._sp.tokenizer.model  # type: ignore[union-attr]

    # ------------------------------------------------------------------ vocabulary
    def GetPieceSize(self) -> int:  # noqa: N802
        return len(self._model.pieces)

    def PieceToId(self, piece: Any) -> Any:  # noqa: N802
        def one(p: str) -> int:
            i = self._model.token_to_id(p)
            return self._sp.unk_id if i is None else i  # type: ignore[union-attr]
        return _each(piece, one)

    def IdToPiece(self, id: Any) -> Any:  # noqa: A002, N802
        def one(i: int) -> str:
            if not 0 <= i < self.GetPieceSize():
                raise IndexError("piece id is out of range.")
            return self._model.pieces[i]
        return _each(id, one)

    def GetScore(self, id: Any) -> Any:  # noqa: A002, N802
        return _each(id, lambda i: self._model.scores[i])

    def _is(self, id: Any, kind: int) -> Any:  # noqa: A002
        return _each(id, lambda i: self._model.piece_types[i] == kind)

    def IsUnknown(self, id: Any) -> Any:  # noqa: A002, N802
        return self._is(id, PieceType.UNKNOWN)

    def IsControl(self, id: Any) -> Any:  # noqa: A002, N802
        return self._is(id, PieceType.CONTROL)

    def IsUnused(self, id: Any) -> Any:  # noqa: A002, N802
        return self._is(id, PieceType.UNUSED)

    def IsByte(self, id: Any) -> Any:  # noqa: A002, N802
        return self._is(id, PieceType.BYTE)

    def unk_id(self) -> int:
        return self._sp.unk_id  # type: ignore[union-attr]

    def bos_id(self) -> int:
        return self._sp.bos_id  # type: ignore[union-attr]

    def eos_id(self) -> int:
        return self._sp.eos_id  # type: ignore[union-attr]

    def pad_id(self) -> int:
        return self._sp.tokenizer.config.extra["pad_id"]  # type: ignore[union-attr]

    # ------------------------------------------------------------------ encode
    def _opts(self, **given: Any) -> dict[str, Any]:
        return {k: (self._defaults[k] if v is None else v) for k, v in given.items()}

    def Encode(self, input: Any, out_type: Any = None, add_bos: Any = None, add_eos: Any = None,  # noqa: A002, N802
               reverse: Any = None, emit_unk_piece: Any = None, enable_sampling: Any = None, nbest_size: Any = None,
               alpha: Any = None, num_threads: Any = None) -> Any:
        o = self._opts(out_type=out_type, add_bos=add_bos, add_eos=add_eos, reverse=reverse,
                       emit_unk_piece=emit_unk_piece, enable_sampling=enable_sampling, nbest_size=nbest_size,
                       alpha=alpha)
        if o["out_type"] not in (int, str):
            raise NotImplementedError(f"out_type {o['out_type']!r}: protobuf outputs are not offered")
        return _each(input, lambda t: self._sp.encode(t, **o))  # type: ignore[union-attr]

    def EncodeAsIds(self, input: Any, **kw: Any) -> Any:  # noqa: A002, N802
        return self.Encode(input, out_type=int, **kw)

    def EncodeAsPieces(self, input: Any, **kw: Any) -> Any:  # noqa: A002, N802
        return self.Encode(input, out_type=str, **kw)

    def NBestEncode(self, input: Any, out_type: Any = None, add_bos: Any = None, add_eos: Any = None,  # noqa: A002, N802
                    reverse: Any = None, emit_unk_piece: Any = None, nbest_size: Any = None) -> Any:
        o = self._opts(out_type=out_type, add_bos=add_bos, add_eos=add_eos, reverse=reverse,
                       emit_unk_piece=emit_unk_piece)
        n = -1 if nbest_size is None else nbest_size
        return _each(input, lambda t: self._sp.nbest_encode(t, nbest_size=n, **o))  # type: ignore[union-attr]

    def NBestEncodeAsIds(self, input: Any, nbest_size: Any = None, **kw: Any) -> Any:  # noqa: A002, N802
        return self.NBestEncode(input, out_type=int, nbest_size=nbest_size, **kw)

    def NBestEncodeAsPieces(self, input: Any, nbest_size: Any = None, **kw: Any) -> Any:  # noqa: A002, N802
        return self.NBestEncode(input, out_type=str, nbest_size=nbest_size, **kw)

    def SampleEncodeAsIds(self, input: Any, nbest_size: Any = None, alpha: Any = None, **kw: Any) -> Any:  # noqa: A002, N802
        return self.Encode(input, out_type=int, enable_sampling=True, nbest_size=nbest_size, alpha=alpha, **kw)

    def SampleEncodeAsPieces(self, input: Any, nbest_size: Any = None, alpha: Any = None, **kw: Any) -> Any:  # noqa: A002, N802
        return self.Encode(input, out_type=str, enable_sampling=True, nbest_size=nbest_size, alpha=alpha, **kw)

    def SampleEncodeAndScore(self, input: Any, out_type: Any = None, add_bos: Any = None, add_eos: Any = None,  # noqa: A002, N802
                             reverse: Any = None, emit_unk_piece: Any = None, num_samples: Any = None,
                             alpha: Any = None, wor: Any = None, include_best: Any = None) -> Any:
        o = self._opts(out_type=out_type, add_bos=add_bos, add_eos=add_eos, reverse=reverse,
                       emit_unk_piece=emit_unk_piece)
        kw = {"num_samples": 1 if num_samples is None else num_samples, "alpha": 1.0 if alpha is None else alpha,
              "wor": bool(wor), "include_best": bool(include_best)}
        try:
            return _each(input, lambda t: self._sp.sample_encode_and_score(t, **kw, **o))  # type: ignore[union-attr]
        except ValueError as exc:  # sentencepiece raises RuntimeError for these
            raise RuntimeError(str(exc)) from None

    def CalculateEntropy(self, input: Any, alpha: float, num_threads: Any = None) -> Any:  # noqa: A002, N802
        return _each(input, lambda t: self._sp.calculate_entropy(t, alpha=alpha))  # type: ignore[union-attr]

    def Normalize(self, input: Any, with_offsets: Any = None) -> Any:  # noqa: A002, N802
        norm = self._sp.tokenizer.normalizer  # type: ignore[union-attr]
        return _each(input, lambda t: norm.normalize(NormalizedText.identity(t)).text)

    # ------------------------------------------------------------------ decode
    def Decode(self, input: Any, out_type: Any = str, num_threads: Any = None) -> Any:  # noqa: A002, N802
        if out_type is not str:
            raise NotImplementedError("protobuf outputs are not offered")
        if isinstance(input, list) and input and isinstance(input[0], list):
            return [self.Decode(x) for x in input]
        if isinstance(input, (int, str)):
            input = [input]  # noqa: A001
        tok = self._sp.tokenizer  # type: ignore[union-attr]
        if input and isinstance(input[0], str):
            return tok.decoder.decode(list(input))
        return tok.decode(list(input))

    DecodeIds = Decode
    DecodePieces = Decode

    def __len__(self) -> int:
        return self.GetPieceSize()

    def __getitem__(self, piece: str) -> int:
        return self.PieceToId(piece)


def _snake(name: str) -> str:
    out = []
    for i, c in enumerate(name):
        if c.isupper() and i and not name[i - 1].isupper():
            out.append("_")
        out.append(c.lower())
    return "".join(out)


for _n in [n for n in vars(SentencePieceProcessor) if n[:1].isupper()]:
    setattr(SentencePieceProcessor, _snake(_n), getattr(SentencePieceProcessor, _n))
SentencePieceProcessor.load = SentencePieceProcessor.Load  # type: ignore[attr-defined]
SentencePieceProcessor.piece_size = SentencePieceProcessor.GetPieceSize  # type: ignore[attr-defined]
SentencePieceProcessor.vocab_size = SentencePieceProcessor.GetPieceSize  # type: ignore[attr-defined]
