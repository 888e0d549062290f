"""CLIP's ``bpe_simple_vocab_16e6.txt.gz``: a merges list from which the vocabulary is derived.

OpenAI's CLIP (``clip/simple_tokenizer.py``) and open_clip ship only merges. Their tokenizer:

* vocabulary: the 256 byte-level characters (in GPT-2's ``bytes_to_unicode`` order: the
  printable bytes first), the same 256 with ``</w>``, the concatenation of each merge, then
  ``<|startoftext|>`` and ``<|endoftext|>`` (49,408 ids for the 16e6 file);
* merges: lines 1 to 48,894 of the file (``merges[1:49152-256-2+1]``; line 0 is a header);
* cleaning, in order: ``ftfy.fix_text``, ``html.unescape`` twice, ``str.strip``, every run of
  ``\\s`` (the ``regex`` module's) to one space, ``str.strip``, ``str.lower`` (Python's, with
  its final-sigma rule);
* the pattern ``<|startoftext|>|<|endoftext|>|'s|'t|'re|'ve|'m|'ll|'d|[\\p{L}]+|[\\p{N}]|
  [^\\s\\p{L}\\p{N}]+`` (case-insensitive), whose matches are the words; each word's UTF-8 bytes
  in the byte-level alphabet get ``</w>`` on their last character and are merged by rank;
* decoding joins the tokens, maps the alphabet back to bytes (UTF-8, errors replaced) and
  turns every ``</w>`` into a space.

Here that is: a `CLIPClean` normalizer (the cleaning, aligned to the original text), a Split
keeping the pattern's matches, ByteLevel, BPE with ``end_of_word_suffix="</w>"``, the two
specials as special added tokens matched in the cleaned text, ``<|startoftext|>`` ...
``<|endoftext|>`` around a sequence for ``add_special_tokens`` (as ``clip.tokenize`` does, without
its padding to 77), and a ByteLevel + Replace decoder.

One difference from ``simple_tokenizer.py`` remains, in a corner its own pattern creates: a
special literal glued after punctuation (``"!<|endoftext|>"``) is there part of the punctuation
run (``"!<|"``, ``"endoftext"``, ``"|>"``), while here (and in HF's CLIP tokenizer.json) the
special token is matched first.

``ftfy`` is a dependency of tokviz for this cleaning: without it the ids differ from CLIP's on
any text ftfy changes (curly quotes, mojibake, fullwidth letters, ligatures ...).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Any

import regex

from ..engine.added_tokens import AddedToken
from ..engine.byte_alphabet import BYTE_TO_CHAR
from ..engine.errors import TokvizFormatError
from ..engine.normalizers import Normalizer
from ..engine.normalizers.basic import old_alignment, replace_matches, splice
from ..engine.normalizers.unicode import NFC
from ..engine.patterns import HFRegex, trust_patterns
from ..engine.text import NormalizedText
from ..engine.tokenizer import Tokenizer, TokenizerConfig

__all__ = ["CLIPClean", "looks_like_clip_merges", "load_clip_merges", "CLIP_PATTERN", "clip_vocabulary"]

SOT, EOT = "<|startoftext|>", "<|endoftext|>"
#: simple_tokenizer.py's pattern without its two special alternatives (those are added tokens)
CLIP_PATTERN = r"""(?i)'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
_N_MERGES = 49152 - 256 - 2  # simple_tokenizer.py's merges[1:49152-256-2+1]
# simple_tokenizer.py's whitespace_clean: the `regex` module's \s (not Oniguruma's: no native
# scanner); one run of spaces is linear to match, so it needs no timeout
trust_patterns(r"\s+")
_SPACES = HFRegex(regex.compile(r"\s+"))
_NFC = NFC()
_PRINTABLE = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]


# ---------------------------------------------------------------------------- the cleaning
def _char_opcodes(a: str, b: str) -> list[tuple[str, int, int, int, int]]:
    """Character-level edit blocks from ``a`` to ``b``: lines first (so a long text with a few
    changed lines costs little), then characters inside the lines that differ."""
    out: list[tuple[str, int, int, int, int]] = []
    la, lb = a.splitlines(keepends=True), b.splitlines(keepends=True)
    pa = [0, *_ends(la)]
    pb = [0, *_ends(lb)]
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, la, lb, autojunk=False).get_opcodes():
        ca, cb = pa[i1], pb[j1]
        sa, sb = a[ca : pa[i2]], b[cb : pb[j2]]
        if tag == "equal":
            out.append(("equal", ca, ca + len(sa), cb, cb + len(sb)))
        elif len(sa) * len(sb) > 4_000_000:  # a rewritten block too big to diff by character
            out.append(("replace", ca, ca + len(sa), cb, cb + len(sb)))
        else:
            for t, x1, x2, y1, y2 in SequenceMatcher(None, sa, sb, autojunk=False).get_opcodes():
                out.append((t, ca + x1, ca + x2, cb + y1, cb + y2))
    return out


def _ends(lines: list[str]) -> list[int]:
    total, out = 0, []
    for ln in lines:
        total += len(ln)
        out.append(total)
    return out


def _rewrite(nt: NormalizedText, new: str) -> NormalizedText:
    """``nt`` with its text replaced by ``new``, aligned by a character diff: kept characters keep
    their span, a replaced block spans the characters it replaced, an insertion the character
    before it."""
    if new == nt.text:
        return nt
    starts, ends = old_alignment(nt)
    edits = []
    for tag, i1, i2, j1, j2 in _char_opcodes(nt.text, new):
        if tag == "equal":
            continue
        if i2 > i1:
            span = (starts[i1], ends[i2 - 1])
        elif i1 > 0:
            span = (ends[i1 - 1], ends[i1 - 1])
        else:
            span = (nt.orig_start, nt.orig_start)
        n = j2 - j1
        edits.append((i1, i2, new[j1:j2], [span[0]] * n, [span[1]] * n))
    return splice(nt, edits)


def _strip(nt: NormalizedText) -> NormalizedText:
    """``str.strip`` (Python's ``isspace``, which also counts U+001C..U+001F)."""
    s = nt.text
    left = len(s) - len(s.lstrip())
    right = len(s.rstrip())
    if left == 0 and right == len(s):
        return nt
    edits = [(0, left, "", (), ())] if left else []
    if right < len(s) and right >= left:
        edits.append((right, len(s), "", (), ()))
    return splice(nt, edits)


def _lower(nt: NormalizedText) -> NormalizedText:
    """``str.lower`` of the whole text (final sigma decided in context); a character lowering
    to several shares its span with them."""
    s = nt.text
    low = s.lower()
    if low == s:
        return nt
    if len(low) == len(s):
        return nt.with_text(low)
    starts, ends = old_alignment(nt)
    new_starts: list[int] = []
    new_ends: list[int] = []
    for i, c in enumerate(s):
        k = len(c.lower())
        new_starts += [starts[i]] * k
        new_ends += [ends[i]] * k
    return NormalizedText(nt.original, low, nt.orig_start, nt.orig_end, new_starts, new_ends)


class CLIPClean(Normalizer):
    """CLIP's ``basic_clean`` + ``whitespace_clean`` + ``lower`` (see the module docstring)."""

    type_name = "CLIPClean"

    def normalize(self, text: NormalizedText) -> NormalizedText:
        import ftfy

        # ftfy ends with NFC: the engine's NFC aligns the composed characters as HF does, the
        # diff then aligns whatever else ftfy changed (the text is ftfy's, computed on the input)
        nt = _rewrite(_NFC.normalize(text), ftfy.fix_text(text.text))
        if "&" in nt.text:
            nt = _rewrite(nt, html.unescape(html.unescape(nt.text)))
        nt = _strip(nt)
        nt = replace_matches(nt, _SPACES, " ")
        nt = _strip(nt)
        return _lower(nt)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type_name, "steps": ["ftfy.fix_text", "html.unescape x2", "strip", r"\s+ -> ' '", "strip",
                                                  "lower"]}

    def __repr__(self) -> str:
        return "CLIPClean()"


# ---------------------------------------------------------------------------- the file
def looks_like_clip_merges(head: str, n_lines: int) -> bool:
    """A merges list in CLIP's form (``head``: the start of the text, ``n_lines``: its line
    count): its header names ``bpe_simple_vocab`` (the 16e6 file's does), or a ``#version``
    header, ``</w>`` word ends (GPT-2's merges.txt has none) and at least the 48,894 merges CLIP
    reads (GPT-1's merges.txt, with ``</w>`` too, has 40,000 and needs its vocab.json)."""
    first = head.split("\n", 1)[0]
    if "bpe_simple_vocab" in first and "#version" in first:
        return True
    return first.startswith("#version") and "</w>" in head[:65536] and n_lines > _N_MERGES


def clip_vocabulary(merges: Sequence[tuple[str, str]]) -> dict[str, int]:
    """simple_tokenizer.py's vocabulary for ``merges`` (a later duplicate keeps the later id)."""
    alphabet = [BYTE_TO_CHAR[b] for b in _PRINTABLE] + [BYTE_TO_CHAR[b] for b in range(256) if b not in _PRINTABLE]
    tokens = [*alphabet, *(c + "</w>" for c in alphabet), *(a + b for a, b in merges), SOT, EOT]
    return {t: i for i, t in enumerate(tokens)}


def _parse(text: str, source: str) -> list[tuple[str, str]]:
    lines = text.split("\n")[1 : _N_MERGES + 1]
    merges = []
    for k, line in enumerate(lines, 2):
        parts = line.split()
        if len(parts) != 2:
            if not line.strip() and k > len(lines):
                break
            raise TokvizFormatError(f"expected 'left right', got {line[:60]!r}", source=source, where=f"line {k}")
        merges.append((parts[0], parts[1]))
    return merges


def load_clip_merges(text: str, *, source: str) -> Tokenizer:
    """Build CLIP's tokenizer from the text of its merges file (see the module docstring).

    >>> tok = load_clip_merges(gzip.open("bpe_simple_vocab_16e6.txt.gz").read().decode(), source="x")  # doctest: +SKIP
    >>> tok.encode("a photo of a cat").ids   # doctest: +SKIP
    [49406, 320, 1125, 539, 320, 2368, 49407]
    """
    from ..engine.decoders import decoder_from_json
    from ..engine.models import model_from_json
    from ..engine.pre_tokenizers import pre_tokenizer_from_json
    from .post_processing import around_processor

    merges = _parse(text, source)
    if not merges:
        raise TokvizFormatError("no merges after the header line", source=source)
    vocab = clip_vocabulary(merges)
    model = model_from_json(
        {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "", "end_of_word_suffix": "</w>",
         "fuse_unk": False, "byte_fallback": False, "ignore_merges": False, "vocab": vocab,
         "merges": [f"{a} {b}" for a, b in merges]},
        where="model",
    )
    pre = pre_tokenizer_from_json(
        {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": CLIP_PATTERN}, "behavior": "Removed", "invert": True},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        ]},
        where="pre_tokenizer",
    )
    decoder = decoder_from_json(
        {"type": "Sequence", "decoders": [
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            {"type": "Replace", "pattern": {"String": "</w>"}, "content": " "},
        ]},
        where="decoder",
    )
    ids = {SOT: vocab[SOT], EOT: vocab[EOT]}
    tok = Tokenizer(
        model,
        normalizer=CLIPClean(),
        pre_tokenizer=pre,
        post_processor=around_processor([(ids[SOT], SOT)], [(ids[EOT], EOT)], where="post_processor"),
        decoder=decoder,
        added_tokens=[AddedToken(t, i, special=True, normalized=True) for t, i in ids.items()],
        name=_name(source),
        source=source,
        config=TokenizerConfig(
            bos_token=SOT, eos_token=EOT, unk_token=EOT, pad_token=EOT, add_bos_token=True, add_eos_token=True,
            extra={"format": "clip-merges", "merges": len(merges), "derived_vocab": len(vocab)},
        ),
    )
    return tok


def _name(source: str) -> str:
    name = source.replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in (".gz", ".txt"):
        name = name.removesuffix(suffix)
    return name

