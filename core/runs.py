"""Background runs (ingestion, evaluation, and the ablation studies to come): one abstract
model with status, progress (``done`` of ``total``), error, timestamps, the worker and the code
version that executed it, and the services every run kind shares.

A run is created PENDING, claimed by exactly one worker (:func:`run_claim`, an atomic status
guard), advanced with :func:`run_progress`, and ends SUCCEEDED or FAILED; a run whose worker
died is marked FAILED by :func:`run_abandon`. Concrete models live in their apps (abstract
models need no app of their own).
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

logger = logging.getLogger(__name__)


class RunStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")


class BackgroundRun(models.Model):
    """Abstract: status, progress ``done`` of ``total`` (units the run kind defines: records,
    questions), ``error`` (the reason of a FAILED run), ``worker`` (``host:pid`` of the process
    that claimed it), ``code_version`` (:func:`code_version` of that process), timestamps."""

    Status = RunStatus

    status = models.CharField(
        max_length=16, choices=RunStatus.choices, default=RunStatus.PENDING, db_index=True, verbose_name=_("status")
    )
    total = models.PositiveIntegerField(
        default=0, help_text=_("Units to process (records, questions)."), verbose_name=_("total")
    )
    done = models.PositiveIntegerField(default=0, help_text=_("Units processed so far."), verbose_name=_("done"))
    error = models.TextField(blank=True, verbose_name=_("error"))
    worker = models.CharField(
        max_length=200, blank=True, help_text=_("host:pid of the worker that ran it."), verbose_name=_("worker")
    )
    code_version = models.CharField(max_length=64, blank=True, verbose_name=_("code version"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    started_at = models.DateTimeField(null=True, blank=True, verbose_name=_("started at"))
    finished_at = models.DateTimeField(null=True, blank=True, verbose_name=_("finished at"))

    class Meta:
        abstract = True
        ordering = ["-created_at"]

    @property
    def progress_percent(self) -> int:
        """Share of units processed, 0–100 (0 while the total is unknown)."""
        return min(100, int(100 * self.done / self.total)) if self.total else 0


def worker_identity() -> str:
    """``host:pid`` of this process."""
    return f"{socket.gethostname()}:{os.getpid()}"


def code_version() -> str:
    """The code's version: ``CODE_VERSION`` from the environment, else the git commit of the
    checkout (short hash, ``+dirty`` with uncommitted changes), else ``unknown``."""
    if os.environ.get("CODE_VERSION"):
        return os.environ["CODE_VERSION"]
    base = Path(settings.BASE_DIR)
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=base, capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=base,
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
        return f"{head}+dirty" if dirty else head
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def run_claim(*, model: type[BackgroundRun], run_id: int) -> bool:
    """Move PENDING run ``run_id`` to RUNNING for this process (one UPDATE with a status guard: of
    two workers handed the same run, only one gets True). Records the start time, this worker
    and its code version, and clears a previous error."""
    return bool(
        model.objects.filter(pk=run_id, status=RunStatus.PENDING).update(  # type: ignore[attr-defined]
            status=RunStatus.RUNNING,
            started_at=timezone.now(),
            error="",
            worker=worker_identity(),
            code_version=code_version(),
        )
    )


def run_progress(*, model: type[BackgroundRun], run_id: int, done: int, total: int | None = None) -> None:
    """Save the progress of a RUNNING run (``done`` ≤ ``total`` units)."""
    fields: dict[str, int] = {"done": done} if total is None else {"done": done, "total": total}
    model.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(**fields)  # type: ignore[attr-defined]


def run_abandon(*, model: type[BackgroundRun], run_id: int, reason: str) -> bool:
    """Mark a RUNNING run FAILED with ``reason`` (its worker died or timed out); True when it was
    RUNNING."""
    return bool(
        model.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(  # type: ignore[attr-defined]
            status=RunStatus.FAILED, error=reason, finished_at=timezone.now()
        )
    )


def _process_alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True  # exists, owned by another user


def runs_orphaned_abandon(*, models: Sequence[type[BackgroundRun]]) -> int:
    """Mark FAILED every RUNNING run of ``models`` claimed by a process of this host that no
    longer exists (killed, out of memory, the machine restarted); returns how many.

    Called when a worker starts (``zolsearch.celery``). With acks_late a broker redelivers the
    task of a killed worker and :func:`run_task_body` abandons its run, but kombu's filesystem
    transport (the embedded default) deletes a message when it hands it out, and Redis
    redelivers only after its visibility timeout (hours): without this the run would show
    RUNNING forever (tests/proof). Runs of another host, or of a live process here, are left
    alone; a pid reused by a new process hides a dead run until that process exits.
    """
    host = socket.gethostname()
    abandoned = 0
    for model in models:
        running = model._default_manager.filter(status=RunStatus.RUNNING, worker__startswith=f"{host}:")
        for run_id, worker in running.values_list("pk", "worker"):
            pid = worker.rpartition(":")[2]
            if pid.isdigit() and not _process_alive(int(pid)):
                reason = f"the worker running this run ({worker}) stopped before it finished; run it again"
                abandoned += run_abandon(model=model, run_id=run_id, reason=reason)
    return abandoned


def task_redelivered(request: Any) -> bool:
    """Whether the Celery task ``request`` (``self.request`` of a bound task) carries a message
    delivered before: with acks_late, the worker that took it first died before acknowledging."""
    return bool((getattr(request, "delivery_info", None) or {}).get("redelivered"))


def run_task_body[R: BackgroundRun](
    *,
    model: type[R],
    run_id: int,
    redelivered: bool,
    execute: Callable[[int], R],
    what: str,
    failures: tuple[type[BaseException], ...] = (Exception,),
) -> str:
    """The body every background-run task shares (HackSoft / Saleor task style): load the row;
    ``"skipped"`` when it is gone or not PENDING; a ``redelivered`` message (Celery
    ``delivery_info["redelivered"]``, acks_late) for a row still RUNNING means its worker died:
    the row is marked FAILED with that reason (:func:`run_abandon`) and ``"abandoned"`` is
    returned; else ``execute(run_id)`` runs it (claiming, progress and the error on the row are
    its job) and its final status is returned, ``"failed"`` when it raised one of ``failures``
    (logged, not retried: the row says why and an editor runs it again). ``what`` names the
    kind in messages ("ingestion", "evaluation", "SNOMED CT import")."""
    run = model._default_manager.filter(pk=run_id).first()
    if run is None:
        return "skipped"
    if run.status == RunStatus.RUNNING and redelivered:
        run_abandon(model=model, run_id=run_id, reason=f"the worker running this {what} stopped; run it again")
        return "abandoned"
    if run.status != RunStatus.PENDING:
        return "skipped"
    try:
        return str(execute(run_id).status)
    except failures:
        logger.exception("%s run %s failed", what, run_id)
        return "failed"
