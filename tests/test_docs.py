"""The README and docs/*.md stay true to the code.

* Every inline code span that looks like a tokviz identifier (a dotted name, a name with an
  underscore or in CamelCase, a call) names something that exists: a module, class, function,
  method, attribute or parameter of tokviz, a key or name that tokviz's (or its tests') code
  spells as a string (JSON fields, tensor names, environment variables), or a function of the C
  core. A member named on a class or module (`ChunkPlan.of_chunks`, `tokviz.engine.backend()`)
  must belong to that class or module. Names of other projects are listed in `EXTERNAL` with
  their owner.
* Every repository path a document names (`tests/engine/test_paths.py`, ``bench_gui.py``) exists.
* Every ``tokviz ...`` command the README and the docs show parses with tokviz's own parser
  (usage brackets expanded: ``[--json]`` is given, ``a|b`` takes the first choice).
"""

from __future__ import annotations

import argparse
import ast
import re
import shlex
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: names of other projects (or sample token strings) that the documents cite, with their owner
EXTERNAL: dict[str, str] = {
    "encode_ordinary": "tiktoken",
    "return_offsets_mapping": "transformers",
    "sp.nbest_encode": "sentencepiece (Python)",
    "PopulateNodes": "sentencepiece (C++)",
    "norm_to_orig": "sentencepiece (C++ normalizer)",
    "monkeypatch.setattr": "pytest",
    "Tokenizer.train": "HF tokenizers (its Tokenizer.train(files))",
    # glitch tokens of real vocabularies, quoted as token strings
    "ForCanBeConverted": "a token string",
    "InstoreAndOnline": "a token string",
    "PostalCodesNL": "a token string",
    "TheNitrome": "a token string",
    "useRalative": "a token string",
}

_FILE_SUFFIXES = (
    ".json", ".txt", ".model", ".tiktoken", ".gguf", ".py", ".md", ".c", ".cpp", ".proto", ".jinja",
    ".safetensors", ".gz", ".png", ".bpe", ".toml",
)
_REPO_DIRS = ("tokviz/", "tests/", "bench/", "docs/", "resources/", "tools/", ".ci/")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


class _Index:
    """What tokviz defines: names anywhere, members per class and per module, strings, C functions."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.strings: set[str] = set()
        self.members: dict[str, set[str]] = {}  # class name -> members (same-named classes merged)
        self.modules: dict[str, set[str]] = {}  # dotted module -> its top-level names
        for path in sorted((ROOT / "tokviz").rglob("*.py")):
            self._add_module(path)
        for path in [*(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py"), ROOT / "setup.py"]:
            if path != Path(__file__).resolve():  # this file's own strings name things on purpose
                self._add_strings(ast.parse(path.read_bytes()))
        for path in (ROOT / "tokviz").rglob("*.c"):
            # C functions and macros, and the names the module table exports ({"emit", ...})
            source = path.read_text(encoding="utf-8")
            self.names.update(re.findall(r"\b([A-Za-z_]\w*)\s*\(", source))
            self.names.update(re.findall(r"#define\s+(\w+)", source))
            self.strings.update(re.findall(r'\{\s*"(\w+)"\s*,', source))

    def _add_strings(self, tree: ast.AST) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
                self.strings.add(node.value)
                self.strings.update(re.findall(r"[\w.:-]+", node.value))

    def _add_module(self, path: Path) -> None:
        module = _module_name(path)
        tree = ast.parse(path.read_bytes(), filename=str(path))
        self.names.update(module.split("."))
        self.modules[module] = _top_level_names(tree)
        self._add_strings(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.names.add(node.name)
                self.names.update(a.arg for a in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs])
            elif isinstance(node, ast.ClassDef):
                self.names.add(node.name)
                self.members.setdefault(node.name, set()).update(_class_members(node))
            elif isinstance(node, ast.Name):
                self.names.add(node.id)
            elif isinstance(node, ast.Attribute):
                self.names.add(node.attr)
            elif isinstance(node, ast.alias):
                self.names.add((node.asname or node.name).split(".")[-1])

    def problem(self, name: str) -> str | None:
        """Why ``name`` (``a.b.c``, no call parentheses) names nothing in tokviz; None if it does."""
        if name in self.strings:
            return None
        parts = name.split(".")
        if parts[0] == "tokviz":
            return self._resolve_module_path(parts)
        missing = [p for p in parts if p not in self.names and p not in self.strings]
        if missing:
            return f"{', '.join(missing)} is defined nowhere in tokviz"
        if len(parts) >= 2 and parts[0] in self.members and parts[1] not in self.members[parts[0]]:
            return f"class {parts[0]} has no member {parts[1]}"
        return None

    def _resolve_module_path(self, parts: list[str]) -> str | None:
        k = len(parts)
        while k > 1 and ".".join(parts[:k]) not in self.modules:
            k -= 1
        module = ".".join(parts[:k])
        if module not in self.modules:
            return f"no module {'.'.join(parts)}"
        rest = parts[k:]
        if not rest:
            return None
        if rest[0] not in self.modules[module] and f"{module}.{rest[0]}" not in self.modules:
            return f"{module} has no {rest[0]}"
        if len(rest) >= 2 and rest[0] in self.members and rest[1] not in self.members[rest[0]]:
            return f"class {rest[0]} has no member {rest[1]}"
        return None


def _top_level_names(tree: ast.Module) -> set[str]:
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.If, ast.Try)):
            out.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return out


def _class_members(cls: ast.ClassDef) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not cls:
            out.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out.add(t.id)
                elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    out.add(t.attr)
    return out


@cache
def _index() -> _Index:
    return _Index()


def _prose(doc: Path) -> str:
    """The document without its fenced code blocks."""
    return re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.S)


def _spans(doc: Path) -> list[str]:
    return [s.strip() for s in re.findall(r"`([^`\n]+)`", _prose(doc))]


_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _identifier(span: str) -> str | None:
    """The dotted name a code span names, when it looks like a tokviz identifier."""
    callee = re.sub(r"\(.*\)$", "", span)
    if not _DOTTED.fullmatch(callee) or callee.endswith(_FILE_SUFFIXES):
        return None
    if "_" in callee or "." in callee or re.search(r"[a-z][A-Z]|^[A-Z][a-z]+[A-Z]", callee):
        return callee
    return None


def _identifiers(doc: Path) -> list[str]:
    return sorted({n for s in _spans(doc) if (n := _identifier(s)) is not None})


class TestIdentifiers:
    def test_the_scan_sees_identifiers_and_catches_a_stale_one(self) -> None:
        """The check itself works: real names pass, a renamed private helper does not."""
        idx = _index()
        assert _identifier("tok.clear_caches()") == "tok.clear_caches" and _identifier("tokenizer.json") is None
        assert idx.problem("ChunkPlan.of_chunks") is None
        assert idx.problem("tokviz.engine.backend") is None
        assert idx.problem("ChunkPlan.decode") == "class ChunkPlan has no member decode"
        assert idx.problem("tokviz.engine.no_such_name") == "tokviz.engine has no no_such_name"
        assert idx.problem("_no_such_helper") is not None

    @pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
    def test_every_named_identifier_exists(self, doc: Path) -> None:
        idx = _index()
        bad = {n: why for n in _identifiers(doc) if n not in EXTERNAL and (why := idx.problem(n))}
        assert not bad, f"{doc.name} names what tokviz does not define: {bad}"

    def test_external_names_are_still_cited(self) -> None:
        """`EXTERNAL` keeps in step with the documents: every entry is cited somewhere."""
        cited = {n for doc in DOCS for n in _identifiers(doc)}
        assert not set(EXTERNAL) - cited, sorted(set(EXTERNAL) - cited)


class TestPaths:
    @pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
    def test_every_named_repository_file_exists(self, doc: Path) -> None:
        bad = []
        for span in _spans(doc):
            for word in span.split():
                word = word.strip("()[],;:")
                if word.startswith(_REPO_DIRS):
                    if not (ROOT / word).exists():
                        bad.append(word)
                elif re.fullmatch(r"(bench|test)_\w+\.py", word):  # a bench script or test file by name
                    if not any(ROOT.glob(f"**/{word}")):
                        bad.append(word)
        assert not bad, f"{doc.name} names files that do not exist: {bad}"


# ---------------------------------------------------------------------------- commands
def _commands(doc: Path) -> list[str]:
    """``tokviz ...`` command lines: inline code spans and lines of fenced blocks."""
    text = doc.read_text(encoding="utf-8")
    found = [s for s in re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))]
    for block in re.findall(r"```[^\n]*\n(.*?)```", text, flags=re.S):
        found += block.splitlines()
    out = []
    for line in found:
        line = line.strip()
        for part in line.split("&&"):
            part = part.strip()
            if part.startswith("tokviz ") or part == "tokviz":
                out.append(part)
    return out


def _expand_usage(command: str) -> list[str]:
    """Arguments of a usage line: ``[X]`` -> X, ``(A | B)`` -> A, ``a|b`` -> a, ``C...`` -> C."""
    s = re.sub(r"\(([^()|]*)\|[^()]*\)", r"\1", command)
    s = s.replace("[", " ").replace("]", " ").replace("...", " ")
    args = []
    for word in shlex.split(s, comments=True)[1:]:
        args.append(word.split("|")[0] if "|" in word and not word.startswith(("'", '"')) else word)
    return [a for a in args if a]


def _untyped_parser() -> argparse.ArgumentParser:
    """tokviz's parser with value conversion off: placeholders like ``N`` parse; names, arity and
    choices are checked."""
    from tokviz.cli import build_parser

    parser = build_parser()
    todo = [parser]
    while todo:
        p = todo.pop()
        p.exit_on_error = False
        for action in p._actions:
            action.type = None
            if isinstance(action, argparse._SubParsersAction):
                todo.extend(action.choices.values())
    return parser


def _check_mention(args: list[str]) -> None:
    """``tokviz CMD`` or ``tokviz CMD --option`` in prose: the command and the option exist."""
    sub = next(a for a in _untyped_parser()._actions if isinstance(a, argparse._SubParsersAction))
    if args[0] not in sub.choices:
        raise KeyError(f"no command {args[0]!r}")
    options = {o for a in sub.choices[args[0]]._actions for o in a.option_strings}
    for option in args[1:]:
        if option not in options:
            raise KeyError(f"tokviz {args[0]} has no option {option}")


class TestCommands:
    def test_usage_lines_expand(self) -> None:
        assert _expand_usage("tokviz heal TOK --text T [--caret N] [--json]") == [
            "heal", "TOK", "--text", "T", "--caret", "N", "--json",
        ]
        assert _expand_usage("tokviz compare A B [C...] (--text T | --file F) [--mode whole|lines]") == [
            "compare", "A", "B", "C", "--text", "T", "--mode", "whole",
        ]

    def test_a_wrong_command_fails_to_parse(self) -> None:
        with pytest.raises((argparse.ArgumentError, SystemExit)):
            _untyped_parser().parse_args(["encode", "TOK", "--no-such-option"])
        with pytest.raises(KeyError):
            _check_mention(["lint", "--no-such-option"])
        _check_mention(["lint", "--file"])

    @pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
    def test_every_command_shown_parses(self, doc: Path, capsys: pytest.CaptureFixture[str]) -> None:
        bad = {}
        for command in _commands(doc):
            args = _expand_usage(command)
            try:
                if args and all(a.startswith("-") for a in args[1:]) and len(args) <= 2:
                    _check_mention(args)  # prose naming a command or one of its options
                else:
                    _untyped_parser().parse_args(args)
            except (argparse.ArgumentError, SystemExit, KeyError) as exc:
                bad[command] = str(exc) if not isinstance(exc, SystemExit) else capsys.readouterr().err.strip()
        assert not bad, f"{doc.name}: {bad}"

    def test_the_readme_shows_commands(self) -> None:
        assert len(_commands(ROOT / "README.md")) >= 20
