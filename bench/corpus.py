"""The "mixed corpus" every bench script measures on: English, Japanese and Python source.

botchan.txt + wagahaiwa_nekodearu.txt from the shared corpora, plus about 1.5 MB of Python
source taken deterministically from the running interpreter's standard library (the ``stdlib``
directory from `sysconfig`), so the corpus exists on any machine without downloads: the
top-level ``*.py`` files in sorted name order until the budget is reached.

`heldout_corpus` is a second mix for checking speed on text nobody tuned on (``--corpus
heldout`` in the benches that take it): the shared corpora's lines shuffled together, code in
six languages and CJK/multilingual text, the last two generated from a fixed seed (see
`generated_code` and `generated_cjk`).

Run it to see what it contains::

    python bench/corpus.py
"""

from __future__ import annotations

import argparse
import os
import random
import sysconfig
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Corpus", "mixed_corpus", "heldout_corpus", "corpus_named", "files_corpus", "add_corpus_args",
           "corpus_from_args", "shared_dir", "python_source", "generated_code", "generated_cjk"]

PYTHON_BUDGET = 1_500_000  # bytes of Python source


@dataclass(frozen=True, slots=True)
class Corpus:
    """The corpus as named parts (documents) and as one text."""

    parts: tuple[tuple[str, str], ...]

    @property
    def text(self) -> str:
        return "".join(t for _, t in self.parts)

    def describe(self) -> str:
        rows = [f"{name}: {len(t):,} chars, {len(t.encode('utf-8')):,} bytes" for name, t in self.parts]
        total = self.text
        rows.append(f"total: {len(total):,} chars, {len(total.encode('utf-8')):,} bytes")
        return "\n".join(rows)


def shared_dir() -> Path:
    """../shared (or $TOKVIZ_SHARED), where the bundles and corpora are."""
    env = os.environ.get("TOKVIZ_SHARED")
    here = Path(__file__).resolve().parents[1]
    for c in ([Path(env)] if env else []) + [
        here.parent / "shared",
        here.parent.parent / "shared",
        Path("/work/shared"),
    ]:
        if (c / "corpora").is_dir():
            return c
    raise SystemExit(
        "shared corpora not found: set TOKVIZ_SHARED to the folder holding corpora/ and bundles/"
    )


def python_source(budget: int = PYTHON_BUDGET) -> str:
    """About ``budget`` bytes of the stdlib's own Python files, always the same on one Python."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    chunks: list[str] = []
    size = 0
    for path in sorted(stdlib.glob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        chunks.append(text)
        size += len(text.encode("utf-8"))
        if size >= budget:
            break
    return "".join(chunks)


def mixed_corpus(*, python_budget: int = PYTHON_BUDGET, scale: float = 1.0) -> Corpus:
    """botchan + wagahaiwa + stdlib Python; ``scale`` < 1 keeps that fraction of each part."""
    corpora = shared_dir() / "corpora"
    parts = [
        ("botchan", (corpora / "botchan.txt").read_text(encoding="utf-8")),
        ("wagahaiwa", (corpora / "wagahaiwa_nekodearu.txt").read_text(encoding="utf-8")),
        ("python-stdlib", python_source(python_budget)),
    ]
    if scale < 1.0:
        parts = [(n, t[: int(len(t) * scale)]) for n, t in parts]
    return Corpus(tuple(parts))


_WORDS = (
    "value index count result buffer token offset parser config request handler stream cache "
    "user order item state error limit cursor vector matrix tensor layer batch epoch weight node"
).split()


def _ident(rng: random.Random) -> str:
    parts = [rng.choice(_WORDS) for _ in range(rng.randint(1, 3))]
    style = rng.random()
    if style < 0.4:
        return "_".join(parts)
    if style < 0.8:
        return parts[0] + "".join(p.title() for p in parts[1:])
    return "".join(p.title() for p in parts)


def _literal(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.3:
        return str(rng.randint(0, 10 ** rng.randint(1, 12)))
    if r < 0.45:
        return f"0x{rng.getrandbits(rng.choice((8, 16, 32, 64))):X}"
    if r < 0.6:
        return f"{rng.uniform(-1e4, 1e4):.{rng.randint(1, 6)}f}"
    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 6)))
    return rng.choice(('"{}"', "'{}'", '"{}\\n"', '"{}: %d\\t"')).format(words)


def _code_line(rng: random.Random, lang: str, depth: int) -> str:
    a, b, lit = _ident(rng), _ident(rng), _literal(rng)
    comment = rng.choice(["", "", "", f"  # TODO: {rng.choice(_WORDS)} isn't {rng.choice(_WORDS)}'s",
                          "  // 修正: キャッシュを再利用する", "  /* n >= 0 && n <= 255 */"])
    if lang == "python":
        body = rng.choice([f"{a} = {b}({lit}, key={a!s})", f"if {a} is not None and {b} >= {lit}:",
                           f"return [{a} for {a} in {b} if {a}]", f"{a}.{b} += {lit}"])
        return "    " * depth + body + comment.replace("//", "#").replace("/*", "#").replace(" */", "")
    if lang in ("js", "c"):
        decl = "const" if lang == "js" else rng.choice(["int", "size_t", "uint32_t", "static char *"])
        body = rng.choice([f"{decl} {a} = {b}({lit});", f"if ({a} != {b} && {a}->{b} > {lit}) {{",
                           f"for (int i = 0; i < {a}; ++i) {b}[i] ^= {lit};", f"return {a} ? {b} : {lit};"])
        return "\t" * depth + body + comment.replace("#", "//")
    if lang == "json":
        return "  " * depth + f'"{a}": {lit if not lit.startswith(chr(39)) else chr(34) + b + chr(34)},'
    if lang == "html":
        return "  " * depth + f'<div class="{a}" data-{b}="{rng.randint(0, 999)}">{b} &amp; {a}</div>'
    return f"{a}=$(grep -c '{b}' \"${{{a}}}\") && echo \"{b}: ${a}\" >> /tmp/{b}.log"  # shell


def generated_code(size: int, *, seed: int = 20260) -> str:
    """About ``size`` characters of code-like text in Python, JavaScript, C, JSON, HTML and
    shell: identifiers in three case styles, numbers, hex, strings with escapes, comments in
    English and Japanese, indentation by spaces and tabs, a quarter of the files with CRLF."""
    rng = random.Random(seed)
    out: list[str] = []
    total = 0
    while total < size:
        lang = rng.choice(["python", "js", "c", "json", "html", "shell"])
        nl = "\r\n" if rng.random() < 0.25 else "\n"
        lines = []
        depth = 0
        for _ in range(rng.randint(20, 120)):
            lines.append(_code_line(rng, lang, depth))
            depth = max(0, min(5, depth + rng.choice((-1, 0, 0, 1))))
            if rng.random() < 0.1:
                lines.append("")
        text = nl.join(lines) + nl + nl
        out.append(text)
        total += len(text)
    return "".join(out)


_CJK_PUNCT = "，。、！？：；「」『』（）【】…・〜"
_OTHER_WORDS = ["Привет", "мир", "Ελληνικά", "καλημέρα", "مرحبا", "بالعالم", "नमस्ते", "दुनिया",
                "café", "naïve", "Zürich", "e\u0301te\u0301", "Ａｐｐｌｅ", "ＡＢＣ１２３", "iPhone", "GPT-4o"]
_EMOJI = ["😀", "👍🏽", "👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈", "❤\ufe0f", "🇯🇵"]


def _cjk_run(rng: random.Random) -> str:
    kind = rng.random()
    n = rng.randint(1, 12)
    if kind < 0.45:  # Han, weighted to the common range
        return "".join(chr(rng.choice((rng.randint(0x4E00, 0x62FF), rng.randint(0x4E00, 0x9FA5)))) for _ in range(n))
    if kind < 0.65:
        return "".join(chr(rng.randint(0x3041, 0x3093)) for _ in range(n))  # hiragana
    if kind < 0.75:
        return "".join(chr(rng.randint(0x30A1, 0x30F6)) for _ in range(n))  # katakana
    return "".join(chr(rng.randint(0xAC00, 0xD7A3)) for _ in range(rng.randint(1, 4)))  # hangul syllables


def generated_cjk(size: int, *, seed: int = 31337) -> str:
    """About ``size`` characters of CJK-heavy text: Han, kana and Hangul runs with full-width
    punctuation and spaces (Korean), numbers, Latin and full-width words, other scripts with
    combining marks, emoji with ZWJ and skin tones, paragraphs by blank lines."""
    rng = random.Random(seed)
    out: list[str] = []
    total = 0
    while total < size:
        sentence: list[str] = []
        for _ in range(rng.randint(3, 25)):
            r = rng.random()
            if r < 0.7:
                sentence.append(_cjk_run(rng) + (" " if rng.random() < 0.2 else ""))
            elif r < 0.8:
                sentence.append(rng.choice(_CJK_PUNCT))
            elif r < 0.88:
                sentence.append(f" {rng.randint(0, 99999)}{rng.choice(['年', '円', '%', '個', ' km'])}")
            elif r < 0.96:
                sentence.append(f" {rng.choice(_OTHER_WORDS)} ")
            else:
                sentence.append(rng.choice(_EMOJI))
        text = "".join(sentence) + rng.choice(["。", "！", "？", "."]) + ("\n\n" if rng.random() < 0.15 else "\n")
        out.append(text)
        total += len(text)
    return "".join(out)


def heldout_corpus(*, scale: float = 1.0, seed: int = 7) -> Corpus:
    """The held-out mix (see the module docstring): about 1.2 MB of the shared corpora's lines
    shuffled together, 1 MB of generated code and 0.6 MB of generated CJK text."""
    corpora = shared_dir() / "corpora"
    lines: list[str] = []
    for path in sorted(corpora.glob("*.txt")):
        lines += path.read_text(encoding="utf-8").splitlines(keepends=True)
    random.Random(seed).shuffle(lines)
    parts = [
        ("shared-lines-shuffled", "".join(lines)),
        ("generated-code", generated_code(1_000_000)),
        ("generated-cjk", generated_cjk(600_000)),
    ]
    if scale < 1.0:
        parts = [(n, t[: int(len(t) * scale)]) for n, t in parts]
    return Corpus(tuple(parts))


def corpus_named(name: str, *, scale: float = 1.0) -> Corpus:
    """``"mixed"`` (the default corpus) or ``"heldout"``."""
    if name == "heldout":
        return heldout_corpus(scale=scale)
    return mixed_corpus(scale=scale)


def files_corpus(path: Path, *, scale: float = 1.0) -> Corpus:
    """Every regular file under ``path`` (sorted), or ``path`` itself, one document each (UTF-8)."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    parts = []
    for f in files:
        try:
            text = f.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SystemExit(f"{f}: not readable as UTF-8 text ({exc})") from None
        parts.append((f.name, text[: int(len(text) * scale)] if scale < 1.0 else text))
    if not parts:
        raise SystemExit(f"{path}: no files")
    return Corpus(tuple(parts))


def add_corpus_args(ap: argparse.ArgumentParser) -> None:
    """The ``--corpus`` / ``--scale`` options every encode bench takes."""
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of each corpus part (default: all)")
    ap.add_argument("--corpus", default="mixed", metavar="mixed|heldout|PATH",
                    help="a built-in mix (the tuning mix 'mixed', or 'heldout'), or a file or folder of UTF-8 files")


def corpus_from_args(args: argparse.Namespace) -> Corpus:
    """The corpus ``add_corpus_args``' options name."""
    if args.corpus in ("mixed", "heldout"):
        return corpus_named(args.corpus, scale=args.scale)
    return files_corpus(Path(args.corpus), scale=args.scale)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_corpus_args(ap)
    print(corpus_from_args(ap.parse_args()).describe())


if __name__ == "__main__":
    main()
