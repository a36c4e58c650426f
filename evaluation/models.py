"""Evaluation data: golden sets and their questions, evaluation runs with one result row per
question, and judgements of served answers (background judging).

Rows are written by ``evaluation.services`` only. A golden set version that a run has used is
frozen: its questions never change again (edits make a new version), so every stored run can be
reproduced against exactly the questions it saw (``content_hash`` proves it).
"""

from __future__ import annotations

from django.db import models

from core.runs import BackgroundRun
from zolsearch.search.models import Answer


class GoldenSet(models.Model):
    """One version of a named question set. ``content_hash``: SHA-256 hex of the canonical JSONL
    of its questions (see ``evaluation.golden.io.golden_questions_hash``)."""

    name = models.SlugField(max_length=100, help_text="Stable name, e.g. 'medquad-heldout'.")
    version = models.PositiveIntegerField(default=1)
    description = models.TextField(blank=True)
    source = models.CharField(max_length=300, blank=True, help_text="Where the questions come from, with licence.")
    frozen = models.BooleanField(default=False, help_text="Used by a run: edits make a new version.")
    content_hash = models.CharField(max_length=64, blank=True)
    question_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
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

    golden_set = models.ForeignKey(GoldenSet, on_delete=models.CASCADE, related_name="questions")
    qid = models.CharField(max_length=120)
    position = models.PositiveIntegerField(default=0)
    question = models.TextField()
    language = models.CharField(max_length=8, default="nl")
    category = models.CharField(max_length=40, default="general")
    expected_entities = models.JSONField(default=list, blank=True)
    synonyms = models.JSONField(default=dict, blank=True)
    expected_urls = models.JSONField(default=list, blank=True)
    must_refuse = models.BooleanField(default=False)
    tags = models.JSONField(default=list, blank=True)
    notes = models.TextField(blank=True)

    class Meta:
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
        OFAT = "ofat", "One factor at a time against the base"
        FULL = "full", "Full factorial"
        FRACTIONAL = "fractional", "Fractional factorial 2^(k−p)"

    name = models.CharField(max_length=200)
    golden_sets = models.ManyToManyField(GoldenSet, related_name="studies")
    base_config = models.JSONField(default=dict)
    base_config_hash = models.CharField(max_length=64, blank=True)
    factors = models.JSONField(default=list)
    design = models.CharField(max_length=16, choices=Design.choices, default=Design.OFAT)
    fraction_p = models.PositiveSmallIntegerField(default=0, help_text="p of a 2^(k−p) design.")
    generators = models.JSONField(default=list, blank=True)
    design_description = models.CharField(max_length=300, blank=True)
    repetitions = models.PositiveSmallIntegerField(default=1)
    results = models.JSONField(default=dict, blank=True)
    recommendations = models.JSONField(default=list, blank=True)
    created_by = models.CharField(max_length=150, blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)
    applied_by = models.CharField(max_length=150, blank=True)

    class Meta(BackgroundRun.Meta):
        verbose_name_plural = "ablation studies"
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

    study = models.ForeignKey(AblationStudy, on_delete=models.CASCADE, related_name="configurations")
    index = models.PositiveIntegerField()
    label = models.CharField(max_length=500)
    levels = models.JSONField(default=dict)
    coded = models.JSONField(default=dict)
    is_base = models.BooleanField(default=False)
    config = models.JSONField(default=dict)
    config_hash = models.CharField(max_length=64)
    metrics = models.JSONField(default=dict, blank=True)

    class Meta:
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

    golden_set = models.ForeignKey(GoldenSet, on_delete=models.PROTECT, related_name="runs")
    label = models.CharField(max_length=200, blank=True)
    config = models.JSONField(default=dict, blank=True)
    config_hash = models.CharField(max_length=64, blank=True, db_index=True)
    embedding_model = models.CharField(max_length=128, blank=True)
    judge_key = models.CharField(max_length=200, blank=True)
    golden_set_hash = models.CharField(max_length=64, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    pass_rate = models.FloatField(null=True, blank=True, help_text="Composite pass criterion, 0–1.")
    pass_rate_er = models.FloatField(null=True, blank=True, help_text="ER-only pass criterion, 0–1.")
    ndcg_at_5 = models.FloatField(null=True, blank=True)
    entity_recall = models.FloatField(null=True, blank=True)
    created_by = models.CharField(max_length=150, blank=True)
    study_configuration = models.ForeignKey(
        AblationConfiguration, null=True, blank=True, on_delete=models.CASCADE, related_name="runs"
    )
    repetition = models.PositiveSmallIntegerField(default=0, help_text="0-based repetition within a study.")

    class Meta(BackgroundRun.Meta):
        pass

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

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="results")
    question = models.ForeignKey(GoldenQuestion, on_delete=models.PROTECT, related_name="results")
    answer = models.ForeignKey(Answer, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    answer_text = models.TextField(blank=True)
    outcome = models.CharField(max_length=32, blank=True)
    refused = models.BooleanField(default=False)
    retrieved_urls = models.JSONField(default=list, blank=True)
    gate = models.JSONField(default=dict, blank=True)
    judge = models.JSONField(default=dict, blank=True)
    timings_ms = models.JSONField(default=dict, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    entity_recall = models.FloatField(null=True, blank=True)
    matched_entities = models.JSONField(default=list, blank=True)
    ndcg_at_5 = models.FloatField(null=True, blank=True)
    ndcg_trec_at_5 = models.FloatField(null=True, blank=True)  # trec_eval nDCG@5 (ir_measures), for comparison
    mrr = models.FloatField(null=True, blank=True)
    precision_at_5 = models.FloatField(null=True, blank=True)
    recall_at_5 = models.FloatField(null=True, blank=True)
    faithfulness = models.FloatField(null=True, blank=True)
    relevancy = models.FloatField(null=True, blank=True)
    refusal_correct = models.BooleanField(default=False)
    passed_er = models.BooleanField(default=False)
    passed = models.BooleanField(default=False, help_text="Composite pass criterion.")
    pass_reason = models.CharField(max_length=200, blank=True)
    error = models.TextField(blank=True)

    class Meta:
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
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running (claimed by a worker)"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        SKIPPED = "skipped", "Skipped (sampling or budget)"

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="judgements")
    judge_key = models.CharField(max_length=200)
    cache_key = models.CharField(max_length=64, db_index=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    faithfulness = models.FloatField(null=True, blank=True)
    relevancy = models.FloatField(null=True, blank=True)
    evidence = models.JSONField(default=list, blank=True)
    reasons = models.JSONField(default=dict, blank=True)
    context_tokens = models.PositiveIntegerField(default=0)
    truncated = models.BooleanField(default=False, help_text="Context cut to the judge's token budget.")
    cached = models.BooleanField(default=False)
    latency_ms = models.FloatField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True, help_text="When a worker took it (a lease).")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
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
