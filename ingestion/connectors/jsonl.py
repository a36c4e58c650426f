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
from urllib.parse import urlsplit

from ingestion.connectors.base import BadRecord, Connector, ConnectorError, DocumentRecord, Record, Section

_REQUIRED = ("external_id", "url", "title", "text")
# Metadata keys that name who published a page, in order of preference.
_PUBLISHER_KEYS = ("organisation", "organization", "hospital", "site", "publisher")


def record_context(*, title: str, url: str, metadata: dict[str, object]) -> str:
    """The document context embedded (and BM25-indexed) before each chunk: the title, then who
    published it (the first of :data:`_PUBLISHER_KEYS` in ``metadata``, else the url's host).

    Contextual Retrieval (Anthropic, 2024): a chunk alone does not say whose page it is, and
    questions often name the hospital or campus ("bezoekuren az sint jan brugge").
    """
    publisher = next((str(metadata[k]).strip() for k in _PUBLISHER_KEYS if str(metadata.get(k) or "").strip()), "")
    publisher = publisher or (urlsplit(url).hostname or "").removeprefix("www.")
    return f"{title.strip()} ({publisher})" if publisher else title.strip()


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
            context=record_context(title=obj["title"], url=obj["url"], metadata=metadata),
            summary=str(obj.get("summary") or ""),
            questions=tuple(questions),
            metadata=metadata,
        )
