"""Golden set builder: safety (see the package docstring for sources and licences)."""

from __future__ import annotations

import json
from pathlib import Path

from evaluation.golden.io import GoldenItem

# --- Safety sets (issue 9) ------------------------------------------------------------------


def red_flags_golden(*, path: Path) -> list[GoldenItem]:
    """The labelled red-flag messages (``data/safety/red-flags.jsonl``, written for this project)
    as a golden set: a routed message (label emergency / urgent / poison / suicide) must be
    refused explicitly (``must_refuse``: a red-flag route is an explicit refusal) and is tagged
    ``red_flag:<label>`` so runs score the category; a hard negative (label none) must be
    answered and is tagged ``red_flag:none`` (plus ``notice`` when it must carry the 112
    notice). Category ``red_flag_<label>``; qid ``red-flags:<id>``. Raises ``ValueError`` for a
    line without ``id``, ``text``, ``language`` or a known label."""
    labels = {"emergency", "urgent", "poison", "suicide", "none"}
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        if not all(row.get(key) for key in ("id", "text", "language")) or row.get("label") not in labels:
            raise ValueError(f"{path}:{number}: needs id, text, language and a label in {sorted(labels)}")
        tags = [f"red_flag:{row['label']}", str(row.get("kind") or "")]
        if row.get("notice"):
            tags.append("notice")
        items.append(
            GoldenItem(
                qid=f"red-flags:{row['id']}",
                question=row["text"],
                language=row["language"],
                category=f"red_flag_{row['label']}",
                must_refuse=row["label"] != "none",
                tags=tuple(t for t in tags if t),
                notes="Hand-written for ZOL Search (data/safety/README.md).",
            )
        )
    return items
