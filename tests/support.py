"""Shared test helpers: where the bundles and corpora are, and the CI rule that nothing is skipped.

Import these as ``from support import ...`` (never ``from conftest import``: every test folder
may have its own conftest.py, and the module name ``conftest`` is then ambiguous).
In CI (``CI=true``) a missing reference library or bundle fails the run instead of skipping.
"""

from __future__ import annotations

import gzip
import os
import struct
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _shared_dir() -> Path | None:
    env = os.environ.get("TOKVIZ_SHARED")
    candidates = [Path(env)] if env else []
    candidates += [ROOT.parent / "shared", ROOT.parent.parent / "shared", Path("/work/shared")]
    for c in candidates:
        if (c / "bundles").is_dir():
            return c
    return None


SHARED = _shared_dir()
RESOURCES = ROOT / "resources"


def require(condition: bool, reason: str) -> None:
    """Skip when a fixture is missing, but fail in CI."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)


def require_module(name: str):  # noqa: ANN201
    """Import a reference library, failing in CI if it is missing."""
    try:
        return __import__(name)
    except ImportError:
        require(False, f"reference library {name!r} is not installed")


def bundle_path(rel: str) -> Path:
    """Path of a bundle file, e.g. ``"qwen3/tokenizer.json"``: the shared copy, else the embedded .gz."""
    if SHARED is not None and (SHARED / "bundles" / rel).is_file():
        return SHARED / "bundles" / rel
    gz = RESOURCES / "bundles" / (rel + ".gz")
    require(gz.is_file(), f"bundle {rel} not found")
    return gz


def bundle_bytes(rel: str) -> bytes:
    p = bundle_path(rel)
    data = p.read_bytes()
    return gzip.decompress(data) if p.suffix == ".gz" else data


def corpus_text(name: str) -> str:
    require(SHARED is not None and (SHARED / "corpora" / name).is_file(), f"corpus {name} not found")
    return (SHARED / "corpora" / name).read_text(encoding="utf-8")  # type: ignore[operator]


# Fixtures that may not be committed (licenses, size): .ci/run fills this folder with `pip download`
# (llama-models, openai-whisper, llama-cpp-python's sdist, open-clip-torch) and `npm pack`
# (js-tiktoken, @anthropic-ai/tokenizer) before pytest; locally point
# TOKVIZ_FIXTURE_CACHE at a folder holding those downloads, or the tests skip with a reason.
FIXTURE_CACHE = Path(os.environ.get("TOKVIZ_FIXTURE_CACHE") or ROOT / ".fixture-cache")


def fixture_extract(archive_glob: str, dest: Path) -> Path:
    """Unpack the downloaded package archive matching ``archive_glob`` (a wheel or an sdist in
    `FIXTURE_CACHE`) into ``dest`` and return the folder holding its top-level packages; skip
    (fail in CI) when it was not downloaded."""
    import shutil

    found = sorted(FIXTURE_CACHE.glob(archive_glob)) if FIXTURE_CACHE.is_dir() else []
    require(bool(found), f"{archive_glob} not in the fixture cache {FIXTURE_CACHE} (see .ci/run)")
    archive = found[-1]
    fmt = "zip" if archive.suffix in (".whl", ".zip") else "gztar"
    shutil.unpack_archive(archive, dest, format=fmt)
    tops = [p for p in dest.iterdir() if p.is_dir()]
    # an sdist unpacks into "<name>-<version>/"; a wheel puts its packages at the top
    return tops[0] if fmt == "gztar" and len(tops) == 1 else dest


def fixture_members(archive_glob: str, suffixes: tuple[str, ...], dest: Path) -> dict[str, Path]:
    """Extract only the members of the downloaded archive matching ``archive_glob`` whose paths
    end with one of ``suffixes`` (an sdist of 76 MB holds three files a test needs) into
    ``dest``; ``{suffix: path}``. Skips (fails in CI) when the archive or a member is missing."""
    import tarfile
    import zipfile

    found = sorted(FIXTURE_CACHE.glob(archive_glob)) if FIXTURE_CACHE.is_dir() else []
    require(bool(found), f"{archive_glob} not in the fixture cache {FIXTURE_CACHE} (see .ci/run)")
    archive = found[-1]
    out: dict[str, Path] = {}
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as z:
            for name in z.namelist():
                hit = next((s for s in suffixes if name.endswith(s)), None)
                if hit is not None and hit not in out:
                    out[hit] = dest / Path(name).name
                    out[hit].write_bytes(z.read(name))
    else:
        with tarfile.open(archive) as t:
            for member in t:
                hit = next((s for s in suffixes if member.name.endswith(s)), None)
                if hit is not None and hit not in out and member.isfile():
                    out[hit] = dest / Path(member.name).name
                    out[hit].write_bytes(t.extractfile(member).read())  # type: ignore[union-attr]
    missing = [s for s in suffixes if s not in out]
    require(not missing, f"{archive.name} holds no {', '.join(missing)}")
    return out


def tiktoken_encoding(rel: str):  # noqa: ANN201
    """A `tiktoken.Encoding` built from the bundle ``rel`` (a rank file) with tokviz's preset of its
    published pattern and specials, as the parity tests do (``get_encoding`` would download)."""
    import tempfile

    tiktoken = require_module("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    from tokviz.io.tiktoken_ranks import preset_for

    data = bundle_bytes(rel)
    preset = preset_for(data)
    if preset is None:
        pytest.fail(f"{rel}: not a published tiktoken encoding")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "ranks.tiktoken"
        path.write_bytes(data)
        ranks = load_tiktoken_bpe(str(path))
    return tiktoken.Encoding(preset.name, pat_str=preset.pattern, mergeable_ranks=ranks,
                             special_tokens=dict(preset.special_tokens), explicit_n_vocab=preset.explicit_n_vocab)


def build_charsmap(rules: dict[str, str]) -> bytes:
    """A real Darts-clone double array for ``rules`` (each trie node gets its own 256-unit
    region, so ``base ^ byte == base + byte``), in SentencePiece's blob layout."""
    trie: dict = {}
    for key, _ in rules.items():
        node = trie
        for b in key.encode("utf-8"):
            node = node.setdefault(b, {})
        node[None] = key
    normalized = bytearray()
    offsets: dict[str, int] = {}
    for key, repl in rules.items():
        offsets[key] = len(normalized)
        normalized += repl.encode("utf-8") + b"\0"
    units: dict[int, int] = {}
    next_region = [1]

    def place(node: dict, pos: int, label: int) -> None:
        base = 256 * next_region[0]
        next_region[0] += 1
        leaf = None in node
        if pos == 0:
            units[0] = base << 10
        else:
            units[pos] = label | (int(leaf) << 8) | ((pos ^ base) << 10)
        if leaf:
            units[base] = (1 << 31) | offsets[node[None]]
        for b, child in node.items():
            if b is not None:
                place(child, base + b, b)

    place(trie, 0, 0)
    size = max(units) + 1
    arr = [units.get(i, 0) for i in range(size)]
    trie_blob = struct.pack(f"<{size}I", *arr)
    return struct.pack("<I", len(trie_blob)) + trie_blob + bytes(normalized)


def python_twin(make):  # noqa: ANN001, ANN201 - whatever ``make`` builds
    """``make()`` built with the pure-Python kernels (components pick their kernels when built,
    so the twin runs pure Python in a process that has the native core)."""
    from tokviz.engine import kernels

    saved = kernels.native
    kernels.native = None
    try:
        return make()
    finally:
        kernels.native = saved


class ModuleCache(dict):
    """A test or test-support module's cache of what its tests build (tokenizers, reference
    objects): a dict that tests/conftest.py empties after every test module, so a long session
    holds only what the running module needs."""
