"""tiktoken's API where it differs from a plain load: user special tables on recognised rank files,
``decode_with_offsets``, ``get_encoding``/``encoding_for_model`` by the published names.

The oracle is tiktoken itself, run in the test: ``tiktoken.Encoding`` built from the rank files
tokviz ships, and tiktoken_ext.openai_public's own constructors with its rank loader pointed at
those local files (``get_encoding`` would download).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import bundle_bytes, fixture_extract, require_module

import tokviz
from tokviz import TokvizFormatError
from tokviz.io.tiktoken_encodings import ENCODINGS, MODEL_PREFIX_TO_ENCODING, MODEL_TO_ENCODING
from tokviz.io.tiktoken_ranks import R50K_PATTERN, WHISPER_PATTERN

from .cases import TRICKY

pytestmark = pytest.mark.parity

RANK_FILES = {  # the rank file names in tiktoken_ext's URLs -> the bundles tokviz ships
    "r50k_base.tiktoken": "gpt2/r50k_base.tiktoken",
    "cl100k_base.tiktoken": "cl100k_base/cl100k_base.tiktoken",
    "o200k_base.tiktoken": "o200k_base/o200k_base.tiktoken",
}
SHIPPED = ["gpt2", "r50k_base", "cl100k_base", "o200k_base", "o200k_harmony"]
TEXTS = [t for _, t in TRICKY] + [
    "<|endoftext|> hi <|fim_prefix|>a<|fim_middle|>b<|fim_suffix|>",
    "<|start|>user<|message|>hi<|end|><|endofprompt|><|reserved_200018|><|reserved_201087|>",
    "😀 日本語 é\u0301 \r\n\t  x",
]


def _local_bpe(tmp: Path):  # noqa: ANN202
    from tiktoken.load import load_tiktoken_bpe

    def load(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        name = url.rsplit("/", 1)[-1]
        path = tmp / name
        if not path.exists():
            if name not in RANK_FILES:
                pytest.skip(f"{name}: a rank file tokviz does not ship")
            path.write_bytes(bundle_bytes(RANK_FILES[name]))
        return load_tiktoken_bpe(str(path), expected_hash)

    return load


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """name -> tiktoken.Encoding from tiktoken_ext.openai_public's constructors, on local files."""
    tiktoken = require_module("tiktoken")
    import tiktoken_ext.openai_public as public

    tmp = tmp_path_factory.mktemp("ranks")
    saved = public.load_tiktoken_bpe, public.data_gym_to_mergeable_bpe_ranks
    public.load_tiktoken_bpe = _local_bpe(tmp)
    public.data_gym_to_mergeable_bpe_ranks = lambda **_: public.load_tiktoken_bpe("r50k_base.tiktoken")
    try:
        out = {}
        for name in SHIPPED:
            spec = public.ENCODING_CONSTRUCTORS[name]()
            out[name] = tiktoken.Encoding(spec.pop("name"), **spec)
        return out
    finally:
        public.load_tiktoken_bpe, public.data_gym_to_mergeable_bpe_ranks = saved


class TestPublishedNames:
    @pytest.mark.parametrize("name", SHIPPED)
    def test_tables_are_tiktokens(self, reference, name: str) -> None:  # noqa: ANN001
        ref, tok = reference[name], tokviz.get_encoding(name)
        assert tok.name == name
        assert tok.vocab_size == ref.n_vocab
        assert tok.config.extra["pattern"] == ref._pat_str
        vocab = tok.get_vocab()
        assert {s: vocab[s] for s in ref._special_tokens} == ref._special_tokens
        assert {t for t in vocab if tok.is_special_id(vocab[t])} == set(ref._special_tokens)

    @pytest.mark.parametrize("name", SHIPPED)
    def test_encodes_as_tiktoken(self, reference, name: str) -> None:  # noqa: ANN001
        ref, tok = reference[name], tokviz.get_encoding(name)
        for text in TEXTS:
            want = ref.encode(text, allowed_special="all")
            assert tok.encode(text, allowed_special="all").ids == want, text
            assert tok.encode(text).ids == ref.encode(text, disallowed_special=()), text
            assert tok.decode(want) == ref.decode(want)

    def test_every_published_name_is_known(self) -> None:
        require_module("tiktoken")
        import tiktoken_ext.openai_public as public

        assert set(ENCODINGS) == set(public.ENCODING_CONSTRUCTORS)
        assert tokviz.get_encoding("cl100k_base") is tokviz.get_encoding("cl100k_base")

    def test_a_rank_file_not_shipped_is_named(self) -> None:
        with pytest.raises(FileNotFoundError, match=r"p50k_edit needs p50k_base\.tiktoken .*ranks="):
            tokviz.get_encoding("p50k_edit")
        with pytest.raises(TokvizFormatError, match="needs p50k_base's rank file.*r50k_base's"):
            tokviz.get_encoding("p50k_edit", ranks=bundle_bytes("gpt2/r50k_base.tiktoken"))
        with pytest.raises(ValueError, match="unknown tiktoken encoding 'p51k'"):
            tokviz.get_encoding("p51k")


class TestModelNames:
    def test_tables_are_tiktokens(self) -> None:
        require_module("tiktoken")
        from tiktoken import model

        assert dict(MODEL_TO_ENCODING) == model.MODEL_TO_ENCODING
        assert list(MODEL_PREFIX_TO_ENCODING) == list(model.MODEL_PREFIX_TO_ENCODING.items())

    def test_names_and_prefixes_resolve_as_tiktoken(self) -> None:
        require_module("tiktoken")
        from tiktoken import model

        from tokviz.io.tiktoken_encodings import encoding_name_for_model

        names = [*model.MODEL_TO_ENCODING, *(p + "2025-01-01" for p in model.MODEL_PREFIX_TO_ENCODING)]
        for n in names:
            assert encoding_name_for_model(n) == model.encoding_name_for_model(n), n
        with pytest.raises(KeyError):
            model.encoding_name_for_model("llama-3")
        with pytest.raises(KeyError, match="no tiktoken encoding is known for model 'llama-3'"):
            encoding_name_for_model("llama-3")

    def test_encoding_for_model(self) -> None:
        assert tokviz.encoding_for_model("gpt-4o").name == "o200k_base"
        assert tokviz.encoding_for_model("gpt-oss-20b").name == "o200k_harmony"
        assert tokviz.encoding_for_model("gpt-4-0613").encode("hello world").ids == [15339, 1917]


class TestUserSpecialTables:
    def test_fim_ids_past_the_ranks(self, tmp_path: Path) -> None:
        """p50k_edit's shape (FIM ids after a gap past the ranks) on a rank file whose published
        table tiktoken checks by size: r50k's (50257 ids)."""
        tiktoken = require_module("tiktoken")
        from tiktoken.load import load_tiktoken_bpe

        data = bundle_bytes("gpt2/r50k_base.tiktoken")
        specials = {"<|endoftext|>": 50256, "<|fim_prefix|>": 50281, "<|fim_middle|>": 50282, "<|fim_suffix|>": 50283}
        tok = tokviz.load(data, special_tokens=specials)
        path = tmp_path / "r50k.tiktoken"
        path.write_bytes(data)
        ref = tiktoken.Encoding("edit", pat_str=R50K_PATTERN, mergeable_ranks=load_tiktoken_bpe(str(path)),
                                special_tokens=specials)
        assert tok.vocab_size == ref.n_vocab == 50284
        for text in TEXTS:
            assert tok.encode(text, allowed_special="all").ids == ref.encode(text, allowed_special="all")

    def test_two_names_on_one_id(self, reference) -> None:  # noqa: ANN001
        ref = reference["o200k_harmony"]
        tok = tokviz.load(bundle_bytes("o200k_base/o200k_base.tiktoken"), special_tokens=ref._special_tokens)
        text = "<|reserved_200018|> <|endofprompt|>"
        assert tok.encode(text, allowed_special="all").ids == ref.encode(text, allowed_special="all")
        assert tok.decode([200018]) == ref.decode([200018]) == "<|endofprompt|>"
        assert tok.encode(text, allowed_special={"<|endofprompt|>"}).ids[-1] == 200018

    def test_whisper_file_with_given_specials(self, tmp_path: Path) -> None:
        tiktoken = require_module("tiktoken")
        from tiktoken.load import load_tiktoken_bpe

        root = fixture_extract("openai_whisper-*.tar.gz", tmp_path)
        path = root / "whisper" / "assets" / "multilingual.tiktoken"
        specials = {"<|endoftext|>": 50257, "<|startoftranscript|>": 50258, "<|en|>": 50259, "<|mine|>": 60000}
        tok = tokviz.load(path, special_tokens=specials)
        ref = tiktoken.Encoding("w", pat_str=WHISPER_PATTERN, mergeable_ranks=load_tiktoken_bpe(str(path)),
                                special_tokens=specials)
        assert tok.vocab_size == ref.n_vocab
        for text in [*TEXTS, "<|startoftranscript|><|en|> hello<|mine|>"]:
            assert tok.encode(text, allowed_special="all").ids == ref.encode(text, allowed_special="all")

    def test_a_special_on_a_rank_is_refused(self) -> None:
        with pytest.raises(TokvizFormatError, match="id 100 is already a mergeable token's rank"):
            tokviz.load(bundle_bytes("gpt2/r50k_base.tiktoken"), special_tokens={"<|x|>": 100})


class TestDecodeWithOffsets:
    @pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
    def test_as_tiktoken(self, reference, name: str) -> None:  # noqa: ANN001
        ref, tok = reference[name], tokviz.get_encoding(name)
        for text in TEXTS:
            ids = ref.encode(text, allowed_special="all")
            assert tok.decode_with_offsets(ids) == ref.decode_with_offsets(ids), text
            assert tok.decode_tokens_bytes(ids) == ref.decode_tokens_bytes(ids)

    def test_token_inside_a_character(self, reference) -> None:  # noqa: ANN001
        # "我" is 3 UTF-8 bytes split over two cl100k tokens: both point at character 0
        ref, tok = reference["cl100k_base"], tokviz.get_encoding("cl100k_base")
        ids = ref.encode("我非常渴望")
        assert len(ids) > 5
        assert tok.decode_with_offsets(ids) == ref.decode_with_offsets(ids)

    def test_bytes_that_are_not_utf8_raise_as_in_tiktoken(self, reference) -> None:  # noqa: ANN001
        ref, tok = reference["cl100k_base"], tokviz.get_encoding("cl100k_base")
        ids = [i for i in ref.encode("我非常渴望") if not _is_utf8(ref.decode_single_token_bytes(i))][:1]
        assert ids
        with pytest.raises(UnicodeDecodeError):
            ref.decode_with_offsets(ids)
        with pytest.raises(UnicodeDecodeError):
            tok.decode_with_offsets(ids)

    def test_not_a_byte_level_tokenizer(self) -> None:
        with pytest.raises(ValueError, match="byte-level"):
            tokviz.load("bert").decode_with_offsets([101])



def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
