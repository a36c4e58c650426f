"""``manage.py golden_import FILE.jsonl [--name NAME] [--description TEXT]``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser

from core.commands import DatabaseCommand
from evaluation.golden.io import GoldenFormatError
from evaluation.services.golden import golden_set_import_file


class Command(DatabaseCommand):
    help = "Import a golden set from JSONL (a new version when the latest one was used by a run)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="JSONL file, one question per line.")
        parser.add_argument("--name", default=None, help="Set name (default: the file name without .jsonl).")
        parser.add_argument("--description", default="")

    def handle(self, *args: object, **options: Any) -> None:
        path = Path(str(options["path"]))
        if not path.is_file():
            raise CommandError(f"file not found: {path}")
        try:
            golden_set, action = golden_set_import_file(
                path=path,
                name=options["name"],
                description=str(options["description"]),
            )
        except (GoldenFormatError, ValueError, ValidationError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(f"{golden_set}: {action}, {golden_set.question_count} questions."))
