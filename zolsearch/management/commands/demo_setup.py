"""``manage.py demo_setup``: the embedded defaults' data, idempotent.

Migrates, ingests the bundled MedQuAD slice when the active model's index is empty, loads the
SAMPLE hospital when the taxonomy is empty and the SNOMED CT heart-failure subset when no
concept is stored. ``manage.py serve`` starts with it; ``make eval-gate`` runs it on its own
database folder before ``eval_gate``.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from core.providers.embeddings import embedding_provider_get
from ingestion.models import ChunkEmbedding
from taxonomy.models import Entity, SnomedConcept


class Command(BaseCommand):
    help = "Migrate and load the bundled demo data (MedQuAD slice, SAMPLE hospital, SNOMED CT subset) when missing."

    def handle(self, *args: object, **options: object) -> None:
        verbosity = int(options["verbosity"])  # type: ignore[call-overload]
        call_command("migrate", interactive=False, verbosity=0)
        database = "embedded PostgreSQL 17" if settings.DATABASES["default"].get("EMBEDDED_PGDATA") else "DATABASE_URL"
        self.stdout.write(f"Database ready ({database}).")
        provider = embedding_provider_get()
        if not ChunkEmbedding.objects.filter(model_key=provider.key).exists():
            self.stdout.write(
                f"Index empty for {provider.key}: ingesting the bundled MedQuAD slice ({settings.DEMO_CORPUS_PATH}) …"
            )
            call_command("ingest", "medquad", str(settings.DEMO_CORPUS_PATH), verbosity=verbosity)
        if not Entity.objects.exists():
            call_command("load_sample_hospital", verbosity=verbosity)
        if not SnomedConcept.objects.exists() and Path(settings.DEMO_SNOMED_PATH).exists():
            self.stdout.write(f"Importing the SNOMED CT heart-failure sample ({settings.DEMO_SNOMED_PATH}) …")
            call_command("snomed_import", str(settings.DEMO_SNOMED_PATH), verbosity=0)
        self.stdout.write(self.style.SUCCESS("Demo data ready."))
