"""Writes of the ingestion app: sources, ingestion runs, documents, chunks and embeddings."""

from __future__ import annotations

import hashlib
import logging
import re
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from core.providers.embeddings import EmbeddingProvider, embedding_provider_get
from core.runs import run_abandon, run_claim
from ingestion.chunking import ChunkDraft, chunk_sentences, chunks_build, sentences_digest
from ingestion.connectors import connector_get
from ingestion.connectors.base import BadRecord, Connector, DocumentRecord, SkippedRecord
from ingestion.models import Chunk, ChunkEmbedding, ChunkSentenceVectors, Document, IngestionRun, Source

logger = logging.getLogger(__name__)

BATCH_DOCUMENTS = 64
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 200
# After a bulk load the BM25 index is left in many small segments and the heap without a
# visibility map; measured on full MedQuAD: BM25 queries took ~500 ms, 25–35 ms after REINDEX.
BULK_CHUNKS = 1000
INGEST_LOCK_CLASS = 7_461_001  # advisory lock namespace of ingestion runs (key 2 = source id)
# Citations are links shown to patients: javascript:, data: and the like never get through.
ALLOWED_URL_SCHEMES = {"http", "https", "file"}
MAX_STORED_ERRORS = 500
ProgressCallback = Callable[[int, int], None]


def source_ensure(*, connector: Connector, key: str | None = None) -> Source:
    """The ``Source`` row for ``connector`` (``key`` overrides its default key), created once."""
    source, _ = Source.objects.get_or_create(
        key=key or connector.source_key,
        defaults={
            "name": key or connector.source_name,
            "connector": connector.name,
            "licence": connector.licence,
            "description": connector.description,
        },
    )
    return source


def source_priority_set(*, key: str, priority: int) -> Source:
    """Set the search authority of source ``key`` (0–10, :data:`ingestion.models.SOURCE_PRIORITY_MAX`).

    Raises ``Source.DoesNotExist`` for an unknown key and ``ValidationError`` for a priority
    outside 0–10. The pipeline freezes priorities into each request's configuration, so the
    change applies to the next request.
    """
    with transaction.atomic():
        source = Source.objects.select_for_update().get(key=key)
        source.priority = priority
        source.full_clean()
        source.save(update_fields=["priority"])
    return source


def ingestion_run_create(
    *, connector: str, path: str, limit: int | None = None, subsets: Sequence[str] = (), source_key: str = ""
) -> IngestionRun:
    """A PENDING run. Raises ``ConnectorError`` for an unknown connector (nothing is stored)."""
    connector_get(connector)
    run = IngestionRun(
        connector=connector,
        path=str(path),
        options={"limit": limit, "subsets": list(subsets), "source_key": source_key},
        model_key=embedding_provider_get().key,
    )
    run.full_clean()
    run.save()
    return run


def ingestion_run_start(
    *, connector: str, path: str, limit: int | None = None, subsets: Sequence[str] = (), source_key: str = ""
) -> IngestionRun:
    """Create a PENDING run (:func:`ingestion_run_create`) and queue it for the Celery worker
    after commit. Raises ``ConnectorError`` for an unknown connector (nothing stored or queued)."""
    from ingestion.tasks import ingestion_run_task  # tasks import this module: enqueue lazily

    with transaction.atomic():
        run = ingestion_run_create(connector=connector, path=path, limit=limit, subsets=subsets, source_key=source_key)
        transaction.on_commit(partial(ingestion_run_task.delay, run.id))
    return run


def embedding_index_name(*, model_key: str, dimensions: int) -> str:
    """Name of the partial HNSW index for one model (≤ 63 characters, PostgreSQL's limit)."""
    slug = re.sub(r"[^a-z0-9]+", "_", model_key.lower()).strip("_")[:30]
    digest = hashlib.sha1(f"{model_key}:{dimensions}".encode()).hexdigest()[:8]
    return f"chunkemb_hnsw_{slug}_{digest}"


def embedding_index_ensure(*, model_key: str, dimensions: int) -> str:
    """Create (if missing) the HNSW cosine index for ``model_key``'s vectors; return its name.

    ``CREATE INDEX … USING hnsw ((vector::vector(d)) vector_cosine_ops) WITH (m = 32,
    ef_construction = 200) WHERE model_key = …``. Measured on full MedQuAD (23.8k USE vectors,
    docs/BENCHMARKS.md): pgvector's defaults (16, 64) reach recall@10 0.964 at ef_search 100 and
    0.977 at 200; (32, 200) reaches 0.995 at ef_search 200 for a 44 s build instead of 10 s.
    Building after a bulk load is much faster than growing the index row by row, so runs call
    this at the end.
    """
    name = embedding_index_name(model_key=model_key, dimensions=dimensions)
    table = ChunkEmbedding._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [name])
        if cursor.fetchone():
            return name
        if connection.in_atomic_block:
            # CREATE INDEX refuses to run while deferred FK checks of this transaction are pending.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET maintenance_work_mem = '512MB'")
        cursor.execute(
            f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" USING hnsw '
            f"((vector::vector({int(dimensions)})) vector_cosine_ops) WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION}) "
            f"WHERE model_key = '{model_key.replace(chr(39), chr(39) * 2)}'"
        )
    return name


def _embed(provider: EmbeddingProvider, texts: list[str]) -> list[Any]:
    vectors: list[Any] = []
    size = max(1, settings.EMBEDDING_BATCH_SIZE)
    for start in range(0, len(texts), size):
        vectors.extend(provider.embed_passages(texts[start : start + size]))
    return vectors


def _sentence_vectors_store(*, pairs: list[tuple[Chunk, list[str]]], vectors: list, model_key: str) -> None:
    """Store the :class:`ChunkSentenceVectors` of each ``(chunk, its sentences)``; ``vectors``
    holds the sentences' vectors in the same order (``Σ len(sentences)`` rows of ``(d,)``)."""
    rows, offset = [], 0
    for chunk, sentences in pairs:
        matrix = np.asarray(vectors[offset : offset + len(sentences)], dtype="<f2")
        offset += len(sentences)
        rows.append(
            ChunkSentenceVectors(
                chunk=chunk,
                model_key=model_key,
                digest=sentences_digest(sentences),
                count=len(sentences),
                dimensions=int(matrix.shape[1]) if matrix.ndim == 2 else 0,
                vectors=matrix.tobytes(),
            )
        )
    ChunkSentenceVectors.objects.bulk_create(rows)


def _chunks_store(
    *, document: Document, drafts: list[ChunkDraft], vectors: list, provider: EmbeddingProvider
) -> list[Chunk]:
    chunks = Chunk.objects.bulk_create(
        [
            Chunk(
                document=document,
                position=d.position,
                heading=d.heading[:500],
                text=d.text,
                questions=list(d.questions),
                embedded_text=d.embedded_text,
                token_count=d.token_count,
                language=document.language,
            )
            for d in drafts
        ]
    )
    ChunkEmbedding.objects.bulk_create(
        [
            ChunkEmbedding(chunk=c, model_key=provider.key, dimensions=len(v), vector=v)
            for c, v in zip(chunks, vectors, strict=True)
        ]
    )
    return chunks


@dataclass
class UpsertResult:
    """Counts of one :func:`documents_upsert` batch and the records refused by validation."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    chunks: int = 0
    invalid: list[BadRecord] = field(default_factory=list)


def documents_upsert(*, source: Source, records: Sequence[DocumentRecord], provider: EmbeddingProvider) -> UpsertResult:
    """Insert new, replace changed and keep unchanged documents; embed only what changed.

    A document is unchanged when its ``content_hash`` matches and all its chunks already have
    a vector and sentence vectors (:class:`ChunkSentenceVectors`) of ``provider``; then no
    embedding work is done. A changed document has its chunks (and their vectors) replaced.
    Unchanged documents missing this model's vectors or sentence vectors (after a model switch,
    or stored before sentence vectors existed) get them added. Embedding happens before the transaction; the writes of one
    batch are atomic. A record whose fields fail validation (``full_clean``), whose url scheme
    is not http(s)/file, or whose external id belongs to another source is refused and
    returned in ``invalid`` instead of failing the batch (it never overwrites the other source).
    """
    latest = {r.external_id: r for r in records}  # a repeated external id: the last one wins
    existing = {d.external_id: d for d in Document.objects.filter(external_id__in=latest).select_related("source")}
    missing_vectors = set(
        Chunk.objects.filter(document__in=existing.values())
        .exclude(embeddings__model_key=provider.key)
        .values_list("document__external_id", flat=True)
    )
    missing_sentences = set(
        Chunk.objects.filter(document__in=existing.values())
        .exclude(sentence_vectors__model_key=provider.key)
        .values_list("document__external_id", flat=True)
    )
    result = UpsertResult()
    to_write: list[tuple[Document, bool, list[ChunkDraft]]] = []
    to_backfill: list[Chunk] = []
    sentences_backfill: list[tuple[Chunk, list[str]]] = []
    max_tokens = min(settings.CHUNK_MAX_TOKENS, provider.max_tokens)
    for external_id, record in latest.items():
        document = existing.get(external_id)
        content_hash = record.content_hash()
        if document is not None and document.content_hash == content_hash:
            if external_id in missing_vectors:
                to_backfill.extend(document.chunks.exclude(embeddings__model_key=provider.key))
            if external_id in missing_sentences:
                sentences_backfill.extend(
                    (c, chunk_sentences(summary=document.summary, position=c.position, text=c.text))
                    for c in document.chunks.exclude(sentence_vectors__model_key=provider.key)
                )
            result.unchanged += 1
            continue
        if document is not None and document.source_id != source.id:
            result.invalid.append(
                BadRecord(
                    location=external_id,
                    message=f"external id already belongs to source {document.source.key!r}; not overwritten",
                )
            )
            continue
        if record.url and urlsplit(record.url).scheme.lower() not in ALLOWED_URL_SCHEMES:
            result.invalid.append(
                BadRecord(location=external_id, message=f"url scheme not allowed: {record.url[:80]!r}")
            )
            continue
        is_new = document is None
        document = document or Document(external_id=external_id)
        document.source = source
        document.url, document.title, document.language = record.url, record.title[:500], record.language
        document.metadata, document.summary, document.content_hash = record.metadata, record.summary, content_hash
        try:
            document.full_clean(validate_unique=False)
        except ValidationError as exc:
            result.invalid.append(BadRecord(location=external_id, message=f"invalid document: {exc.message_dict}"))
            continue
        drafts = chunks_build(record=record, max_tokens=max_tokens, count_tokens=provider.count_tokens)
        to_write.append((document, is_new, drafts))

    texts = [d.embedded_text for _, _, drafts in to_write for d in drafts] + [c.embedded_text for c in to_backfill]
    new_sentences = [
        chunk_sentences(summary=document.summary, position=d.position, text=d.text)
        for document, _, drafts in to_write
        for d in drafts
    ]
    sentence_texts = [s for per_chunk in [*new_sentences, *(p for _, p in sentences_backfill)] for s in per_chunk]
    # One pass of the encoder over chunks and sentences (micro-batches of similar cost).
    embedded = _embed(provider, texts + sentence_texts)
    vectors, sentence_vectors = embedded[: len(texts)], embedded[len(texts) :]
    offset = 0
    new_chunks: list[Chunk] = []
    with transaction.atomic():
        for document, is_new, drafts in to_write:
            document.save()
            if is_new:
                result.created += 1
            else:
                document.chunks.all().delete()
                result.updated += 1
            new_chunks += _chunks_store(
                document=document, drafts=drafts, vectors=vectors[offset : offset + len(drafts)], provider=provider
            )
            offset += len(drafts)
        ChunkEmbedding.objects.bulk_create(
            [
                ChunkEmbedding(chunk=c, model_key=provider.key, dimensions=len(v), vector=v)
                for c, v in zip(to_backfill, vectors[offset:], strict=True)
            ]
        )
        _sentence_vectors_store(
            pairs=[*zip(new_chunks, new_sentences, strict=True), *sentences_backfill],
            vectors=sentence_vectors,
            model_key=provider.key,
        )
    result.chunks = len(texts)
    return result


def search_indexes_optimize() -> list[str]:
    """After a bulk load: ``VACUUM ANALYZE`` the chunk tables and rebuild the BM25 index.

    Returns the statements run. Skipped (returns []) inside a transaction, where VACUUM cannot
    run (tests, or a caller's atomic block); autovacuum catches up there eventually.
    """
    if connection.in_atomic_block:
        return []
    statements = ["VACUUM (ANALYZE) ingestion_chunk", "VACUUM (ANALYZE) ingestion_chunkembedding"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = 'chunk_bm25_idx'")
        if cursor.fetchone():
            statements.append("REINDEX INDEX chunk_bm25_idx")
        for statement in statements:
            cursor.execute(statement)
    return statements


def ingestion_run_execute(*, run_id: int, progress: ProgressCallback | None = None) -> IngestionRun:
    """Run a PENDING ingestion run to completion; returns the finished row.

    Progress (``done``/``total`` units: files, lines or rows) is saved on the row after every
    batch and passed to ``progress``. Malformed records are counted and listed in ``errors``
    (the first 500 with their location) and skipped; the run still finishes. Any other
    exception marks the run FAILED with the traceback and is re-raised; batches committed
    before the failure stay (nothing is half-written: each batch is one transaction).
    A run that is not PENDING is returned unchanged (status guard).
    """
    # Claim atomically: of two workers handed the same run, only one gets past this line.
    claimed = run_claim(model=IngestionRun, run_id=run_id)
    run = IngestionRun.objects.get(pk=run_id)
    if not claimed:
        return run
    started = time.perf_counter()
    embed_ms = 0.0
    locked_source: int | None = None
    try:
        connector = connector_get(run.connector)
        provider = embedding_provider_get(run.model_key or None)
        source = source_ensure(connector=connector, key=run.options.get("source_key") or None)
        run.source = source
        # Runs over the same source take turns (a second one waits here): two runs deciding
        # at once that a document is new would collide on its external id.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", [INGEST_LOCK_CLASS, source.id])
        locked_source = source.id
        units = connector.units(Path(run.path), subsets=run.options.get("subsets") or ())
        run.total = len(units)
        run.save(update_fields=["source", "total"])
        limit = run.options.get("limit")
        batch: list[DocumentRecord] = []
        seen = 0

        def record_bad(record: BadRecord) -> None:
            run.error_count += 1
            if len(run.errors) < MAX_STORED_ERRORS:
                run.errors.append({"location": record.location, "message": record.message})
            logger.warning("ingest %s: skipped %s: %s", run.connector, record.location, record.message)

        def flush() -> None:
            nonlocal embed_ms
            if batch:
                t0 = time.perf_counter()
                result = documents_upsert(source=source, records=batch, provider=provider)
                embed_ms += (time.perf_counter() - t0) * 1000
                run.created_count += result.created
                run.updated_count += result.updated
                run.unchanged_count += result.unchanged
                run.chunk_count += result.chunks
                for bad in result.invalid:
                    record_bad(bad)
                batch.clear()
            run.save(
                update_fields=[
                    "done",
                    "created_count",
                    "updated_count",
                    "unchanged_count",
                    "chunk_count",
                    "skipped_count",
                    "error_count",
                    "errors",
                ]
            )
            if progress:
                progress(run.done, run.total)

        for unit in units:
            for record in connector.records(unit):
                if isinstance(record, SkippedRecord):
                    run.skipped_count += 1
                elif isinstance(record, BadRecord):
                    record_bad(record)
                else:
                    batch.append(record)
                    seen += 1
                    if limit and seen >= limit:
                        break
            run.done += 1
            if len(batch) >= BATCH_DOCUMENTS:
                flush()
            if limit and seen >= limit:
                break
        run.done = run.total
        flush()
        t0 = time.perf_counter()
        if ChunkEmbedding.objects.filter(model_key=provider.key).exists():
            embedding_index_ensure(model_key=provider.key, dimensions=provider.dimensions)
        if run.chunk_count >= BULK_CHUNKS:
            search_indexes_optimize()
        run.timings_ms = {
            "total": round((time.perf_counter() - started) * 1000, 1),
            "chunk_embed_write": round(embed_ms, 1),
            "index": round((time.perf_counter() - t0) * 1000, 1),
        }
        run.status = IngestionRun.Status.SUCCEEDED
    except Exception as exc:
        run.status = IngestionRun.Status.FAILED
        run.error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}"
        run.finished_at = timezone.now()
        run.save()
        raise
    finally:
        if locked_source is not None:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [INGEST_LOCK_CLASS, locked_source])
    run.finished_at = timezone.now()
    run.save()
    return run


def ingestion_run_abandon(*, run_id: int, reason: str) -> bool:
    """Mark a RUNNING run FAILED with ``reason`` (its worker died); True when it was RUNNING."""
    return run_abandon(model=IngestionRun, run_id=run_id, reason=reason)


def ingestion_run_relaunch(*, run_ids: Sequence[int]) -> list[IngestionRun]:
    """Queue a new PENDING run (same connector, path, options) per id; enqueued after commit."""
    from ingestion.tasks import ingestion_run_task

    new_runs = []
    with transaction.atomic():
        for old in IngestionRun.objects.filter(id__in=list(run_ids)).order_by("id"):
            run = ingestion_run_create(
                connector=old.connector,
                path=old.path,
                limit=old.options.get("limit"),
                subsets=old.options.get("subsets") or (),
                source_key=old.options.get("source_key") or "",
            )
            transaction.on_commit(partial(ingestion_run_task.delay, run.id))
            new_runs.append(run)
    return new_runs
