"""The connector interface: a small class per source format.

A connector lists cheap *units* of work (files, lines, rows) so progress can be reported as
``done/total`` before anything is parsed, then turns each unit into records:
:class:`DocumentRecord` (ingest), :class:`SkippedRecord` (a known, counted skip such as an empty
MedQuAD answer) or :class:`BadRecord` (malformed input, reported with its location and skipped).
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ConnectorError(Exception):
    """The path cannot be read by this connector at all (missing, wrong kind)."""


@dataclass(frozen=True)
class Section:
    """A heading and the text under it (heading may be empty)."""

    heading: str
    text: str


@dataclass(frozen=True)
class DocumentRecord:
    """One document as read from a source, before chunking.

    ``context`` is the short document context prepended to every chunk for embedding
    (Contextual Retrieval, Anthropic 2024); ``questions`` are canonical questions the document
    answers, also prepended. ``summary`` is stored but never embedded.
    """

    external_id: str
    url: str
    title: str
    sections: tuple[Section, ...]
    language: str = "nl"
    context: str = ""
    summary: str = ""
    questions: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    def content_hash(self) -> str:
        """SHA-256 hex of everything that ends up in the index for this record."""
        payload = json.dumps(
            {
                "url": self.url,
                "title": self.title,
                "sections": [[s.heading, s.text] for s in self.sections],
                "language": self.language,
                "context": self.context,
                "summary": self.summary,
                "questions": list(self.questions),
                "metadata": self.metadata,
            },
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SkippedRecord:
    """A record deliberately not ingested (counted, not an error)."""

    location: str
    reason: str


@dataclass(frozen=True)
class BadRecord:
    """Malformed input at ``location`` (for example ``file.jsonl:17``); reported and skipped."""

    location: str
    message: str


Record = DocumentRecord | SkippedRecord | BadRecord


class Connector(ABC):
    """Reads one source format. Subclasses set the class attributes and two methods."""

    name: str
    source_key: str
    source_name: str
    licence: str = ""
    description: str = ""

    @abstractmethod
    def units(self, path: Path, *, subsets: Sequence[str] = ()) -> list[Any]:
        """Cheap listing of units of work under ``path``. Raises :class:`ConnectorError`."""

    @abstractmethod
    def records(self, unit: Any) -> Iterator[Record]:
        """Parse one unit into records; never raises for malformed content (yields BadRecord)."""
