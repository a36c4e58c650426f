"""Golden sets as JSONL: one question per line, validated field by field.

Line shape (every key but ``qid`` and ``question`` optional)::

    {"qid": "medquad:GARD:0004450:3", "question": "What are the symptoms of …?", "language": "en",
     "category": "symptoms", "expected_entities": ["Aicardi syndrome"],
     "synonyms": {"Aicardi syndrome": ["Callosal agenesis and ocular abnormalities"]},
     "expected_urls": ["https://rarediseases.info.nih.gov/gard/5/aicardi-syndrome"],
     "must_refuse": false, "tags": ["heldout"], "notes": ""}
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

FIELDS = (
    "qid",
    "question",
    "language",
    "category",
    "expected_entities",
    "synonyms",
    "expected_urls",
    "must_refuse",
    "tags",
    "notes",
)


class GoldenFormatError(ValueError):
    """A line of a golden JSONL file is invalid; the message starts with ``file:line:``."""


@dataclass(frozen=True)
class GoldenItem:
    """One golden question as plain data (the JSONL line, validated)."""

    qid: str
    question: str
    language: str = "nl"
    category: str = "general"
    expected_entities: tuple[str, ...] = ()
    synonyms: dict[str, list[str]] = field(default_factory=dict)
    expected_urls: tuple[str, ...] = ()
    must_refuse: bool = False
    tags: tuple[str, ...] = ()
    notes: str = ""

    def as_json(self) -> dict[str, Any]:
        """JSON-ready dict with every field, lists for tuples."""
        data = asdict(self)
        for key in ("expected_entities", "expected_urls", "tags"):
            data[key] = list(data[key])
        return data


def _strings(value: object, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{name} must be a list of strings")
    return tuple(v.strip() for v in value if v.strip())


def golden_item_parse(data: object) -> GoldenItem:
    """Validate one decoded line. Raises ``ValueError`` naming the bad field."""
    if not isinstance(data, dict):
        raise ValueError("each line must be a JSON object")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(FIELDS)}")
    qid, question = data.get("qid"), data.get("question")
    if not isinstance(qid, str) or not qid.strip() or any(ch.isspace() for ch in qid.strip()):
        raise ValueError("qid must be a non-empty string without whitespace")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must be a non-empty string")
    language = data.get("language", "nl")
    if not (isinstance(language, str) and len(language) == 2 and language.isalpha()):
        raise ValueError("language must be a two-letter ISO 639-1 code")
    category = data.get("category", "general")
    if not isinstance(category, str) or not category.strip() or len(category) > 40:
        raise ValueError("category must be a non-empty string of at most 40 characters")
    synonyms = data.get("synonyms", {})
    if not isinstance(synonyms, dict) or not all(
        isinstance(k, str) and isinstance(v, list) and all(isinstance(s, str) for s in v) for k, v in synonyms.items()
    ):
        raise ValueError("synonyms must map each entity to a list of strings")
    must_refuse = data.get("must_refuse", False)
    if not isinstance(must_refuse, bool):
        raise ValueError("must_refuse must be true or false")
    notes = data.get("notes", "")
    if not isinstance(notes, str):
        raise ValueError("notes must be a string")
    return GoldenItem(
        qid=qid.strip(),
        question=question.strip(),
        language=language.lower(),
        category=category.strip(),
        expected_entities=_strings(data.get("expected_entities", []), "expected_entities"),
        synonyms={k: list(v) for k, v in synonyms.items()},
        expected_urls=_strings(data.get("expected_urls", []), "expected_urls"),
        must_refuse=must_refuse,
        tags=_strings(data.get("tags", []), "tags"),
        notes=notes,
    )


def golden_jsonl_read(handle: TextIO, *, name: str = "<jsonl>") -> list[GoldenItem]:
    """Parse every non-blank line. Raises :class:`GoldenFormatError` (``name:line: reason``) on
    the first invalid line or a repeated qid, so nothing half-valid is imported."""
    items: list[GoldenItem] = []
    seen: set[str] = set()
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            item = golden_item_parse(json.loads(line))
        except json.JSONDecodeError as exc:
            raise GoldenFormatError(f"{name}:{number}: invalid JSON: {exc.msg}") from exc
        except ValueError as exc:
            raise GoldenFormatError(f"{name}:{number}: {exc}") from exc
        if item.qid in seen:
            raise GoldenFormatError(f"{name}:{number}: qid {item.qid!r} appears twice")
        seen.add(item.qid)
        items.append(item)
    if not items:
        raise GoldenFormatError(f"{name}: no questions found")
    return items


def golden_jsonl_load(path: Path) -> list[GoldenItem]:
    """:func:`golden_jsonl_read` of a file (UTF-8)."""
    with Path(path).open(encoding="utf-8") as handle:
        return golden_jsonl_read(handle, name=str(path))


def golden_jsonl_write(items: Iterable[GoldenItem], handle: TextIO) -> int:
    """Write one canonical JSON line per item (keys in :data:`FIELDS` order, UTF-8 kept).
    Returns the number of lines."""
    count = 0
    for item in items:
        data = item.as_json()
        handle.write(json.dumps({key: data[key] for key in FIELDS}, ensure_ascii=False) + "\n")
        count += 1
    return count


def golden_items_hash(items: Iterable[GoldenItem]) -> str:
    """SHA-256 hex of the canonical JSONL of ``items`` in order: the set version's fingerprint."""
    digest = hashlib.sha256()
    for item in items:
        data = item.as_json()
        digest.update(json.dumps({key: data[key] for key in FIELDS}, ensure_ascii=False, sort_keys=True).encode())
        digest.update(b"\n")
    return digest.hexdigest()
