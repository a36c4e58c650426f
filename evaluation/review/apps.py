from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReviewConfig(AppConfig):
    """The evaluators' review queue of served answers (issue 12 item 1)."""

    name = "evaluation.review"
    label = "review"
    verbose_name = _("Review queue")

    def ready(self) -> None:
        # Judging finishes in a Celery worker and feedback arrives through its own API call: both
        # queue a sync of that one answer after commit, so the search request does no extra work.
        from django.db.models.signals import post_save

        from evaluation.models import Judgement
        from evaluation.review.services import review_sync_enqueue_on_feedback, review_sync_enqueue_on_judgement
        from zolsearch.search.models import Feedback

        post_save.connect(review_sync_enqueue_on_judgement, sender=Judgement, dispatch_uid="review.judgement")
        post_save.connect(review_sync_enqueue_on_feedback, sender=Feedback, dispatch_uid="review.feedback")
