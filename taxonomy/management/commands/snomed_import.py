"""``manage.py snomed_import PATH``: import a SNOMED CT RF2 release folder (Snapshot or Full)
in this process, recorded as a :class:`taxonomy.models.SnomedImport` run (claimed, progress
per file, FAILED with the error)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from core.commands import DatabaseCommand
from taxonomy.snomed import SnomedImportError, snomed_import_create, snomed_import_execute


class Command(DatabaseCommand):
    help = "Import a SNOMED CT RF2 release (any edition and language) with PostgreSQL COPY, atomically."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="The release folder (the one holding Terminology/ and Refset/, or the files).")

    def handle(self, *args: object, **options: Any) -> None:
        bars: dict[str, tqdm] = {}
        quiet = options["verbosity"] == 0

        def progress(name: str, done: int, total: int) -> None:
            if quiet:
                return
            bar = bars.get(name)
            if bar is None:
                bar = bars[name] = tqdm(total=total, unit="B", unit_scale=True, desc=name[:40])
            bar.n = done
            bar.refresh()

        try:
            created = snomed_import_create(path=Path(str(options["path"])))
            run = snomed_import_execute(run_id=created.pk, progress=progress)
        except SnomedImportError as exc:
            raise CommandError(f"SNOMED import failed, nothing changed: {exc}") from exc
        finally:
            for bar in bars.values():
                bar.close()
        counts = ", ".join(f"{count} {name}s" for name, count in run.counts.items())
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {run.release_type} release: {counts} in {run.timings_ms['total'] / 1000:.1f} s"
            )
        )
