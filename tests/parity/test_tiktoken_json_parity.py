"""Parity of js-tiktoken rank JSON files with tiktoken run on the same ranks.

The files are the real ones: js-tiktoken 1.0.21's ``dist/ranks/*.cjs`` modules (MIT) and
@anthropic-ai/tokenizer 0.0.4's ``claude.json`` (Apache-2.0), from the npm tarballs .ci/run
packs into the fixture cache. The oracle is a `tiktoken.Encoding` built from the file's own
``pat_str`` and ``special_tokens`` and its ``bpe_ranks`` decoded here, independently of tokviz,
by the rule js-tiktoken documents (lines of ``<marker> <first rank> <base64> ...``, consecutive
ranks). For claude.json the oracle is what ``countTokens`` does: tiktoken on the NFKC form of
the text with every special allowed.

Compared: ids with specials as text and with ``allowed_special="all"``, decode, and for the
published ranks that they equal the bundled ``.tiktoken`` files byte for byte.
"""

from __future__ import annotations

import base64
import json
import tempfile
import unicodedata
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from support import bundle_bytes, fixture_members, require_module

import tokviz

from .cases import TRICKY, corpus_lines, llamacpp_vectors

pytestmark = pytest.mark.parity

JS_FILES = ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base"]
CORPORA = ["botchan.txt", "wagahaiwa_nekodearu.txt"]
_LINES = 200


@cache
def _files() -> dict[str, Path]:
    dest = Path(tempfile.mkdtemp(prefix="jsranks-"))
    out = fixture_members("js-tiktoken-1.0.21.tgz", tuple(f"dist/ranks/{n}.cjs" for n in JS_FILES), dest)
    out.update(fixture_members("anthropic-ai-tokenizer-0.0.4.tgz", ("package/claude.json",), dest))
    return {k.rsplit("/", 1)[-1].split(".")[0]: v for k, v in out.items()}


def _object(name: str) -> dict[str, Any]:
    text = _files()[name].read_text(encoding="utf-8")
    return json.loads(text[text.index("{"):].rstrip().rstrip(";"))


def _ranks(obj: dict[str, Any]) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    for line in obj["bpe_ranks"].split("\n"):
        if line:
            _, first, *tokens = line.split(" ")
            for k, token in enumerate(tokens):
                ranks[base64.b64decode(token)] = int(first) + k
    return ranks


@cache
def pair(name: str) -> tuple[Any, Any]:
    tiktoken = require_module("tiktoken")
    obj = _object(name)
    ref = tiktoken.Encoding(name, pat_str=obj["pat_str"], mergeable_ranks=_ranks(obj), special_tokens=obj["special_tokens"])
    return tokviz.load(_files()[name]), ref


def compare(name: str, text: str) -> str:
    tok, ref = pair(name)
    claude = name == "claude"
    checks = [("all", ref.encode(unicodedata.normalize("NFKC", text) if claude else text, allowed_special="all"))]
    if not claude:
        checks.append(("none", ref.encode(text, disallowed_special=())))
    for mode, want in checks:
        got = tok.encode(text, add_special_tokens=False, allowed_special="all" if mode == "all" else None).ids
        if got != want:
            i = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            return f"specials {mode}: ids differ at {i}: tokviz {got[i:i + 4]} tiktoken {want[i:i + 4]}"
        if tok.decode(got) != ref.decode(want):
            return f"specials {mode}: decode differs"
    return ""


def _cases() -> list[tuple[str, str]]:
    cases = [(f"tricky/{cid}", text) for cid, text in TRICKY]
    cases += [(f"llamacpp/{k}", text) for k, (text, _) in enumerate(llamacpp_vectors("gpt-2", folder="gguf"))]
    for corpus in CORPORA:
        cases += [(f"{corpus}/line{k + 1}", line) for k, line in enumerate(corpus_lines(corpus, limit=_LINES))]
    return cases


class TestRankJsonAgainstTiktoken:
    @pytest.mark.parametrize("name", [*JS_FILES, "claude"])
    def test_texts(self, name: str, parity_report) -> None:  # noqa: ANN001
        bad = []
        for case_id, text in _cases():
            detail = compare(name, text)
            parity_report.record(f"rank-json-{name}", case_id, not detail, detail)
            if detail:
                bad.append(case_id)
        assert bad == [], f"{len(bad)} cases differ, first {bad[:8]}"

    @pytest.mark.parametrize(("name", "bundle"), [("gpt2", "gpt2/r50k_base.tiktoken"),
                                                  ("cl100k_base", "cl100k_base/cl100k_base.tiktoken"),
                                                  ("o200k_base", "o200k_base/o200k_base.tiktoken")])
    def test_same_ranks_as_the_published_file(self, name: str, bundle: str) -> None:
        published = {base64.b64decode(t): int(r) for t, r in (ln.split() for ln in bundle_bytes(bundle).splitlines() if ln)}
        assert _ranks(_object(name)) == published
        tok = tokviz.load(_files()[name])
        assert tok.config.extra["published_as"] == {"gpt2": "r50k_base"}.get(name, name)

    def test_claude_is_recognised_with_nfkc(self) -> None:
        tok, _ = pair("claude")
        assert tok.config.extra["published_as"].startswith("claude")
        # NFKC folds the fullwidth letters before BPE, and <EOT> is always a special token
        assert tok.encode("\uff21<EOT>", add_special_tokens=False).ids == tok.encode("A<EOT>", add_special_tokens=False).ids
        assert tok.encode("<EOT>", add_special_tokens=False).ids == [0]
