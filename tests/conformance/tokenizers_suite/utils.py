"""The fixtures HF's binding tests import from their ``tests/utils.py`` (which is not vendored:
it downloads from the Hub and sets the process-wide multiprocessing start method on import).
``bert_files`` is the bert-base-uncased ``vocab.txt`` tokviz's bundles ship (the same bytes as
the file HF downloads); every other file set needs a download, so its tests are skipped."""

from __future__ import annotations

import pytest

from support import bundle_path

NEEDS_DOWNLOAD = "needs a download from the Hugging Face Hub (hf-internal-testing/tokenizers-test-data)"


@pytest.fixture(scope="session")
def data_dir() -> None:
    return None


@pytest.fixture(scope="session")
def bert_files(data_dir: None) -> dict[str, str]:
    return {"vocab": str(bundle_path("bert-base-uncased/vocab.txt"))}


def _download(name: str):
    @pytest.fixture(scope="session", name=name)
    def fixture(data_dir: None) -> None:
        pytest.skip(NEEDS_DOWNLOAD)

    return fixture


roberta_files = _download("roberta_files")
openai_files = _download("openai_files")
train_files = _download("train_files")
albert_base = _download("albert_base")
doc_wiki_tokenizer = _download("doc_wiki_tokenizer")
doc_pipeline_bert_tokenizer = _download("doc_pipeline_bert_tokenizer")


def multiprocessing_with_parallelism(tokenizer: object, enabled: bool) -> None:
    pytest.skip("about the Rust library's thread pool (TOKENIZERS_PARALLELISM) across a fork")
