"""Records of the scheduled monitoring: every drift check with what it computed, the alerts it
raised, and every retention purge with what it deleted.

Rows are written by :mod:`evaluation.monitoring.services` only; in the admin they are records
(never added or edited; an alert can only be acknowledged).
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class DriftMetric(models.TextChoices):
    """What a drift check measures (:mod:`evaluation.monitoring.divergence` has the formulas).

    ``*_kl``: KL divergence in nats of the last day's score distribution from the trailing
    seven days' (fixed bins, additive smoothing). ``*_rate_rise``: relative rise of an outcome's
    share of answers, ``(current − baseline) / baseline`` (0.2 = a rise of 20 %).
    """

    GATE_SCORE_KL = "gate_score_kl", _("Gate score distribution (KL divergence)")
    JUDGE_FAITHFULNESS_KL = "judge_faithfulness_kl", _("Judge faithfulness distribution (KL divergence)")
    JUDGE_RELEVANCY_KL = "judge_relevancy_kl", _("Judge relevancy distribution (KL divergence)")
    REFUSAL_RATE_RISE = "refusal_rate_rise", _("Refusal rate (relative rise)")
    RED_FLAG_RATE_RISE = "red_flag_rate_rise", _("Red-flag rate (relative rise)")
    FALLBACK_RATE_RISE = "fallback_rate_rise", _("Fallback rate (relative rise)")


class Trigger(models.TextChoices):
    SCHEDULE = "schedule", _("Schedule (Celery beat)")
    COMMAND = "command", _("Management command")


class DriftCheck(models.Model):
    """One run of the drift check, alerts or not.

    The current window is ``[window_start, window_end)`` (one day), the baseline
    ``[baseline_start, window_start)`` (the trailing seven days before it); both count live API
    answers only (``Answer.channel == "api"``). ``results``: metric → ``{"value", "threshold",
    "current", "baseline", "n_current", "n_baseline", "p_value", "exceeded", "skipped"}`` where
    ``value`` is the KL divergence (nats) or relative rise, ``current`` / ``baseline`` the mean
    score or the outcome's share in each window, ``p_value`` the significance test's
    (:func:`evaluation.monitoring.divergence.g_test_p_value`, binomial for rates) and
    ``skipped`` the reason a metric was not computed (too few samples), else ``""``.
    ``webhook``: ``""`` (no alert or no DRIFT_WEBHOOK_URL), ``sent`` or ``failed`` (with
    ``webhook_error``).
    """

    class Webhook(models.TextChoices):
        NONE = "", _("Not sent")
        SENT = "sent", _("Sent")
        FAILED = "failed", _("Failed")

    window_start = models.DateTimeField(_("window start"))
    window_end = models.DateTimeField(_("window end"), db_index=True)
    baseline_start = models.DateTimeField(_("baseline start"))
    answers = models.PositiveIntegerField(_("answers in the window"), default=0)
    baseline_answers = models.PositiveIntegerField(_("answers in the baseline"), default=0)
    results = models.JSONField(_("results"), default=dict, blank=True)
    alert_count = models.PositiveIntegerField(_("alerts"), default=0)
    webhook = models.CharField(_("webhook"), max_length=8, choices=Webhook.choices, default="", blank=True)
    webhook_error = models.TextField(_("webhook error"), blank=True)
    trigger = models.CharField(_("trigger"), max_length=16, choices=Trigger.choices, default=Trigger.SCHEDULE)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True, db_index=True)

    class Meta:
        verbose_name = _("drift check")
        verbose_name_plural = _("drift checks")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(
                    baseline_start__lt=models.F("window_start"), window_start__lt=models.F("window_end")
                ),
                name="driftcheck_windows_ordered",
            )
        ]

    def __str__(self) -> str:
        return f"drift check {self.pk} up to {self.window_end:%Y-%m-%d %H:%M} ({self.alert_count} alerts)"


class DriftAlert(models.Model):
    """A drift metric over its threshold in one check (and significant: see
    :class:`DriftCheck`). ``window_start`` / ``window_end``: the check's current window.
    ``value``, ``threshold``, ``current``, ``baseline``, ``p_value``: as in
    :attr:`DriftCheck.results`. ``details``: sample sizes, bins and both windows' histograms or
    counts. Acknowledged by an evaluator or operator (``acknowledged_by`` / ``acknowledged_at``,
    both set or both empty)."""

    check_run = models.ForeignKey(
        DriftCheck, on_delete=models.PROTECT, related_name="alerts", verbose_name=_("drift check")
    )
    metric = models.CharField(_("metric"), max_length=32, choices=DriftMetric.choices, db_index=True)
    window_start = models.DateTimeField(_("window start"))
    window_end = models.DateTimeField(_("window end"))
    value = models.FloatField(_("value"))
    threshold = models.FloatField(_("threshold"))
    current = models.FloatField(_("current"), null=True, blank=True)
    baseline = models.FloatField(_("baseline"), null=True, blank=True)
    p_value = models.FloatField(_("p-value"), null=True, blank=True)
    details = models.JSONField(_("details"), default=dict, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True, db_index=True)
    acknowledged_by = models.CharField(_("acknowledged by"), max_length=150, blank=True)
    acknowledged_at = models.DateTimeField(_("acknowledged at"), null=True, blank=True)

    class Meta:
        verbose_name = _("drift alert")
        verbose_name_plural = _("drift alerts")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(acknowledged_by="", acknowledged_at__isnull=True)
                | (~models.Q(acknowledged_by="") & models.Q(acknowledged_at__isnull=False)),
                name="driftalert_acknowledged_both",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_metric_display()}: {self.value:.3f} > {self.threshold:.3f}"


class RetentionPurge(models.Model):
    """One retention purge: rows older than ``cutoff`` (``retention_days`` before it ran)
    deleted in batches of ``batch_size`` answers.

    ``counts``: model label → rows deleted (``search.Answer``, ``search.Feedback``,
    ``evaluation.Judgement``, ``search.SemanticCacheEntry`` and whatever else the answers'
    foreign keys cascade to, e.g. ``review.Review``). ``status``: ``succeeded`` or ``failed``
    (``error`` says why; the batches before the failure stay deleted and counted).
    """

    class Status(models.TextChoices):
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")

    cutoff = models.DateTimeField(_("cutoff"), help_text=_("Rows created before it were purged."))
    retention_days = models.PositiveIntegerField(_("retention (days)"))
    batch_size = models.PositiveIntegerField(_("batch size"))
    status = models.CharField(_("status"), max_length=16, choices=Status.choices, default=Status.RUNNING)
    counts = models.JSONField(_("rows deleted"), default=dict, blank=True)
    batches = models.PositiveIntegerField(_("batches"), default=0)
    error = models.TextField(_("error"), blank=True)
    trigger = models.CharField(_("trigger"), max_length=16, choices=Trigger.choices, default=Trigger.SCHEDULE)
    started_at = models.DateTimeField(_("started at"), auto_now_add=True, db_index=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        verbose_name = _("retention purge")
        verbose_name_plural = _("retention purges")
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"purge {self.pk} before {self.cutoff:%Y-%m-%d} ({self.status})"

    @property
    def total(self) -> int:
        """Rows deleted over every table."""
        return sum(int(n) for n in self.counts.values())
