"""``manage.py review_export --labels FILE``: the review queue's verdicts on evaluation runs'
answers written into a draft-labels file (:mod:`evaluation.draft_labels`), so they outlive the
database and count in ``manage.py calibrate --check --labels FILE`` on any index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.draft_labels import (
    DraftLabelsInvalid,
    draft_labels_from_reviews,
    draft_labels_merged,
    draft_labels_read,
    draft_labels_write,
)


class Command(BaseCommand):
    help = (
        "Write the review queue's verdicts on evaluation runs' answers into a draft-labels file; labels already "
        "in the file are kept unless a review labels the same draft."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--labels", required=True, metavar="FILE", help="The draft-labels file (created if absent)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(str(options["labels"]))
        try:
            existing = draft_labels_read(path) if path.exists() else []
        except (DraftLabelsInvalid, OSError) as exc:
            raise CommandError(str(exc)) from exc
        reviewed = draft_labels_from_reviews()
        merged = draft_labels_merged(existing, reviewed)
        draft_labels_write(path, merged)
        self.stdout.write(
            f"{len(reviewed)} reviewed drafts of evaluation runs; {path} holds {len(merged)} labels "
            f"({len(merged) - len(existing)} new)"
        )
