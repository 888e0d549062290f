"""The pre-tokenizers llama.cpp uses for each ``tokenizer.ggml.pre`` name of a GGUF file.

A GGUF file does not store its pre-tokenizer: it stores a *name* (``"qwen2"``, ``"llama-bpe"``,
``"gpt-2"`` ...) and llama.cpp (``src/llama-vocab.cpp``) maps the name to a list of regexes
that it applies in turn, each splitting every fragment into matches and the gaps between them
(HF's ``Split(behavior="Isolated")``), then to flags (``ignore_merges``, ``add_bos``). This
module is that table, as data: `pre_spec(name)` gives a `PreSpec`, an unknown name is a
`TokvizFormatError` naming it.

Where llama.cpp's source keeps the original tokenizer.json regex in a comment next to an
"adapted" one (it rewrites ``(?i:'s|...)`` as ``'[sS]|...`` and possessive quantifiers for its
own regex engine), the original is used here: the engine's Split reads HF's regex dialect, and
the original is what the model's own tokenizer.json runs.

A few names are tokenized by custom C++ in llama.cpp rather than by regexes (``kimi-k2``,
``afmoe``, ``whitespace``): those are refused with a message saying so, never approximated.
``gemma4`` and ``sarvam-moe`` are SentencePiece-style BPE (spaces escaped to U+2581, raw UTF-8
pieces, ``<0xXX>`` byte tokens): their `PreSpec` says so and `gguf` builds that pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ..engine.errors import TokvizFormatError

__all__ = ["PreSpec", "pre_spec", "known_pre_names", "GPT2_REGEX"]


@dataclass(frozen=True, slots=True)
class PreSpec:
    """One llama.cpp pre-tokenizer type: its regexes and the flags llama.cpp sets with it."""

    kind: str  # llama.cpp's LLAMA_VOCAB_PRE_TYPE_* name, lower case
    regexes: tuple[str, ...]
    ignore_merges: bool = False  # a chunk that is itself a token is emitted whole
    add_bos: bool = False  # llama.cpp's default before the GGUF's add_bos_token key
    add_sep: bool = False
    # SentencePiece-style BPE (gemma4, sarvam-moe): spaces become U+2581 before the split, the
    # pieces stay raw UTF-8 (no GPT-2 byte alphabet) and byte tokens are spelled <0xXX>
    escape_whitespaces: bool = False
    # gemma4 only: a chunk of newlines that is itself a token is emitted whole
    whole_newline_runs: bool = False


# The GPT-2 regex (llama.cpp leaves out HF's final "|\s+": an unmatched whitespace character
# then becomes a fragment of its own, which is what "\s+" would have matched).
GPT2_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
_LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN2 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN35 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_GPT4O = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_GRANITE_EMB_MULTI = (
    r"[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
    r"|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_TEKKEN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_JAIS2 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
    r"|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)"
    r"|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}"
)
_DEEPSEEK3_MAIN = (
    r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
    r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_SPARK_MAIN = (
    r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
    r"| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+"
)
_YOUTU = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_CJK_DEEPSEEK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"
# the letter class as llama.cpp writes it (code points escaped: several are NFC singletons,
# U+2126 OHM and U+212A KELVIN among them, which an editor may silently normalize)
_DEEPSEEK_LLM_LETTERS = (
    "\\s?["
    "A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293"
    "\u0295-\u02af\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c"
    "\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5"
    "\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77"
    "\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59"
    "\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc"
    "\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107"
    "\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139"
    "\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee"
    "\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e"
    "\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a"
    "\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2"
    "\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943"
    "]+"
)
# SentencePiece-style BPE runs over whole lines: only runs of newlines are split off
_NEWLINE_RUNS = r"[^\n]+|[\n]+"
_KANA_HAN = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
_BLOOM = r" ?[^(\s|.,!?…。，、।۔،)]+"


def _specs() -> dict[str, PreSpec]:
    """llama.cpp's pre-tokenizer names mapped to their split patterns and flags: a table, one entry
    per name, kept in one place as `llama-vocab.cpp` keeps it."""
    gpt2 = PreSpec("gpt2", (GPT2_REGEX,))
    llama3 = PreSpec("llama3", (_LLAMA3,), ignore_merges=True, add_bos=True)
    qwen2 = PreSpec("qwen2", (_QWEN2,))
    starcoder = PreSpec("starcoder", (r"\p{N}", GPT2_REGEX))
    gpt4o = PreSpec("gpt4o", (_GPT4O,))
    deepseek3 = PreSpec("deepseek3_llm", (r"\p{N}{1,3}", _KANA_HAN, _DEEPSEEK3_MAIN))
    bloom = PreSpec("bloom", (_BLOOM,))
    bailing = PreSpec(
        "bailingmoe",
        (r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+",),
    )
    groups: list[tuple[tuple[str, ...], PreSpec]] = [
        (
            ("default",),
            PreSpec("default", (r"[\p{P}\$\+<=>\^~\|]+", GPT2_REGEX, r"\p{N}+", r"[0-9][0-9][0-9]")),
        ),
        (("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"), llama3),
        (("dbrx",), PreSpec("dbrx", (_LLAMA3,))),
        (("smaug-bpe",), PreSpec("smaug", (_LLAMA3,))),
        (("glm4", "chatglm-bpe"), PreSpec("chatglm4", (_LLAMA3,))),
        (("jais-2",), PreSpec("jais2", (_JAIS2,))),
        (
            ("deepseek-llm",),
            PreSpec(
                "deepseek_llm",
                ("[\r\n]", _DEEPSEEK_LLM_LETTERS, r"\s?[!-/:-~！-／：-～‘-‟　-。]+", r"\s+$", _CJK_DEEPSEEK, r"\p{N}+"),
            ),
        ),
        (("deepseek-coder",), PreSpec("deepseek_coder", ("[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _CJK_DEEPSEEK, r"\p{N}"))),
        (("deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"), deepseek3),
        (("spark2_5",), PreSpec("spark2_5", (r"\p{N}{1,3}", _KANA_HAN, _SPARK_MAIN, r"\p{N}"))),
        (
            ("youtu",),
            PreSpec("youtu", ("[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|" + _KANA_HAN, _YOUTU), ignore_merges=True),
        ),
        (
            ("falcon",),
            PreSpec(
                "falcon",
                (r"[\p{P}\$\+<=>\^~\|`]+", r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)", r"[0-9][0-9][0-9]"),
            ),
        ),
        (("starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"), starcoder),
        (
            (
                "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
                "mellum", "modern-bert", "exaone4", "mpt", "olmo", "jais", "trillion", "granite-docling",
            ),
            gpt2,
        ),
        (("jina-v1-en", "jina-v2-code", "roberta-bpe"), PreSpec("gpt2", (GPT2_REGEX,), add_sep=True)),
        (
            ("qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan", "solar-open"),
            qwen2,
        ),
        (("qwen35",), PreSpec("qwen35", (_QWEN35,))),
        (("poro-chat", "bloom", "gpt3-finnish"), bloom),
        (("viking",), PreSpec("viking", (_BLOOM, r"\p{N}"))),
        (("tekken",), PreSpec("tekken", (_TEKKEN,), ignore_merges=True, add_bos=True)),
        # llama.cpp also forces add_bos on for gemma4 after the file's key (see `gguf`)
        (
            ("gemma4", "granite-embed-multi-311m"),
            PreSpec("gemma4", (_NEWLINE_RUNS,), escape_whitespaces=True, whole_newline_runs=True),
        ),
        (("sarvam-moe",), PreSpec("sarvam_moe", (_NEWLINE_RUNS,), escape_whitespaces=True)),
        (
            ("chameleon",),
            PreSpec(
                "chameleon",
                (
                    r"<sentinel:[0-9]+>",
                    r"(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
                    r"([\t\n]|    |  )",
                    r"\p{N}",
                    r"[\p{P}!-/:-@\[-`{-~]",
                    GPT2_REGEX,
                ),
                add_bos=True,
            ),
        ),
        (("gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"), gpt4o),
        (("granite-embed-multi-97m",), PreSpec("granite_emb_multi", (_GRANITE_EMB_MULTI,), ignore_merges=True)),
        (
            ("tiny_aya", "cohere2moe"),
            PreSpec("tiny_aya", (r"\d{1,3}(?=(?:\d{3})*\b)", _GPT4O)),
        ),
        (("superbpe",), PreSpec("superbpe", (r"\p{N}+", r"(?=(\d{3})+(?!\d))"))),
        (("bailingmoe", "bailingmoe2", "llada-moe"), bailing),
        (
            ("seed-coder",),
            PreSpec(
                "seed_coder",
                (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+",),
            ),
        ),
        (
            ("ufakzeka",),
            PreSpec("ufakzeka", (r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",)),
        ),
        (("grok-2",), PreSpec("grok_2", (_QWEN2,))),
        (("laguna",), PreSpec("laguna", (r"[^\n]+|[\n]+", _QWEN2))),
        (
            ("exaone-moe",),
            PreSpec(
                "exaone_moe",
                (
                    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}"
                    r"| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+",
                ),
            ),
        ),
        (
            ("minicpm5",),
            PreSpec(
                "minicpm5",
                (
                    r"\p{N}{1,3}",
                    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
                ),
                ignore_merges=True,
            ),
        ),
    ]
    out: dict[str, PreSpec] = {}
    for names, spec in groups:
        for name in names:
            out[name] = spec
    return out


SPECS: Mapping[str, PreSpec] = MappingProxyType(_specs())

# Names llama.cpp knows but tokenizes with hand-written code (no regex list reproduces them).
CUSTOM_CODE: frozenset[str] = frozenset(
    {"kimi-k2", "afmoe", "whitespace"}
)


def known_pre_names() -> list[str]:
    """Every ``tokenizer.ggml.pre`` name this table maps, sorted."""
    return sorted(SPECS)


def pre_spec(name: str | None, *, source: str | None = None) -> PreSpec:
    """The pre-tokenizer of ``tokenizer.ggml.pre`` = ``name`` (missing: llama.cpp's ``default``).

    >>> pre_spec("qwen2").kind, len(pre_spec("starcoder").regexes)
    ('qwen2', 2)
    """
    if name is None or name == "":
        name = "default"
    spec = SPECS.get(name)
    if spec is not None:
        return spec
    if name in CUSTOM_CODE:
        raise TokvizFormatError(
            f"pre-tokenizer {name!r}: llama.cpp tokenizes it with custom code that tokviz does not reproduce",
            source=source,
            where="tokenizer.ggml.pre",
        )
    raise TokvizFormatError(
        f"unknown pre-tokenizer {name!r} (llama.cpp's src/llama-vocab.cpp names {len(SPECS)} of them, "
        "e.g. gpt-2, llama-bpe, qwen2, deepseek-v3, gpt-4o)",
        source=source,
        where="tokenizer.ggml.pre",
    )
