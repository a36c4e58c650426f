"""The review queue: one row per served answer an evaluator should look at, and the verdict.

Rows are written only by :mod:`evaluation.review.services`: :func:`review_queue_sync` creates
them from answers (the rules and the risk score are in :mod:`evaluation.review.rules`), the
evaluator's actions set the verdict, the assignment and what the verdict was turned into.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from evaluation.models import GoldenQuestion
from taxonomy.models import Alias
from zolsearch.search.models import Answer


class Kind(models.TextChoices):
    """Why an answer is in the queue (its strongest signal; ``Review.signals`` has them all)."""

    RED_FLAG = "red_flag", _("Red flag (routed to a help line)")
    GUARD_REFUSED = "guard_refused", _("Refused by a guard")
    LOW_JUDGE_SCORE = "low_judge_score", _("Low judge score")
    THUMBS_DOWN = "thumbs_down", _("Thumbs down (patient feedback)")
    GATE_REJECTED = "gate_rejected", _("Rejected by the quality gate")
    CRAG_REFUSED = "crag_refused", _("Refused by CRAG (retrieval too weak)")
    NO_RESULTS = "no_results", _("No results")


class Verdict(models.TextChoices):
    """The evaluator's verdict on the answer the patient got (or the draft that was refused)."""

    GOOD_ANSWER = "good_answer", _("Good answer")
    WRONGLY_REFUSED = "wrongly_refused", _("Wrongly refused")
    RIGHTLY_REFUSED = "rightly_refused", _("Rightly refused")
    WRONG_ANSWER = "wrong_answer", _("Wrong answer")
    UNSAFE = "unsafe", _("Unsafe")


# Calibration reads a verdict as: the draft should pass (positive) or be refused (negative).
POSITIVE_VERDICTS = frozenset({Verdict.GOOD_ANSWER, Verdict.WRONGLY_REFUSED})
NEGATIVE_VERDICTS = frozenset({Verdict.RIGHTLY_REFUSED, Verdict.WRONG_ANSWER, Verdict.UNSAFE})


class Review(models.Model):
    """One served answer in the evaluators' queue.

    ``kind``: the strongest reason it is here; ``signals``: every reason (kinds), e.g. a gate
    rejection that also got a thumbs down. ``risk``: 0–100, higher first (the rule is
    :func:`evaluation.review.rules.review_risk`: red flags and unsafe refusals first). ``verdict``
    and ``reason``: blank until reviewed; a verdict always has a reason, a reviewer and a time
    (database constraints). ``calibration_label``: the verdict is used as a label by threshold
    calibration (:func:`evaluation.review.selectors.calibration_labels`); only a reviewed row can
    be one. ``golden_question`` / ``alias``: what the evaluator turned the verdict into.
    """

    Kind = Kind
    Verdict = Verdict

    answer = models.OneToOneField(Answer, on_delete=models.CASCADE, related_name="review", verbose_name=_("answer"))
    kind = models.CharField(_("kind"), max_length=20, choices=Kind.choices, db_index=True)
    signals = models.JSONField(_("signals"), default=list, blank=True, help_text=_("Every reason it is queued."))
    risk = models.PositiveSmallIntegerField(_("risk"), db_index=True, help_text=_("0–100; reviewed highest first."))
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="reviews_assigned",
        verbose_name=_("assigned to"),
    )
    verdict = models.CharField(_("verdict"), max_length=20, choices=Verdict.choices, blank=True, db_index=True)
    reason = models.TextField(_("reason"), blank=True, help_text=_("Why this verdict (required with a verdict)."))
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="reviews_done",
        verbose_name=_("reviewed by"),
    )
    reviewed_at = models.DateTimeField(_("reviewed at"), null=True, blank=True)
    calibration_label = models.BooleanField(
        _("calibration label"), default=False, help_text=_("The verdict is used to calibrate thresholds.")
    )
    golden_question = models.ForeignKey(
        GoldenQuestion,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="reviews",
        verbose_name=_("golden question"),
    )
    alias = models.ForeignKey(
        Alias, null=True, blank=True, on_delete=models.SET_NULL, related_name="reviews", verbose_name=_("alias")
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True, db_index=True)

    class Meta:
        verbose_name = _("review")
        verbose_name_plural = _("reviews")
        ordering = [models.F("reviewed_at").desc(nulls_first=True), "-risk", "-created_at"]
        constraints = [
            models.CheckConstraint(condition=models.Q(risk__lte=100), name="review_risk_range"),
            models.CheckConstraint(
                condition=models.Q(verdict="", reviewed_at__isnull=True)
                | (~models.Q(verdict="") & ~models.Q(reason="") & models.Q(reviewed_at__isnull=False)),
                name="review_verdict_reason",
                violation_error_message=_("A verdict needs a reason."),
            ),
            models.CheckConstraint(
                condition=models.Q(calibration_label=False) | ~models.Q(verdict=""),
                name="review_label_needs_verdict",
                violation_error_message=_("Only a reviewed answer can be a calibration label."),
            ),
        ]

    def __str__(self) -> str:
        return f"review {self.pk}: {self.get_kind_display()} ({self.get_verdict_display() or _('open')})"
