"""Parity of Mistral tekken.json files with mistral-common (the reference: its ``Tekkenizer``).

The files: the two samples mistral-common ships in ``mistral_common/data`` (``tekken_240718.json``
and ``tekken_240911.json``, both v3 with no special-token list, 150,000 entries of which the first
130,072 are used), and files written here from the 240911 vocabulary in the newer layouts (v7
and v13, an explicit ``special_tokens`` list with control and non-control entries, a smaller
``default_num_special_tokens``) and loaded by mistral-common too.

Compared, per text: ``encode(s, bos=False/True, eos=False)`` against ``add_special_tokens``;
``decode`` with ``SpecialTokenPolicy.IGNORE`` and ``KEEP`` against ``skip_special_tokens=True`` /
``False`` on ids with special tokens spliced in. Per file: the number of special ids, every
special token's id, ``bos_id``/``eos_id``/``pad_id``/``unk_id``, ``n_words``, every id's bytes
(``id_to_byte_piece`` with KEEP) and that ``MistralTokenizer.from_file`` wraps the same
encoding (its ``instruct_tokenizer.tokenizer``).
"""

from __future__ import annotations

import json
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from support import require_module

import tokviz
from tokviz.engine.byte_alphabet import proxy_to_bytes

from .cases import TRICKY, corpus_lines, llamacpp_vectors

pytestmark = pytest.mark.parity

SAMPLES = ["tekken_240718.json", "tekken_240911.json"]
WRITTEN = ["v7", "v13"]
CORPORA = ["botchan.txt", "wagahaiwa_nekodearu.txt"]
_LINES = 150


def _data_dir() -> Path:
    mc = require_module("mistral_common")
    return Path(mc.__file__).parent / "data"


@cache
def _written(version: str) -> Path:
    """A tekken file of ``version`` with an explicit special-token list: 40 named (every 4th not
    a control token), padded by mistral-common to 100; the 240911 vocabulary cut to 30,000."""
    obj = json.loads((_data_dir() / "tekken_240911.json").read_text(encoding="utf-8"))
    from mistral_common.tokens.tokenizers.base import SpecialTokens

    names = [s.value for s in SpecialTokens] + [f"[EXTRA_{i}]" for i in range(7)]
    obj["special_tokens"] = [{"rank": i, "token_str": t, "is_control": i % 4 != 3} for i, t in enumerate(names[:40])]
    obj["config"] = {**obj["config"], "version": version, "default_vocab_size": 30_100, "default_num_special_tokens": 100}
    obj.pop("image", None)
    path = Path(tempfile.mkdtemp(prefix="tekken-")) / f"tekken_{version}.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _path(name: str) -> Path:
    return _written(name) if name in WRITTEN else _data_dir() / name


@cache
def pair(name: str) -> tuple[Any, Any]:
    require_module("mistral_common")
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    return tokviz.load(_path(name)), Tekkenizer.from_file(_path(name))


def compare(name: str, text: str) -> str:
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy as P

    tok, ref = pair(name)
    for bos in (False, True):
        want = ref.encode(text, bos=bos, eos=False)
        got = tok.encode(text, add_special_tokens=bos).ids
        if got != want:
            i = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            return f"bos={bos}: ids differ at {i}: tokviz {got[i:i + 4]} mistral-common {want[i:i + 4]}"
    ids = ref.encode(text, bos=True, eos=True)
    k = _clean_cut(ref, ids)
    spliced = ids[:k] + [ref.get_special_token("[INST]"), 999 % ref.num_special_tokens] + ids[k:]
    for policy, skip in ((P.IGNORE, True), (P.KEEP, False)):
        if tok.decode(spliced, skip_special_tokens=skip) != ref.decode(spliced, special_token_policy=policy):
            return f"decode differs with {policy.value}"
    return ""


def _clean_cut(ref: Any, ids: list[int]) -> int:
    """The cut nearest the middle of ``ids`` that does not fall inside a character: there
    mistral-common's IGNORE (each run of regular ids decoded on its own) and HF's
    ``skip_special_tokens`` (specials dropped, the rest decoded as one) agree; inside a character
    they differ by design (`test_ignore_inside_a_character`)."""
    whole = ref.decode(ids)
    for k in sorted(range(len(ids) + 1), key=lambda k: abs(k - len(ids) // 2)):
        if ref.decode(ids[:k]) + ref.decode(ids[k:]) == whole:
            return k
    return len(ids)


def _cases() -> list[tuple[str, str]]:
    cases = [(f"tricky/{cid}", text) for cid, text in TRICKY]
    cases += [(f"llamacpp/{k}", text) for k, (text, _) in enumerate(llamacpp_vectors("gpt-2", folder="gguf"))]
    for corpus in CORPORA:
        cases += [(f"{corpus}/line{k + 1}", line) for k, line in enumerate(corpus_lines(corpus, limit=_LINES))]
    return cases


class TestTekkenAgainstMistralCommon:
    @pytest.mark.parametrize("name", [*SAMPLES, *WRITTEN])
    def test_texts(self, name: str, parity_report) -> None:  # noqa: ANN001
        bad = []
        for case_id, text in _cases():
            detail = compare(name, text)
            parity_report.record(f"tekken-{name.removesuffix('.json')}", case_id, not detail, detail)
            if detail:
                bad.append(case_id)
        assert bad == [], f"{len(bad)} cases differ, first {bad[:8]}"

    @pytest.mark.parametrize("name", [*SAMPLES, *WRITTEN])
    def test_special_ids_and_vocabulary(self, name: str) -> None:
        from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy as P

        tok, ref = pair(name)
        n = ref.num_special_tokens
        assert tok.vocab_size == ref.n_words
        for i in range(n):
            piece = ref.id_to_byte_piece(i, special_token_policy=P.KEEP).decode("utf-8")
            assert tok.token_to_id(piece) == i == ref.get_special_token(piece)
            assert tok.is_special_id(i)
        assert not tok.is_special_id(n)
        for role in ("bos", "eos", "pad", "unk"):
            assert tok.token_to_id(getattr(tok.config, f"{role}_token")) == getattr(ref, f"{role}_id")
        for i in range(n, ref.n_words, 97):
            assert proxy_to_bytes(tok.id_to_token(i)) == ref.id_to_byte_piece(i, special_token_policy=P.KEEP)

    @pytest.mark.parametrize("name", SAMPLES)
    def test_mistral_tokenizer_wraps_the_same_encoding(self, name: str) -> None:
        from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

        tok, _ = pair(name)
        inner = MistralTokenizer.from_file(str(_path(name))).instruct_tokenizer.tokenizer
        for _, text in TRICKY:
            assert tok.encode(text).ids == inner.encode(text, bos=True, eos=False)

    def test_literal_specials_stay_text(self) -> None:
        # mistral-common's tiktoken has no special tokens: "[INST]" in the text is text
        tok, ref = pair("tekken_240911.json")
        ids = tok.encode("[INST] hi [/INST]", add_special_tokens=False).ids
        assert ids == ref.encode("[INST] hi [/INST]", bos=False, eos=False)
        assert ref.get_special_token("[INST]") not in ids

    def test_ignore_inside_a_character(self) -> None:
        """A special id between the two tokens of one character: mistral-common's IGNORE decodes
        each side alone (two U+FFFD), tokviz drops the special and decodes the bytes together, as
        HF's ``skip_special_tokens=True`` does; KEEP agrees (the special's string splits them)."""
        from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy as P

        tok, ref = pair("tekken_240911.json")
        ids = ref.encode("\U00020000", bos=False, eos=False)  # 𠀀: 4 UTF-8 bytes, more than one token
        assert len(ids) >= 2
        spliced = [ids[0], ref.get_special_token("[INST]"), *ids[1:]]
        assert ref.decode(spliced, special_token_policy=P.IGNORE).count("\ufffd") >= 2
        assert tok.decode(spliced, skip_special_tokens=True) == "\U00020000"
        assert tok.decode(spliced) == ref.decode(spliced, special_token_policy=P.KEEP)
