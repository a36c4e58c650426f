"""``manage.py evaluate --set NAME [--set-version N] [--background] [--override field=value …]``."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.management.commands._common import run_foreground, summary_print
from evaluation.services.golden import GoldenSetNotFound, golden_set_resolve
from evaluation.services.runs import (
    RunConfigInvalid,
    config_overrides_parse,
    evaluation_run_create,
    evaluation_run_enqueue,
)
from zolsearch.search.config import pipeline_config_default


class Command(BaseCommand):
    help = (
        "Run a golden set through the search pipeline and store the run with its metrics. A set name "
        "that is not in the database is imported from data/golden/<name>.jsonl."
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

    def handle(self, *args: object, **options: object) -> None:
        name, version = str(options["set_name"]), options["set_version"]
        overrides = list(options["override"])  # type: ignore[call-overload]
        if options["background"]:
            try:
                golden_set = golden_set_resolve(name=name, version=version)  # type: ignore[arg-type]
                config = config_overrides_parse(pairs=overrides, base=pipeline_config_default())
            except (GoldenSetNotFound, RunConfigInvalid) as exc:
                raise CommandError(str(exc)) from exc
            run = evaluation_run_create(
                golden_set=golden_set, config=config, label=str(options["label"]), created_by="manage.py"
            )
            evaluation_run_enqueue(run=run)
            self.stdout.write(f"Queued evaluation run {run.pk} of {golden_set}; follow it in the admin.")
            return
        run = run_foreground(
            name=name,
            version=version,  # type: ignore[arg-type]
            overrides=overrides,
            label=str(options["label"]),
            quiet=options["verbosity"] == 0,
        )
        summary_print(run=run, stdout=self.stdout)
