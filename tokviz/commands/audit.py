"""``tokviz audit TOK``: the glitch-token audit of a vocabulary (the Vocabulary tab's numbers).

The work is `tokviz.analysis.audit` (and `tokviz.analysis.embeddings` for ``--embeddings``);
this module parses, calls and prints.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

from ..io.json_text import dumps
from ._options import TOKENIZER_HELP, add_load_options, load_tokenizer

__all__ = ["register", "run", "audit_json"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("audit", help="audit a vocabulary for glitch tokens (no model weights needed)")
    p.add_argument("tokenizer", type=Path, help=TOKENIZER_HELP)
    p.add_argument("--magikarp", action="store_true", help="add magikarp's decode->re-encode categories")
    p.add_argument("--embeddings", type=Path, default=None,
                   help="safetensors file (or its .index.json) for the embedding indicator")
    p.add_argument("--embedding-tensor", default=None, help="tensor name when the file's is not recognised")
    p.add_argument("--reference-ids", default=None,
                   help="comma-separated ids of known unused tokens (tied embeddings)")
    p.add_argument("--json", action="store_true", help="print the counts and flagged tokens as JSON")
    add_load_options(p)
    p.set_defaults(func=run)


def audit_json(tok: Any, *, magikarp: bool = False, embeddings: Path | None = None,
               embedding_tensor: str | None = None, reference_ids: list[int] | None = None,
               progress: Any = None) -> dict[str, Any]:
    """The ``--json`` object (the Vocabulary tab exports the same)."""
    from ..analysis.audit import audit_vocabulary, magikarp_categories

    audit = audit_vocabulary(tok, progress=progress)
    out = audit.summary()
    out["name"] = tok.name
    if magikarp:
        cats = magikarp_categories(tok, progress=progress)
        out["magikarp"] = dict(sorted(Counter(cats.values()).items()))
        if audit.family == "wordpiece":
            out["magikarp_warning"] = (
                "magikarp's decode->re-encode test misfiles WordPiece: every ##x decodes to '##x' and "
                "re-encodes as '#', '#', 'x'; use 'unreachable' (G3 probes) instead"
            )
    if embeddings is not None:
        from ..analysis.embeddings import embedding_report

        out["embeddings"] = embedding_report(
            embeddings, audit, tensor=embedding_tensor, reference_ids=reference_ids
        ).to_json()
    out["tokens"] = audit.flagged()
    return out


def _ids(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--reference-ids: expected comma-separated integers, got {text!r}") from None


def run(args: argparse.Namespace) -> int:
    tok = load_tokenizer(args)
    out = audit_json(tok, magikarp=args.magikarp, embeddings=args.embeddings,
                     embedding_tensor=args.embedding_tensor, reference_ids=_ids(args.reference_ids))
    if args.json:
        print(dumps(out))
        return 0
    print(format_audit(out))
    return 0


def format_audit(out: dict[str, Any]) -> str:
    sb = out["single_byte"]
    st = out["unreachable_by_stage"]
    look = out["special_lookalike"]
    lines = [
        f"{'tokenizer':<26}{out.get('name') or '-'} ({out['family']})",
        f"{'entries':<26}{out['entries']:,}",
        f"{'single-byte tokens':<26}{sum(sb.values()):,} (ascii {sb['ascii']}, UTF-8 lead {sb['utf8_lead']}, "
        f"continuation {sb['utf8_continuation']}, never valid {sb['never_valid']})",
        f"{'partial UTF-8':<26}{out['partial_utf8']:,} multi-byte fragments",
        f"{'duplicate byte pieces':<26}{out['duplicate_byte']:,}",
        f"{'unreachable':<26}{out['unreachable']:,} (normalizer {st['N']}, pre-tokenizer {st['P']}, "
        f"added token {st['A']}, model {st['M']})",
        f"{'special lookalikes':<26}{look['added'] + look['ordinary']:,} ({look['added']} added, {look['ordinary']} ordinary)",
        f"{'merge-shadow fragments':<26}" + ", ".join(f"F_{k[1:]} {v:,}" for k, v in out["fragments"].items()),
    ]
    if out.get("overlaps"):  # categories do not exclude each other
        lines.append(f"{'in two categories':<26}" + ", ".join(f"{k} {v:,}" for k, v in out["overlaps"].items()))
    if "magikarp" in out:
        lines.append(f"{'magikarp categories':<26}" + ", ".join(f"{k} {v:,}" for k, v in out["magikarp"].items()))
        if "magikarp_warning" in out:
            lines.append(f"{'':<26}warning: {out['magikarp_warning']}")
    emb = out.get("embeddings")
    if emb:
        lines.append(f"{'embeddings':<26}{emb['tensor']} {emb['shape']} {emb['dtype']}, "
                     f"{'tied' if emb['tied'] else 'untied'}, indicator {emb['indicator']}")
        lines.append(f"{'':<26}reference: {emb['reference']['name']} ({len(emb['reference']['ids'])} rows)")
        lines.append(f"{'':<26}{len(emb['candidates'])} candidates at or below {emb['threshold']}"
                     f"; {len(emb['padding_rows'])} padding rows beyond the vocabulary (not ranked)")
        for w in emb["warnings"]:
            lines.append(f"{'':<26}warning: {w}")
    return "\n".join(lines)
