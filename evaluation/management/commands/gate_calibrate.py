"""``manage.py gate_calibrate --set FILE[#TAG] … --out data/calibration/gate.json``.

Calibrates the fast gate's threshold per language for the active embedding model on dev golden
sets over the corpus in the database (:mod:`evaluation.gate_calibrate`) and writes (merges into)
the calibration file the pipeline reads (``GATE_CALIBRATION_PATH``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.gate_calibrate import gate_calibrate, gate_cohorts
from evaluation.golden.io import golden_jsonl_load
from zolsearch.search.config import pipeline_config_default


class Command(BaseCommand):
    help = "Calibrate the fast gate per language on dev golden sets; write the calibration file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--set", action="append", required=True, dest="sets", metavar="FILE[#TAG]")
        parser.add_argument("--out", required=True, help="Calibration file (JSON); other models' entries are kept.")
        parser.add_argument("--max-false-refusal", type=float, default=0.05, help="Refusals of related drafts allowed.")

    def handle(self, *args: object, **options: Any) -> None:
        items = []
        for spec in options["sets"]:
            path_text, _, tag = str(spec).partition("#")
            path = Path(path_text)
            if not path.is_file():
                raise CommandError(f"no golden set at {path}")
            chosen = [i for i in golden_jsonl_load(path) if not tag or tag in i.tags]
            if any("heldout" in i.tags for i in chosen):
                raise CommandError(f"{spec} holds held-out questions: calibrate on dev questions only (#dev)")
            items.extend(chosen)
        config = pipeline_config_default()
        cohorts = gate_cohorts(items=items, config=config)
        try:
            result = gate_calibrate(
                cohorts=cohorts,
                model_key=config.embedding_model,
                sets=list(options["sets"]),
                max_false_refusal=float(options["max_false_refusal"]),
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        out = Path(str(options["out"]))
        out.parent.mkdir(parents=True, exist_ok=True)
        existing = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
        out.write_text(json.dumps({**existing, **result}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        for language, row in result[config.embedding_model]["evidence"]["languages"].items():
            self.stdout.write(f"{language}: {row}")
        self.stdout.write(f"Wrote {out}")
