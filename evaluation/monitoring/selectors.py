"""Reads of the scheduled monitoring: the live answers of a time window and their scores and
outcomes (drift), the rows past the retention period (purge), and the open alerts."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from django.db import router
from django.db.models import Count, QuerySet
from django.db.models.deletion import Collector

from evaluation.models import Judgement
from evaluation.monitoring.models import DriftAlert
from zolsearch.search.contract import FALLBACKS, Outcome
from zolsearch.search.models import Answer, Feedback, SemanticCacheEntry

# Drift looks at live traffic only: evaluation runs and batch runs ask other questions at other
# times and would shift every distribution on the day they run.
DRIFT_CHANNELS = (Answer.Channel.API,)
JUDGE_SCORE_FIELDS = ("faithfulness", "relevancy")

# Outcome groups of the rates (zolsearch.search.contract.Outcome): refusals are the guards'
# explicit refusals, fallbacks the "I don't know, here is who can help" answers.
REFUSAL_OUTCOMES = (Outcome.REFUSED,)
RED_FLAG_OUTCOMES = (Outcome.RED_FLAG,)
FALLBACK_OUTCOMES = tuple(sorted(FALLBACKS))


def live_answers(*, start: datetime, end: datetime) -> QuerySet[Answer]:
    """Live API answers created in ``[start, end)``."""
    return Answer.objects.filter(channel__in=DRIFT_CHANNELS, created_at__gte=start, created_at__lt=end)


def gate_scores(*, start: datetime, end: datetime) -> list[float]:
    """Fast-gate scores (cosine scale, [-1, 1]) of the live answers of ``[start, end)`` the gate
    scored (``gate_score`` not null: refusals and red flags stop before the gate)."""
    scores = live_answers(start=start, end=end).filter(gate_score__isnull=False).values_list("gate_score", flat=True)
    return [float(score) for score in scores if score is not None]


def judge_scores(*, start: datetime, end: datetime, field: str) -> tuple[list[float], list[str]]:
    """Done judgements' ``field`` (``faithfulness`` or ``relevancy``, in [0, 1]) of the live
    answers created in ``[start, end)``, and the judge keys that gave them (sorted, distinct: a
    change of judge shows in the alert's details). Raises ``ValueError`` for another field."""
    if field not in JUDGE_SCORE_FIELDS:
        raise ValueError(f"unknown judge score {field!r}: expected one of {', '.join(JUDGE_SCORE_FIELDS)}")
    rows = Judgement.objects.filter(
        status=Judgement.Status.DONE,
        answer__channel__in=DRIFT_CHANNELS,
        answer__created_at__gte=start,
        answer__created_at__lt=end,
        **{f"{field}__isnull": False},
    ).values_list(field, "judge_key")
    scores, judges = [], set()
    for score, judge_key in rows:
        scores.append(float(score))
        judges.add(str(judge_key))
    return scores, sorted(judges)


def outcome_counts(*, start: datetime, end: datetime) -> dict[str, int]:
    """Live answers of ``[start, end)`` per outcome (outcomes with none are absent)."""
    rows = live_answers(start=start, end=end).values("outcome").annotate(n=Count("id")).order_by()
    return {str(row["outcome"]): int(row["n"]) for row in rows}


def drift_alerts_open() -> QuerySet[DriftAlert]:
    """Alerts nobody acknowledged yet, newest first."""
    return DriftAlert.objects.filter(acknowledged_at__isnull=True).order_by("-created_at", "-id")


# Retention (issue 13 item 4). Answers of evaluation runs are kept: their questions come from
# golden sets (no patient wrote them), evaluation results link to them, and threshold
# calibration reads their scores; their judgements stay with them.
RETENTION_KEPT_CHANNELS = (Answer.Channel.EVALUATION,)
# The tables a purge always reports (0 when nothing was old enough), cascades come on top.
RETENTION_TABLES = (
    Answer._meta.label,
    Feedback._meta.label,
    Judgement._meta.label,
    SemanticCacheEntry._meta.label,
)


def retention_answers(*, cutoff: datetime) -> QuerySet[Answer]:
    """Answers created before ``cutoff`` that the retention purge deletes (every channel but
    evaluation runs), in id order."""
    return Answer.objects.filter(created_at__lt=cutoff).exclude(channel__in=RETENTION_KEPT_CHANNELS).order_by("pk")


def retention_feedback(*, cutoff: datetime) -> QuerySet[Feedback]:
    """Feedback created before ``cutoff`` (on any answer: it is the patient's own text), in id
    order."""
    return Feedback.objects.filter(created_at__lt=cutoff).order_by("pk")


def retention_cache_entries(*, cutoff: datetime) -> QuerySet[SemanticCacheEntry]:
    """Semantic-cache entries created before ``cutoff`` (they hold the question as a patient
    typed it), in id order."""
    return SemanticCacheEntry.objects.filter(created_at__lt=cutoff).order_by("pk")


def retention_preview(*, cutoff: datetime) -> dict[str, int]:
    """Rows a purge at ``cutoff`` would delete, per model label, cascades included (Django's
    deletion collector, as the admin's delete confirmation counts them); nothing is deleted.
    Loads the answers' related rows into memory: meant for an operator's dry run."""
    counts: Counter[str] = Counter({label: 0 for label in RETENTION_TABLES})
    answers = retention_answers(cutoff=cutoff)
    # Feedback on a purged answer goes with it (cascade): counted once, with the answers.
    querysets: tuple[QuerySet[Any], ...] = (
        answers,
        retention_feedback(cutoff=cutoff).exclude(answer__in=answers.values("pk")),
    )
    for queryset in querysets:
        collector = Collector(using=router.db_for_write(queryset.model), origin=queryset)
        collector.collect(queryset)  # type: ignore[arg-type]  # a QuerySet is what the admin passes too
        for model, instances in collector.data.items():
            counts[model._meta.label] += len(instances)
        for fast in collector.fast_deletes:
            counts[fast.model._meta.label] += fast.count()
    counts[SemanticCacheEntry._meta.label] += retention_cache_entries(cutoff=cutoff).count()
    return dict(counts)
