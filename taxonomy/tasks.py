"""Celery tasks of the taxonomy app. Arguments are ids; the row carries status and progress."""

from __future__ import annotations

import logging

from celery import shared_task

from core.runs import run_task_body, task_redelivered
from taxonomy.models import SnomedImport
from taxonomy.snomed import SnomedImportError, snomed_import_execute

logger = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=False)
def snomed_import_task(self, run_id: int) -> str:
    """Execute SNOMED CT import ``run_id``; quietly returns if it is gone or already done.

    A redelivered message for an import still RUNNING means the worker that had it died: the
    row is marked FAILED with that reason (nothing was written: the target tables change in one
    transaction at the end). A failed import is recorded on the row and not retried.
    """
    return run_task_body(
        model=SnomedImport,
        run_id=run_id,
        redelivered=task_redelivered(self.request),
        execute=lambda i: snomed_import_execute(run_id=i),
        what="SNOMED CT import",
        failures=(SnomedImportError,),
    )
