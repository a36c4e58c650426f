"""Existing SNOMED CT import rows as background runs.

The status values are the same (running, succeeded, failed). ``created_at`` takes the old
``started_at`` (the row was created when the import started); ``total`` is the number of release
files recorded on the row, and ``done`` equals it for a SUCCEEDED import (the import was one
transaction: a failed or interrupted one kept nothing, so ``done`` stays 0). Worker and code
version were not recorded and stay blank.

Backwards: a PENDING run (never started) becomes FAILED with that reason, and ``started_at``
gets ``created_at`` where it is empty (the old column is NOT NULL).
"""

from django.db import migrations
from django.db.models import F


def _file_total(files: object) -> int:
    return sum(len(names) for names in files.values()) if isinstance(files, dict) else 0


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    SnomedImport = apps.get_model("taxonomy", "SnomedImport")
    SnomedImport.objects.filter(started_at__isnull=False).update(created_at=F("started_at"))
    for run in SnomedImport.objects.only("pk", "status", "files").iterator():
        total = _file_total(run.files)
        done = total if run.status == "succeeded" else 0
        SnomedImport.objects.filter(pk=run.pk).update(total=total, done=done)


def backwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    SnomedImport = apps.get_model("taxonomy", "SnomedImport")
    SnomedImport.objects.filter(status="pending").update(status="failed", error="never started")
    SnomedImport.objects.filter(started_at__isnull=True).update(started_at=F("created_at"))


class Migration(migrations.Migration):
    dependencies = [("taxonomy", "0003_snomedimport_background_run")]

    operations = [migrations.RunPython(forwards, backwards)]
