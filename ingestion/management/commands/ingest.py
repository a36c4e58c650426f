"""``manage.py ingest <connector> PATH``: ingest a source with a progress bar."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from core.commands import DatabaseCommand
from ingestion.connectors import CONNECTORS, ConnectorError
from ingestion.services import ingestion_run_create, ingestion_run_execute


class Command(DatabaseCommand):
    help = "Ingest documents with a connector (medquad, rivm, jsonl, html). Re-ingesting unchanged documents embeds nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("connector", choices=sorted(CONNECTORS))
        parser.add_argument("path")
        parser.add_argument("--limit", type=int, default=None, help="Stop after N documents.")
        parser.add_argument("--subsets", nargs="*", default=[], help="MedQuAD folders, e.g. GARD CancerGov.")
        parser.add_argument(
            "--source", default="", help="Source key to file documents under (default: the connector's)."
        )
        parser.add_argument("--background", action="store_true", help="Queue a Celery task instead of running here.")

    def handle(self, *args: object, **options: Any) -> None:
        try:
            run = ingestion_run_create(
                connector=str(options["connector"]),
                path=str(options["path"]),
                limit=options["limit"],
                subsets=list(options["subsets"] or []),
                source_key=str(options["source"] or ""),
            )
        except ConnectorError as exc:
            raise CommandError(str(exc)) from exc
        if options["background"]:
            from ingestion.tasks import ingestion_run_task

            ingestion_run_task.delay(run.id)
            self.stdout.write(f"Queued ingestion run {run.id}; follow it in the admin.")
            return
        bar = tqdm(total=0, unit="unit", desc=f"ingest {run.connector}", disable=options["verbosity"] == 0)

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        try:
            run = ingestion_run_execute(run_id=run.id, progress=progress)
        except ConnectorError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            bar.close()
        self.stdout.write(
            self.style.SUCCESS(
                f"Run {run.id} {run.status}: {run.created_count} new, {run.updated_count} changed, "
                f"{run.unchanged_count} unchanged, {run.skipped_count} skipped, {run.error_count} bad; "
                f"{run.chunk_count} chunks embedded with {run.model_key} in {run.timings_ms.get('total', 0) / 1000:.1f} s"
            )
        )
        for error in run.errors[:20]:
            self.stderr.write(f"  skipped {error['location']}: {error['message']}")
        if run.error_count > 20:
            self.stderr.write(f"  … and {run.error_count - 20} more (see the run in the admin)")
