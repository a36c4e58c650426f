"""Golden sets: import, export, versioning and freezing.

A version a run has used is frozen: its questions never change again. Importing or editing a
set whose latest version is frozen makes a new version; importing the same content again is a
no-op (same ``content_hash``). A set that no run has used yet is edited in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max

from evaluation.golden.io import FIELDS, GoldenItem, golden_items_hash, golden_jsonl_load
from evaluation.models import GoldenQuestion, GoldenSet


class GoldenSetFrozen(Exception):
    """The set version was used by a run; make a new version to change it."""


class GoldenSetNotFound(Exception):
    """No golden set of that name (and version) exists, and no committed file of that name."""


def golden_item_from_row(question: GoldenQuestion) -> GoldenItem:
    """The plain item of a stored question (the model's fields are the JSONL fields)."""
    values: dict[str, Any] = {
        name: tuple(v) if isinstance(v := getattr(question, name), list) else v for name in FIELDS
    }
    return GoldenItem(**values)


def golden_set_items(*, golden_set: GoldenSet) -> list[GoldenItem]:
    """The questions of ``golden_set`` in order, as plain items (for export and hashing)."""
    return [golden_item_from_row(q) for q in golden_set.questions.order_by("position", "id")]


def _questions_write(golden_set: GoldenSet, items: Sequence[GoldenItem]) -> None:
    rows = []
    for position, item in enumerate(items):
        row = GoldenQuestion(golden_set=golden_set, position=position, **item.as_json())
        row.full_clean(exclude=["golden_set"], validate_unique=False)
        rows.append(row)
    GoldenQuestion.objects.bulk_create(rows)


def golden_set_latest(*, name: str) -> GoldenSet | None:
    """The highest version of ``name``, or ``None``."""
    return GoldenSet.objects.filter(name=name).order_by("-version").first()


@transaction.atomic
def golden_set_import(
    *, name: str, items: Sequence[GoldenItem], description: str = "", source: str = ""
) -> tuple[GoldenSet, str]:
    """Store ``items`` as set ``name``. Returns ``(set, action)`` with action ``"unchanged"``
    (same content as the latest version), ``"replaced"`` (latest version not frozen: edited in
    place), or ``"created"`` (version 1, or latest + 1 when the latest is frozen).

    Concurrent imports of one name are serialised (a PostgreSQL advisory lock on the name, held
    to the end of the transaction): the second sees the first's version.

    Raises ``ValueError`` for an empty list or repeated qids, ``django.core.exceptions.ValidationError``
    for a field the model refuses (e.g. a category over 40 characters).
    """
    if not items:
        raise ValueError("a golden set needs at least one question")
    qids = [item.qid for item in items]
    if len(set(qids)) != len(qids):
        raise ValueError("qids must be unique within a golden set")
    content_hash = golden_items_hash(items)
    with connection.cursor() as cursor:
        # Two imports of a set that has no row yet (two `evaluate` commands started together on a
        # committed set) would both create version 1: select_for_update locks no row. A
        # transaction-level advisory lock on the name makes the second wait and see the first.
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"golden_set:{name}"])
    latest = GoldenSet.objects.select_for_update().filter(name=name).order_by("-version").first()
    if latest is not None and latest.content_hash == content_hash:
        return latest, "unchanged"
    if latest is not None and not latest.frozen:
        latest.questions.all().delete()
        golden_set = latest
        action = "replaced"
    else:
        golden_set = GoldenSet(name=name, version=(latest.version + 1) if latest else 1)
        action = "created"
    golden_set.description = description or (latest.description if latest else "")
    golden_set.source = source or (latest.source if latest else "")
    golden_set.content_hash = content_hash
    golden_set.question_count = len(items)
    golden_set.full_clean(validate_unique=False)
    golden_set.save()
    _questions_write(golden_set, items)
    return golden_set, action


def golden_set_import_file(*, path: Path, name: str | None = None, description: str = "") -> tuple[GoldenSet, str]:
    """:func:`golden_set_import` of a JSONL file; ``name`` defaults to the file's stem.
    Raises ``GoldenFormatError`` with file and line for a bad line."""
    items = golden_jsonl_load(path)
    return golden_set_import(name=name or Path(path).stem, items=items, description=description, source=str(path))


def golden_set_resolve(*, name: str, version: int | None = None) -> GoldenSet:
    """Set ``name`` at ``version`` (default: latest). When ``GOLDEN_SETS_DIR/<name>.jsonl``
    exists (the committed sets), it is imported first, so the latest version is always the
    committed file (a no-op when its content is unchanged, a new version when it changed).
    Raises :class:`GoldenSetNotFound`, or ``GoldenFormatError`` for a broken committed file."""
    committed = Path(settings.GOLDEN_SETS_DIR) / f"{name}.jsonl"
    if committed.is_file():
        golden_set_import_file(path=committed, name=name)
    queryset = GoldenSet.objects.filter(name=name)
    if not queryset.exists():
        raise GoldenSetNotFound(f"no golden set named {name!r} (and no {committed})")
    found = queryset.filter(version=version).first() if version else queryset.order_by("-version").first()
    if found is None:
        raise GoldenSetNotFound(f"golden set {name!r} has no version {version}")
    return found


def golden_set_freeze(*, golden_set: GoldenSet) -> GoldenSet:
    """Mark ``golden_set`` frozen (idempotent); called when a run starts using it."""
    if not golden_set.frozen:
        GoldenSet.objects.filter(pk=golden_set.pk).update(frozen=True)
        golden_set.frozen = True
    return golden_set


@transaction.atomic
def golden_set_new_version(*, golden_set: GoldenSet) -> GoldenSet:
    """An editable copy of ``golden_set`` as version latest + 1 (questions copied). A set that
    is not frozen is returned as it is (it can be edited in place)."""
    if not golden_set.frozen:
        return golden_set
    latest = GoldenSet.objects.filter(name=golden_set.name).aggregate(v=Max("version"))["v"] or 0
    items = golden_set_items(golden_set=golden_set)
    copy = GoldenSet(
        name=golden_set.name,
        version=latest + 1,
        description=golden_set.description,
        source=golden_set.source,
        content_hash=golden_items_hash(items),
        question_count=len(items),
    )
    copy.full_clean(validate_unique=False)
    copy.save()
    _questions_write(copy, items)
    return copy


def golden_set_rehash(*, golden_set: GoldenSet) -> GoldenSet:
    """Recompute ``content_hash`` and ``question_count`` after an edit of an unfrozen set.
    Raises :class:`GoldenSetFrozen` for a frozen set (its hash must never change)."""
    if golden_set.frozen:
        raise GoldenSetFrozen(f"{golden_set} is frozen: make a new version to edit it")
    items = golden_set_items(golden_set=golden_set)
    GoldenSet.objects.filter(pk=golden_set.pk).update(content_hash=golden_items_hash(items), question_count=len(items))
    golden_set.refresh_from_db()
    return golden_set


def golden_question_save(*, question: GoldenQuestion) -> GoldenQuestion:
    """Save an edited or new question of an unfrozen set and rehash the set.
    Raises :class:`GoldenSetFrozen` when its set is frozen."""
    golden_set = GoldenSet.objects.get(pk=question.golden_set_id)
    if golden_set.frozen:
        raise GoldenSetFrozen(f"{golden_set} is frozen: make a new version to edit it")
    with transaction.atomic():
        question.full_clean()
        question.save()
        golden_set_rehash(golden_set=golden_set)
    return question
