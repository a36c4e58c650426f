"""Celery tasks of the scheduled monitoring, run daily by django-celery-beat (the schedules are
rows: *Periodic tasks* in the admin, created by migration ``0002_schedules``)."""

from __future__ import annotations

from celery import shared_task

from evaluation.monitoring.models import Trigger
from evaluation.monitoring.services import drift_check_run, retention_purge


# Not acknowledged late: a check redelivered after a worker died would raise its alerts and post
# the webhook twice; a lost daily check shows as a stale zolsearch_drift_check_timestamp_seconds
# (alert DriftCheckStale in deploy/prometheus/alerts.yml) and the next day's runs as usual.
@shared_task(acks_late=False, soft_time_limit=600, time_limit=660)
def drift_check_task() -> int:
    """Run the drift check for the last day; returns the :class:`DriftCheck` id."""
    return drift_check_run(trigger=Trigger.SCHEDULE).pk


# Acknowledged late: a purge is idempotent, so a redelivered one finishes what a dead worker
# started (a second purge row records it).
@shared_task(acks_late=True, soft_time_limit=3600, time_limit=3660)
def retention_purge_task() -> int:
    """Purge answers, feedback and judgements older than RETENTION_DAYS; returns the
    :class:`RetentionPurge` id."""
    return retention_purge(trigger=Trigger.SCHEDULE).pk
