"""Celery task of the review queue. Arguments are ids and plain numbers."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.db import OperationalError
from django.utils import timezone

from evaluation.review.services import review_queue_sync


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=5,
    retry_backoff_max=120,
    retry_jitter=True,
    max_retries=3,
    soft_time_limit=600,
    time_limit=660,
)
def review_queue_sync_task(answer_ids: list[int] | None = None, days: int | None = 30) -> dict[str, int]:
    """Fill the review queue (:func:`evaluation.review.services.review_queue_sync`).

    ``answer_ids``: only these answers (queued after a live answer's judgement finished or a
    feedback was stored); otherwise every answer of the last ``days`` days (None: all), for a
    schedule. Idempotent, so a redelivered message is harmless. A lost database connection is
    retried with exponential backoff and jitter (up to 3 times). Returns the counts
    (``created``, ``updated``, ``removed``).
    """
    since = timezone.now() - timedelta(days=days) if answer_ids is None and days else None
    return review_queue_sync(answer_ids=answer_ids, since=since).as_dict()
