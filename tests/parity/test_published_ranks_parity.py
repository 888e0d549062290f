"""Parity with tiktoken for rank files published outside tiktoken: Meta's Llama 3 and Llama 4
``tokenizer.model`` and Whisper's ``multilingual.tiktoken``.

The files are not committed (licenses): they come from the fixture cache that .ci/run fills
with ``pip download`` (tests/support.py, `fixture_member`). The oracle is the `tiktoken.Encoding`
the packages' own code builds, run from the downloaded archives: Meta's ``Tokenizer`` of
llama_models/llama3|llama4/tokenizer.py and whisper's ``get_encoding("multilingual")``. tokviz loads the bytes with no arguments: it must
recognise them by content.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest
from support import ModuleCache, fixture_extract, require_module

import tokviz

from .cases import TRICKY, corpus_lines, llamacpp_vectors
from .test_tiktoken_parity import Pair, compare

pytestmark = pytest.mark.parity

FILES = {
    "llama3": ("llama_models-0.3.0-*.whl", "llama_models/llama3/tokenizer.model"),
    "llama4": ("llama_models-0.3.0-*.whl", "llama_models/llama4/tokenizer.model"),
    "whisper-multilingual": ("openai_whisper-*.tar.gz", "whisper/assets/multilingual.tiktoken"),
}
_PAIRS = ModuleCache()


def _meta_reference(name: str, root: Path) -> object:
    """The tiktoken.Encoding Meta's own ``Tokenizer`` builds (llama_models/<name>/tokenizer.py)."""
    sys.path.insert(0, str(root))
    try:
        module = importlib.import_module(f"llama_models.{name}.tokenizer")
    finally:
        sys.path.remove(str(root))
    return module.Tokenizer(root / "llama_models" / name / "tokenizer.model").model


def _whisper_reference(root: Path) -> object:
    """whisper/tokenizer.py's ``get_encoding("multilingual")``, loaded alone (whisper's
    ``__init__`` needs torch; its tokenizer needs only tiktoken)."""
    spec = importlib.util.spec_from_file_location("_whisper_tokenizer", root / "whisper" / "tokenizer.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.get_encoding("multilingual")


def get_pair(name: str, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    if name not in _PAIRS:
        require_module("tiktoken")
        archive_glob, member = FILES[name]
        root = fixture_extract(archive_glob, tmp_path_factory.mktemp(name))
        ref = _whisper_reference(root) if name.startswith("whisper") else _meta_reference(name, root)
        _PAIRS[name] = Pair(name, tokviz.load((root / member).read_bytes()), ref)
    return _PAIRS[name]


@pytest.fixture(scope="module", params=list(FILES))
def pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    return get_pair(request.param, tmp_path_factory)


class TestRecognised:
    def test_loads_with_no_arguments(self, pair: Pair) -> None:
        assert pair.tok.config.extra["published_as"] == pair.name
        assert pair.tok.info()["id_space"] == pair.ref.n_vocab  # type: ignore[attr-defined]

    def test_specials_are_the_packages(self, pair: Pair) -> None:
        ref_specials = pair.ref._special_tokens  # type: ignore[attr-defined]
        got = {t.content: t.id for t in pair.tok.added_tokens}
        assert got == ref_specials

    def test_llama3_named_ids(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        p = get_pair("llama3", tmp_path_factory)
        assert p.tok.token_to_id("<|begin_of_text|>") == 128000
        assert p.tok.token_to_id("<|eot_id|>") == 128009
        assert sum(1 for t in p.tok.added_tokens if t.special) == 256

    def test_whisper_empty_token(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        """The last line ``= 50256`` is the empty token, as tiktoken reads it."""
        p = get_pair("whisper-multilingual", tmp_path_factory)
        assert p.ref.decode_single_token_bytes(50256) == b""  # type: ignore[attr-defined]
        assert p.tok.id_to_token(50256) == ""
        assert p.tok.decode([50256]) == ""


class TestParityTexts:
    @pytest.mark.parametrize(("case_id", "text"), TRICKY, ids=[c for c, _ in TRICKY])
    def test_tricky(self, pair: Pair, parity_report, case_id: str, text: str) -> None:  # noqa: ANN001
        detail = compare(pair, text)
        parity_report.record(pair.name, f"tricky/{case_id}", not detail, detail)
        assert detail == ""

    def test_tricky_allowed_all(self, pair: Pair, parity_report) -> None:  # noqa: ANN001
        bad = []
        for case_id, text in TRICKY:
            detail = compare(pair, text, allowed_special="all")
            parity_report.record(pair.name, f"tricky-allowed/{case_id}", not detail, detail)
            if detail:
                bad.append((case_id, detail))
        assert bad == []

    def test_llamacpp_texts(self, pair: Pair, parity_report) -> None:  # noqa: ANN001
        bad = []
        for k, (text, _) in enumerate(llamacpp_vectors("gpt-2")):
            detail = compare(pair, text)
            parity_report.record(pair.name, f"llamacpp-text/{k}", not detail, detail)
            if detail:
                bad.append(k)
        assert bad == []

    @pytest.mark.parametrize("corpus", ["botchan.txt", "wagahaiwa_nekodearu.txt"])
    def test_corpus_lines(self, pair: Pair, parity_report, corpus: str) -> None:  # noqa: ANN001
        bad = []
        for k, line in enumerate(corpus_lines(corpus, limit=400)):
            detail = compare(pair, line)
            parity_report.record(pair.name, f"{corpus}/line{k + 1}", not detail, detail)
            if detail:
                bad.append(k + 1)
        assert bad == [], f"{len(bad)} lines differ, first {bad[:10]}"
