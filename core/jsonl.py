"""Reading the project's JSONL data files (one JSON object per line)."""

from __future__ import annotations

import json
from pathlib import Path


def jsonl_objects(path: Path) -> list[tuple[int, dict[str, object]]]:
    """``(line number, object)`` of each non-empty line of the JSONL file ``path``, in file
    order (line numbers from 1). Raises ``FileNotFoundError`` when it is missing and
    ``ValueError`` naming the file and line for a line that is not a JSON object."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not JSON: {exc}") from exc
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{number}: not a JSON object")
        rows.append((number, row))
    return rows
