"""Judges of answer quality, chosen by settings (see :mod:`evaluation.judges.base`)."""

from __future__ import annotations

from django.conf import settings

from evaluation.judges.base import Judge, JudgeInput, JudgeUnavailable, JudgeVerdict

__all__ = ["Judge", "JudgeInput", "JudgeUnavailable", "JudgeVerdict", "judge_get"]


def judge_get() -> Judge:
    """The configured judge: DeepEval through ``JUDGE_MODEL`` at ``JUDGE_BASE_URL`` when both are
    set, else the offline local judge on the active embedding model."""
    if settings.JUDGE_MODEL and settings.JUDGE_BASE_URL:
        from evaluation.judges.deepeval_judge import DeepEvalJudge

        return DeepEvalJudge.from_settings()
    from evaluation.judges.local import LocalJudge

    return LocalJudge.from_settings()
