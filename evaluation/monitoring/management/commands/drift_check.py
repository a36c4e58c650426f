"""``manage.py drift_check [--as-of ISO-8601]``: run the drift check now, as the daily task does,
and print every metric with its value, threshold and whether it alerted."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from evaluation.monitoring.models import Trigger
from evaluation.monitoring.services import drift_check_run


class Command(BaseCommand):
    help = "Compare the last day's live answers with the trailing 7 days; write a drift check and its alerts."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--as-of",
            help="End of the one-day window (ISO 8601; local time zone when none is given). Default: now.",
        )

    def handle(self, *args: object, **options: Any) -> None:
        as_of = None
        if options["as_of"]:
            try:
                as_of = datetime.fromisoformat(options["as_of"])
            except ValueError as exc:
                raise CommandError(f"--as-of: {exc}") from exc
            if timezone.is_naive(as_of):
                as_of = timezone.make_aware(as_of)
        check = drift_check_run(as_of=as_of, trigger=Trigger.COMMAND)
        self.stdout.write(
            f"Drift check {check.pk}: {check.window_start:%Y-%m-%d %H:%M} – {check.window_end:%Y-%m-%d %H:%M} "
            f"({check.answers} answers) against the 7 days before ({check.baseline_answers} answers)"
        )
        for metric, result in check.results.items():
            if result["skipped"]:
                shown = f"skipped: {result['skipped']}"
            else:
                shown = f"{result['value']:.4f} (threshold {result['threshold']}, p = {result['p_value']:.3g})"
                shown += "  ALERT" if result["exceeded"] else ""
            self.stdout.write(f"  {metric:<24} {shown}")
        style = self.style.WARNING if check.alert_count else self.style.SUCCESS
        webhook = f", webhook {check.webhook}" if check.webhook else ""
        self.stdout.write(style(f"{check.alert_count} alert(s){webhook}."))
