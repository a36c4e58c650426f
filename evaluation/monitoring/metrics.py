"""Prometheus metrics of the scheduled monitoring, exported on ``/metrics`` with the others.

prometheus_client runs in multiprocess mode (``core.observability``): the drift check runs in a
Celery worker child that exits now and then, so its gauges use ``multiprocess_mode="mostrecent"``
(the files stay after the process ends and ``/metrics`` shows the most recently written value of
any process). A metric a check skipped (too few samples) is set to NaN, so that a stale value
does not keep an alert firing. ``deploy/prometheus/alerts.yml`` alerts on these names.
"""

from __future__ import annotations

import logging
import math

from prometheus_client import Counter, Gauge

logger = logging.getLogger(__name__)

DRIFT_VALUE = Gauge(
    "zolsearch_drift_value",
    "Last drift check's value per metric: KL divergence in nats (*_kl) or relative rise of a rate (*_rate_rise); "
    "NaN when skipped for too few samples.",
    ["metric"],
    multiprocess_mode="mostrecent",
)
DRIFT_THRESHOLD = Gauge(
    "zolsearch_drift_threshold",
    "Alert threshold of each drift metric at the last check (settings DRIFT_*_THRESHOLD).",
    ["metric"],
    multiprocess_mode="mostrecent",
)
DRIFT_ALERT_ACTIVE = Gauge(
    "zolsearch_drift_alert",
    "1 when the last drift check raised an alert for the metric (over its threshold and significant), else 0.",
    ["metric"],
    multiprocess_mode="mostrecent",
)
DRIFT_CHECK_TIMESTAMP = Gauge(
    "zolsearch_drift_check_timestamp_seconds",
    "Unix time at which the last drift check finished.",
    multiprocess_mode="mostrecent",
)
DRIFT_ALERTS_TOTAL = Counter(
    "zolsearch_drift_alerts_total",
    "Drift alerts raised, by metric.",
    ["metric"],
)
RETENTION_PURGED_TOTAL = Counter(
    "zolsearch_retention_purged_total",
    "Rows deleted by the retention purge, by table (model label).",
    ["table"],
)
RETENTION_PURGE_TIMESTAMP = Gauge(
    "zolsearch_retention_purge_timestamp_seconds",
    "Unix time at which the last successful retention purge finished.",
    multiprocess_mode="mostrecent",
)


def drift_observe(*, results: dict[str, dict[str, object]], finished_at: float) -> None:
    """Set the drift gauges from a check's ``results`` (``DriftCheck.results`` shape) and count
    its alerts; ``finished_at`` in Unix seconds. Never raises (logged): metrics must not fail
    the check that wrote its rows."""
    try:
        for metric, result in results.items():
            value = result.get("value")
            DRIFT_VALUE.labels(metric=metric).set(float(value) if isinstance(value, int | float) else math.nan)
            DRIFT_THRESHOLD.labels(metric=metric).set(float(result["threshold"]))  # type: ignore[arg-type]
            DRIFT_ALERT_ACTIVE.labels(metric=metric).set(1.0 if result.get("exceeded") else 0.0)
            if result.get("exceeded"):
                DRIFT_ALERTS_TOTAL.labels(metric=metric).inc()
        DRIFT_CHECK_TIMESTAMP.set(finished_at)
    except Exception:
        logger.exception("recording the drift metrics failed")


def retention_observe(*, counts: dict[str, int], finished_at: float | None) -> None:
    """Count a purge's deleted rows per table; ``finished_at`` (Unix seconds) of a successful
    purge, None for a failed one. Never raises (logged)."""
    try:
        for table, count in counts.items():
            RETENTION_PURGED_TOTAL.labels(table=table).inc(count)
        if finished_at is not None:
            RETENTION_PURGE_TIMESTAMP.set(finished_at)
    except Exception:
        logger.exception("recording the retention metrics failed")
