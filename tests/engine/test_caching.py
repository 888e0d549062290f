"""`BoundedCache`, the engine's one cache type, and `Tokenizer.clear_caches` over every cache."""

from __future__ import annotations

import pickle

from hypothesis import given, strategies as st

from tokviz.engine.byte_alphabet import BYTE_TO_CHAR
from tokviz.engine.caching import BoundedCache, clear_shared_caches
from tokviz.engine.models.bpe import BPE
from tokviz.engine.pre_tokenizers.byte_level import ByteLevel
from tokviz.engine.pretokenized import _PROXY_CACHE
from tokviz.engine.text import NormalizedText
from tokviz.engine.tokenizer import Tokenizer


def byte_level_tokenizer() -> Tokenizer:
    """A byte-level BPE that knows "hello" (GPT-2's ByteLevel pre-tokenizer)."""
    vocab = {c: i for i, c in enumerate(BYTE_TO_CHAR)}
    merges = [("h", "e"), ("he", "l"), ("hel", "l"), ("hell", "o")]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    return Tokenizer(BPE(vocab, merges), pre_tokenizer=ByteLevel(add_prefix_space=False))


class TestBoundedCache:
    def test_put_drops_the_older_half_when_full(self) -> None:
        c = BoundedCache(4)
        for k in "abcd":
            c.put(k, k)
        c.put("e", "e")  # full at 4: the older half plus one (a, b, c) goes first
        assert list(c) == ["d", "e"]

    def test_long_keys_and_a_zero_limit_store_nothing(self) -> None:
        c = BoundedCache(10, max_key_chars=3)
        c.put("abcd", 1)
        c.put("abc", 2)
        assert dict(c) == {"abc": 2}
        z = BoundedCache(0)
        z.put("a", 1)
        assert not z

    @given(st.lists(st.text(alphabet="abcdef", max_size=4), max_size=60), st.integers(0, 8))
    def test_entries_equal_make_and_stay_bounded(self, keys: list[str], limit: int) -> None:
        c = BoundedCache(limit, max_key_chars=3)
        made: list[str] = []

        def make(k: str) -> str:
            made.append(k)
            return k.upper()

        for batch in (keys, keys[::-1], keys[:1]):
            assert c.entries(list(batch), make) == [k.upper() for k in batch]
            assert len(c) <= limit
            assert all(len(k) <= 3 for k in c)
        assert len(made) <= 3 * len(set(keys))  # (each distinct key once per batch at most)

    def test_pickles_empty(self) -> None:
        c = BoundedCache(5, max_key_chars=2)
        c.put("a", 1)
        back = pickle.loads(pickle.dumps(c))
        assert (len(back), back.limit, back.max_key_chars) == (0, 5, 2)


class TestClearCaches:
    def test_clears_the_pipeline_the_model_and_the_shared_proxy_cache(self) -> None:
        tok = byte_level_tokenizer()
        tok.encode("hello hello")
        tok.model.tokenize("hello")
        plan = tok.pre_tokenizer.plan(NormalizedText.identity("héllo"))
        plan.chunks()  # the stage view's byte proxies (process-wide)
        assert tok._plain_cache or tok._mapped_cache
        assert tok.model._cache and _PROXY_CACHE
        tok.clear_caches()
        assert not tok._plain_cache and not tok._mapped_cache
        assert not tok.model._cache and not _PROXY_CACHE
        assert tok.encode("hello hello").tokens == ["hello", "Ġ", "hello"]  # (results never depend on them)

    def test_clear_shared_caches(self) -> None:
        shared = BoundedCache(3, shared=True)
        shared.put("x", 1)
        clear_shared_caches()
        assert not shared


class TestLongChunksSkipTheCache:
    def test_a_chunk_above_the_limit_is_encoded_but_not_cached(self) -> None:
        from tokviz.engine.tokenizer import CHUNK_CACHE_MAX_CHARS

        tok = byte_level_tokenizer()
        long_word = "hello" * (CHUNK_CACHE_MAX_CHARS // 5 + 1)  # one ByteLevel chunk (letters only)
        assert len(long_word) > CHUNK_CACHE_MAX_CHARS
        enc = tok.encode(f"{long_word} hello")
        # GPT-2's split: the long run of letters, then " hello" (its space becomes "Ġ")
        assert enc.tokens == ["hello"] * (len(long_word) // 5) + ["Ġ", "hello"]
        cached = set(tok._plain_cache) | set(tok._mapped_cache)
        assert cached and all(len(k) <= CHUNK_CACHE_MAX_CHARS for k in cached)
        assert tok.encode(f"{long_word} hello").ids == enc.ids  # (the same without the cache)
