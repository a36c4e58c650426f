"""RF2 import of the two real SNOMED CT samples in ../shared/data/snomed (copied to fixtures)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

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
from taxonomy.snomed import SnomedImportError, snomed_import

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
    assert SnomedImport.objects.latest("started_at").status == "failed"
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
