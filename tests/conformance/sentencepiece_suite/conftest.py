"""sentencepiece's tests read ``test/test_model.model``, ``test/test_ja_model.model`` and
``test/botchan.txt`` relative to the working directory (its python/ folder): each test runs in a
temporary folder holding those files, from the bundles and the corpus tokviz ships."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import bundle_bytes, corpus_text


@pytest.fixture(autouse=True)
def _sentencepiece_test_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    test = tmp_path / "test"
    test.mkdir()
    for name in ("test_model.model", "test_ja_model.model"):
        (test / name).write_bytes(bundle_bytes(f"sentencepiece-test/{name}"))
    (test / "botchan.txt").write_text(corpus_text("botchan.txt"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
