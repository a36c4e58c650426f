"""Admin for evaluators: golden sets (import, edit, version, export), evaluation runs (start,
follow, read, compare), per-question results, and the judgements of served answers.

Computed rows (runs, results, judgements) are read-only. Actions collect ids, call a service
and report with ``message_user``.
"""

from evaluation.admin.calibration import CalibrationAdmin, CalibrationChangeAdmin
from evaluation.admin.golden import GoldenSetAdmin
from evaluation.admin.judgements import JudgementAdmin
from evaluation.admin.runs import EvaluationResultAdmin, EvaluationRunAdmin
from evaluation.admin.studies import AblationStudyAdmin

__all__ = [
    "AblationStudyAdmin",
    "CalibrationAdmin",
    "CalibrationChangeAdmin",
    "EvaluationResultAdmin",
    "EvaluationRunAdmin",
    "GoldenSetAdmin",
    "JudgementAdmin",
]
