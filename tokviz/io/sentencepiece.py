"""SentencePiece ``.model`` loader: a serialized ``ModelProto`` -> a `Tokenizer`.

The protobuf schema is tokviz's own (`sentencepiece_model.proto`, same field numbers as
SentencePiece's). The tokenizer reproduces ``SentencePieceProcessor.encode`` / ``decode``:

* normalizer: `SentencePieceNormalizer` (charsmap + whitespace rules + user-defined symbols kept
  verbatim), with SentencePiece's piece spans as alignment;
* no pre-tokenizer (SentencePiece segments the whole normalized text; the models cut it
  internally only where that cannot change the result);
* model: `Unigram` (``sentencepiece=True``) or `SentencePieceBPE`;
* no post-processor: SentencePiece's default encode adds no BOS/EOS; the ids are recorded in
  `TokenizerConfig` (``bos_token``/``eos_token``, ``extra["bos_id"]`` ...);
* decoder: `SentencePieceDecoder`.

WORD and CHAR models are not supported (an error says so).
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError

from ..engine.decoders.sentencepiece import SentencePieceDecoder
from ..engine.errors import TokvizFormatError
from ..engine.models._spm import PieceType
from ..engine.models.sentencepiece_bpe import SentencePieceBPE
from ..engine.models.unigram import Unigram
from ..engine.normalizers.precompiled import CharsMap, SentencePieceNormalizer
from ..engine.tokenizer import Tokenizer, TokenizerConfig
from . import sentencepiece_model_pb2 as pb

__all__ = ["load_sentencepiece_model", "parse_model_proto"]

_MODEL_TYPES = {1: "UNIGRAM", 2: "BPE", 3: "WORD", 4: "CHAR"}


def parse_model_proto(data: bytes, *, source: str) -> Any:
    """Parse and sanity-check a ``ModelProto`` (raises `TokvizFormatError`)."""
    proto = pb.ModelProto()
    try:
        proto.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise TokvizFormatError(
            f"not a SentencePiece model: protobuf ModelProto does not parse ({exc}); truncated or another file?",
            source=source,
        ) from None
    if len(proto.pieces) == 0:
        raise TokvizFormatError("no pieces: this protobuf message is not a SentencePiece ModelProto", source=source)
    if not proto.HasField("trainer_spec") and not proto.HasField("normalizer_spec"):
        raise TokvizFormatError("no trainer_spec or normalizer_spec: not a SentencePiece ModelProto", source=source)
    for i, p in enumerate(proto.pieces):
        if not p.HasField("piece") or not p.piece:
            raise TokvizFormatError(f"piece {i} is empty", source=source, where=f"pieces[{i}]")
    # proto2 strings that are not UTF-8 arrive as bytes; the pieces are checked by the vocab
    for where, value in (("trainer_spec.unk_surface", proto.trainer_spec.unk_surface),
                         ("normalizer_spec.name", proto.normalizer_spec.name)):
        if not isinstance(value, str):
            raise TokvizFormatError(f"not valid UTF-8 ({bytes(value)[:20]!r})", source=source, where=where)
    return proto


def load_sentencepiece_model(data: bytes, *, source: str) -> Tokenizer:
    """Build a `Tokenizer` from the bytes of a SentencePiece ``.model`` file.

    >>> tok = load_sentencepiece_model(open("tokenizer.model", "rb").read(), source="tokenizer.model")  # doctest: +SKIP
    >>> tok.encode("Hello world").tokens                                                          # doctest: +SKIP
    ['▁Hello', '▁world']
    """
    proto = parse_model_proto(data, source=source)
    ts = proto.trainer_spec
    ns = proto.normalizer_spec
    model_type = _MODEL_TYPES.get(ts.model_type, str(ts.model_type))
    pieces = [p.piece for p in proto.pieces]
    scores = [p.score for p in proto.pieces]
    types = [int(p.type) for p in proto.pieces]
    byte_fallback = ts.byte_fallback

    if model_type == "UNIGRAM":
        model: Unigram | SentencePieceBPE = Unigram(
            list(zip(pieces, scores)), piece_types=types, byte_fallback=byte_fallback,
            sentencepiece=True, source=source,
        )
        spm = model.spm
        assert spm is not None
    elif model_type == "BPE":
        model = SentencePieceBPE(pieces, scores, types, byte_fallback=byte_fallback, source=source)
        spm = model.spm
    else:
        raise TokvizFormatError(f"SentencePiece model_type {model_type} is not supported (only UNIGRAM and BPE)",
                                source=source, where="trainer_spec.model_type")

    charsmap = None
    if ns.precompiled_charsmap:
        charsmap = CharsMap.from_bytes(ns.precompiled_charsmap, source=source)
    elif ns.name not in ("", "identity") and ns.normalization_rule_tsv:
        raise TokvizFormatError(
            f"normalizer {ns.name!r} has rules only as TSV (normalization_rule_tsv), which is not supported",
            source=source, where="normalizer_spec",
        )
    normalizer = SentencePieceNormalizer(
        charsmap,
        add_dummy_prefix=ns.add_dummy_prefix,
        remove_extra_whitespaces=ns.remove_extra_whitespaces,
        escape_whitespaces=ns.escape_whitespaces,
        treat_whitespace_as_suffix=ts.treat_whitespace_as_suffix,
        user_defined=spm.user_defined,
        name=ns.name,
    )
    decoder = SentencePieceDecoder(
        control=[pieces[i] for i in spm.control_ids],
        unk_piece=pieces[spm.unk_id],
        byte_pieces=[p for p, t in zip(pieces, types) if t == PieceType.BYTE],
        unk_surface=ts.unk_surface,
        add_dummy_prefix=ns.add_dummy_prefix,
        remove_extra_whitespaces=ns.remove_extra_whitespaces,
    )

    def piece_at(i: int) -> str | None:
        return pieces[i] if 0 <= i < len(pieces) else None

    config = TokenizerConfig(
        bos_token=piece_at(ts.bos_id),
        eos_token=piece_at(ts.eos_id),
        pad_token=piece_at(ts.pad_id),
        unk_token=pieces[spm.unk_id],
        add_bos_token=False,
        add_eos_token=False,
        extra={
            "format": "sentencepiece",
            "model_type": model_type,
            "bos_id": ts.bos_id,
            "eos_id": ts.eos_id,
            "pad_id": ts.pad_id,
            "unk_id": spm.unk_id,
            "byte_fallback": byte_fallback,
            "normalizer": ns.name,
            "add_dummy_prefix": ns.add_dummy_prefix,
            "remove_extra_whitespaces": ns.remove_extra_whitespaces,
            "escape_whitespaces": ns.escape_whitespaces,
            "treat_whitespace_as_suffix": ts.treat_whitespace_as_suffix,
            "split_digits": ts.split_digits,
            "user_defined_symbols": list(spm.user_defined),
            "control_symbols": [pieces[i] for i in sorted(spm.control_ids)],
        },
    )
    return Tokenizer(
        model,
        normalizer=normalizer,
        decoder=decoder,
        name=f"sentencepiece-{model_type.lower()}",
        source=source,
        config=config,
    )
