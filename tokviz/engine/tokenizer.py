"""The pipeline: added tokens -> normalize -> pre-tokenize -> model -> post-process; and decode.

`Tokenizer` is the one engine behind the GUI, the CLI and the trainers. It is assembled from
components (see the family packages) by the loaders in `tokviz.io`, and keeps every stage of a
run in `Encoding.stages`.

Contract (other work depends on these names):
    Tokenizer.encode(text, *, add_special_tokens=True, allowed_special=None, trace=False) -> Encoding
    Tokenizer.decode(ids, *, skip_special_tokens=False) -> str
    Tokenizer.vocab_size
"""

from __future__ import annotations
