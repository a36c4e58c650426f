"""Ingested content: sources, documents, chunks, chunk embeddings and ingestion runs.

All rows here are written by ``ingestion.services`` only; the admin shows them read-only.
"""

from __future__ import annotations

from django.core.validators import MaxValueValidator
from django.db import models
from pgvector.django import VectorField

from core.runs import BackgroundRun

SOURCE_PRIORITY_MAX = 10


class Source(models.Model):
    """A body of content read by one connector (for example MedQuAD or the RIVM FAQ)."""

    key = models.SlugField(max_length=64, unique=True, help_text="Stable key, e.g. 'medquad'.")
    name = models.CharField(max_length=200)
    connector = models.CharField(max_length=32)
    description = models.TextField(blank=True)
    licence = models.CharField(max_length=200, blank=True)
    priority = models.PositiveSmallIntegerField(
        default=0,
        validators=[MaxValueValidator(SOURCE_PRIORITY_MAX)],
        help_text="Authority of this source in search, 0–10: 10 for the hospital's own pages, 0 for general "
        "medical background text. Higher-priority passages are ranked up (see the search settings).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["key"]
        constraints = [
            models.CheckConstraint(condition=models.Q(priority__lte=SOURCE_PRIORITY_MAX), name="source_priority_range")
        ]

    def __str__(self) -> str:
        return self.name


class Document(models.Model):
    """One retrievable page or QA pair, identified by ``external_id`` across re-ingests.

    ``content_hash`` (SHA-256 hex of the normalised content) decides whether a re-ingest must
    re-chunk and re-embed. ``summary`` is stored, never embedded (prepended at generation time).
    """

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="documents")
    external_id = models.CharField(max_length=255, unique=True)
    # Not a URLField: saved pages without a canonical link get file:/// urls, and sources may
    # carry urls Django's validator rejects; a url must never fail a whole ingestion run.
    url = models.CharField(max_length=1000, blank=True)
    title = models.CharField(max_length=500)
    language = models.CharField(max_length=8, default="nl")
    metadata = models.JSONField(default=dict, blank=True)
    content_hash = models.CharField(max_length=64)
    summary = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["external_id"]
        indexes = [models.Index(fields=["source", "language"])]

    def __str__(self) -> str:
        return f"{self.external_id}: {self.title}"


class Chunk(models.Model):
    """A passage of a document, small enough for the embedder's window.

    ``text`` is what is shown and quoted; ``embedded_text`` is what was embedded (Contextual
    Retrieval: document context + canonical questions + chunk text) and is also the BM25 field.
    ``token_count`` counts tokens of ``embedded_text`` by the active embedder's tokenizer.
    """

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    position = models.PositiveIntegerField()
    heading = models.CharField(max_length=500, blank=True)
    text = models.TextField()
    questions = models.JSONField(default=list, blank=True)
    embedded_text = models.TextField()
    token_count = models.PositiveIntegerField()
    language = models.CharField(max_length=8, default="nl")

    class Meta:
        ordering = ["document_id", "position"]
        constraints = [models.UniqueConstraint(fields=["document", "position"], name="chunk_document_position_uniq")]
        indexes = [models.Index(fields=["language"])]

    def __str__(self) -> str:
        return f"{self.document.external_id}#{self.position}"


class ChunkEmbedding(models.Model):
    """The vector of one chunk under one embedding model.

    ``vector`` has no fixed dimension in the column; each model gets its own partial HNSW index
    on ``(vector::vector(dims)) vector_cosine_ops WHERE model_key = …`` (pgvector's recipe for
    several dimensions in one table), created by ``ingestion.services.embedding_index_ensure``.
    Vectors are L2-normalised float32, so cosine distance = 1 − dot product.
    """

    chunk = models.ForeignKey(Chunk, on_delete=models.CASCADE, related_name="embeddings")
    model_key = models.CharField(max_length=128)
    dimensions = models.PositiveIntegerField()
    vector = VectorField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["chunk", "model_key"], name="chunk_embedding_model_uniq"),
            models.CheckConstraint(condition=models.Q(dimensions__gt=0), name="chunk_embedding_dims_pos"),
        ]
        indexes = [models.Index(fields=["model_key"])]

    def __str__(self) -> str:
        return f"{self.model_key} vector of chunk {self.chunk_id}"


class IngestionRun(BackgroundRun):
    """One execution of a connector over a path, with its progress and outcome (``total`` /
    ``done``: records found by the connector / processed so far)."""

    connector = models.CharField(max_length=32)
    path = models.CharField(max_length=1000)
    options = models.JSONField(default=dict, blank=True)
    source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.SET_NULL)
    model_key = models.CharField(max_length=128, blank=True)
    created_count = models.PositiveIntegerField(default=0)
    updated_count = models.PositiveIntegerField(default=0)
    unchanged_count = models.PositiveIntegerField(default=0)
    skipped_count = models.PositiveIntegerField(default=0, help_text="e.g. empty MedQuAD answers")
    error_count = models.PositiveIntegerField(default=0)
    chunk_count = models.PositiveIntegerField(default=0, help_text="Chunks embedded in this run.")
    errors = models.JSONField(default=list, blank=True)
    timings_ms = models.JSONField(default=dict, blank=True)

    class Meta(BackgroundRun.Meta):
        pass

    def __str__(self) -> str:
        return f"{self.connector} {self.path} ({self.status})"
