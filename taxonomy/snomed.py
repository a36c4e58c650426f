"""SNOMED CT RF2 import: stream files into staging tables with PostgreSQL COPY, then upsert.

Reads a release folder (any edition, any language): Concept, Description (every language file),
Relationship (inferred; StatedRelationship is not used for routing) and Language refset files,
Snapshot or Full. Files are streamed in 1 MiB blocks (never loaded into Python objects) into
typed temporary tables, so PostgreSQL itself validates every field and reports the line of a
malformed row. Rows then go into the target tables with ``DISTINCT ON (id) … ORDER BY
effective_time DESC`` (the Full release's newest row per id; a no-op for Snapshot) and
``ON CONFLICT (id) DO UPDATE`` when newer, so several editions (International, then Belgian)
can be layered. The staging tables belong to the database session and are filled file by file
(each file one transaction, so progress can be saved between them); the target tables are
written in one transaction after all files were read: a malformed row aborts the import with
its file and line, and the previous import stays intact.

An import is a background run (:class:`taxonomy.models.SnomedImport`): created PENDING,
claimed by one process, ``done`` of ``total`` files saved as it goes, FAILED with the error.
"""

from __future__ import annotations

import re
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from django.db import connection, transaction
from django.utils import timezone

from core.runs import run_claim, run_progress
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


def snomed_import_create(*, path: Path) -> SnomedImport:
    """A PENDING import of the release under ``path`` (release type, files, ``total`` = number
    of files). Raises :class:`SnomedImportError` when ``path`` holds no release (nothing is
    stored)."""
    release, files = release_files(path)
    run = SnomedImport(
        path=str(path),
        release_type=release,
        files={k: [f.name for f in v] for k, v in files.items()},
        total=sum(len(v) for v in files.values()),
    )
    run.full_clean()
    run.save()
    return run


def _staging_create(cursor, kind: _Kind) -> str:
    staging = f"snomed_stage_{kind.name}"
    types = ", ".join(f"{column} {sql_type}" for _, column, sql_type in kind.columns)
    cursor.execute(f"DROP TABLE IF EXISTS {staging}")  # left by an earlier import of this session
    cursor.execute(f"CREATE TEMP TABLE {staging} ({types})")
    return staging


def _upsert(cursor, kind: _Kind, staging: str) -> None:
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


def snomed_import_execute(*, run_id: int, progress: ProgressCallback | None = None) -> SnomedImport:
    """Claim PENDING import ``run_id`` (:func:`core.runs.run_claim`) and load its release;
    returns the SUCCEEDED row. A run that is not PENDING is returned unchanged (status guard).

    Each file is read into a session-temporary staging table in a transaction of its own, and
    ``done`` (files read, of ``total``) is saved after each one (:func:`core.runs.run_progress`),
    so the admin sees the progress; ``progress`` gets bytes read per file. The target tables are
    then written in one transaction. Raises :class:`SnomedImportError` on a missing or
    malformed file or any other failure: the row is FAILED with the error (and ``done`` says
    how many files were read), and the target tables are unchanged.
    """
    claimed = run_claim(model=SnomedImport, run_id=run_id)
    run = SnomedImport.objects.get(pk=run_id)
    if not claimed:
        return run
    started = time.perf_counter()
    timings: dict[str, float] = {}
    loaded = 0
    try:
        release, files = release_files(Path(run.path))  # the folder as it is now (a re-run)
        run.release_type, run.files = release, {k: [f.name for f in v] for k, v in files.items()}
        run.total = sum(len(v) for v in files.values())
        run.save(update_fields=["release_type", "files", "total"])
        staged: dict[str, str] = {}
        with connection.cursor() as wrapper:
            cursor = wrapper.cursor  # the psycopg cursor, for COPY
            try:
                for kind in _KINDS:
                    if kind.name not in files:
                        continue
                    t0 = time.perf_counter()
                    staged[kind.name] = _staging_create(cursor, kind)
                    for file in files[kind.name]:
                        with transaction.atomic():  # a savepoint inside a caller's transaction
                            _copy_file(cursor, kind, staged[kind.name], file, progress)
                        loaded += 1
                        run_progress(model=SnomedImport, run_id=run.pk, done=loaded)
                    timings[kind.name] = (time.perf_counter() - t0) * 1000
                with transaction.atomic():
                    for kind in _KINDS:
                        if kind.name in staged:
                            t0 = time.perf_counter()
                            _upsert(cursor, kind, staged[kind.name])
                            timings[kind.name] = round(timings[kind.name] + (time.perf_counter() - t0) * 1000, 1)
                    counts = {}
                    for kind in _KINDS:
                        cursor.execute(f"SELECT count(*) FROM {kind.table}")
                        counts[kind.name] = cursor.fetchone()[0]
                    cursor.execute(
                        "ANALYZE taxonomy_snomedconcept, taxonomy_snomeddescription, taxonomy_snomedrelationship, taxonomy_snomedlanguagemember"
                    )
            finally:
                for staging in staged.values():
                    cursor.execute(f"DROP TABLE IF EXISTS {staging}")
    except Exception as exc:
        if isinstance(exc, SnomedImportError):
            run.error = str(exc)
        else:
            run.error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}"
        run.status, run.done, run.finished_at = SnomedImport.Status.FAILED, loaded, timezone.now()
        run.timings_ms = {k: round(v, 1) for k, v in timings.items()} | {
            "total": round((time.perf_counter() - started) * 1000, 1)
        }
        run.save(update_fields=["status", "error", "done", "finished_at", "timings_ms"])
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
    run.status, run.counts, run.done, run.finished_at = SnomedImport.Status.SUCCEEDED, counts, loaded, timezone.now()
    run.timings_ms = {**timings, "total": round((time.perf_counter() - started) * 1000, 1)}
    run.save(update_fields=["status", "counts", "done", "finished_at", "timings_ms"])
    return run


def snomed_import(*, path: Path, progress: ProgressCallback | None = None) -> SnomedImport:
    """Import the RF2 release under ``path`` now: :func:`snomed_import_create` then
    :func:`snomed_import_execute`; returns the SUCCEEDED row. Raises :class:`SnomedImportError`
    (no row when ``path`` holds no release; otherwise the row is FAILED, the target tables
    unchanged). Counts are rows in the target tables after the import."""
    return snomed_import_execute(run_id=snomed_import_create(path=path).pk, progress=progress)


def snomed_import_relaunch(*, run_ids: Sequence[int]) -> list[SnomedImport]:
    """A new PENDING import of the same folder per id, queued for the Celery worker after
    commit. Raises :class:`SnomedImportError` when a folder no longer holds a release (nothing
    is stored or queued then)."""
    from taxonomy.tasks import snomed_import_task  # tasks import this module: enqueue lazily

    runs = []
    with transaction.atomic():
        for old in SnomedImport.objects.filter(pk__in=list(run_ids)).order_by("pk"):
            run = snomed_import_create(path=Path(old.path))
            transaction.on_commit(partial(snomed_import_task.delay, run.pk))
            runs.append(run)
    return runs
