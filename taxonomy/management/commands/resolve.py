"""``manage.py resolve "<text>"``: what the resolver makes of a text, with provenance."""

from __future__ import annotations

import json
from typing import Any, cast

from django.core.management.base import CommandParser

from core.commands import DatabaseCommand
from taxonomy.resolver import text_resolve


class Command(DatabaseCommand):
    help = "Resolve free text to taxonomy entities and SNOMED CT concepts, with the provenance trail."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("text")
        parser.add_argument("--language", default="nl", choices=["nl", "en"])
        parser.add_argument("--json", action="store_true", help="Print JSON instead of text.")

    def handle(self, *args: object, **options: Any) -> None:
        resolution = text_resolve(text=str(options["text"]), language=str(options["language"]))
        if options["json"]:
            payload = {
                "entities": [
                    {"name": r.entity.name, "type": r.entity.type, "trail": r.trail} for r in resolution.entities
                ],
                "concepts": resolution.concepts,
            }
            self.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2))
            return
        if not resolution.entities and not resolution.concepts:
            self.stdout.write("Nothing resolved.")
        for concept in resolution.concepts:
            ancestors = ", ".join(f"{a['term']} (depth {a['depth']})" for a in cast(list, concept["ancestors"]))
            sites = ", ".join(s["term"] for s in cast(list, concept["finding_sites"]))
            self.stdout.write(
                f"SNOMED {concept['concept_id']} '{concept['matched_term']}'\n  IS_A: {ancestors or '—'}\n  FINDING_SITE: {sites or '—'}"
            )
        for resolved in resolution.entities:
            steps = " → ".join(str(step["step"]) for step in resolved.trail)
            self.stdout.write(f"{resolved.entity.get_type_display()}: {resolved.entity.name}  [{steps}]")
