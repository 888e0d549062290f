"""The GUI view-models read the tokenizer facts (`tokviz.analysis.facts`), never their own rule."""

from __future__ import annotations

import pytest
from support import bundle_path

import tokviz
from tokviz.analysis.facts import TokenizerFacts
from tokviz.engine.added_tokens import AddedToken
from tokviz.engine.models.bpe import BPE
from tokviz.engine.pre_tokenizers.byte_level import ByteLevel
from tokviz.engine.tokenizer import Tokenizer, TokenizerConfig
from tokviz.gui.lattice_viewmodel import LatticeViewModel
from tokviz.gui.viewmodel import InspectViewModel, unknown_token_id


class TestUnknownId:
    @pytest.mark.parametrize("rel, unk", [
        ("bert-base-uncased/vocab.txt", "[UNK]"),
        ("albert-30k-clean/30k-clean.model", "<unk>"),
        ("mistral-7b-v0.1/tokenizer.json", "<unk>"),
        ("gpt2/r50k_base.tiktoken", None),
    ])
    def test_inspect_lattice_and_compare_share_one_rule(self, qtbot, rel: str, unk: str | None) -> None:  # noqa: ANN001
        tok = tokviz.load(bundle_path(rel))
        expected = tok.token_to_id(unk) if unk else None
        assert unknown_token_id(tok) == TokenizerFacts.of(tok).unknown_id == expected
        vm = InspectViewModel()
        vm.set_tokenizer(tok, name="t")
        assert LatticeViewModel(inspect=vm).unk_id == expected

    def test_a_config_unk_token_is_not_the_models(self) -> None:
        # GPT-2's tokenizer_config names <|endoftext|> as unk_token; no text is ever unknown as it
        tok = Tokenizer(BPE({"a": 0, "<|endoftext|>": 1}), pre_tokenizer=ByteLevel(),
                        added_tokens=[AddedToken("<|endoftext|>", 1, special=True)],
                        config=TokenizerConfig(unk_token="<|endoftext|>"))
        assert unknown_token_id(tok) is None
