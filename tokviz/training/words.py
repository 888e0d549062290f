"""Corpus -> word counts, through the engine's own pipeline (`Tokenizer.stages`).

Trainers never see raw text: like HF ``Trainer.feed``, every text (line or document) is
normalized and pre-tokenized by the same components the exported tokenizer.json will use, and
the resulting pre-token strings (as the model sees them: byte-level ones in the byte alphabet)
are counted. A `PipelineSpec` keeps those components as their tokenizer.json objects, so the
trainer builds them with the engine's registries and the exporter writes them back unchanged;
`PipelineSpec.pipeline` is the engine `Tokenizer` that splits (its model is never run).

Repeated texts are split once (a corpus's lines repeat: blank lines, code); the words of a text
are added with the text's multiplicity, in the order they first appear, so the counts equal those
of splitting every text in turn. There is deliberately no splitter of its own beside the
pipeline: a second word splitter is one more thing that can disagree with it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.byte_alphabet import text_to_proxy
from .events import CancelToken, Progress

__all__ = [
    "PipelineSpec",
    "count_words",
    "byte_level_spec",
    "whitespace_spec",
    "metaspace_spec",
    "read_corpus_files",
    "corpus_lines",
]


@dataclass(frozen=True, slots=True)
class PipelineSpec:
    """The non-model parts of the trained tokenizer, as tokenizer.json objects (or None)."""

    normalizer: Mapping[str, Any] | None = None
    pre_tokenizer: Mapping[str, Any] | None = None
    post_processor: Mapping[str, Any] | None = None
    decoder: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def build(self) -> tuple[Any, Any]:
        """The engine normalizer and pre-tokenizer objects (None where the spec has none)."""
        from ..engine.normalizers import normalizer_from_json
        from ..engine.pre_tokenizers import pre_tokenizer_from_json

        norm = normalizer_from_json(dict(self.normalizer)) if self.normalizer else None
        pre = pre_tokenizer_from_json(dict(self.pre_tokenizer)) if self.pre_tokenizer else None
        return norm, pre

    def pipeline(self) -> Any:  # noqa: ANN401 - a Tokenizer
        """The engine `Tokenizer` of the spec's normalizer and pre-tokenizer (an empty WordLevel
        model, never run): its `Tokenizer.stages` are the words a trainer counts."""
        from ..engine.models.wordlevel import WordLevel
        from ..engine.tokenizer import Tokenizer

        norm, pre = self.build()
        return Tokenizer(WordLevel({}), normalizer=norm, pre_tokenizer=pre)

    def key(self) -> str:
        """The normalizer and pre-tokenizer as one string (equal specs split alike)."""
        import json

        return json.dumps([self.normalizer, self.pre_tokenizer], sort_keys=True, ensure_ascii=False)


def byte_level_spec(*, add_prefix_space: bool = False, use_regex: bool = True) -> PipelineSpec:
    """GPT-2 style: ByteLevel pre-tokenizer (GPT-2 regex + byte alphabet), ByteLevel decoder."""
    bl = {"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": True, "use_regex": use_regex}
    return PipelineSpec(
        pre_tokenizer=bl,
        post_processor={**bl, "trim_offsets": False},
        decoder={**bl},
    )


def whitespace_spec(*, decoder: Mapping[str, Any] | None = None) -> PipelineSpec:
    """Character-level training on ``\\w+|[^\\w\\s]+`` chunks (HF ``Whitespace``)."""
    return PipelineSpec(pre_tokenizer={"type": "Whitespace"}, decoder=decoder)


def metaspace_spec(*, normalizer: Mapping[str, Any] | None = None, split: bool = True) -> PipelineSpec:
    """SentencePiece style: spaces become ``▁`` (prepended to the first word)."""
    ms = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": split}
    return PipelineSpec(normalizer=normalizer, pre_tokenizer=ms, decoder=dict(ms))


def count_words(
    texts: Iterable[str],
    spec: PipelineSpec,
    *,
    total: int | None = None,
    cancel: CancelToken | None = None,
    counts: Counter[str] | None = None,
) -> Iterator[Progress]:
    """Normalize + pre-tokenize every text and add its words to ``counts`` (yields progress).

    ``total`` (number of texts, when known) makes the progress fractions meaningful. Stops
    early, leaving ``counts`` partial, when ``cancel`` is set; the caller checks the token.
    """
    if counts is None:
        counts = Counter()
    distinct: Counter[str] = Counter()
    step = 2000
    n = 0
    for text in texts:
        distinct[text] += 1
        n += 1
        if n % step == 0:
            if cancel is not None and cancel.cancelled:
                return
            yield Progress("count words", _frac(n, total), f"{n} texts")
    add_words(distinct, spec.pipeline(), counts)
    yield Progress("count words", 1.0, f"{n} texts")


def add_words(texts: Mapping[str, int], pipeline: Any, counts: Counter[str]) -> None:  # noqa: ANN401
    """Add the words of each text of ``texts`` (text -> how often it occurs) to ``counts``, in
    the order they first appear; ``pipeline``: `PipelineSpec.pipeline`.

    The words are counted as the pre-tokenizer cut them and put through the byte map (when the
    model sees them through it) once per distinct word at the end: the map is one-to-one, so
    the counts and their order are those of mapping every word of every text."""
    stages = pipeline.stages
    raw: Counter[str] = Counter()
    byte_map: bool | None = None
    for text, c in texts.items():
        if not text:
            continue
        for words, mapped in stages(text).pre_tokens.plan_texts:
            if byte_map is None:
                byte_map = mapped
            elif mapped != byte_map:  # (plans with and without the map: count as the model sees them)
                return _add_model_words(texts, stages, counts)
            if c == 1:
                raw.update(words)
            else:
                for w in words:
                    raw[w] += c
    if not byte_map:
        counts.update(raw)
        return
    for w, n in raw.items():
        counts[text_to_proxy(w)] += n
    return


def _add_model_words(texts: Mapping[str, int], stages: Callable[..., Any], counts: Counter[str]) -> None:
    for text, c in texts.items():
        if text:
            for w in stages(text).pre_tokens.texts:
                counts[w] += c


def _frac(n: int, total: int | None) -> float:
    if not total:
        return 0.0
    return min(1.0, n / total)


def corpus_lines(text: str) -> list[str]:
    r"""The texts a trainer sees: lines split after each LF, the LF (and a CR before it) kept.

    This is what HF ``Tokenizer.train(files)`` feeds its trainers (Rust's ``read_line``): a CRLF
    file gives lines ending in ``"\r\n"``, a lone CR stays inside its line, and the last line
    keeps no terminator it does not have.

    >>> corpus_lines("a\r\nb\n\nc")
    ['a\r\n', 'b\n', '\n', 'c']
    """
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def read_corpus_files(
    paths: Sequence[Any], *, progress: Callable[[int, int], None] | None = None
) -> list[str]:
    """Lines (see `corpus_lines`) of UTF-8 text files, read byte-exact and streamed by blocks.

    ``progress(done_bytes, total_bytes)`` is called as the files are read (all files together).
    A missing, empty, binary-looking (NUL bytes at the start) or non-UTF-8 file raises a
    `TokvizFormatError` naming it (and the byte offset for invalid UTF-8).
    """
    import os
    from pathlib import Path

    from ..engine.errors import TokvizFormatError
    from ..io.textfile import iter_text_blocks

    sizes = []
    for p in paths:
        try:
            sizes.append(os.path.getsize(p))
        except OSError as exc:
            raise TokvizFormatError(f"cannot read corpus: {exc.strerror or exc}", source=str(p)) from None
    total = sum(sizes)
    done = 0
    lines: list[str] = []
    for p, size in zip(paths, sizes):
        path = Path(p)
        tail = ""  # the unfinished last line of the blocks read so far
        first = True
        seen_text = False
        report = None if progress is None else (lambda d, _t, base=done: progress(base + d, total))
        for block in iter_text_blocks(path, progress=report):
            if first and "\x00" in block[:65536]:
                raise TokvizFormatError("corpus file looks binary (NUL bytes); expected UTF-8 text", source=str(path))
            first = False
            seen_text = seen_text or not block.isspace()
            parts = corpus_lines(tail + block)
            tail = "" if (not parts or parts[-1].endswith("\n")) else parts.pop()
            lines.extend(parts)
        if tail:
            lines.append(tail)
        if not seen_text:
            raise TokvizFormatError("corpus file is empty", source=str(path))
        done += size
    return lines
