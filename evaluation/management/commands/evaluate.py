"""``manage.py evaluate --set NAME [--set-version N] [--background] [--override field=value …]``."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from core.commands import DatabaseCommand
from evaluation.management.commands._common import run_create, run_foreground, summary_print
from evaluation.services.runs import evaluation_run_enqueue


class Command(DatabaseCommand):
    help = (
        "Run a golden set through the search pipeline and store the run with its metrics. A committed "
        "set (data/golden/<name>.jsonl) is imported first when it changed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--set", required=True, dest="set_name", help="Golden set name, e.g. ci-slice.")
        parser.add_argument(
            "--set-version", dest="set_version", type=int, default=None, help="Set version (default: latest)."
        )
        parser.add_argument("--label", default="", help="A note shown in the admin's run list.")
        parser.add_argument(
            "--override",
            action="append",
            default=[],
            metavar="FIELD=VALUE",
            help="Change one PipelineConfig field for this run, e.g. --override lexical_enabled=false.",
        )
        parser.add_argument("--background", action="store_true", help="Queue the run for the Celery worker.")

    def handle(self, *args: object, **options: Any) -> None:
        name, version = str(options["set_name"]), options["set_version"]
        overrides = list(options["override"])
        if options["background"]:
            run = run_create(name=name, version=version, overrides=overrides, label=str(options["label"]))
            evaluation_run_enqueue(run=run)
            self.stdout.write(f"Queued evaluation run {run.pk} of {run.golden_set}; follow it in the admin.")
            return
        run = run_foreground(
            name=name,
            version=version,
            overrides=overrides,
            label=str(options["label"]),
            quiet=options["verbosity"] == 0,
        )
        summary_print(run=run, stdout=self.stdout)
