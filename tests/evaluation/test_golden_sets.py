"""Golden sets: JSONL import with line errors, versioning, freezing, export, admin import."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from evaluation.golden.io import GoldenFormatError, GoldenItem, golden_items_hash, golden_jsonl_read
from evaluation.models import GoldenQuestion, GoldenSet
from evaluation.services.golden import (
    GoldenSetFrozen,
    golden_question_save,
    golden_set_freeze,
    golden_set_import,
    golden_set_items,
    golden_set_new_version,
    golden_set_resolve,
)

pytestmark = pytest.mark.django_db

ITEMS = [
    GoldenItem(qid="q1", question="Wat is hartfalen?", category="condition", expected_entities=("Cardiologie",)),
    GoldenItem(qid="q2", question="Hoeveel paracetamol mag ik nemen?", category="medical_advice", must_refuse=True),
]


def test_jsonl_errors_name_the_line() -> None:
    lines = ['{"qid": "a", "question": "ok"}\n', "\n", '{"qid": "b", "question": ""}\n']
    with pytest.raises(GoldenFormatError, match=r"set.jsonl:3: question must be a non-empty string"):
        golden_jsonl_read(io.StringIO("".join(lines)), name="set.jsonl")
    with pytest.raises(GoldenFormatError, match=r":1: invalid JSON"):
        golden_jsonl_read(io.StringIO("{nope\n"))
    with pytest.raises(GoldenFormatError, match=r":2: qid 'a' appears twice"):
        golden_jsonl_read(io.StringIO('{"qid": "a", "question": "x"}\n{"qid": "a", "question": "y"}\n'))
    with pytest.raises(GoldenFormatError, match="unknown field"):
        golden_jsonl_read(io.StringIO('{"qid": "a", "question": "x", "expected": []}\n'))


def test_import_is_idempotent_and_replaces_an_unused_version() -> None:
    first, action = golden_set_import(name="demo", items=ITEMS)
    assert (first.version, action, first.question_count) == (1, "created", 2)
    assert first.content_hash == golden_items_hash(ITEMS)
    again, action = golden_set_import(name="demo", items=ITEMS)
    assert (again.pk, action) == (first.pk, "unchanged")
    edited = [ITEMS[0], GoldenItem(qid="q3", question="Waar werkt dr. Anna Demo?")]
    replaced, action = golden_set_import(name="demo", items=edited)
    assert (replaced.pk, replaced.version, action) == (first.pk, 1, "replaced")  # no run used it yet
    assert [i.qid for i in golden_set_items(golden_set=replaced)] == ["q1", "q3"]


def test_a_used_version_is_frozen_and_edits_make_a_new_version() -> None:
    """GIVEN set v1 used by a run (frozen) WHEN it is imported again with other content, or an
    editor changes one of its questions THEN v1 keeps its questions and hash; the import makes v2,
    the question edit is refused, and 'new version' makes an editable v3 copy."""
    v1, _ = golden_set_import(name="demo", items=ITEMS)
    golden_set_freeze(golden_set=v1)
    hash_v1 = v1.content_hash
    v2, action = golden_set_import(name="demo", items=[ITEMS[0]])
    assert (v2.version, action, v2.frozen) == (2, "created", False)
    v1.refresh_from_db()
    assert v1.content_hash == hash_v1 and v1.questions.count() == 2
    question = v1.questions.get(qid="q1")
    question.question = "Iets anders?"
    with pytest.raises(GoldenSetFrozen):
        golden_question_save(question=question)
    assert GoldenQuestion.objects.get(pk=question.pk).question == "Wat is hartfalen?"
    v3 = golden_set_new_version(golden_set=v1)
    assert v3.version == 3 and not v3.frozen and v3.content_hash == hash_v1
    assert golden_set_resolve(name="demo").pk == v3.pk
    assert golden_set_resolve(name="demo", version=1).pk == v1.pk


def test_editing_an_unfrozen_question_rehashes_the_set() -> None:
    golden_set, _ = golden_set_import(name="demo", items=ITEMS)
    question = golden_set.questions.get(qid="q1")
    question.question = "Wat is hartzwakte?"
    golden_question_save(question=question)
    golden_set.refresh_from_db()
    assert golden_set.content_hash == golden_items_hash(golden_set_items(golden_set=golden_set))
    assert golden_set.content_hash != golden_items_hash(ITEMS)


def test_committed_sets_are_imported_by_name_and_round_trip(tmp_path: Path) -> None:
    golden_set = golden_set_resolve(name="ci-slice")  # data/golden/ci-slice.jsonl, not yet in the DB
    assert golden_set.question_count >= 50
    out = tmp_path / "export.jsonl"
    call_command("golden_export", "--set", "ci-slice", "--out", str(out), verbosity=0)
    committed = Path("data/golden/ci-slice.jsonl").read_text(encoding="utf-8")
    assert [json.loads(line) for line in out.read_text().splitlines()] == [
        json.loads(line) for line in committed.splitlines() if line.strip()
    ]
    with pytest.raises(CommandError, match="no golden set"):
        call_command("evaluate", "--set", "no-such-set", verbosity=0)


def test_import_command_reports_the_bad_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qid": "a", "question": "ok"}\n{"qid": "b", "question": "x", "must_refuse": "yes"}\n')
    with pytest.raises(CommandError, match=r"bad.jsonl:2: must_refuse must be true or false"):
        call_command("golden_import", str(bad), verbosity=0)
    assert not GoldenSet.objects.filter(name="bad").exists()  # nothing half-imported


def test_evaluator_imports_a_set_in_the_admin_and_sees_the_line_error(admin_client) -> None:  # type: ignore[no-untyped-def]
    admin_client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"  # the admin in English (default: Belgian Dutch)
    url = reverse("admin:evaluation_goldenset_import")
    assert "Import JSONL" in admin_client.get(reverse("admin:evaluation_goldenset_changelist")).content.decode()
    broken = SimpleUploadedFile("x.jsonl", b'{"qid": "a"}\n')
    response = admin_client.post(url, {"name": "upload", "file": broken})
    assert response.status_code == 200 and "x.jsonl:1: question must be a non-empty string" in response.content.decode()
    good = SimpleUploadedFile("x.jsonl", "".join(json.dumps(i.as_json()) + "\n" for i in ITEMS).encode())
    response = admin_client.post(url, {"name": "upload", "file": good, "description": "test"})
    golden_set = GoldenSet.objects.get(name="upload")
    assert response.status_code == 302 and golden_set.question_count == 2
    page = admin_client.get(reverse("admin:evaluation_goldenset_change", args=[golden_set.pk])).content.decode()
    assert "Hoeveel paracetamol mag ik nemen?" in page
    export = admin_client.post(
        reverse("admin:evaluation_goldenset_changelist"),
        {"action": "export_jsonl", "_selected_action": [golden_set.pk]},
    )
    assert export["Content-Disposition"] == 'attachment; filename="upload-v1.jsonl"'
    assert [json.loads(line)["qid"] for line in export.content.decode().splitlines()] == ["q1", "q2"]


@pytest.mark.django_db(transaction=True)
def test_concurrent_imports_of_a_new_set_make_one_version() -> None:
    """GIVEN a set name with no row yet WHEN two threads import it at once (two `evaluate`
    commands started together on a committed set: one crashed with a UniqueViolation on
    (name, version) before the lock) THEN both succeed, one creates version 1 and the other finds
    it unchanged."""
    import threading

    from django.db import connection

    barrier = threading.Barrier(2)
    results: list[str] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            barrier.wait(timeout=10)
            _, action = golden_set_import(name="together", items=ITEMS)
            results.append(action)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    assert sorted(results) == ["created", "unchanged"]
    assert list(GoldenSet.objects.filter(name="together").values_list("version", flat=True)) == [1]
