"""Celery tasks of ingestion. Arguments are ids; the row carries status and progress."""

from __future__ import annotations

import logging

from celery import shared_task

from ingestion.models import IngestionRun
from ingestion.services import ingestion_run_execute

logger = logging.getLogger(__name__)


@shared_task(acks_late=True)
def ingestion_run_task(run_id: int) -> str:
    """Execute ingestion run ``run_id``; quietly returns if it is gone or not PENDING.

    Failures are recorded on the row (FAILED, with the error) by the service; they are not
    retried, because a re-run of the same path is cheap (unchanged documents are skipped).
    """
    run = IngestionRun.objects.filter(pk=run_id).first()
    if run is None or run.status != IngestionRun.Status.PENDING:
        return "skipped"
    try:
        run = ingestion_run_execute(run_id=run_id)
    except Exception:
        logger.exception("ingestion run %s failed", run_id)
        return "failed"
    return run.status
