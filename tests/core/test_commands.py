"""Commands that need the migrated database say so before they touch it."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.migrations.recorder import MigrationRecorder

from core.commands import migrations_unapplied
from ingestion.models import Document, IngestionRun

pytestmark = pytest.mark.django_db

HOSPITAL_PAGES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "hospital-nl" / "pages.jsonl"


def test_an_unmigrated_database_stops_the_command_with_the_way_out() -> None:
    """GIVEN the test database migrated THEN nothing is pending; GIVEN it forgets its latest
    ingestion and evaluation migrations (their rows in django_migrations, inside the test's
    transaction) WHEN ``ingest`` or ``evaluate`` runs THEN each stops with an error naming
    ``manage.py migrate`` and the pending migrations, and nothing was ingested or started."""
    assert migrations_unapplied() == []
    recorder = MigrationRecorder.Migration.objects
    latest = {
        app: recorder.filter(app=app).order_by("-name").values_list("name", flat=True)[0]
        for app in ("ingestion", "evaluation")
    }
    recorder.filter(app__in=list(latest), name__in=list(latest.values())).delete()
    pending = migrations_unapplied()
    assert sorted(pending) == sorted(f"{app}.{name}" for app, name in latest.items())
    documents, runs = Document.objects.count(), IngestionRun.objects.count()
    with pytest.raises(CommandError, match=r"manage\.py migrate") as error:
        call_command("ingest", "jsonl", str(HOSPITAL_PAGES), "--source", "hospital-nl", verbosity=0)
    assert "2 migration(s)" in str(error.value) and latest["ingestion"] in str(error.value)
    with pytest.raises(CommandError, match=r"manage\.py migrate"):
        call_command("evaluate", "--set", "ci-slice", verbosity=0)
    assert (Document.objects.count(), IngestionRun.objects.count()) == (documents, runs)
