"""The Celery application. Broker from ``CELERY_BROKER_URL`` (embedded filesystem by default)."""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import worker_process_shutdown, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zolsearch.settings")

app = Celery("zolsearch")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_shutdown.connect
def _metrics_process_dead(pid: int | None = None, **kwargs: object) -> None:
    """Drop the live-gauge metric files of an exiting prefork child (prometheus multiprocess mode)."""
    # Imported here: this module loads (zolsearch/__init__) before the settings that must set
    # PROMETHEUS_MULTIPROC_DIR before prometheus_client is first imported.
    from core.observability import metrics_process_dead

    metrics_process_dead(pid=pid or os.getpid())


@worker_ready.connect
def _orphaned_runs_abandon(**kwargs: object) -> None:
    """Mark FAILED the background runs a killed worker of this host left RUNNING (their
    messages are gone: ``core.runs.runs_orphaned_abandon``), so the admin says to run them again."""
    from core.runs import runs_orphaned_abandon
    from evaluation.models import EvaluationRun
    from ingestion.models import IngestionRun
    from taxonomy.models import SnomedImport

    runs_orphaned_abandon(models=[IngestionRun, EvaluationRun, SnomedImport])
