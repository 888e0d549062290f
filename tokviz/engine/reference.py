"""The reference encode path: the pipeline written plainly, one chunk and one token at a time.

`Tokenizer.encode` has one production path, built for speed (chunk caches, column passes,
kernels from the optional native core). This module is the other path: what an encode *means*,
with no cache and no shortcut, in the order HF's ``encode_single_sequence`` runs:

1. added tokens are cut out of the text and every other piece is normalized
   (`AddedVocabulary.extract`);
2. each piece is pre-tokenized into chunks (`PreTokenizer.pre_tokenize`);
3. the model tokenizes each chunk (`Model.tokenize_traced`: tokens plus their traces);
4. a token's offsets are its chunk's ``original_span`` of the token's range, its byte offsets
   the UTF-8 positions of those (`OffsetMap`), except where the chunk holds the very bytes of
   its original text (byte-level proxies): there a token gets exactly the bytes it holds;
5. the post-processor.

It serves ``encode(..., trace=True)`` (traces are data the token card shows) and is the oracle
of ``tests/engine/test_paths.py``, which runs both paths on every bundle and every
pre-tokenizer type. It is slow on purpose: keep it short and obvious rather than fast.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .byte_alphabet import proxy_to_bytes
from .encoding import Encoding, PreToken, Segment, Stages, Trace
from .pipeline import AllowedSpecial, Pipeline
from .text import NormalizedText, OffsetMap, check_text

__all__ = ["BYTE_PIECES", "encode", "byte_piece_span", "chunk_offsets", "holds_original"]


def encode(
    tok: Pipeline,
    text: str,
    *,
    add_special_tokens: bool = True,
    allowed_special: AllowedSpecial = None,
    post_process: bool = True,
) -> Encoding:
    """``encode(text, trace=True)`` of the tokenizer whose `Pipeline` is ``tok``, computed the
    plain way (every token has its trace). ``post_process=False``: the model's tokens alone.

    >>> from tokviz.engine.models.wordlevel import WordLevel
    >>> from tokviz.engine.tokenizer import Tokenizer
    >>> encode(Tokenizer(WordLevel({"ab": 0}, unk_token="ab")).pipeline, "ab").ids
    [0]
    """
    check_text(text)
    normalize = tok.normalizer.normalize if tok.normalizer is not None else None
    pieces = tok.added.extract(text, normalize, skip_ids=tok.skip_ids(allowed_special))
    bytes_of = OffsetMap(text).to_utf8
    ids: list[int] = []
    tokens: list[str] = []
    offsets: list[tuple[int, int]] = []
    byte_offsets: list[tuple[int, int]] = []
    specials: list[int] = []
    word_ids: list[int | None] = []
    traces: list[Trace | None] = []
    segments: list[Segment] = []
    pre_tokens: list[PreToken] = []
    for word, (piece, added_id) in enumerate(_words(tok, pieces, segments)):
        if added_id is not None:
            added = tok.added.by_id[added_id]
            s, e = piece.original_span(0, len(piece.text))
            if added.special:
                specials.append(len(ids))
            ids.append(added_id)
            tokens.append(piece.text)  # HF: the matched text (with any lstrip/rstrip spaces)
            offsets.append((s, e))
            byte_offsets.append((bytes_of(s), bytes_of(e)))
            word_ids.append(word)
            traces.append(None)
            continue
        pre_tokens.append(PreToken(piece.text, piece.orig_start, piece.orig_end))
        spans, chunk_traces = tok.model.tokenize_traced(piece.text)
        chunk_ids = [i for i, _, _ in spans]
        values = tok.model.token_values(piece.text, spans, [tok.model.id_to_token(i) for i in chunk_ids])
        char_spans, byte_spans = chunk_offsets(piece, spans, values, text, bytes_of, byte_level=tok.byte_level)
        ids += chunk_ids
        tokens += values
        offsets += char_spans
        byte_offsets += byte_spans
        word_ids += [word] * len(spans)
        traces += chunk_traces
    mask = [0] * len(ids)
    for k in specials:
        mask[k] = 1
    enc = Encoding.of_lists(
        text, ids, tokens, offsets, byte_offsets, mask, None, word_ids,
        stages=Stages(text, tuple(segments), tuple(pre_tokens)), traces=traces, source=tok,
    )
    if post_process and tok.post_processor is not None:
        enc = tok.post_processor.process(enc, add_special_tokens=add_special_tokens)
    return enc


def _words(tok: Pipeline, pieces: list, segments: list[Segment]) -> list[tuple[NormalizedText, int | None]]:
    """Every chunk of every ordinary piece, and every added token, in text order (one word id
    each); records the segments on the way."""
    out: list[tuple[NormalizedText, int | None]] = []
    for piece, added_id in pieces:
        if added_id is not None:
            segments.append(Segment(piece.orig_start, piece.orig_end, piece, added_id, tok.added.by_id[added_id].special))
            out.append((piece, added_id))
            continue
        segments.append(Segment(piece.orig_start, piece.orig_end, piece))
        chunks = tok.pre_tokenizer.pre_tokenize([piece]) if tok.pre_tokenizer is not None else [piece]
        out += [(chunk, None) for chunk in chunks]
    return out


def chunk_offsets(
    chunk: NormalizedText,
    spans: Sequence[tuple[int, int, int]],
    values: Sequence[str],
    text: str,
    bytes_of: Callable[[int], int],
    *,
    byte_level: bool,
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Offsets and byte offsets of one chunk's tokens (``spans``: the model's ``(id, start,
    end)`` in the chunk's text): the chunk's ``original_span`` of each token, and its bytes, which
    are its very bytes when the chunk holds the bytes of its original text (byte-level proxies).
    The production path uses this for the chunks its column passes do not cover."""
    char_spans = [chunk.original_span(s, e) for _, s, e in spans]
    if byte_level and holds_original(chunk.text, text[chunk.orig_start : chunk.orig_end], byte_level=True):
        first = bytes_of(chunk.orig_start)
        return char_spans, [(first + s, first + e) for _, s, e in spans]
    return char_spans, _byte_spans(char_spans, values, text, bytes_of)


def holds_original(chunk_text: str, orig: str, *, byte_level: bool) -> bool:
    """True when a chunk is an exact copy of its original text ``orig``: the same text, or for
    a byte-level chunk the proxies of its very UTF-8 bytes (then a token's byte span is its span
    in the chunk)."""
    if not byte_level:
        return chunk_text == orig
    try:
        return proxy_to_bytes(chunk_text) == orig.encode("utf-8")
    except ValueError:  # not all proxies (a normalizer or pre-tokenizer changed the chunk)
        return False


def _byte_spans(
    char_spans: list[tuple[int, int]], values: Sequence[str], text: str, bytes_of: Callable[[int], int]
) -> list[tuple[int, int]]:
    """UTF-8 spans of tokens from their char spans; the byte-fallback pieces ``<0xNN>`` of one
    character get one byte each, in order, instead of the whole character."""
    out: list[tuple[int, int]] = []
    cursor = -1  # byte end of the previous token
    for (cs, ce), value in zip(char_spans, values):
        bs, be = bytes_of(cs), bytes_of(ce)
        if value in BYTE_PIECES:
            if cs == ce and cs < len(text):
                # SentencePiece gives the leading byte pieces of a character an empty span at
                # its start: their bytes are still that character's
                be = bs + len(text[cs].encode("utf-8"))
            bs, be = byte_piece_span(bs, be, cursor)
        out.append((bs, be))
        cursor = be
    return out


def byte_piece_span(bs: int, be: int, cursor: int) -> tuple[int, int]:
    """The bytes of a byte-fallback piece whose character has the bytes ``bs..be``: the next
    one after ``cursor`` (the byte end of the token before it in its chunk, -1 for none)."""
    bs = cursor if bs <= cursor < be else bs
    return bs, (min(bs + 1, be) if be > bs else bs)


#: Every byte-fallback piece ``<0xNN>`` (upper-case hex, as SentencePiece and HF write them).
BYTE_PIECES = frozenset(f"<0x{b:02X}>" for b in range(256))
