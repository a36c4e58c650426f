"""Evaluation data: golden sets and their questions, evaluation runs with one result row per
question, and judgements of served answers (background judging).

Rows are written by ``evaluation.services`` only. A golden set version that a run has used is
frozen: its questions never change again (edits make a new version), so every stored run can be
reproduced against exactly the questions it saw (``content_hash`` proves it).
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from core.runs import BackgroundRun
from zolsearch.search.models import Answer


class GoldenSet(models.Model):
    """One version of a named question set. ``content_hash``: SHA-256 hex of the canonical JSONL
    of its questions (see ``evaluation.golden.io.golden_questions_hash``)."""

    name = models.SlugField(max_length=100, help_text=_("Stable name, e.g. 'medquad-heldout'."), verbose_name=_("name"))
    version = models.PositiveIntegerField(default=1, verbose_name=_("version"))
    description = models.TextField(blank=True, verbose_name=_("description"))
    source = models.CharField(
        max_length=300,
        blank=True,
        help_text=_("Where the questions come from, with licence."),
        verbose_name=_("source"),
    )
    frozen = models.BooleanField(
        default=False, help_text=_("Used by a run: edits make a new version."), verbose_name=_("frozen")
    )
    content_hash = models.CharField(max_length=64, blank=True, verbose_name=_("content hash"))
    question_count = models.PositiveIntegerField(default=0, verbose_name=_("question count"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

    class Meta:
        verbose_name = _("golden set")
        verbose_name_plural = _("golden sets")
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="goldenset_name_version_uniq"),
            models.CheckConstraint(condition=models.Q(version__gte=1), name="goldenset_version_pos"),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class GoldenQuestion(models.Model):
    """A question with what a good answer must contain and where it must come from.

    ``qid``: stable id across versions (e.g. ``medquad:GARD:0004450:3``). ``expected_entities``:
    names an answer should mention (matched normalised, with synonyms). ``expected_urls``: pages
    whose retrieval counts as relevant (graded by URL prefix). ``must_refuse``: a correct system
    declines (medical advice, harmful requests). ``synonyms``: entity → other names from the
    source (e.g. MedQuAD focus synonyms), used by entity recall next to aliases and SNOMED CT.
    """

    golden_set = models.ForeignKey(
        GoldenSet, on_delete=models.CASCADE, related_name="questions", verbose_name=_("golden set")
    )
    qid = models.CharField(max_length=120, verbose_name=_("question id"))
    position = models.PositiveIntegerField(default=0, verbose_name=_("position"))
    question = models.TextField(verbose_name=_("question"))
    language = models.CharField(max_length=8, default="nl", verbose_name=_("language"))
    category = models.CharField(max_length=40, default="general", verbose_name=_("category"))
    expected_entities = models.JSONField(default=list, blank=True, verbose_name=_("expected entities"))
    synonyms = models.JSONField(default=dict, blank=True, verbose_name=_("synonyms"))
    expected_urls = models.JSONField(default=list, blank=True, verbose_name=_("expected urls"))
    must_refuse = models.BooleanField(default=False, verbose_name=_("must refuse"))
    tags = models.JSONField(default=list, blank=True, verbose_name=_("tags"))
    notes = models.TextField(blank=True, verbose_name=_("notes"))

    class Meta:
        verbose_name = _("golden question")
        verbose_name_plural = _("golden questions")
        ordering = ["golden_set_id", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["golden_set", "qid"], name="goldenquestion_set_qid_uniq")]

    def __str__(self) -> str:
        return f"{self.qid}: {self.question[:60]}"


class AblationStudy(BackgroundRun):
    """An ablation study: a base configuration, factors (pipeline flags with their levels), a
    design, and repetitions, run over golden set versions as evaluation runs (rows).

    ``factors``: ``[{"name": <PipelineConfig field>, "levels": [base level, other levels…]}]``.
    ``design``: one factor at a time against the base, full factorial, or a 2^(k−p) fractional
    factorial (``fraction_p`` = p, ``generators`` such as ``["E=ABCD"]``; ``design_description``
    states its resolution). ``base_config``: the full frozen configuration (the live one when the
    study was created, semantic cache off); every configuration is it with its levels applied,
    so a study never reads the live flag rows again. Progress ``done``/``total`` counts
    questions over all its runs. ``results``: the analysis (per configuration metrics with CIs,
    McNemar against the base, Cochran's Q, change matrices, factorial effects);
    ``recommendations``: per factor the level to use and the numbers behind it.
    """

    class Design(models.TextChoices):
        OFAT = "ofat", _("One factor at a time against the base")
        FULL = "full", _("Full factorial")
        FRACTIONAL = "fractional", _("Fractional factorial 2^(k−p)")

    name = models.CharField(max_length=200, verbose_name=_("name"))
    golden_sets = models.ManyToManyField(GoldenSet, related_name="studies", verbose_name=_("golden sets"))
    base_config = models.JSONField(default=dict, verbose_name=_("base configuration"))
    base_config_hash = models.CharField(max_length=64, blank=True, verbose_name=_("base configuration hash"))
    factors = models.JSONField(default=list, verbose_name=_("factors"))
    design = models.CharField(max_length=16, choices=Design.choices, default=Design.OFAT, verbose_name=_("design"))
    fraction_p = models.PositiveSmallIntegerField(
        default=0, help_text=_("p of a 2^(k−p) design."), verbose_name=_("fraction p")
    )
    generators = models.JSONField(default=list, blank=True, verbose_name=_("generators"))
    design_description = models.CharField(max_length=300, blank=True, verbose_name=_("design description"))
    repetitions = models.PositiveSmallIntegerField(default=1, verbose_name=_("repetitions"))
    results = models.JSONField(default=dict, blank=True, verbose_name=_("results"))
    recommendations = models.JSONField(default=list, blank=True, verbose_name=_("recommendations"))
    created_by = models.CharField(max_length=150, blank=True, verbose_name=_("created by"))
    applied_at = models.DateTimeField(null=True, blank=True, verbose_name=_("applied at"))
    applied_by = models.CharField(max_length=150, blank=True, verbose_name=_("applied by"))

    class Meta(BackgroundRun.Meta):
        verbose_name = _("ablation study")
        verbose_name_plural = _("ablation studies")
        permissions = [("apply_recommendations", "Can apply a study's recommended settings to the live flags")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(repetitions__gte=1, repetitions__lte=20), name="ablationstudy_repetitions_range"
            )
        ]

    def __str__(self) -> str:
        return f"study {self.pk}: {self.name}"


class AblationConfiguration(models.Model):
    """One design point of a study: its factor ``levels`` (name → value), their ±1 coding
    (``coded``, two-level factors), the full frozen ``config`` and its hash, and after the
    analysis its ``metrics`` (pass rates with CIs, McNemar against the base, change matrix)."""

    study = models.ForeignKey(
        AblationStudy, on_delete=models.CASCADE, related_name="configurations", verbose_name=_("study")
    )
    index = models.PositiveIntegerField(verbose_name=_("index"))
    label = models.CharField(max_length=500, verbose_name=_("label"))
    levels = models.JSONField(default=dict, verbose_name=_("levels"))
    coded = models.JSONField(default=dict, verbose_name=_("coded"))
    is_base = models.BooleanField(default=False, verbose_name=_("base"))
    config = models.JSONField(default=dict, verbose_name=_("configuration"))
    config_hash = models.CharField(max_length=64, verbose_name=_("configuration hash"))
    metrics = models.JSONField(default=dict, blank=True, verbose_name=_("metrics"))

    class Meta:
        verbose_name = _("ablation configuration")
        verbose_name_plural = _("ablation configurations")
        ordering = ["study_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["study", "index"], name="ablationconfiguration_study_index_uniq")
        ]

    def __str__(self) -> str:
        return f"{self.study_id}/{self.index}: {self.label}"


class EvaluationRun(BackgroundRun):
    """One execution of the pipeline over a golden set version with a frozen configuration.

    ``metrics``: the summary (see ``evaluation.metrics.summary.run_summary``): overall means with
    bootstrap 95 % CIs, pass rates, refusal accuracy, latency p50/p95 (ms), and breakdowns per
    category and per language.
    """

    golden_set = models.ForeignKey(
        GoldenSet, on_delete=models.PROTECT, related_name="runs", verbose_name=_("golden set")
    )
    label = models.CharField(max_length=200, blank=True, verbose_name=_("label"))
    config = models.JSONField(default=dict, blank=True, verbose_name=_("configuration"))
    config_hash = models.CharField(max_length=64, blank=True, db_index=True, verbose_name=_("configuration hash"))
    embedding_model = models.CharField(max_length=128, blank=True, verbose_name=_("embedding model"))
    judge_key = models.CharField(max_length=200, blank=True, verbose_name=_("judge key"))
    golden_set_hash = models.CharField(max_length=64, blank=True, verbose_name=_("golden set hash"))
    metrics = models.JSONField(default=dict, blank=True, verbose_name=_("metrics"))
    pass_rate = models.FloatField(
        null=True, blank=True, help_text=_("Composite pass criterion, 0–1."), verbose_name=_("pass rate")
    )
    pass_rate_er = models.FloatField(
        null=True, blank=True, help_text=_("ER-only pass criterion, 0–1."), verbose_name=_("pass rate (ER only)")
    )
    ndcg_at_5 = models.FloatField(null=True, blank=True, verbose_name=_("NDCG@5"))
    entity_recall = models.FloatField(null=True, blank=True, verbose_name=_("entity recall"))
    created_by = models.CharField(max_length=150, blank=True, verbose_name=_("created by"))
    study_configuration = models.ForeignKey(
        AblationConfiguration,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="runs",
        verbose_name=_("study configuration"),
    )
    repetition = models.PositiveSmallIntegerField(
        default=0, help_text=_("0-based repetition within a study."), verbose_name=_("repetition")
    )

    class Meta(BackgroundRun.Meta):
        verbose_name = _("evaluation run")
        verbose_name_plural = _("evaluation runs")

    def __str__(self) -> str:
        return f"run {self.pk} on {self.golden_set} ({self.status})"

    @property
    def progress_percent(self) -> int:
        """Share of questions done, 0–100."""
        return int(100 * self.done / self.total) if self.total else 0


class EvaluationResult(models.Model):
    """One question of one run: the served answer, what was retrieved, and every metric.

    ``retrieved_urls``: distinct urls in rank order. ``gate``: the fast gate's scores.
    ``judge``: ``{"faithfulness", "relevancy", "judge", "evidence", …}``. ``timings_ms``: per stage.
    Metrics are ``None`` where undefined (no expected urls → no retrieval metrics; no expected
    entities → no entity recall).
    """

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="results", verbose_name=_("run"))
    question = models.ForeignKey(
        GoldenQuestion, on_delete=models.PROTECT, related_name="results", verbose_name=_("question")
    )
    answer = models.ForeignKey(
        Answer, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", verbose_name=_("answer")
    )
    answer_text = models.TextField(blank=True, verbose_name=_("answer text"))
    outcome = models.CharField(max_length=32, blank=True, verbose_name=_("outcome"))
    refused = models.BooleanField(default=False, verbose_name=_("refused"))
    retrieved_urls = models.JSONField(default=list, blank=True, verbose_name=_("retrieved urls"))
    gate = models.JSONField(default=dict, blank=True, verbose_name=_("gate scores"))
    judge = models.JSONField(default=dict, blank=True, verbose_name=_("judge scores"))
    timings_ms = models.JSONField(default=dict, blank=True, verbose_name=_("timings (ms)"))
    latency_ms = models.FloatField(null=True, blank=True, verbose_name=_("latency (ms)"))
    entity_recall = models.FloatField(null=True, blank=True, verbose_name=_("entity recall"))
    matched_entities = models.JSONField(default=list, blank=True, verbose_name=_("matched entities"))
    ndcg_at_5 = models.FloatField(null=True, blank=True, verbose_name=_("NDCG@5"))
    # trec_eval nDCG@5 (ir_measures), for comparison
    ndcg_trec_at_5 = models.FloatField(null=True, blank=True, verbose_name=_("NDCG@5 (trec_eval)"))
    mrr = models.FloatField(null=True, blank=True, verbose_name=_("MRR"))
    precision_at_5 = models.FloatField(null=True, blank=True, verbose_name=_("precision@5"))
    recall_at_5 = models.FloatField(null=True, blank=True, verbose_name=_("recall@5"))
    faithfulness = models.FloatField(null=True, blank=True, verbose_name=_("faithfulness"))
    relevancy = models.FloatField(null=True, blank=True, verbose_name=_("relevancy"))
    refusal_correct = models.BooleanField(default=False, verbose_name=_("refusal correct"))
    passed_er = models.BooleanField(default=False, verbose_name=_("passed (ER only)"))
    passed = models.BooleanField(default=False, help_text=_("Composite pass criterion."), verbose_name=_("passed"))
    pass_reason = models.CharField(max_length=200, blank=True, verbose_name=_("pass reason"))
    error = models.TextField(blank=True, verbose_name=_("error"))

    class Meta:
        verbose_name = _("evaluation result")
        verbose_name_plural = _("evaluation results")
        ordering = ["run_id", "question__position", "id"]
        constraints = [models.UniqueConstraint(fields=["run", "question"], name="evaluationresult_run_question_uniq")]

    def __str__(self) -> str:
        return f"{self.question.qid} in run {self.run_id}"


class Judgement(models.Model):
    """The judge's scores of one served answer (background judging or an evaluation run).

    ``cache_key``: SHA-256 hex of (question, context, answer, judge key): an identical request is
    answered from the first DONE judgement with that key, without calling the judge again.
    Scores in [0, 1]. ``evidence``: per answer sentence ``{"sentence", "supported", "support",
    "score"}`` (local judge) or DeepEval's verdicts and reasons. ``latency_ms``: wall time of the
    judge call (0 for a cache hit).
    """

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        RUNNING = "running", _("Running (claimed by a worker)")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")
        SKIPPED = "skipped", _("Skipped (sampling or budget)")

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="judgements", verbose_name=_("answer"))
    judge_key = models.CharField(max_length=200, verbose_name=_("judge key"))
    cache_key = models.CharField(max_length=64, db_index=True, blank=True, verbose_name=_("cache key"))
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True, verbose_name=_("status")
    )
    faithfulness = models.FloatField(null=True, blank=True, verbose_name=_("faithfulness"))
    relevancy = models.FloatField(null=True, blank=True, verbose_name=_("relevancy"))
    evidence = models.JSONField(default=list, blank=True, verbose_name=_("evidence"))
    reasons = models.JSONField(default=dict, blank=True, verbose_name=_("reasons"))
    context_tokens = models.PositiveIntegerField(default=0, verbose_name=_("context tokens"))
    truncated = models.BooleanField(
        default=False, help_text=_("Context cut to the judge's token budget."), verbose_name=_("truncated")
    )
    cached = models.BooleanField(default=False, verbose_name=_("cached"))
    latency_ms = models.FloatField(null=True, blank=True, verbose_name=_("latency (ms)"))
    attempts = models.PositiveIntegerField(default=0, verbose_name=_("attempts"))
    error = models.TextField(blank=True, verbose_name=_("error"))
    claimed_at = models.DateTimeField(
        null=True, blank=True, help_text=_("When a worker took it (a lease)."), verbose_name=_("claimed at")
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True, verbose_name=_("created at"))
    finished_at = models.DateTimeField(null=True, blank=True, verbose_name=_("finished at"))

    class Meta:
        verbose_name = _("judgement")
        verbose_name_plural = _("judgements")
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "judge_key"], name="judgement_answer_judge_uniq"),
            models.CheckConstraint(
                condition=models.Q(faithfulness__isnull=True) | models.Q(faithfulness__gte=0.0, faithfulness__lte=1.0),
                name="judgement_faithfulness_range",
            ),
            models.CheckConstraint(
                condition=models.Q(relevancy__isnull=True) | models.Q(relevancy__gte=0.0, relevancy__lte=1.0),
                name="judgement_relevancy_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judge_key} on answer {self.answer_id} ({self.status})"


class Calibration(models.Model):
    """One calibration of a scorer's threshold for one embedding model and question language,
    with its evidence (issue 12 item 3, seed 000).

    ``scorer``: which score the threshold applies to (today the fast gate's
    ``w·cos(answer, context) + (1 − w)·cos(question, answer)``, in [−1, 1], with
    ``context_weight`` w in [0, 1] chosen with the threshold). Cohorts come from
    stored answers (:mod:`evaluation.calibration_cohorts`): positives are drafts the judge rated
    faithful and relevant plus answers reviewers labelled good; negatives are the rotated-answer
    cohort (a draft with its context put to another question of the same language) plus answers
    reviewers labelled bad. ``curve``: the 0.20–0.91 sweep as ``[{"t", "tpr", "fpr", "j"}]``
    (TPR: share of positives passed; FPR: share of negatives passed). ``threshold``: the chosen
    operating point (``None`` when no threshold meets the cap: ``rule`` says why). ``evidence``:
    cohort sizes and percentiles, Youden's J optimum, ROC AUC, the runs and labels used.
    An *active* row is the one frozen into each request's configuration (through the per-model
    pipeline flags ``gate_thresholds_by_language`` and ``gate_context_weights_by_language``,
    whose audited changes name this row); at most
    one per scorer, model and language.
    """

    class Scorer(models.TextChoices):
        GATE = "gate", _("Fast quality gate")

    class Status(models.TextChoices):
        PROPOSED = "proposed", _("Proposed")
        ACTIVE = "active", _("Active")
        RETIRED = "retired", _("Retired")

    scorer = models.CharField(max_length=16, choices=Scorer.choices, default=Scorer.GATE, verbose_name=_("scorer"))
    model_key = models.CharField(
        max_length=128, help_text=_("Embedding model the scores come from."), verbose_name=_("model key")
    )
    language = models.CharField(max_length=8, help_text=_("Language of the questions."), verbose_name=_("language"))
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.PROPOSED, db_index=True, verbose_name=_("status")
    )
    threshold = models.FloatField(
        null=True, blank=True, help_text=_("Scores at or above it pass."), verbose_name=_("threshold")
    )
    max_false_refusal = models.FloatField(
        help_text=_("Largest share of good answers the evaluator lets it refuse."), verbose_name=_("max false refusal")
    )
    context_weight = models.FloatField(
        default=0.7,
        help_text=_(
            "Weight of the answer's agreement with its sources in the score; the rest is its agreement with the question."
        ),
        verbose_name=_("context weight"),
    )
    rule = models.CharField(
        max_length=200, blank=True, help_text=_("How the threshold was chosen."), verbose_name=_("rule")
    )
    false_refusal = models.FloatField(
        null=True,
        blank=True,
        help_text=_("Share of positives refused at the threshold."),
        verbose_name=_("false refusal"),
    )
    negatives_refused = models.FloatField(
        null=True, blank=True, help_text=_("Share of negatives refused."), verbose_name=_("negatives refused")
    )
    roc_auc = models.FloatField(null=True, blank=True, verbose_name=_("ROC AUC"))
    positives = models.PositiveIntegerField(default=0, verbose_name=_("positives"))
    negatives = models.PositiveIntegerField(default=0, verbose_name=_("negatives"))
    curve = models.JSONField(default=list, blank=True, verbose_name=_("curve"))
    evidence = models.JSONField(default=dict, blank=True, verbose_name=_("evidence"))
    created_by = models.CharField(max_length=150, blank=True, verbose_name=_("created by"))
    created_at = models.DateTimeField(auto_now_add=True, db_index=True, verbose_name=_("created at"))
    activated_by = models.CharField(max_length=150, blank=True, verbose_name=_("activated by"))
    activated_at = models.DateTimeField(null=True, blank=True, verbose_name=_("activated at"))

    class Meta:
        verbose_name = _("calibration")
        verbose_name_plural = _("calibrations")
        ordering = ["scorer", "model_key", "language", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["scorer", "model_key", "language"],
                condition=models.Q(status="active"),
                name="calibration_one_active",
            ),
            models.CheckConstraint(
                condition=models.Q(max_false_refusal__gte=0.0, max_false_refusal__lte=1.0),
                name="calibration_max_false_refusal_range",
            ),
            models.CheckConstraint(
                condition=models.Q(context_weight__gte=0.0, context_weight__lte=1.0),
                name="calibration_context_weight_range",
            ),
        ]

    def __str__(self) -> str:
        shown = "none" if self.threshold is None else f"{self.threshold:.2f}"
        return f"{self.get_scorer_display()} {self.language} ({self.model_key}): {shown}"


class CalibrationChange(models.Model):
    """Audit of activations and retirements of calibrations: who, when, old → new threshold, why."""

    class Action(models.TextChoices):
        ACTIVATED = "activated", _("Activated")
        RETIRED = "retired", _("Retired")

    calibration = models.ForeignKey(
        Calibration, on_delete=models.PROTECT, related_name="changes", verbose_name=_("calibration")
    )
    action = models.CharField(max_length=16, choices=Action.choices, verbose_name=_("action"))
    old_threshold = models.FloatField(null=True, blank=True, verbose_name=_("old threshold"))
    new_threshold = models.FloatField(null=True, blank=True, verbose_name=_("new threshold"))
    changed_by = models.CharField(max_length=150, verbose_name=_("changed by"))
    changed_at = models.DateTimeField(auto_now_add=True, db_index=True, verbose_name=_("changed at"))
    reason = models.TextField(verbose_name=_("reason"))

    class Meta:
        verbose_name = _("calibration change")
        verbose_name_plural = _("calibration changes")
        ordering = ["-changed_at"]

    def __str__(self) -> str:
        return f"{self.calibration} {self.action} by {self.changed_by}"
