"""``manage.py load_sample_hospital``: the invented SAMPLE hospital for the demo (idempotent)."""

from __future__ import annotations

from typing import Any

from core.commands import DatabaseCommand
from taxonomy.services import sample_hospital_load


class Command(DatabaseCommand):
    help = "Load the invented SAMPLE hospital (departments, campuses, doctors, conditions) — not real data."

    def handle(self, *args: object, **options: Any) -> None:
        counts = sample_hospital_load()
        self.stdout.write(
            self.style.SUCCESS(
                "Sample hospital loaded (invented data): " + ", ".join(f"{v} {k}" for k, v in counts.items())
            )
        )
