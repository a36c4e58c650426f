"""Celery tasks of ingestion. Arguments are ids; the row carries status and progress."""

from __future__ import annotations

import logging

from celery import shared_task

from core.runs import run_task_body, task_redelivered
from ingestion.models import IngestionRun
from ingestion.services import ingestion_run_execute

logger = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=False)
def ingestion_run_task(self, run_id: int) -> str:
    """Execute ingestion run ``run_id``; quietly returns if it is gone or already done.

    A redelivered message for a run still marked RUNNING means the worker that had it died
    (killed, machine restart): the run is marked FAILED with that reason so the admin does not
    show it running forever; the editor re-runs it (unchanged documents are skipped, so the
    work already committed is not redone). Other failures are recorded on the row by the
    service and not retried, for the same reason.
    """
    return run_task_body(
        model=IngestionRun,
        run_id=run_id,
        redelivered=task_redelivered(self.request),
        execute=lambda i: ingestion_run_execute(run_id=i),
        what="ingestion",
    )
