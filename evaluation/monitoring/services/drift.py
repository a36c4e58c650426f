"""The daily drift check (issue 12 item 4, seed 002) and the acknowledgement of its alerts.

For the last day against the trailing seven days of live API answers it computes the KL
divergence of the fast-gate score distribution and of the judge's faithfulness and relevancy
distributions, and the relative rise of the refusal, red-flag and fallback rates
(:mod:`evaluation.monitoring.divergence`). A metric alerts when it exceeds its threshold
(settings ``DRIFT_*_THRESHOLD``) *and* the change is significant at ``DRIFT_P_VALUE`` (a small
day's divergence is mostly noise); a window with fewer than ``DRIFT_MIN_SAMPLES`` values skips
the metric. Every run writes a :class:`DriftCheck`; each alert a :class:`DriftAlert`; then the
Prometheus gauges are set and, when there are alerts and ``DRIFT_WEBHOOK_URL`` is set, the
webhook is posted (its failure is logged and recorded, never raised).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from evaluation.monitoring import selectors
from evaluation.monitoring.divergence import (
    GATE_SCORE_EDGES,
    JUDGE_SCORE_EDGES,
    histogram_counts,
    kl_divergence,
    rate_rise,
)
from evaluation.monitoring.metrics import drift_observe
from evaluation.monitoring.models import DriftAlert, DriftCheck, DriftMetric, Trigger
from evaluation.monitoring.webhook import WebhookFailed, drift_webhook_post

logger = logging.getLogger(__name__)

WINDOW = timedelta(days=1)
BASELINE = timedelta(days=7)

Result = dict[str, Any]


def _thresholds() -> dict[str, float]:
    kl_gate = float(settings.DRIFT_GATE_KL_THRESHOLD)
    kl_judge = float(settings.DRIFT_JUDGE_KL_THRESHOLD)
    rise = float(settings.DRIFT_RATE_RISE_THRESHOLD)
    return {
        DriftMetric.GATE_SCORE_KL: kl_gate,
        DriftMetric.JUDGE_FAITHFULNESS_KL: kl_judge,
        DriftMetric.JUDGE_RELEVANCY_KL: kl_judge,
        DriftMetric.REFUSAL_RATE_RISE: rise,
        DriftMetric.RED_FLAG_RATE_RISE: rise,
        DriftMetric.FALLBACK_RATE_RISE: rise,
    }


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _distribution_result(
    *, current: Sequence[float], baseline: Sequence[float], edges: Sequence[float], threshold: float
) -> Result:
    """One ``DriftCheck.results`` entry for a score distribution (``current`` / ``baseline``:
    the mean score of each window; ``counts``: both histograms over ``edges``)."""
    result: Result = {
        "value": None,
        "threshold": threshold,
        "current": _mean(current),
        "baseline": _mean(baseline),
        "n_current": len(current),
        "n_baseline": len(baseline),
        "p_value": None,
        "exceeded": False,
        "skipped": "",
        "edges": list(edges),
        "counts_current": histogram_counts(current, edges=edges),
        "counts_baseline": histogram_counts(baseline, edges=edges),
    }
    minimum = int(settings.DRIFT_MIN_SAMPLES)
    if len(current) < minimum or len(baseline) < minimum:
        result["skipped"] = f"fewer than {minimum} values (window {len(current)}, baseline {len(baseline)})"
        return result
    divergence = kl_divergence(result["counts_current"], result["counts_baseline"])
    result["value"] = divergence.kl
    result["p_value"] = divergence.p_value
    result["exceeded"] = divergence.kl > threshold and divergence.p_value < float(settings.DRIFT_P_VALUE)
    return result


def _rate_result(
    *,
    outcomes: Sequence[str],
    current: dict[str, int],
    baseline: dict[str, int],
    threshold: float,
) -> Result:
    """One ``DriftCheck.results`` entry for the share of answers with one of ``outcomes``
    (``current`` / ``baseline`` here: the smoothed shares; ``count_*`` / ``total_*``: raw)."""
    count, total = sum(current.get(o, 0) for o in outcomes), sum(current.values())
    baseline_count, baseline_total = sum(baseline.get(o, 0) for o in outcomes), sum(baseline.values())
    result: Result = {
        "value": None,
        "threshold": threshold,
        "current": None,
        "baseline": None,
        "n_current": total,
        "n_baseline": baseline_total,
        "p_value": None,
        "exceeded": False,
        "skipped": "",
        "outcomes": list(outcomes),
        "count_current": count,
        "count_baseline": baseline_count,
    }
    minimum = int(settings.DRIFT_MIN_SAMPLES)
    if total < minimum or baseline_total < minimum:
        result["skipped"] = f"fewer than {minimum} answers (window {total}, baseline {baseline_total})"
        return result
    rise = rate_rise(count=count, total=total, baseline_count=baseline_count, baseline_total=baseline_total)
    result.update(
        value=rise.rise,
        current=rise.current,
        baseline=rise.baseline,
        p_value=rise.p_value,
        exceeded=rise.rise > threshold and rise.p_value < float(settings.DRIFT_P_VALUE),
    )
    return result


def drift_results(*, window_start: datetime, window_end: datetime, baseline_start: datetime) -> dict[str, Result]:
    """Every drift metric (:class:`DriftMetric` value → result, shape of ``DriftCheck.results``)
    for the window ``[window_start, window_end)`` against ``[baseline_start, window_start)``."""
    thresholds = _thresholds()
    current = {"start": window_start, "end": window_end}
    baseline = {"start": baseline_start, "end": window_start}
    results: dict[str, Result] = {
        DriftMetric.GATE_SCORE_KL: _distribution_result(
            current=selectors.gate_scores(**current),
            baseline=selectors.gate_scores(**baseline),
            edges=GATE_SCORE_EDGES,
            threshold=thresholds[DriftMetric.GATE_SCORE_KL],
        )
    }
    for metric, field in (
        (DriftMetric.JUDGE_FAITHFULNESS_KL, "faithfulness"),
        (DriftMetric.JUDGE_RELEVANCY_KL, "relevancy"),
    ):
        scores, judges = selectors.judge_scores(**current, field=field)
        baseline_scores, baseline_judges = selectors.judge_scores(**baseline, field=field)
        results[metric] = _distribution_result(
            current=scores, baseline=baseline_scores, edges=JUDGE_SCORE_EDGES, threshold=thresholds[metric]
        )
        results[metric].update(judges_current=judges, judges_baseline=baseline_judges)
    counts, baseline_counts = selectors.outcome_counts(**current), selectors.outcome_counts(**baseline)
    for metric, outcomes in (
        (DriftMetric.REFUSAL_RATE_RISE, selectors.REFUSAL_OUTCOMES),
        (DriftMetric.RED_FLAG_RATE_RISE, selectors.RED_FLAG_OUTCOMES),
        (DriftMetric.FALLBACK_RATE_RISE, selectors.FALLBACK_OUTCOMES),
    ):
        results[metric] = _rate_result(
            outcomes=[str(o) for o in outcomes],
            current=counts,
            baseline=baseline_counts,
            threshold=thresholds[metric],
        )
    return {str(metric): result for metric, result in results.items()}


_ALERT_FIELDS = ("value", "threshold", "current", "baseline", "p_value")


def drift_check_run(*, as_of: datetime | None = None, trigger: str = Trigger.SCHEDULE) -> DriftCheck:
    """Run one drift check for the day before ``as_of`` (default now, timezone-aware) against the
    seven days before that; returns the saved :class:`DriftCheck` (its alerts saved with it).

    Then sets the gauges (``zolsearch_drift_*``) and posts the webhook when alerts were raised
    and DRIFT_WEBHOOK_URL is set; the webhook's outcome is saved on the check (``webhook``,
    ``webhook_error``). Raises ``ValueError`` for a naive ``as_of``.
    """
    window_end = as_of or timezone.now()
    if timezone.is_naive(window_end):
        raise ValueError("as_of must be timezone-aware")
    window_start = window_end - WINDOW
    baseline_start = window_start - BASELINE
    results = drift_results(window_start=window_start, window_end=window_end, baseline_start=baseline_start)
    with transaction.atomic():
        check = DriftCheck(
            window_start=window_start,
            window_end=window_end,
            baseline_start=baseline_start,
            answers=results[DriftMetric.REFUSAL_RATE_RISE]["n_current"],
            baseline_answers=results[DriftMetric.REFUSAL_RATE_RISE]["n_baseline"],
            results=results,
            alert_count=sum(1 for r in results.values() if r["exceeded"]),
            trigger=trigger,
        )
        check.full_clean()
        check.save()
        for metric, result in results.items():
            if not result["exceeded"]:
                continue
            alert = DriftAlert(
                check_run=check,
                metric=metric,
                window_start=window_start,
                window_end=window_end,
                details={key: value for key, value in result.items() if key not in _ALERT_FIELDS},
                **{key: result[key] for key in _ALERT_FIELDS},
            )
            alert.full_clean()
            alert.save()
    drift_observe(results=results, finished_at=time.time())
    if check.alert_count:
        logger.warning(
            "drift check %s: %d alert(s): %s",
            check.pk,
            check.alert_count,
            ", ".join(f"{m}={r['value']}" for m, r in results.items() if r["exceeded"]),
        )
        _webhook_notify(check=check)
    return check


def drift_webhook_payload(*, check: DriftCheck) -> dict[str, Any]:
    """The JSON the webhook receives: the check's id and windows (ISO 8601) and its alerts
    (metric, label, value, threshold, current, baseline, p-value)."""
    return {
        "event": "zolsearch.drift_alert",
        "check_id": check.pk,
        "window_start": check.window_start.isoformat(),
        "window_end": check.window_end.isoformat(),
        "baseline_start": check.baseline_start.isoformat(),
        "alerts": [
            {"metric": alert.metric, "label": str(alert.get_metric_display())}
            | {key: getattr(alert, key) for key in _ALERT_FIELDS}
            for alert in check.alerts.order_by("id")
        ],
    }


def _webhook_notify(*, check: DriftCheck) -> None:
    """Post the check's alerts to DRIFT_WEBHOOK_URL (when set) and record the outcome."""
    url = str(settings.DRIFT_WEBHOOK_URL)
    if not url:
        return
    try:
        drift_webhook_post(url=url, payload=drift_webhook_payload(check=check))
    except WebhookFailed as exc:
        logger.error("drift check %s: the webhook failed: %s", check.pk, exc)
        check.webhook, check.webhook_error = DriftCheck.Webhook.FAILED, str(exc)[:2000]
    except Exception as exc:  # a bug here must not lose the check that was already saved
        logger.exception("drift check %s: the webhook failed unexpectedly", check.pk)
        check.webhook, check.webhook_error = DriftCheck.Webhook.FAILED, f"{type(exc).__name__}: {exc}"[:2000]
    else:
        check.webhook = DriftCheck.Webhook.SENT
    check.save(update_fields=["webhook", "webhook_error"])


@transaction.atomic
def drift_alerts_acknowledge(*, alert_ids: Sequence[int], user_name: str) -> int:
    """Mark the alerts ``alert_ids`` that are not yet acknowledged as acknowledged by
    ``user_name`` now; returns how many changed (already acknowledged ones keep who and when).
    Raises ``ValueError`` for an empty ``user_name``."""
    if not user_name:
        raise ValueError("an acknowledgement needs the user's name")
    return DriftAlert.objects.filter(pk__in=list(alert_ids), acknowledged_at__isnull=True).update(
        acknowledged_by=user_name[:150], acknowledged_at=timezone.now()
    )
