"""The retention purge (issue 13 item 4): what patients typed and what was said about it is kept
for RETENTION_DAYS (default 90), then deleted in batches by a daily task.

Deleted once older than the period (``created_at`` before ``now − RETENTION_DAYS``):

- ``search.Answer`` of every channel except evaluation runs (API and batch runs), with what
  their foreign keys cascade to: their ``search.Feedback``, ``evaluation.Judgement`` and the
  review queue's ``review.Review`` (a OneToOne with CASCADE: a reviewed answer goes too; what
  the evaluator made of it, a golden question or an alias, is a row of its own and stays, its
  ``Review`` link gone). ``evaluation.EvaluationResult.answer`` is SET_NULL (results keep their
  own copy of the answer text).
- ``search.Feedback`` older than the period on any answer (the patient's comment, already
  stripped of identifiers, and the hashed client).
- ``search.SemanticCacheEntry`` (it keeps the question as typed to match it again).

Kept: evaluation data, not patient data. Golden sets and their questions (``evaluation.GoldenSet``,
``GoldenQuestion``: de-identified text an evaluator kept, rows of their own that nothing
cascades to from answers), evaluation runs and their results, ablation studies, calibrations
(their evidence keeps counts and percentiles, not answers), and the answers of evaluation runs
with their judgements (golden-set questions; results link to them and calibration reads their
scores). Calibration labels that came from reviews of purged answers are gone with the reviews.

Each batch is one transaction; the :class:`RetentionPurge` row is updated after each, so the
admin shows the progress and, after a failure, what was already deleted.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from evaluation.monitoring import selectors
from evaluation.monitoring.metrics import retention_observe
from evaluation.monitoring.models import RetentionPurge, Trigger

logger = logging.getLogger(__name__)


def retention_cutoff(*, days: int | None = None, now: datetime | None = None) -> datetime:
    """``now − days`` (defaults: the current time and RETENTION_DAYS). Raises ``ValueError`` for
    fewer than 1 day (0 would purge everything served until now)."""
    days = int(settings.RETENTION_DAYS if days is None else days)
    if days < 1:
        raise ValueError(f"the retention period must be at least 1 day, not {days}")
    return (now or timezone.now()) - timedelta(days=days)


def _batches_delete(queryset: QuerySet, *, batch_size: int, purge: RetentionPurge, counts: Counter[str]) -> None:
    """Delete ``queryset`` (ordered by pk) ``batch_size`` rows at a time, each batch in its own
    transaction with the purge row's progress; cascaded rows are counted under their labels."""
    last_pk = 0
    while True:
        ids = list(queryset.filter(pk__gt=last_pk).values_list("pk", flat=True)[:batch_size])
        if not ids:
            return
        last_pk = ids[-1]
        with transaction.atomic():
            _, deleted = queryset.model.objects.filter(pk__in=ids).delete()
            after = Counter(counts)
            after.update(deleted)
            purge.batches += 1
            purge.counts = dict(after)
            purge.save(update_fields=["batches", "counts"])
        counts.update(deleted)  # once the batch is committed


def retention_purge(
    *,
    days: int | None = None,
    batch_size: int | None = None,
    now: datetime | None = None,
    trigger: str = Trigger.SCHEDULE,
) -> RetentionPurge:
    """Purge what is older than the retention period (module docstring) and return the
    :class:`RetentionPurge` row (``succeeded``, with counts per model label).

    ``days``: RETENTION_DAYS by default; ``batch_size``: RETENTION_BATCH_SIZE by default (rows of
    one table deleted per transaction). Raises ``ValueError`` for a period under 1 day or a batch
    size under 1; re-raises a database error after marking the row ``failed`` (earlier batches
    stay deleted and counted).
    """
    cutoff = retention_cutoff(days=days, now=now)
    batch_size = int(settings.RETENTION_BATCH_SIZE if batch_size is None else batch_size)
    if batch_size < 1:
        raise ValueError(f"the batch size must be at least 1, not {batch_size}")
    counts: Counter[str] = Counter({label: 0 for label in selectors.RETENTION_TABLES})
    purge = RetentionPurge(
        cutoff=cutoff,
        retention_days=int(settings.RETENTION_DAYS if days is None else days),
        batch_size=batch_size,
        counts=dict(counts),
        trigger=trigger,
    )
    purge.full_clean()
    purge.save()
    try:
        # Answers first: their feedback and judgements go with them (counted once).
        for queryset in (
            selectors.retention_answers(cutoff=cutoff),
            selectors.retention_feedback(cutoff=cutoff),
            selectors.retention_cache_entries(cutoff=cutoff),
        ):
            _batches_delete(queryset, batch_size=batch_size, purge=purge, counts=counts)
    except Exception as exc:
        purge.status, purge.error, purge.finished_at = RetentionPurge.Status.FAILED, repr(exc), timezone.now()
        purge.save(update_fields=["status", "error", "finished_at"])
        retention_observe(counts=dict(counts), finished_at=None)
        logger.exception("retention purge %s failed after %d batches", purge.pk, purge.batches)
        raise
    purge.status, purge.finished_at = RetentionPurge.Status.SUCCEEDED, timezone.now()
    purge.counts = dict(counts)
    purge.save(update_fields=["status", "finished_at", "counts"])
    retention_observe(counts=dict(counts), finished_at=time.time())
    logger.info("retention purge %s before %s: %s", purge.pk, cutoff.isoformat(), purge.counts)
    return purge
