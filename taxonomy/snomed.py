"""SNOMED CT RF2 import: stream files into staging tables with PostgreSQL COPY, then upsert.

Reads a release folder (any edition, any language): Concept, Description (every language file),
Relationship (inferred; StatedRelationship is not used for routing) and Language refset files,
Snapshot or Full. Files are streamed in 1 MiB blocks (never loaded into Python objects) into
typed temporary tables, so PostgreSQL itself validates every field and reports the line of a
malformed row. Rows then go into the target tables with ``DISTINCT ON (id) … ORDER BY
effective_time DESC`` (the Full release's newest row per id; a no-op for Snapshot) and
``ON CONFLICT (id) DO UPDATE`` when newer, so several editions (International, then Belgian)
can be layered. Everything runs in one transaction: a malformed row aborts the import with its
file and line, and the previous import stays intact.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.db import connection, transaction
from django.utils import timezone

from core.text import sql_normalise
from taxonomy.models import SnomedImport

BLOCK = 1 << 20
ProgressCallback = Callable[[str, int, int], None]  # file name, bytes done, bytes total


class SnomedImportError(Exception):
    """The release cannot be imported; the message names the file (and line) at fault."""


@dataclass(frozen=True)
class _Kind:
    name: str
    pattern: re.Pattern[str]
    table: str
    columns: tuple[tuple[str, str, str], ...]  # (RF2 header, column, SQL type)


_KINDS = (
    _Kind(
        "concept",
        re.compile(r"^sct2_Concept_(Snapshot|Full)"),
        "taxonomy_snomedconcept",
        (
            ("id", "id", "bigint"),
            ("effectiveTime", "effective_time", "date"),
            ("active", "active", "boolean"),
            ("moduleId", "module_id", "bigint"),
            ("definitionStatusId", "definition_status_id", "bigint"),
        ),
    ),
    _Kind(
        "description",
        re.compile(r"^sct2_Description_(Snapshot|Full)"),
        "taxonomy_snomeddescription",
        (
            ("id", "id", "bigint"),
            ("effectiveTime", "effective_time", "date"),
            ("active", "active", "boolean"),
            ("moduleId", "module_id", "bigint"),
            ("conceptId", "concept_id", "bigint"),
            ("languageCode", "language_code", "text"),
            ("typeId", "type_id", "bigint"),
            ("term", "term", "text"),
            ("caseSignificanceId", "case_significance_id", "bigint"),
        ),
    ),
    _Kind(
        "relationship",
        re.compile(r"^sct2_Relationship_(Snapshot|Full)"),
        "taxonomy_snomedrelationship",
        (
            ("id", "id", "bigint"),
            ("effectiveTime", "effective_time", "date"),
            ("active", "active", "boolean"),
            ("moduleId", "module_id", "bigint"),
            ("sourceId", "source_id", "bigint"),
            ("destinationId", "destination_id", "bigint"),
            ("relationshipGroup", "relationship_group", "integer"),
            ("typeId", "type_id", "bigint"),
            ("characteristicTypeId", "characteristic_type_id", "bigint"),
            ("modifierId", "modifier_id", "bigint"),
        ),
    ),
    _Kind(
        "language",
        re.compile(r"^der2_cRefset_Language(Snapshot|Full)"),
        "taxonomy_snomedlanguagemember",
        (
            ("id", "id", "uuid"),
            ("effectiveTime", "effective_time", "date"),
            ("active", "active", "boolean"),
            ("moduleId", "module_id", "bigint"),
            ("refsetId", "refset_id", "bigint"),
            ("referencedComponentId", "referenced_component_id", "bigint"),
            ("acceptabilityId", "acceptability_id", "bigint"),
        ),
    ),
)


def release_files(path: Path) -> tuple[str, dict[str, list[Path]]]:
    """``(release type, {kind: [files]})`` under ``path``. Snapshot files win over Full ones.

    Raises :class:`SnomedImportError` when the folder has no concept file.
    """
    if not path.is_dir():
        raise SnomedImportError(f"not a folder: {path}")
    found: dict[str, dict[str, list[Path]]] = {"Snapshot": {}, "Full": {}}
    for file in sorted(path.rglob("*.txt")):
        for kind in _KINDS:
            match = kind.pattern.match(file.name)
            if match:
                found[match.group(1)].setdefault(kind.name, []).append(file)
    release = "Snapshot" if "concept" in found["Snapshot"] else "Full"
    if "concept" not in found[release]:
        raise SnomedImportError(f"no sct2_Concept_Snapshot/Full file under {path}")
    return release, found[release]


def _copy_file(cursor, kind: _Kind, staging: str, file: Path, progress: ProgressCallback | None) -> None:
    import psycopg

    expected = "\t".join(header for header, _, _ in kind.columns)
    with file.open("rb") as handle:
        header = handle.readline().decode("utf-8-sig").rstrip("\r\n")
        if header != expected:
            raise SnomedImportError(f"{file.name}: line 1: unexpected header {header[:120]!r}; expected {expected!r}")
        total = file.stat().st_size
        columns = ", ".join(column for _, column, _ in kind.columns)
        # CSV with a tab delimiter and a quote byte that RF2 never contains: terms may hold
        # quotes and backslashes verbatim; CRLF and LF line ends are both accepted.
        sql = f"COPY {staging} ({columns}) FROM STDIN WITH (FORMAT csv, DELIMITER E'\\t', QUOTE E'\\x01')"
        try:
            with cursor.copy(sql) as copy:
                while block := handle.read(BLOCK):
                    copy.write(block)
                    if progress:
                        progress(file.name, handle.tell(), total)
        except psycopg.Error as exc:
            diag = exc.diag
            line = re.search(r"line (\d+)", diag.context or "")
            where = f"line {int(line.group(1)) + 1}" if line else "unknown line"  # +1: header read here
            raise SnomedImportError(f"{file.name}: {where}: {diag.message_primary or exc}") from exc


def snomed_import(*, path: Path, progress: ProgressCallback | None = None) -> SnomedImport:
    """Import the RF2 release under ``path``; returns the SUCCEEDED :class:`SnomedImport` row.

    Raises :class:`SnomedImportError` (row marked FAILED, database unchanged) on a missing or
    malformed file. Counts are rows in the target tables after the import.
    """
    release, files = release_files(path)
    run = SnomedImport.objects.create(
        path=str(path), release_type=release, files={k: [f.name for f in v] for k, v in files.items()}
    )
    started = time.perf_counter()
    timings: dict[str, float] = {}
    try:
        with transaction.atomic(), connection.cursor() as wrapper:
            cursor = wrapper.cursor  # the psycopg cursor, for COPY
            for kind in _KINDS:
                if kind.name not in files:
                    continue
                t0 = time.perf_counter()
                staging = f"snomed_stage_{kind.name}"
                types = ", ".join(f"{column} {sql_type}" for _, column, sql_type in kind.columns)
                cursor.execute(f"DROP TABLE IF EXISTS {staging}")  # a caller's outer transaction may hold one
                cursor.execute(f"CREATE TEMP TABLE {staging} ({types}) ON COMMIT DROP")
                for file in files[kind.name]:
                    _copy_file(cursor, kind, staging, file, progress)
                columns = [column for _, column, _ in kind.columns]
                target_columns = list(columns)
                select = ", ".join(columns)
                if kind.name == "description":
                    target_columns.append("term_normalised")
                    select += f", {sql_normalise('term')}"
                updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in target_columns if c != "id")
                cursor.execute(
                    f"INSERT INTO {kind.table} ({', '.join(target_columns)}) "
                    f"SELECT DISTINCT ON (id) {select} FROM {staging} ORDER BY id, effective_time DESC "
                    f"ON CONFLICT (id) DO UPDATE SET {updates} WHERE EXCLUDED.effective_time >= {kind.table}.effective_time"
                )
                timings[kind.name] = round((time.perf_counter() - t0) * 1000, 1)
            counts = {}
            for kind in _KINDS:
                cursor.execute(f"SELECT count(*) FROM {kind.table}")
                counts[kind.name] = cursor.fetchone()[0]
            cursor.execute(
                "ANALYZE taxonomy_snomedconcept, taxonomy_snomeddescription, taxonomy_snomedrelationship, taxonomy_snomedlanguagemember"
            )
    except Exception as exc:
        run.status, run.error, run.finished_at = SnomedImport.Status.FAILED, str(exc), timezone.now()
        run.timings_ms = {**timings, "total": round((time.perf_counter() - started) * 1000, 1)}
        run.save()
        if isinstance(exc, SnomedImportError):
            raise
        raise SnomedImportError(f"{type(exc).__name__}: {exc}") from exc
    if not connection.in_atomic_block:
        # Sets the visibility map so the covering indexes give index-only scans (resolver).
        t0 = time.perf_counter()
        with connection.cursor() as cursor:
            for kind in _KINDS:
                cursor.execute(f"VACUUM (ANALYZE) {kind.table}")
        timings["vacuum"] = round((time.perf_counter() - t0) * 1000, 1)
    run.status, run.counts, run.finished_at = SnomedImport.Status.SUCCEEDED, counts, timezone.now()
    run.timings_ms = {**timings, "total": round((time.perf_counter() - started) * 1000, 1)}
    run.save()
    return run
