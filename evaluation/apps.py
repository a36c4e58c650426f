from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EvaluationConfig(AppConfig):
    """Golden sets, evaluation runs, background judging of served answers."""

    name = "evaluation"
    verbose_name = _("Evaluation")

    def ready(self) -> None:
        # The pipeline announces stored answers; evaluation subscribes (the pipeline never
        # imports evaluation).
        from zolsearch.search.services import answer_stored

        answer_stored.connect(_answer_stored, dispatch_uid="evaluation.judge_answer")


def _answer_stored(sender: object, answer: object, **kwargs: object) -> None:
    from evaluation.services.judging import answer_judging_enqueue

    answer_judging_enqueue(answer=answer)  # type: ignore[arg-type]
