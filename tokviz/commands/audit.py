"""``tokviz audit TOK``: the glitch-token audit of a vocabulary (the Vocabulary tab's numbers).

The work is `tokviz.analysis.audit` (and `tokviz.analysis.embeddings` for ``--embeddings``);
``--corpus C`` adds every entry's frequency over a corpus (on the local cores or a Dask cluster,
`tokviz.analysis.corpus_jobs.token_counts`) and the entries never or rarely seen, joined with the
audit's categories; this module parses, calls and prints.
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
    p.add_argument("--corpus", default=None, help="count every entry over this corpus (file, folder or glob)")
    p.add_argument("--rare", type=int, default=2, metavar="N",
                   help="with --corpus: entries seen at most N times are 'rarely seen' (default 2)")
    p.add_argument("--json", action="store_true", help="print the counts and flagged tokens as JSON")
    from .corpus_options import add_corpus_options

    add_corpus_options(p, mode="lines")
    add_load_options(p)
    p.set_defaults(func=run)


def audit_json(tok: Any, *, magikarp: bool = False, embeddings: Path | None = None,
               embedding_tensor: str | None = None, reference_ids: list[int] | None = None,
               progress: Any = None, counts: Any = None, rare: int = 2) -> dict[str, Any]:
    """The ``--json`` object (the Vocabulary tab exports the same); ``counts``: the corpus's
    `tokviz.analysis.corpus_jobs.TokenCounts` (adds ``corpus`` and every flagged token's ``count``)."""
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
    if counts is not None:
        from ..analysis.corpus_jobs import audit_with_counts

        out["corpus"] = audit_with_counts(audit, counts, rare=rare)
        for row in out["tokens"]:
            row["count"] = counts.count(row["id"])
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
    if args.rare < 0:
        raise ValueError(f"--rare must be 0 or more, got {args.rare}")
    counts = _corpus_counts(args, tok) if args.corpus is not None else None
    out = audit_json(tok, magikarp=args.magikarp, embeddings=args.embeddings,
                     embedding_tensor=args.embedding_tensor, reference_ids=_ids(args.reference_ids),
                     counts=counts, rare=args.rare)
    if args.json:
        print(dumps(out))
        return 0
    print(format_audit(out))
    return 0


def _corpus_counts(args: argparse.Namespace, tok: Any) -> Any:  # noqa: ANN401 - TokenCounts
    from ..analysis.corpus_jobs import token_counts
    from .corpus_options import Progress, read_options, spec_of

    return token_counts(tok, args.corpus, spec=spec_of(args, args.tokenizer), read=read_options(args),
                        scheduler=args.scheduler, workers=args.workers, progress=Progress("audit", args))


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
    if "corpus" in out:
        lines += _format_corpus(out["corpus"])
    return "\n".join(lines)


def _format_corpus(c: dict[str, Any]) -> list[str]:
    """The corpus lines: totals, never/rarely seen by category, the first entries of concern."""
    cats = ", ".join(f"{k} {v:,}" for k, v in c["never_seen_by_category"].items()) or "none flagged"
    lines = [
        f"{'corpus':<26}{c['path']} ({c['mode']}): {c['documents']:,} documents, {c['tokens']:,} tokens, "
        f"{c['distinct_ids']:,} distinct ids",
        f"{'never seen':<26}{c['never_seen']:,} entries ({cats}); {c['never_seen_expected']:,} special/added",
        f"{'rarely seen':<26}{c['rarely_seen']:,} entries (1 to {c['rare_threshold']} times)",
    ]
    for e in c["entries"][:20]:
        lines.append(f"{'':<26}{e['id']:>7} {e['vocab']!r:<24} seen {e['count']:,}  {' '.join(e['categories'])}")
    return lines
