"""``manage.py review_sync``: fill the review queue from stored answers."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from evaluation.review.selectors import QUEUE_CHANNELS
from evaluation.review.services import review_queue_sync
from zolsearch.search.models import Answer


class Command(BaseCommand):
    help = (
        "Queue for review every stored answer that qualifies (gate rejections, CRAG and guard refusals, red "
        "flags, low judge scores, thumbs down) and has no review yet. Idempotent."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, default=30, help="Answers of the last N days (0: all). Default 30.")
        parser.add_argument(
            "--channel",
            action="append",
            choices=Answer.Channel.values,
            help=f"Answer channel; repeat for several. Default: {', '.join(QUEUE_CHANNELS)}.",
        )
        parser.add_argument("--answer", type=int, action="append", help="Only this answer id; repeat for several.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["days"] < 0:
            raise CommandError("--days must be 0 or more")
        since = timezone.now() - timedelta(days=options["days"]) if options["days"] else None
        result = review_queue_sync(
            answer_ids=options["answer"], since=since, channels=options["channel"] or QUEUE_CHANNELS
        )
        self.stdout.write(f"review queue: {result.created} created, {result.updated} updated, {result.removed} removed")
