"""The record of every served answer."""

from __future__ import annotations

import uuid

from django.db import models
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
        API = "api", "Search API"
        BATCH = "batch", "Batch run (search_batch)"
        EVALUATION = "evaluation", "Evaluation run"

    trace_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    channel = models.CharField(max_length=16, choices=Channel.choices, default=Channel.API, db_index=True)
    conversation_id = models.CharField(max_length=64, blank=True)
    question = models.TextField()
    language = models.CharField(max_length=8)
    answer = models.TextField()
    generator = models.CharField(max_length=64, choices=Generator.choices)
    generator_model = models.CharField(max_length=128, blank=True)  # model and version, e.g. zolsearch-extractive/1
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    refusal_reason = models.CharField(max_length=32, choices=RefusalReason.choices, blank=True)
    red_flag_category = models.CharField(max_length=16, choices=RedFlagCategory.choices, blank=True)
    citations = models.JSONField(default=list, blank=True)
    chunk_scores = models.JSONField(default=list, blank=True)
    gate = models.JSONField(default=dict, blank=True)
    gate_passed = models.BooleanField(db_index=True)
    gate_score = models.FloatField(null=True, blank=True)  # None: the gate did not run
    timings_ms = models.JSONField(default=dict, blank=True)
    trace = models.JSONField(default=dict, blank=True)
    embedding_model = models.CharField(max_length=128)
    config = models.JSONField(default=dict, blank=True)
    config_hash = models.CharField(max_length=64, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
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

    model_key = models.CharField(max_length=128)
    config_hash = models.CharField(max_length=64)
    index_version = models.CharField(max_length=32)
    language = models.CharField(max_length=8)
    question = models.TextField()
    vector = VectorField()
    payload = models.JSONField()
    hits = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["model_key", "config_hash", "index_version", "language"])]

    def __str__(self) -> str:
        return f"{self.question[:60]} ({self.hits} hits)"
