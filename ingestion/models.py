"""Ingested content: sources, documents, chunks, chunk embeddings and ingestion runs.

All rows here are written by ``ingestion.services`` only; the admin shows them read-only.
"""

from __future__ import annotations

from django.core.validators import MaxValueValidator
from django.db import models
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Lower
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from core.runs import BackgroundRun

SOURCE_PRIORITY_MAX = 10


class Source(models.Model):
    """A body of content read by one connector (for example MedQuAD or the RIVM FAQ)."""

    key = models.SlugField(
        max_length=64, unique=True, help_text=_("Stable key, e.g. 'medquad'."), verbose_name=_("key")
    )
    name = models.CharField(max_length=200, verbose_name=_("name"))
    connector = models.CharField(max_length=32, verbose_name=_("connector"))
    description = models.TextField(blank=True, verbose_name=_("description"))
    licence = models.CharField(max_length=200, blank=True, verbose_name=_("licence"))
    priority = models.PositiveSmallIntegerField(
        default=0,
        validators=[MaxValueValidator(SOURCE_PRIORITY_MAX)],
        help_text=_(
            "Authority of this source in search, 0–10: 10 for the hospital's own pages, 0 for general "
            "medical background text. Higher-priority passages are ranked up (see the search settings)."
        ),
        verbose_name=_("priority"),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("source")
        verbose_name_plural = _("sources")
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

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="documents", verbose_name=_("source"))
    external_id = models.CharField(max_length=255, unique=True, verbose_name=_("external id"))
    # Not a URLField: saved pages without a canonical link get file:/// urls, and sources may
    # carry urls Django's validator rejects; a url must never fail a whole ingestion run.
    url = models.CharField(max_length=1000, blank=True, verbose_name=_("URL"))
    title = models.CharField(max_length=500, verbose_name=_("title"))
    language = models.CharField(max_length=8, default="nl", verbose_name=_("language"))
    metadata = models.JSONField(default=dict, blank=True, verbose_name=_("metadata"))
    content_hash = models.CharField(max_length=64, verbose_name=_("content hash"))
    summary = models.TextField(blank=True, verbose_name=_("summary"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

    class Meta:
        verbose_name = _("document")
        verbose_name_plural = _("documents")
        ordering = ["external_id"]
        indexes = [
            models.Index(fields=["source", "language"]),
            # The pages of a MedQuAD focus that answer a question type (focus rescue,
            # zolsearch.search.selectors.focus_qtype_chunk_ids): without it, a scan of every
            # document's metadata per request (3.3 ms on full MedQuAD).
            models.Index(
                Lower(KeyTextTransform("focus", "metadata")),
                KeyTextTransform("qtype", "metadata"),
                name="document_focus_qtype",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.external_id}: {self.title}"


class Chunk(models.Model):
    """A passage of a document, small enough for the embedder's window.

    ``text`` is what is shown and quoted; ``embedded_text`` is what was embedded (Contextual
    Retrieval: document context + canonical questions + chunk text) and is also the BM25 field.
    ``token_count`` counts tokens of ``embedded_text`` by the active embedder's tokenizer.
    """

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks", verbose_name=_("document"))
    position = models.PositiveIntegerField(verbose_name=_("position"))
    heading = models.CharField(max_length=500, blank=True, verbose_name=_("heading"))
    text = models.TextField(verbose_name=_("text"))
    questions = models.JSONField(default=list, blank=True, verbose_name=_("questions"))
    embedded_text = models.TextField(verbose_name=_("embedded text"))
    token_count = models.PositiveIntegerField(verbose_name=_("token count"))
    language = models.CharField(max_length=8, default="nl", verbose_name=_("language"))

    class Meta:
        verbose_name = _("chunk")
        verbose_name_plural = _("chunks")
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

    chunk = models.ForeignKey(Chunk, on_delete=models.CASCADE, related_name="embeddings", verbose_name=_("chunk"))
    model_key = models.CharField(max_length=128, verbose_name=_("model key"))
    dimensions = models.PositiveIntegerField(verbose_name=_("dimensions"))
    vector = VectorField(verbose_name=_("vector"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("chunk embedding")
        verbose_name_plural = _("chunk embeddings")
        constraints = [
            models.UniqueConstraint(fields=["chunk", "model_key"], name="chunk_embedding_model_uniq"),
            models.CheckConstraint(condition=models.Q(dimensions__gt=0), name="chunk_embedding_dims_pos"),
        ]
        indexes = [models.Index(fields=["model_key"])]

    def __str__(self) -> str:
        return f"{self.model_key} vector of chunk {self.chunk_id}"


class ChunkSentenceVectors(models.Model):
    """The sentence vectors of one chunk under one embedding model, computed at ingestion so
    that FILCO (``zolsearch.search.stages.rerank.FilcoStage``) scores a chunk's sentences without
    running the encoder per request (issue 13 item 2: it was 16 ms of CPU per question).

    ``vectors``: ``count × dimensions`` float16, little-endian, row-major (the L2-normalised
    float32 vectors of the model, rounded: cosines move by < 1e-3); row i is sentence i of
    ``core.text.sentences_split`` over the chunk's source text
    (``ingestion.chunking.chunk_source_text_compose``). ``digest`` is
    ``ingestion.chunking.sentences_digest`` of those sentences; a reader whose split differs
    embeds the sentences itself instead.
    """

    chunk = models.ForeignKey(Chunk, on_delete=models.CASCADE, related_name="sentence_vectors", verbose_name=_("chunk"))
    model_key = models.CharField(max_length=128, verbose_name=_("model key"))
    digest = models.CharField(max_length=64, verbose_name=_("digest of the sentences"))
    count = models.PositiveIntegerField(verbose_name=_("sentences"))
    dimensions = models.PositiveIntegerField(verbose_name=_("dimensions"))
    vectors = models.BinaryField(verbose_name=_("vectors (float16)"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("chunk sentence vectors")
        verbose_name_plural = _("chunk sentence vectors")
        constraints = [
            models.UniqueConstraint(fields=["chunk", "model_key"], name="chunk_sentence_vectors_model_uniq"),
        ]

    def __str__(self) -> str:
        return f"{self.model_key} sentence vectors of chunk {self.chunk_id}"


class IngestionRun(BackgroundRun):
    """One execution of a connector over a path, with its progress and outcome (``total`` /
    ``done``: records found by the connector / processed so far)."""

    connector = models.CharField(max_length=32, verbose_name=_("connector"))
    path = models.CharField(max_length=1000, verbose_name=_("path"))
    options = models.JSONField(default=dict, blank=True, verbose_name=_("options"))
    source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.SET_NULL, verbose_name=_("source"))
    model_key = models.CharField(max_length=128, blank=True, verbose_name=_("model key"))
    created_count = models.PositiveIntegerField(default=0, verbose_name=_("created count"))
    updated_count = models.PositiveIntegerField(default=0, verbose_name=_("updated count"))
    unchanged_count = models.PositiveIntegerField(default=0, verbose_name=_("unchanged count"))
    skipped_count = models.PositiveIntegerField(
        default=0, help_text=_("e.g. empty MedQuAD answers"), verbose_name=_("skipped count")
    )
    error_count = models.PositiveIntegerField(default=0, verbose_name=_("error count"))
    chunk_count = models.PositiveIntegerField(
        default=0, help_text=_("Chunks embedded in this run."), verbose_name=_("chunk count")
    )
    errors = models.JSONField(default=list, blank=True, verbose_name=_("errors"))
    timings_ms = models.JSONField(default=dict, blank=True, verbose_name=_("timings (ms)"))

    class Meta(BackgroundRun.Meta):
        verbose_name = _("ingestion run")
        verbose_name_plural = _("ingestion runs")

    def __str__(self) -> str:
        return f"{self.connector} {self.path} ({self.status})"
