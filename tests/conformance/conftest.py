"""The vendored reference test suites (tests/conformance/*_suite) run against tokviz through the
adapters in tests/conformance/adapters. A test that needs what tokviz does not offer (or a
download) is marked here, with its reason; README.md lists them with the counts per suite."""

from __future__ import annotations

import pytest

from tokviz.engine import kernels

NOT_SHIPPED = "needs p50k_base's rank file, which tokviz does not ship (get_encoding raises, naming it)"
NO_DISALLOWED = "disallowed_special (raising on special-token text) is not offered"
NO_BYTES = "encoding raw bytes (tiktoken's private _encode_bytes) is not offered"
SURROGATE = "tokviz refuses text with lone surrogates (tiktoken replaces them with U+FFFD)"
BLOBFILE = "checks the imports of the tiktoken package itself"

SP_TRAIN = "training (SentencePieceTrainer) is not offered"
SP_PROTO = "protobuf outputs (serialized_proto / immutable_proto APIs) are not offered"
SP_SEED = "sentencepiece's global random seed / thread settings are not offered"
SP_NORM = "Normalize(with_offsets=True), SentencePieceNormalizer and override_normalizer_spec are not offered"
SP_PICKLE = ("pickling a processor is not offered (the native model does not pickle; with"
             " TOKVIZ_PURE_PYTHON=1 the pure-Python one does, and the test passes)")
SP = "sentencepiece_suite/test_sentencepiece.py::TestSentencepieceProcessor::"

HF_DOWNLOAD = "needs a download from the Hugging Face Hub (Tokenizer.from_pretrained)"
HF_ASYNC = "the async methods (async_encode, async_encode_batch, async_decode_batch) are not offered"
HF_API = "training and the async methods are not offered (train, async_encode_batch ...)"
HF_CUSTOM = "custom Python components (NormalizedString / PreTokenizedString editing) are not offered"
HF_BYTELEVEL_NORM = "the ByteLevel normalizer is not offered (tokviz refuses its tokenizer.json type)"
HF_FIXED = "the FixedLength pre-tokenizer is not offered (tokviz refuses its tokenizer.json type)"
HF_STREAM = "DecodeStream (incremental decoding through a tokenizer) is not offered"
HF_SAMPLING = "Unigram sampling options (alpha, nbest_size) are not offered on the HF model"
HF_REPR = "the repr strings of HF's Rust objects are not reproduced"
HF_WORDING = "tokviz refuses the same input with its own message (the test matches HF's wording)"
HF_TRAIN = "training (train, train_from_iterator, trainers) is not offered"
HF_FORK = "about the Rust library's thread pool (TOKENIZERS_PARALLELISM) across a fork"
HF = "tokenizers_suite/bindings/"

# node id (relative to tests/conformance, ``path::[Class::]function``, or ``path::Class`` for a
# whole class) -> (kind, reason); kind: "xfail" (strict), "skip", "slow",
# "xfail+slow", "xfail-native" (strict xfail with the native backend, run as a plain test with the
# pure-Python one), or "xfail-not-run" (a hypothesis test whose every example fails: hypothesis would
# spend minutes shrinking the failure, each example building an encoding)
MARKS: dict[str, tuple[str, str]] = {
    "tiktoken_suite/test_encoding.py::test_simple": ("xfail", NOT_SHIPPED),
    "tiktoken_suite/test_encoding.py::test_basic_encode": ("xfail", NOT_SHIPPED),
    "tiktoken_suite/test_misc.py::test_encoding_for_model": ("xfail", NOT_SHIPPED),
    "tiktoken_suite/test_simple_public.py::test_simple": ("xfail", NOT_SHIPPED),
    "tiktoken_suite/test_simple_public.py::test_encoding_for_model": ("xfail", NOT_SHIPPED),
    "tiktoken_suite/test_encoding.py::test_encode_bytes": ("xfail", NO_BYTES),
    "tiktoken_suite/test_encoding.py::test_hyp_encode_bytes": ("xfail-not-run", NO_BYTES),
    "tiktoken_suite/test_encoding.py::test_encode_surrogate_pairs": ("xfail", SURROGATE),
    "tiktoken_suite/test_encoding.py::test_special_token": ("xfail", NO_DISALLOWED),
    "tiktoken_suite/test_misc.py::test_optional_blobfile_dependency": ("skip", BLOBFILE),
    "tiktoken_suite/test_simple_public.py::test_optional_blobfile_dependency": ("skip", BLOBFILE),
    **{SP + t: ("xfail", SP_TRAIN) for t in ("test_train", "test_train_iterator", "test_train_kwargs")},
    **{SP + t: ("xfail", SP_PROTO) for t in ("test_decode_bytes", "test_immutable_proto", "test_nbest",
                                              "test_new_api", "test_sample_and_score", "test_sampling",
                                              "test_serialized_proto", "test_valid_range")},
    SP + "test_batch": ("xfail+slow", SP_PROTO),  # encodes botchan.txt line by line before it fails
    SP + "test_roundtrip": ("slow", ""),  # 400 sampled encodes
    SP + "test_global_params": ("xfail", SP_SEED),
    **{SP + t: ("xfail", SP_NORM) for t in ("test_normalize", "test_normalizer", "test_normalizer_rule",
                                             "test_override_normalize_spec")},
    SP + "test_pickle": ("xfail-native", SP_PICKLE),
    HF + "test_tokenizer.py::TestAsyncTokenizer": ("skip", HF_DOWNLOAD + "; " + HF_ASYNC),
    **{HF + "test_tokenizer.py::TestTokenizer::" + t: ("skip", HF_DOWNLOAD) for t in (
        "test_decode_stream_fallback", "test_decode_skip_special_tokens", "test_from_pretrained",
        "test_from_pretrained_revision", "test_encode_special_tokens", "test_splitting")},
    HF + "test_tokenizer.py::TestTokenizer::test_multiprocessing_with_parallelism": ("skip", HF_FORK),
    HF + "test_tokenizer.py::TestTokenizer::test_has_expected_type_and_methods": ("xfail", HF_API),
    HF + "test_tokenizer.py::TestTokenizer::test_add_tokens_with_normalizer": ("xfail", HF_BYTELEVEL_NORM),
    HF + "test_tokenizer.py::TestTokenizer::test_normalizer_change_refreshes_added_tokens": ("xfail", HF_BYTELEVEL_NORM),
    HF + "test_tokenizer.py::TestTokenizer::test_encode_formats": ("xfail", HF_WORDING),
    **{HF + "test_tokenizer.py::TestTokenizer::" + t: ("xfail", HF_STREAM) for t in (
        "test_decode", "test_decode_stream_copy_and_prefix_ids", "test_decode_stream")},
    HF + "test_tokenizer.py::TestTokenizerRepr": ("xfail", HF_REPR),
    HF + "test_encoding.py::TestEncoding::test_invalid_truncate_direction": ("xfail", HF_WORDING),
    HF + "test_decoders.py::TestMetaspace::test_instantiate": ("xfail", HF_WORDING),
    HF + "test_pre_tokenizers.py::TestMetaspace::test_instantiate": ("xfail", HF_WORDING),
    HF + "test_pre_tokenizers.py::TestCharDelimiterSplit::test_instantiate": ("xfail", HF_WORDING),
    HF + "test_processors.py::TestTemplateProcessing::test_instantiate": ("xfail", HF_WORDING),
    HF + "test_pre_tokenizers.py::TestFixedLength": ("xfail", HF_FIXED),
    HF + "test_pre_tokenizers.py::TestCustomPreTokenizer": ("xfail", HF_CUSTOM),
    HF + "test_normalizers.py::TestCustomNormalizer": ("xfail", HF_CUSTOM),
    HF + "test_models.py::TestUnigram": ("xfail", HF_SAMPLING),
    "tokenizers_suite/implementations/test_bert_wordpiece.py::TestBertWordPieceTokenizer::test_train_from_iterator":
        ("xfail", HF_TRAIN),
    "tokenizers_suite/implementations/test_bert_wordpiece.py::TestBertWordPieceTokenizer::"
    "test_multiprocessing_with_parallelism": ("skip", HF_FORK),
    # long: 100 hypothesis examples each, or 10,000-character repetitions
    "tiktoken_suite/test_encoding.py::test_hyp_roundtrip": ("slow", ""),
    "tiktoken_suite/test_encoding.py::test_hyp_special_ordinary": ("slow", ""),
    "tiktoken_suite/test_encoding.py::test_hyp_batch_roundtrip": ("slow", ""),
    "tiktoken_suite/test_encoding.py::test_catastrophically_repetitive": ("slow", ""),
    "tiktoken_suite/test_offsets.py::test_hyp_offsets": ("slow", ""),
}


def pytest_configure(config: pytest.Config) -> None:
    # markers HF's binding tests use (their own pytest config registers them)
    config.addinivalue_line("markers", "network: HF's mark for tests that download (tokenizers_suite)")
    config.addinivalue_line("markers", "asyncio: HF's mark for async tests (tokenizers_suite)")


def _key(item: pytest.Item) -> str:
    """``path::[Class::]function`` (no parameters), the path relative to tests/conformance."""
    path = item.path.as_posix().split("/tests/conformance/", 1)[-1]
    cls = getattr(item, "cls", None)
    name = getattr(item, "originalname", None) or item.name
    return f"{path}::{cls.__name__ + '::' if cls is not None else ''}{name}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "/tests/conformance/" not in item.path.as_posix():
            continue
        key = _key(item)
        cls = getattr(item, "cls", None)
        found = MARKS.get(key) or (MARKS.get(key.rsplit("::", 1)[0]) if cls is not None else None)
        if found is None:
            continue
        kind, reason = found
        if kind.endswith("+slow"):
            item.add_marker(pytest.mark.slow)
            kind = kind[: -len("+slow")]
        if kind == "xfail-native":
            if kernels.native is None:
                continue
            kind = "xfail"
        if kind == "xfail":
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
        elif kind == "xfail-not-run":
            item.add_marker(pytest.mark.xfail(reason=reason, run=False))
        elif kind == "skip":
            item.add_marker(pytest.mark.skip(reason=reason))
        else:
            item.add_marker(pytest.mark.slow)
