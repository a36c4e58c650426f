"""``manage.py source_priority KEY N``: set a source's search authority (0–10); without N, list them."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser

from core.commands import DatabaseCommand
from ingestion.models import Source
from ingestion.services import source_priority_set


class Command(DatabaseCommand):
    help = "Show or set the search priority of sources (10: the hospital's own pages, 0: general background text)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("key", nargs="?", help="Source key, e.g. hospital-nl (omit to list every source).")
        parser.add_argument("priority", nargs="?", type=int, help="0–10.")

    def handle(self, *args: object, **options: Any) -> None:
        key, priority = options["key"], options["priority"]
        if key is None or priority is None:
            for source in Source.objects.filter(**({"key": key} if key else {})):
                self.stdout.write(f"{source.key}\t{source.priority}\t{source.name}")
            return
        try:
            source = source_priority_set(key=key, priority=priority)
        except Source.DoesNotExist as exc:
            raise CommandError(f"no source with key {key!r}; see manage.py source_priority") from exc
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stdout.write(f"{source.key}: priority {source.priority}")
