"""RF2 import of the two real SNOMED CT samples in ../shared/data/snomed (copied to fixtures)."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connections

from core.runs import RunStatus, code_version, worker_identity
from taxonomy.models import (
    FINDING_SITE,
    IS_A,
    PREFERRED,
    SnomedConcept,
    SnomedDescription,
    SnomedImport,
    SnomedLanguageMember,
    SnomedRelationship,
)
from taxonomy.snomed import SnomedImportError, snomed_import, snomed_import_create, snomed_import_execute

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "snomed"
DATA = Path(__file__).resolve().parent.parent.parent / "data" / "snomed"


def test_minict_snapshot_import_counts_and_preferred_terms() -> None:
    """GIVEN the real minict Snapshot release (LF line ends, refsets in subfolders)
    THEN every row is loaded with its RF2 ids, and the language refset marks preferred terms."""
    run = snomed_import(path=FIXTURES / "minict-snapshot")
    assert run.status == "succeeded" and run.release_type == "Snapshot"
    assert run.counts == {"concept": 102, "description": 329, "relationship": 133, "language": 323}
    assert SnomedConcept.objects.count() == 102
    root = SnomedConcept.objects.get(id=138875005)
    assert root.active and str(root.effective_time) == "2002-01-31"
    inactive = SnomedDescription.objects.get(id=2957222010)
    assert inactive.active is False and inactive.term.startswith("©")
    preferred = SnomedLanguageMember.objects.filter(acceptability_id=PREFERRED, active=True).values_list(
        "referenced_component_id", flat=True
    )
    terms = set(
        SnomedDescription.objects.filter(id__in=list(preferred), concept_id=138875005).values_list("term", flat=True)
    )
    assert "SNOMED CT Concept" in terms


def _newest_rows(file: Path) -> dict[str, list[str]]:
    """Newest row per id of an RF2 file, computed independently of the importer."""
    rows: dict[str, list[str]] = {}
    for line in file.read_text(encoding="utf-8").splitlines()[1:]:
        fields = line.split("\t")
        if fields[0] not in rows or fields[1] >= rows[fields[0]][1]:
            rows[fields[0]] = fields
    return rows


def test_heart_failure_subset_with_crlf_lines() -> None:
    """GIVEN the heart-failure subset (CRLF; 509 concept rows, 1,596 description rows and 1,915
    relationship rows, where one concept and two relationships appear twice with different
    effective times) THEN one row per id, the newest, and the IS_A / FINDING_SITE edges."""
    run = snomed_import(path=DATA / "heartfailure-subset")
    concepts = _newest_rows(next((DATA / "heartfailure-subset").glob("sct2_Concept_*")))
    relationships = _newest_rows(next((DATA / "heartfailure-subset").glob("sct2_Relationship_*")))
    assert (len(concepts), len(relationships)) == (508, 1913)
    assert run.counts["concept"] == 508 and run.counts["description"] == 1596 and run.counts["relationship"] == 1913
    newest = SnomedConcept.objects.get(id=105981003)
    assert str(newest.effective_time) == "2021-07-31" and newest.definition_status_id == 900000000000073002
    assert SnomedRelationship.objects.filter(type_id=IS_A).count() == sum(
        r[7] == str(IS_A) for r in relationships.values()
    )
    assert SnomedRelationship.objects.filter(type_id=FINDING_SITE).count() == sum(
        r[7] == str(FINDING_SITE) for r in relationships.values()
    )
    assert SnomedRelationship.objects.filter(type_id=FINDING_SITE, active=True).exists()
    description = SnomedDescription.objects.get(term="Acute left-sided heart failure")
    assert description.concept_id == 364006 and description.term_normalised == "acute left sided heart failure"
    assert not SnomedDescription.objects.filter(term__endswith="\r").exists()


def test_reimport_is_idempotent() -> None:
    snomed_import(path=DATA / "heartfailure-subset")
    again = snomed_import(path=DATA / "heartfailure-subset")
    assert again.counts["concept"] == 508 and again.counts["relationship"] == 1913


def test_a_malformed_row_aborts_with_file_and_line_and_keeps_the_previous_import(tmp_path: Path) -> None:
    """GIVEN a good import WHEN a release whose relationship file has a bad id on line 4 is imported
    THEN the import fails naming file and line, the row is FAILED, and the data is unchanged."""
    snomed_import(path=DATA / "heartfailure-subset")
    broken = tmp_path / "broken"
    shutil.copytree(DATA / "heartfailure-subset", broken)
    relationship = next(broken.glob("sct2_Relationship_*"))
    lines = relationship.read_bytes().split(b"\n")
    lines[3] = b"not-a-number" + lines[3][lines[3].index(b"\t") :]
    relationship.write_bytes(b"\n".join(lines))
    concept = next(broken.glob("sct2_Concept_*"))
    concept.write_bytes(concept.read_bytes().replace(b"\t20170731\t", b"\t20990101\t", 1))

    with pytest.raises(SnomedImportError, match=rf"{relationship.name}: line 4: .*bigint"):
        snomed_import(path=broken)
    assert SnomedImport.objects.latest("created_at").status == "failed"
    assert not SnomedConcept.objects.filter(effective_time="2099-01-01").exists()
    assert SnomedRelationship.objects.count() == 1913


def test_full_release_keeps_the_newest_row_per_id(tmp_path: Path) -> None:
    """GIVEN a Full file with two versions of one concept THEN the newer one is stored."""
    full = tmp_path / "full"
    full.mkdir()
    (full / "sct2_Concept_Full_INT_20200101.txt").write_text(
        "id\teffectiveTime\tactive\tmoduleId\tdefinitionStatusId\r\n"
        "84114007\t20020131\t1\t900000000000207008\t900000000000074008\r\n"
        "84114007\t20200101\t0\t900000000000207008\t900000000000074008\r\n"
    )
    run = snomed_import(path=full)
    assert run.release_type == "Full" and run.counts["concept"] == 1
    concept = SnomedConcept.objects.get(id=84114007)
    assert concept.active is False and str(concept.effective_time) == "2020-01-01"


def test_wrong_header_and_missing_release_are_clear(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "sct2_Concept_Snapshot_INT_1.txt").write_text("id\tactive\n1\t1\n")
    with pytest.raises(SnomedImportError, match="line 1: unexpected header"):
        snomed_import(path=bad)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CommandError, match="no sct2_Concept_Snapshot/Full file"):
        call_command("snomed_import", str(empty), verbosity=0)


def test_a_successful_import_is_a_finished_background_run() -> None:
    """GIVEN the minict release (4 files the importer reads) WHEN it is created and executed
    THEN the row went PENDING → SUCCEEDED with every file counted, the worker and code version
    that ran it and its timestamps; executing it again changes nothing (status guard)."""
    run = snomed_import_create(path=FIXTURES / "minict-snapshot")
    assert (run.status, run.done, run.total, run.started_at) == (RunStatus.PENDING, 0, 4, None)

    finished = snomed_import_execute(run_id=run.pk)

    row = SnomedImport.objects.get(pk=run.pk)
    assert row.status == RunStatus.SUCCEEDED and row.error == ""
    assert (row.done, row.total, row.progress_percent) == (4, 4, 100)
    assert row.worker == worker_identity() and row.code_version == code_version()
    assert row.created_at <= row.started_at <= row.finished_at
    assert row.counts == finished.counts and row.counts["concept"] == 102
    again = snomed_import_execute(run_id=run.pk)
    assert (again.status, again.finished_at) == (RunStatus.SUCCEEDED, row.finished_at)


def test_a_failed_import_records_the_error_and_how_far_it_read(tmp_path: Path) -> None:
    """GIVEN a copy of the heart-failure subset whose relationship file (the third of three
    files read) has a bad id WHEN the snomed_import command runs THEN it fails, and the row is
    FAILED with the file and line, done = the two files read before it, total = 3."""
    broken = tmp_path / "broken"
    shutil.copytree(DATA / "heartfailure-subset", broken)
    relationship = next(broken.glob("sct2_Relationship_*"))
    lines = relationship.read_bytes().split(b"\n")
    lines[3] = b"not-a-number" + lines[3][lines[3].index(b"\t") :]
    relationship.write_bytes(b"\n".join(lines))

    with pytest.raises(CommandError, match="SNOMED import failed, nothing changed"):
        call_command("snomed_import", str(broken), verbosity=0)

    row = SnomedImport.objects.get(path=str(broken))
    assert row.status == RunStatus.FAILED
    assert row.error.startswith(f"{relationship.name}: line 4: ")
    assert (row.done, row.total) == (2, 3)
    assert row.started_at is not None and row.finished_at is not None and row.worker == worker_identity()
    assert not SnomedConcept.objects.exists()


def _done_seen_by_another_session(run_id: int) -> int:
    seen: list[int] = []

    def read() -> None:
        try:
            seen.append(SnomedImport.objects.get(pk=run_id).done)
        finally:
            connections.close_all()

    thread = threading.Thread(target=read)
    thread.start()
    thread.join()
    return seen[0]


@pytest.mark.django_db(transaction=True)
def test_progress_is_visible_to_other_sessions_file_by_file() -> None:
    """GIVEN the minict release WHEN it is imported outside any transaction (as by the command
    or the worker) THEN another database session, like the admin's, sees ``done`` count the
    files already read while each next file is being read."""
    run = snomed_import_create(path=FIXTURES / "minict-snapshot")
    seen: dict[str, int] = {}

    def progress(name: str, done_bytes: int, total_bytes: int) -> None:
        if name not in seen:
            seen[name] = _done_seen_by_another_session(run.pk)

    snomed_import_execute(run_id=run.pk, progress=progress)

    assert list(seen.values()) == [0, 1, 2, 3]
    assert SnomedImport.objects.get(pk=run.pk).done == 4
