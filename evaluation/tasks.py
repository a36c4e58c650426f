"""Celery tasks of evaluation. Arguments are ids; rows carry status, progress and errors."""

from __future__ import annotations

import logging

from celery import shared_task

from core.runs import run_task_body, task_redelivered
from evaluation.judges import JudgeUnavailable
from evaluation.models import AblationStudy, EvaluationRun
from evaluation.services.ablation import ablation_study_step
from evaluation.services.judging import answer_judge
from evaluation.services.runs import evaluation_run_execute

logger = logging.getLogger(__name__)


@shared_task(
    bind=True,
    acks_late=True,
    autoretry_for=(JudgeUnavailable,),
    retry_backoff=5,
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=3,
    soft_time_limit=300,
    time_limit=360,
)
def answer_judge_task(self, answer_id: int) -> str:
    """Judge answer ``answer_id`` in the background (sampling, budget and cache applied).

    Returns the judgement's status, or ``"gone"`` when the answer was deleted. A judge that is
    unavailable is retried with exponential backoff and full jitter (random waits of up to 5 s,
    10 s, 20 s; 3 retries); the judgement stays FAILED with the error after the last one.
    """
    judgement = answer_judge(answer_id=answer_id, background=True)
    return judgement.status if judgement else "gone"


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=False)
def evaluation_run_task(self, run_id: int) -> str:
    """Execute evaluation run ``run_id``; quietly returns if it is gone or already claimed.

    A redelivered message for a run still RUNNING means its worker died: the run is marked
    FAILED (its finished results are kept) so the admin does not show it running forever.
    """
    return run_task_body(
        model=EvaluationRun,
        run_id=run_id,
        redelivered=task_redelivered(self.request),
        execute=lambda i: evaluation_run_execute(run_id=i),
        what="evaluation",
    )


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=False)
def ablation_study_task(self, study_id: int) -> str:
    """Execute the next pending run of ablation study ``study_id`` and queue this task again
    while runs remain (one run per task: short tasks, parallel chains share the runs).

    A redelivered message (its worker died) first resumes the runs that worker left RUNNING.
    Returns ``"more"`` when it queued the next step, else the study's status.
    """
    if ablation_study_step(study_id=study_id, redelivered=task_redelivered(self.request)):
        queue = (self.request.delivery_info or {}).get("routing_key")  # the next step goes where this one came from
        ablation_study_task.apply_async(args=[study_id], **({"queue": queue} if queue else {}))
        return "more"
    study = AblationStudy.objects.filter(pk=study_id).only("status").first()
    return study.status if study else "gone"
