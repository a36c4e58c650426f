"""``manage.py retention_purge [--dry-run] [--days N] [--batch-size N]``: purge what is older
than the retention period now, as the daily task does, or (``--dry-run``) count what would go."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.monitoring.models import Trigger
from evaluation.monitoring.selectors import retention_preview
from evaluation.monitoring.services import retention_cutoff, retention_purge


class Command(BaseCommand):
    help = "Delete answers, feedback and judgements older than RETENTION_DAYS (golden sets and evaluation data stay)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="Count what would be deleted; delete nothing.")
        parser.add_argument("--days", type=int, help="Retention period in days (default: RETENTION_DAYS).")
        parser.add_argument("--batch-size", type=int, help="Rows per transaction (default: RETENTION_BATCH_SIZE).")

    def handle(self, *args: object, **options: Any) -> None:
        try:
            cutoff = retention_cutoff(days=options["days"])
            if options["dry_run"]:
                counts = retention_preview(cutoff=cutoff)
                self.stdout.write(f"Dry run: would delete rows created before {cutoff.isoformat()}:")
                self._counts(counts)
                return
            purge = retention_purge(days=options["days"], batch_size=options["batch_size"], trigger=Trigger.COMMAND)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"Retention purge {purge.pk}: deleted rows created before {purge.cutoff.isoformat()} "
            f"in {purge.batches} batch(es):"
        )
        self._counts(purge.counts)

    def _counts(self, counts: dict[str, int]) -> None:
        for label, count in sorted(counts.items()):
            self.stdout.write(f"  {label:<28} {count}")
