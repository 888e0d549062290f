"""Embedded data shipped with tokviz: default tokenizer bundles (see NOTICE), sample texts, toy corpus.

Installed as the ``tokviz.resources`` package; `resource_path` finds a file whether tokviz runs
from a checkout or from an installed wheel.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["resource_path", "RESOURCES"]

RESOURCES = Path(__file__).resolve().parent


def resource_path(*parts: str) -> Path:
    return RESOURCES.joinpath(*parts)
