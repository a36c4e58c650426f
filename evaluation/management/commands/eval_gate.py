"""``manage.py eval_gate --set NAME --baseline FILE [--tolerance 0.05] [--write-baseline]``.

Runs the set and exits 1 when the pass rate (composite criterion) or the mean NDCG@5 falls
more than the tolerance below the committed baseline, printing the questions that regressed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.commands import DatabaseCommand
from evaluation.baseline import BaselineInvalid, baseline_compare, baseline_from_run, baseline_load
from evaluation.management.commands._common import run_foreground, summary_print


class Command(DatabaseCommand):
    help = "Fail (exit 1) when a golden set's pass rate or mean NDCG@5 regresses below a stored baseline."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--set", required=True, dest="set_name", help="Golden set name, e.g. ci-slice.")
        parser.add_argument("--baseline", required=True, help="Baseline JSON file (committed).")
        parser.add_argument("--tolerance", type=float, default=0.05, help="Allowed absolute drop (default 0.05).")
        parser.add_argument(
            "--write-baseline", action="store_true", help="Write this run as the new baseline instead of comparing."
        )
        parser.add_argument("--override", action="append", default=[], metavar="FIELD=VALUE")

    def handle(self, *args: object, **options: Any) -> None:
        tolerance = float(options["tolerance"])
        if not 0 <= tolerance < 1:
            raise CommandError("--tolerance must be in [0, 1)")
        path = Path(str(options["baseline"]))
        baseline = None
        if not options["write_baseline"]:
            try:
                baseline = baseline_load(path=path)
            except BaselineInvalid as exc:
                raise CommandError(str(exc)) from exc
        run = run_foreground(
            name=str(options["set_name"]),
            version=None,
            overrides=list(options["override"]),
            label="eval_gate",
            quiet=options["verbosity"] == 0,
        )
        summary_print(run=run, stdout=self.stdout)
        if baseline is None:
            path.write_text(json.dumps(baseline_from_run(run=run), indent=1, sort_keys=True) + "\n", encoding="utf-8")
            self.stdout.write(self.style.SUCCESS(f"Baseline written to {path} (run {run.pk})."))
            return
        report = baseline_compare(run=run, baseline=baseline, tolerance=tolerance)
        self.stdout.write(
            f"pass rate {report.pass_rate:.3f} (baseline {report.baseline_pass_rate:.3f}), "
            f"NDCG@5 {report.ndcg_at_5:.3f} (baseline {report.baseline_ndcg_at_5:.3f}), tolerance {tolerance:.3f}"
        )
        for note in report.notes:
            self.stdout.write(f"note: {note}")
        if report.regressed:
            self.stdout.write(f"{len(report.regressed)} question(s) regressed:")
            for qid, what in report.regressed:
                self.stdout.write(f"  {qid}: {what}")
        if report.recovered:
            self.stdout.write(f"{len(report.recovered)} question(s) recovered: {', '.join(report.recovered)}")
        if not report.passed:
            for failure in report.failures:
                self.stderr.write(f"REGRESSION: {failure}")
            sys.exit(1)
        self.stdout.write(self.style.SUCCESS("eval_gate passed"))
