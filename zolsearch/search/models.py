"""The record of every served answer."""

from __future__ import annotations

import uuid

from django.db import models
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from zolsearch.search.contract import Generator, Outcome, RedFlagCategory, RefusalReason


class Answer(models.Model):
    """One answer served by the pipeline (API, search page or batch run).

    ``chunk_scores``: list of ``{"chunk_id", "external_id", "rank", "rrf", "dense", "bm25"}``
    in final rank order. ``gate``: ``{"score", "context_alignment", "semantic_similarity",
    "threshold", "passed"}`` (cosines in [-1, 1]). ``timings_ms``: stage name → wall time in ms.
    ``trace``: an :class:`~zolsearch.search.contract.AnswerTrace` (versioned; read it through
    :func:`zolsearch.search.selectors.answer_trace`). ``channel``: who asked (API, batch,
    evaluation run). ``refusal_reason`` / ``red_flag_category``: set for outcomes ``refused`` /
    ``red_flag``. Every answer is AI-generated (EU AI Act art. 50): ``generator`` and
    ``generator_model`` say which system wrote it.
    """

    Outcome = Outcome

    class Channel(models.TextChoices):
        API = "api", _("Search API")
        BATCH = "batch", _("Batch run (search_batch)")
        EVALUATION = "evaluation", _("Evaluation run")

    trace_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False, verbose_name=_("trace id"))
    channel = models.CharField(
        max_length=16, choices=Channel.choices, default=Channel.API, db_index=True, verbose_name=_("channel")
    )
    conversation_id = models.CharField(max_length=64, blank=True, verbose_name=_("conversation id"))
    question = models.TextField(verbose_name=_("question"))
    language = models.CharField(max_length=8, verbose_name=_("language"))
    answer = models.TextField(verbose_name=_("answer"))
    generator = models.CharField(max_length=64, choices=Generator.choices, verbose_name=_("generator"))
    # Model and version, e.g. zolsearch-extractive/1.
    generator_model = models.CharField(max_length=128, blank=True, verbose_name=_("generator model"))
    outcome = models.CharField(max_length=16, choices=Outcome.choices, verbose_name=_("outcome"))
    refusal_reason = models.CharField(
        max_length=32, choices=RefusalReason.choices, blank=True, verbose_name=_("refusal reason")
    )
    red_flag_category = models.CharField(
        max_length=16, choices=RedFlagCategory.choices, blank=True, verbose_name=_("red flag category")
    )
    citations = models.JSONField(default=list, blank=True, verbose_name=_("citations"))
    chunk_scores = models.JSONField(default=list, blank=True, verbose_name=_("chunk scores"))
    gate = models.JSONField(default=dict, blank=True, verbose_name=_("gate scores"))
    gate_passed = models.BooleanField(db_index=True, verbose_name=_("gate passed"))
    gate_score = models.FloatField(null=True, blank=True, verbose_name=_("gate score"))  # None: the gate did not run
    timings_ms = models.JSONField(default=dict, blank=True, verbose_name=_("timings (ms)"))
    trace = models.JSONField(default=dict, blank=True, verbose_name=_("trace"))
    embedding_model = models.CharField(max_length=128, verbose_name=_("embedding model"))
    config = models.JSONField(default=dict, blank=True, verbose_name=_("configuration"))
    config_hash = models.CharField(max_length=64, db_index=True, verbose_name=_("configuration hash"))
    created_at = models.DateTimeField(auto_now_add=True, db_index=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("answer")
        verbose_name_plural = _("answers")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.question[:60]} ({self.outcome})"


class SemanticCacheEntry(models.Model):
    """A served answer kept for questions that mean the same (design: semantic cache).

    Keyed by the vector of the normalised question (``vector``: case, accents and punctuation
    folded, embedded by ``model_key``; dimensions vary by model), the exact pipeline configuration (``config_hash``), the indexed content
    (``index_version``: it changes with every ingestion that changes a document, so ingestion
    invalidates the cache) and the question's language. ``payload``: the draft (text, citations,
    cited chunk ids, generator and model) and the gate result. Written for live API answers
    only; evaluation runs and studies never read it.
    """

    model_key = models.CharField(max_length=128, verbose_name=_("model key"))
    config_hash = models.CharField(max_length=64, verbose_name=_("configuration hash"))
    index_version = models.CharField(max_length=32, verbose_name=_("index version"))
    language = models.CharField(max_length=8, verbose_name=_("language"))
    question = models.TextField(verbose_name=_("question"))
    vector = VectorField(verbose_name=_("vector"))
    payload = models.JSONField(verbose_name=_("payload"))
    hits = models.PositiveIntegerField(default=0, verbose_name=_("hits"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("semantic cache entry")
        verbose_name_plural = _("semantic cache entries")
        indexes = [models.Index(fields=["model_key", "config_hash", "index_version", "language"])]

    def __str__(self) -> str:
        return f"{self.question[:60]} ({self.hits} hits)"


class PipelineFlag(models.Model):
    """One feature flag or threshold of the pipeline, as evaluators set it (a ``PipelineConfig``
    field; catalogue in :mod:`zolsearch.search.flags`).

    ``value``: the JSON value every new live request uses; ``None`` means the default (settings,
    the reranker's calibration file, else the code's default). ``model_key``: blank for every
    embedding model, else the model the value is for (gate thresholds are on one model's cosine
    scale); a model's own row wins over the blank one. Changed only through
    ``zolsearch.search.services.pipeline_flag_set``, which writes a :class:`PipelineFlagChange`.
    Requests freeze the rows into their configuration; runs and studies carry their own and
    never read these rows.
    """

    name = models.CharField(max_length=64, verbose_name=_("name"))
    model_key = models.CharField(
        max_length=128, blank=True, help_text=_("Blank: every embedding model."), verbose_name=_("model key")
    )
    value = models.JSONField(null=True, blank=True, help_text=_("Empty: the default."), verbose_name=_("value"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))
    updated_by = models.CharField(max_length=150, blank=True, verbose_name=_("updated by"))

    class Meta:
        verbose_name = _("pipeline flag")
        verbose_name_plural = _("pipeline flags")
        ordering = ["name", "model_key"]
        constraints = [models.UniqueConstraint(fields=["name", "model_key"], name="pipelineflag_name_model_uniq")]

    def __str__(self) -> str:
        return f"{self.name} ({self.model_key})" if self.model_key else self.name


class PipelineFlagChange(models.Model):
    """The audit trail of :class:`PipelineFlag`: who changed what, when, from what to what, and
    why. Never edited or deleted through the admin."""

    flag = models.ForeignKey(PipelineFlag, on_delete=models.PROTECT, related_name="changes", verbose_name=_("flag"))
    old_value = models.JSONField(null=True, blank=True, verbose_name=_("old value"))
    new_value = models.JSONField(null=True, blank=True, verbose_name=_("new value"))
    changed_by = models.CharField(max_length=150, verbose_name=_("changed by"))
    changed_at = models.DateTimeField(auto_now_add=True, db_index=True, verbose_name=_("changed at"))
    reason = models.TextField(verbose_name=_("reason"))

    class Meta:
        verbose_name = _("pipeline flag change")
        verbose_name_plural = _("pipeline flag changes")
        ordering = ["-changed_at", "-id"]
        constraints = [models.CheckConstraint(condition=~models.Q(reason=""), name="pipelineflagchange_reason")]

    def __str__(self) -> str:
        return f"{self.flag}: {self.old_value!r} → {self.new_value!r} by {self.changed_by}"


class Feedback(models.Model):
    """A patient's "was this helpful?" on one served answer.

    ``comment``: what the patient typed with personal identifiers replaced by placeholders
    (``[PHONE]``, ``[PERSON]``, …) before it is stored (``core.privacy``); ``identifiers``: the
    kinds that were removed, never their values. ``client``: a keyed hash of the client address
    whose key changes every day (``zolsearch.search.services.client_fingerprint``): enough to
    limit the rate and to let one client change its mind, not to recognise a person. One row per
    answer and client; a second post updates it.
    """

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="feedback", verbose_name=_("answer"))
    helpful = models.BooleanField(verbose_name=_("helpful"))
    comment = models.TextField(blank=True, verbose_name=_("comment"))
    identifiers = models.JSONField(default=list, blank=True, verbose_name=_("identifiers"))
    client = models.CharField(max_length=64, db_index=True, verbose_name=_("client"))
    created_at = models.DateTimeField(auto_now_add=True, db_index=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

    class Meta:
        verbose_name = _("feedback")
        verbose_name_plural = _("feedback")
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["answer", "client"], name="feedback_answer_client_uniq")]

    def __str__(self) -> str:
        return f"{'helpful' if self.helpful else 'not helpful'}: answer {self.answer_id}"
