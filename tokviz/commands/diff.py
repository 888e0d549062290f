"""``tokviz diff OLD NEW``: what changed between two tokenizers (entries, merges, specials,
pipeline), and with ``--corpus`` the vocabulary-extension regression check (seed §4.5 / D08).
The logic is `tokviz.analysis.vocab_diff`; this module parses, calls and prints.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

__all__ = ["register", "run", "format_diff"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("diff", help="vocabulary / merges / specials / pipeline diff of two tokenizers")
    p.add_argument("old", type=Path, help="the old tokenizer file")
    p.add_argument("new", type=Path, help="the new tokenizer file")
    p.add_argument(
        "--corpus", help="re-encode this corpus (file, folder or glob) with both: the regression check"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    from ..cli import add_load_options
    from .corpus_options import add_corpus_options

    add_corpus_options(p, mode="lines")
    add_load_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.vocab_diff import vocab_diff
    from ..cli import load_tokenizer

    def load(path: Path):  # noqa: ANN202
        return load_tokenizer(
            argparse.Namespace(tokenizer=path, pattern=args.pattern, special_tokens=args.special_tokens)
        )

    old, new = load(args.old), load(args.new)
    d = vocab_diff(old, new, old_name=str(args.old), new_name=str(args.new))
    out = d.to_json()
    if args.corpus is not None:
        out["regression"] = {"corpus": str(args.corpus), "mode": args.mode, **_regression(args, old, new).to_json()}
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(format_diff(out))
    return 0


def _regression(args: argparse.Namespace, old, new):  # noqa: ANN001, ANN202 - RegressionReport
    """The regression check over the corpus, on the executor of --workers / --scheduler."""
    from ..analysis.corpus_jobs import regression_corpus
    from .corpus_options import Progress, read_options, spec_of

    specs = (spec_of(args, args.old), spec_of(args, args.new))
    return regression_corpus(old, new, args.corpus, specs=specs, read=read_options(args), scheduler=args.scheduler,
                             workers=args.workers, progress=Progress("diff", args))


def format_diff(out: dict) -> str:  # type: ignore[type-arg]
    """The human-readable diff: counts first, then samples, specials, pipeline, regression."""
    e, m = out["entries"], out["merges"]
    lines = [
        f"old: {out['old']}",
        f"new: {out['new']}",
        f"entries ({e['unit']}): old {e['old']:,}, new {e['new']:,}; same {e['same']:,}, "
        f"added {e['added']:,}, deleted {e['deleted']:,}, remapped {e['remapped']:,}",
    ]
    for kind in ("added", "deleted", "remapped"):
        for c in e[f"{kind}_sample"][:5]:
            lines.append(f"  {kind:<9} {_quote(c['surface']):<24} ids {c['old_ids']} -> {c['new_ids']}")
    if m.get("comparable"):
        lines.append(
            f"merges: old {m['old']:,}, new {m['new']:,}; same rank {m['same_rank']:,}, "
            f"rank changed {m['rank_changed']:,}, added {m['added']:,}, deleted {m['deleted']:,}"
        )
    else:
        lines.append(f"merges: not comparable ({m['why']})")
    sp = out["specials"]
    lines.append(
        f"specials: added {sp['added'] or '-'}, deleted {sp['deleted'] or '-'}, remapped {sp['remapped'] or '-'}"
    )
    lines.append("pipeline:" + ("" if out["pipeline"] else " unchanged"))
    for c in out["pipeline"]:
        lines.append(f"  {c['path']}: {c['old']!r} -> {c['new']!r}")
    r = out.get("regression")
    if r is not None:
        lines.append(
            f"regression on {r['corpus']} ({r['mode']}): {r['changed']:,} of {r['documents']:,} documents "
            f"encode differently, {r['roundtrip_lost']:,} lost their round trip -> "
            f"{'PASS' if r['passed'] else 'FAIL'}"
        )
        for c in r["cases"][:10]:
            lines.append(
                f"  doc {c['document']} token {c['token_index']} (char {c['char_offset']}): "
                f"{c['old_token']} -> {c['new_token']}  {c['preview'][:40]!r}"
            )
    return "\n".join(lines)


def _quote(s: str) -> str:
    return "'" + s.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + "'"
