"""``manage.py demo_setup``: the embedded defaults' data, idempotent.

Migrates, ingests the bundled MedQuAD slice when the active model's index is empty, loads the
SAMPLE hospital when the taxonomy is empty and the SNOMED CT heart-failure subset when no
concept is stored. ``manage.py serve`` starts with it; ``make eval-gate`` runs it on its own
database folder before ``eval_gate``. With ``--reindex-on-code-change`` (what ``make eval-gate``
passes) on an embedded database, the fingerprint of the chunking
and ingestion code (:data:`INGESTION_CODE`) is kept beside the data folder: when the code changed
since the corpus was indexed, the indexed documents are deleted and the slice is ingested again,
so a reused folder never measures an index built by older code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from core.fingerprint import source_fingerprint
from core.providers.embeddings import embedding_provider_get
from ingestion.models import ChunkEmbedding, Document
from taxonomy.models import Entity, SnomedConcept

# What decides how a document becomes chunks and vectors.
INGESTION_CODE = (
    "ingestion/chunking.py",
    "ingestion/connectors",
    "ingestion/services.py",
    "core/text.py",
    "core/providers/embeddings.py",
)


def _marker() -> Path | None:
    pgdata = settings.DATABASES["default"].get("EMBEDDED_PGDATA")
    return Path(str(pgdata)).with_name(Path(str(pgdata)).name + ".ingestion-code") if pgdata else None


class Command(BaseCommand):
    help = "Migrate and load the bundled demo data (MedQuAD slice, SAMPLE hospital, SNOMED CT subset) when missing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--reindex-on-code-change",
            action="store_true",
            help="Delete and re-ingest the indexed documents when the chunking/ingestion code changed "
            "since they were indexed (for a database folder of its own, like make eval-gate's).",
        )

    def handle(self, *args: object, **options: Any) -> None:
        verbosity = int(options["verbosity"])
        call_command("migrate", interactive=False, verbosity=0)
        database = "embedded PostgreSQL 17" if settings.DATABASES["default"].get("EMBEDDED_PGDATA") else "DATABASE_URL"
        self.stdout.write(f"Database ready ({database}).")
        provider = embedding_provider_get()
        marker, fingerprint = _marker(), source_fingerprint(*INGESTION_CODE)
        if not options["reindex_on_code_change"]:
            marker = None
        if marker is not None and Document.objects.exists():
            recorded = marker.read_text().strip() if marker.exists() else ""
            if recorded != fingerprint:
                self.stdout.write(
                    f"Ingestion code changed since the index was built ({recorded or 'unknown'} → {fingerprint}): re-indexing …"
                )
                Document.objects.all().delete()
        if not ChunkEmbedding.objects.filter(model_key=provider.key).exists():
            self.stdout.write(
                f"Index empty for {provider.key}: ingesting the bundled MedQuAD slice ({settings.DEMO_CORPUS_PATH}) …"
            )
            call_command("ingest", "medquad", str(settings.DEMO_CORPUS_PATH), verbosity=verbosity)
        if marker is not None:
            marker.write_text(fingerprint + "\n")
        if not Entity.objects.exists():
            call_command("load_sample_hospital", verbosity=verbosity)
        if not SnomedConcept.objects.exists() and Path(settings.DEMO_SNOMED_PATH).exists():
            self.stdout.write(f"Importing the SNOMED CT heart-failure sample ({settings.DEMO_SNOMED_PATH}) …")
            call_command("snomed_import", str(settings.DEMO_SNOMED_PATH), verbosity=0)
        self.stdout.write(self.style.SUCCESS("Demo data ready."))
