"""JSON Lines: one object per line with ``external_id``, ``url``, ``title``, ``text`` and the
optional ``language``, ``summary``, ``questions`` (list of str) and ``metadata`` (object).

Bad lines (invalid JSON, missing or mistyped fields) are reported with their line number and
skipped; the run still finishes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ingestion.connectors.base import BadRecord, Connector, ConnectorError, DocumentRecord, Record, Section

_REQUIRED = ("external_id", "url", "title", "text")


class JSONLConnector(Connector):
    """Reads one ``.jsonl`` file, or every ``*.jsonl`` file of a folder in name order."""

    name = "jsonl"
    source_key = "jsonl"
    source_name = "JSON Lines import"

    def units(self, path: Path, *, subsets: Sequence[str] = ()) -> list[tuple[Path, int, str]]:
        files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
        if not files or not all(f.is_file() for f in files):
            raise ConnectorError(f"no JSON Lines file at {path}")
        units: list[tuple[Path, int, str]] = []
        for file in files:
            with file.open(encoding="utf-8", errors="replace") as handle:
                units.extend((file, number, line) for number, line in enumerate(handle, start=1) if line.strip())
        return units

    def records(self, unit: tuple[Path, int, str]) -> Iterator[Record]:
        file, number, line = unit
        location = f"{file.name}:{number}"
        try:
            obj: Any = json.loads(line.rstrip("\r\n"))
        except json.JSONDecodeError as exc:
            yield BadRecord(location=location, message=f"invalid JSON: {exc.msg} at column {exc.colno}")
            return
        if not isinstance(obj, dict):
            yield BadRecord(location=location, message="line is not a JSON object")
            return
        missing = [key for key in _REQUIRED if not isinstance(obj.get(key), str) or not obj[key].strip()]
        if missing:
            yield BadRecord(location=location, message=f"missing or empty string field(s): {', '.join(missing)}")
            return
        questions = obj.get("questions", [])
        metadata = obj.get("metadata", {})
        if not isinstance(questions, list) or not all(isinstance(q, str) for q in questions):
            yield BadRecord(location=location, message="'questions' must be a list of strings")
            return
        if not isinstance(metadata, dict):
            yield BadRecord(location=location, message="'metadata' must be an object")
            return
        yield DocumentRecord(
            external_id=obj["external_id"].strip(),
            url=obj["url"].strip(),
            title=obj["title"].strip(),
            sections=(Section(heading="", text=obj["text"]),),
            language=str(obj.get("language") or "nl"),
            context=obj["title"].strip(),
            summary=str(obj.get("summary") or ""),
            questions=tuple(questions),
            metadata=metadata,
        )
