"""Parity inputs shared by every bundle: tricky strings, corpus lines and documents, llama.cpp vectors.

Each case is ``(case_id, text)``; ids are readable so a failing case names itself.
"""

from __future__ import annotations

from support import SHARED, corpus_text

TRICKY: list[tuple[str, str]] = [
    ("empty", ""),
    ("space", " "),
    ("spaces-run", "a     b      c"),
    ("leading-trailing-spaces", "   hello world   "),
    ("only-newlines", "\n\n\n"),
    ("crlf", "line one\r\nline two\r\n\r\nend"),
    ("tabs", "\tindented\t\tcode\t"),
    ("mixed-ws", " \t\n \r\n\u000b\u000c x"),
    ("nbsp", "price:\u00a0100\u00a0€ and\u202fthin"),
    ("zero-width", "zero\u200bwidth\u200cjoin\u200dnon\ufeffbom"),
    ("bom-start", "\ufeffstarts with a BOM"),
    ("zwj-emoji", "family: 👨\u200d👩\u200d👧\u200d👦 and 🏳\ufe0f\u200d🌈"),
    ("skin-tones", "👍🏻👍🏼👍🏽👍🏾👍🏿 waving 👋🏽"),
    ("emoji-run", "🙂🙂🙂😀😃😄😁😆😅🤣😂"),
    ("combining", "e\u0301 vs é, a\u0308\u0304 and Z\u0327\u030c"),
    ("zalgo", "h\u0335\u0321e\u0334\u0322l\u0336\u0323l\u0337\u0324o\u0338"),
    ("fullwidth", "ＡＢＣ１２３！？　ｆｕｌｌ"),
    ("ligatures", "ﬁnance ﬂow ﬀ ﬃ ﬄ Ǆ ǅ ǆ"),
    ("compat", "① ② ㊀ ㍻ ℃ № ™ ½ x² H₂O"),
    ("digits-long", "1234567890123456789012345678901234567890"),
    ("digits-mixed", "3.14159, 2,718 and 1e-10; ١٢٣ ۴۵۶ ४५६ ๑๒๓"),
    ("cjk", "我们在人工智能领域取得了进展。日本語のテキストも。한국어 텍스트"),
    ("cjk-ext-b", "𠀀𠀁𪜀 rare 龘 characters"),
    ("arabic", "مرحبا بالعالم، هذا اختبار."),
    ("hebrew", "שלום עולם! זה מבחן."),
    ("devanagari", "नमस्ते दुनिया, यह एक परीक्षण है।"),
    ("thai", "สวัสดีชาวโลก นี่คือการทดสอบ"),
    ("control-chars", "a\x00b\x01c\x07d\x1be\x7f"),
    ("special-literals", "<|endoftext|> hi <s> </s> [CLS] [SEP] <|im_start|>user<|im_end|> [UNK] <unk>"),
    ("special-literal-glued", "x<|endoftext|>y<s>z[SEP]w"),
    ("code", "def f(x):\n    return x**2  # square\n\nif __name__ == '__main__':\n\tprint(f(3))\n"),
    ("contractions", "I'm you're he'll we've they'd it's CAN'T WON'T"),
    ("punctuation-runs", "!!!??? ... --- *** ((( ))) \"quoted\" 'single' `tick`"),
    ("urls", "https://example.com/path?q=1&r=two#frag user@mail.org"),
    ("ascii-art", "¯\\_(ツ)_/¯ ( ͡° ͜ʖ ͡°) ʕ•ᴥ•ʔ"),
    ("mixed-scripts", "Hello世界مرحباПривет🌍123"),
    ("cased", "HELLO Hello hello hElLo İstanbul ß ǅ"),
    ("accents", "Héllò hôw àré ü? Ñandú Ångström"),
    ("replacement-char", "bad \ufffd char"),
    ("private-use", "\ue000\uf8ff private"),
    ("variation-selectors", "❤\ufe0f ❤\ufe0e ☺\ufe0f"),
    ("long-word", "Pneumonoultramicroscopicsilicovolcanoconiosis" * 3),
    ("repeat-char", "a" * 300),
    ("repeat-space", " " * 200 + "x"),
    ("symbols", "∀x∈ℝ: x²≥0 ⇒ √x² = |x| ∑∏∫ ≠ ≤ ≥"),
    ("metaspace-literal", "a▁b ▁▁ c"),
    ("gpt2-proxy-literal", "ĠĊ Ġhello"),
]


def llamacpp_vectors(name: str, folder: str = "llamacpp-vectors") -> list[tuple[str, list[int]]]:
    """``(text, expected_ids)`` from ``<folder>/ggml-vocab-<name>.gguf.{inp,out}`` (llama.cpp's
    test-tokenizer format: each text followed by a ``__ggml_vocab_test__`` line)."""
    assert SHARED is not None
    base = SHARED / "bundles" / folder
    inp = (base / f"ggml-vocab-{name}.gguf.inp").read_text(encoding="utf-8")
    out = (base / f"ggml-vocab-{name}.gguf.out").read_text(encoding="utf-8")
    # every case is followed by a separator line, so the last split is the empty tail
    texts = inp.split("\n__ggml_vocab_test__\n")[:-1]
    ids = out.split("\n")[: len(texts)]
    if len(ids) != len(texts):
        raise ValueError(f"llama.cpp vectors {name}: {len(texts)} texts but {len(ids)} id lines")
    result = []
    for text, line in zip(texts, ids):
        result.append((text, [int(x) for x in line.split()]))
    return result


def corpus_lines(name: str, limit: int | None = None) -> list[str]:
    lines = corpus_text(name).splitlines(keepends=True)
    return lines if limit is None else lines[:limit]


def corpus_document(name: str) -> str:
    return corpus_text(name)
