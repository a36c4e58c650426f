"""``manage.py golden_export --set NAME [--set-version N] --out FILE.jsonl``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.commands import DatabaseCommand
from evaluation.golden.io import golden_jsonl_write
from evaluation.models import GoldenSet
from evaluation.services.golden import golden_set_items


class Command(DatabaseCommand):
    help = "Export a golden set version as JSONL."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--set", required=True, dest="set_name")
        parser.add_argument("--set-version", dest="set_version", type=int, default=None, help="Default: latest.")
        parser.add_argument("--out", required=True)

    def handle(self, *args: object, **options: Any) -> None:
        queryset = GoldenSet.objects.filter(name=options["set_name"]).order_by("-version")
        if options["set_version"]:
            queryset = queryset.filter(version=options["set_version"])
        golden_set = queryset.first()
        if golden_set is None:
            raise CommandError(f"no golden set {options['set_name']!r} (version {options['version'] or 'latest'})")
        out = Path(str(options["out"]))
        with out.open("w", encoding="utf-8") as handle:
            count = golden_jsonl_write(golden_set_items(golden_set=golden_set), handle)
        self.stdout.write(self.style.SUCCESS(f"Wrote {count} questions of {golden_set} to {out}."))
