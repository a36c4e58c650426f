from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    """Golden sets, evaluation runs, judging (issue 4; empty until then)."""

    name = "evaluation"
    verbose_name = "Evaluation"
