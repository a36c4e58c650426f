"""Reads of the online pipeline: dense and lexical retrieval over chunks, and chunk loading.

Dense: pgvector HNSW on ``(vector::vector(d)) vector_cosine_ops`` per model (see
``ingestion.services.embedding_index_ensure``); filter → annotate distance → order → slice.
Lexical: ParadeDB ``pg_search`` BM25 over ``Chunk.embedded_text`` with a Dutch and an English
Snowball-stemmed alias (``text_nl``, ``text_en``) where the server has the BM25 index, else
PostgreSQL full-text search (``ts_rank_cd`` over ``to_tsvector('dutch'|'english', …)``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.core.exceptions import EmptyResultSet
from django.db import connection, transaction
from django.db.models import BinaryField, Func, QuerySet
from django.db.models.functions import Cast
from django.utils import timezone
from pgvector import Vector
from pgvector.django import CosineDistance, VectorField

from ingestion.models import Chunk, ChunkEmbedding, ChunkSentenceVectors
from ingestion.selectors import INDEX_VERSION_SQL
from zolsearch.search.contract import AnswerTrace, Intent, Outcome
from zolsearch.search.generation import answer_plain, chunk_source_text
from zolsearch.search.messages import emergency_notice
from zolsearch.search.models import Answer, SemanticCacheEntry

BM25_INDEX_NAME = "chunk_bm25_idx"
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_lexical_backend: dict[str, str] = {}


def embedding_model_indexed(*, model_key: str) -> bool:
    """Whether any chunk has a vector of ``model_key`` (an index probe; cheap on every request)."""
    return ChunkEmbedding.objects.filter(model_key=model_key).exists()


def embedding_models_indexed() -> dict[str, int]:
    """Model keys that have chunk vectors, with their dimensions (scans the table: not per request)."""
    return dict(ChunkEmbedding.objects.values_list("model_key", "dimensions").distinct())


def _filtered(queryset: QuerySet, prefix: str, languages: Sequence[str], sources: Sequence[str]) -> QuerySet:
    if languages:
        queryset = queryset.filter(**{f"{prefix}language__in": list(languages)})
    if sources:
        queryset = queryset.filter(**{f"{prefix}document__source__key__in": list(sources)})
    return queryset


def chunks_dense_search(
    *,
    vector: np.ndarray,
    model_key: str,
    limit: int,
    ef_search: int = 100,
    languages: Sequence[str] = (),
    sources: Sequence[str] = (),
) -> list[tuple[int, float]]:
    """Nearest chunks by cosine to ``vector`` among vectors of ``model_key``.

    ``vector``: ``(d,)`` float32 of the same model. Returns ``(chunk_id, cosine)`` best first,
    cosine in [-1, 1]. Uses the HNSW index with iterative scans (pgvector ≥ 0.8) so filters do
    not starve the result.
    """
    dims = int(vector.shape[0])
    typed = Cast("vector", VectorField(dimensions=dims))
    queryset = _filtered(ChunkEmbedding.objects.filter(model_key=model_key), "chunk__", languages, sources)
    queryset = (
        queryset.annotate(distance=CosineDistance(typed, vector.tolist()))
        .order_by("distance")
        .values_list("chunk_id", "distance")[:limit]
    )
    rows = _queryset_rows(queryset, {"hnsw.ef_search": str(int(ef_search)), "hnsw.iterative_scan": "relaxed_order"})
    # relaxed_order may return rows slightly out of distance order (pgvector docs): re-sort.
    rows.sort(key=lambda row: row[1])
    return [(chunk_id, 1.0 - float(distance)) for chunk_id, distance in rows]


def _rows_with_local_settings(local: dict[str, str], sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` (one SELECT with ``%s`` placeholders) run with the server settings
    ``local`` (name → value, both trusted SQL text, never user input) in force for it alone.

    The settings and the query go as one simple-query message, which PostgreSQL runs as one
    implicit transaction ("Multiple Statements in a Simple Query", PostgreSQL protocol docs), so
    in autocommit (a live request) ``SET LOCAL`` lasts exactly as long as the query: one round
    trip instead of BEGIN, SET, SELECT, reset and COMMIT. Several statements with parameters in
    one message need the client-side parameter binding of Django's psycopg backend (its default,
    which ``zolsearch.settings`` keeps). Inside a transaction (tests, a caller's atomic block)
    the message runs in a savepoint that is then rolled back, which undoes the ``SET LOCAL`` and
    leaves any value the caller had set.
    """
    if not local:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()
    sets = "; ".join(f"SET LOCAL {name} = {value}" for name, value in local.items())

    def run() -> list[tuple[Any, ...]]:
        with connection.cursor() as cursor:
            cursor.execute(f"{sets}; {sql}", params)
            for _ in local:  # the cursor starts on the first statement's result: skip each SET's
                cursor.nextset()
            return cursor.fetchall()

    if connection.get_autocommit() and not connection.in_atomic_block:
        return run()
    with transaction.atomic():
        rows = run()
        transaction.set_rollback(True)  # back to the savepoint: the settings as they were
    return rows


def _queryset_rows(queryset: QuerySet, local: dict[str, str]) -> list[tuple[Any, ...]]:
    """The raw rows of a ``values_list`` ``queryset`` of plain columns (no converters) with
    :func:`_rows_with_local_settings`; ``[]`` without a query when the ORM knows it is empty
    (a slice of 0)."""
    try:
        sql, params = queryset.query.sql_with_params()
    except EmptyResultSet:
        return []
    return _rows_with_local_settings(local, sql, params)


def chunks_exact_search(*, vector: np.ndarray, model_key: str, limit: int) -> list[int]:
    """Exact (sequential scan) nearest chunk ids: the ground truth for HNSW recall benchmarks."""
    typed = Cast("vector", VectorField(dimensions=int(vector.shape[0])))
    queryset = (
        ChunkEmbedding.objects.filter(model_key=model_key)
        .annotate(distance=CosineDistance(typed, vector.tolist()))
        .order_by("distance")
        .values_list("chunk_id")[:limit]
    )
    rows = _queryset_rows(queryset, {"enable_indexscan": "off", "enable_bitmapscan": "off"})
    return [chunk_id for (chunk_id,) in rows]


def lexical_backend() -> str:
    """``"paradedb"`` when the BM25 index exists on this database, else ``"postgres_fts"``."""
    alias = connection.settings_dict["NAME"]
    if alias not in _lexical_backend:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [BM25_INDEX_NAME])
            _lexical_backend[alias] = "paradedb" if cursor.fetchone() else "postgres_fts"
    return _lexical_backend[alias]


def _filter_sql(languages: Sequence[str], sources: Sequence[str]) -> tuple[str, list[Any]]:
    sql, params = "", list[Any]()
    if languages:
        sql += " AND c.language = ANY(%s)"
        params.append(list(languages))
    if sources:
        sql += (
            " AND c.document_id IN (SELECT d.id FROM ingestion_document d JOIN ingestion_source s"
            " ON s.id = d.source_id WHERE s.key = ANY(%s))"
        )
        params.append(list(sources))
    return sql, params


def chunks_lexical_search(
    *,
    query: str,
    language: str,
    limit: int,
    languages: Sequence[str] = (),
    sources: Sequence[str] = (),
    parallel: bool = False,
    stopwords: frozenset[str] = frozenset(),
) -> tuple[str, list[tuple[int, float]]]:
    """BM25 (or full-text) search of ``query`` stemmed for ``language`` (``nl`` → Dutch, else English).

    Terms are OR-ed (any term may match; BM25 ranks by how many and how rare). ``stopwords``:
    lower-cased words left out of the query (:data:`core.text.BM25_STOPWORDS` of the question's
    language; all of them kept when every word is one). Returns
    ``(backend, [(chunk_id, score), …])`` best first; scores are BM25 (ParadeDB) or ts_rank_cd
    (PostgreSQL), non-negative and comparable only within one call. ``parallel``: let PostgreSQL
    plan the BM25 scan with parallel workers as the server's settings allow (only
    ``benchmarks/load.py`` sets it, to measure what the default of one process saves).
    """
    words = _WORD.findall(query.lower())
    words = [w for w in words if w not in stopwords] or words
    if not words:
        return lexical_backend(), []
    backend = lexical_backend()
    filter_sql, filter_params = _filter_sql(languages, sources)
    if backend == "paradedb":
        alias = "text_nl" if language == "nl" else "text_en"
        # No join and a plain ORDER BY score: pg_search then runs its TopN scan (measured on
        # full MedQuAD: 66 ms p50 with a join and an id tie-break, see docs/BENCHMARKS.md).
        sql = (
            "SELECT c.id, pdb.score(c.id) AS score FROM ingestion_chunk c "
            f"WHERE c.embedded_text::pdb.alias('{alias}') ||| %s{filter_sql} "
            "ORDER BY score DESC LIMIT %s"
        )
        params: list[Any] = [" ".join(words), *filter_params, limit]
        # Once the index has more than one segment (any second ingestion run), PostgreSQL plans
        # pg_search's scan in parallel; starting the workers costs far more than the TopN scan
        # itself: full MedQuAD after 4 runs, 100 held-out questions, p50 / p95 46 / 72 ms
        # parallel against 10 / 21 ms in one process, and 2.6 ms of execution (EXPLAIN ANALYZE;
        # docs/BENCHMARKS.md "BM25 after ingestion runs").
        local = {} if parallel else {"max_parallel_workers_per_gather": "0"}
        rows = [(row[0], float(row[1])) for row in _rows_with_local_settings(local, sql, params)]
    else:
        config = "dutch" if language == "nl" else "english"
        sql = (
            f"SELECT c.id, ts_rank_cd(to_tsvector('{config}', c.embedded_text), q) AS score "
            f"FROM ingestion_chunk c, to_tsquery('{config}', %s) q "
            f"WHERE to_tsvector('{config}', c.embedded_text) @@ q{filter_sql} "
            "ORDER BY score DESC, c.id LIMIT %s"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [" | ".join(words), *filter_params, limit])
            rows = [(row[0], float(row[1])) for row in cursor.fetchall()]
    rows.sort(key=lambda row: (-row[1], row[0]))  # deterministic order for equal scores
    return backend, rows


def focus_qtype_chunk_ids(
    *, foci: Sequence[str], qtype: str, limit: int, languages: Sequence[str] = (), sources: Sequence[str] = ()
) -> list[int]:
    """Ids of the first chunk of each page (web address) whose MedQuAD ``metadata["focus"]`` is
    one of ``foci`` (compared lower-cased) and whose ``metadata["qtype"]`` is ``qtype``: the
    pages of the first focus first, then of the next, each by document id (a page of several
    QA pairs of the type, as NIHSeniorHealth's, counts once, by its first); at most ``limit``
    (one query on the ``document_focus_qtype`` index, 0.5 ms p50 on full MedQuAD with two foci,
    round trip included; the request's
    ``languages`` and ``sources`` filters apply). ``[]`` for no foci, an empty qtype or
    ``limit`` < 1. Raises Django's ``DatabaseError`` when the query fails."""
    if not foci or not qtype or limit < 1:
        return []
    filter_sql, filter_params = _filter_sql(languages, sources)
    # The foci joined in their order (n), both sides lower-cased by PostgreSQL (Python's
    # str.lower() and the database's lower() may differ for some capitals), the document side
    # as the index has it.
    sql = (
        "SELECT id FROM (SELECT DISTINCT ON (d.url) c.id, d.id AS document, f.n AS focus "
        "FROM unnest(%s::text[]) WITH ORDINALITY AS f(name, n) "
        "JOIN ingestion_document d ON lower(d.metadata->>'focus') = lower(f.name) "
        "JOIN ingestion_chunk c ON c.document_id = d.id "
        f"WHERE d.metadata->>'qtype' = %s{filter_sql} "
        "ORDER BY d.url, d.id, c.position) AS pages ORDER BY focus, document LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [list(foci), qtype, *filter_params, limit])
        return [row[0] for row in cursor.fetchall()]


def chunks_by_ids(ids: Sequence[int]) -> dict[int, Chunk]:
    """Chunks with their document and source, keyed by id (one query)."""
    return {c.id: c for c in Chunk.objects.filter(id__in=list(ids)).select_related("document__source")}


def chunk_vectors(*, ids: Sequence[int], model_key: str) -> np.ndarray:
    """Stored vectors of ``ids`` under ``model_key`` → ``(len(found), d)`` float32 (order of ids)."""
    rows = chunk_vectors_by_id(ids=ids, model_key=model_key)
    found = [rows[i] for i in ids if i in rows]
    return np.vstack(found) if found else np.zeros((0, 0), dtype=np.float32)


class VectorSend(Func):
    """A pgvector column in its binary send format (``bytea``; pgvector's SQL function
    ``vector_send``), read back with pgvector's ``Vector.from_binary``: the text format costs the
    server a float-to-text conversion and the client about 40 µs a 512-dimension vector to parse
    (3.3 ms for 40 vectors against 0.9 ms this way, docs/BENCHMARKS.md, sixteenth session)."""

    function = "vector_send"
    output_field = BinaryField()


def chunk_vectors_by_id(*, ids: Sequence[int], model_key: str) -> dict[int, np.ndarray]:
    """Stored vectors of ``ids`` under ``model_key``: chunk id → ``(d,)`` float32 (one query, in
    pgvector's binary format; ids without a vector of that model are absent)."""
    rows = ChunkEmbedding.objects.filter(chunk_id__in=list(ids), model_key=model_key).values_list(
        "chunk_id", VectorSend("vector")
    )
    return {chunk_id: Vector.from_binary(raw).to_numpy() for chunk_id, raw in rows}


def chunk_sentence_vectors(*, ids: Sequence[int], model_key: str) -> dict[int, tuple[str, np.ndarray]]:
    """Sentence vectors stored at ingestion for ``ids`` under ``model_key`` (one query): chunk id
    → ``(digest, (count, d) float32)`` (see :class:`ingestion.models.ChunkSentenceVectors`);
    chunks without a row are absent."""
    rows = ChunkSentenceVectors.objects.filter(chunk_id__in=list(ids), model_key=model_key).values_list(
        "chunk_id", "digest", "count", "dimensions", "vectors"
    )
    return {
        chunk_id: (digest, np.frombuffer(bytes(raw), dtype="<f2").astype(np.float32).reshape(count, dimensions))
        for chunk_id, digest, count, dimensions, raw in rows
    }


def answer_trace(*, answer: Answer) -> AnswerTrace:
    """The stored trace of ``answer`` as an :class:`AnswerTrace`; traces written before
    version 1 (facts stored as plain sentences) are read into the same shape."""
    raw = dict(answer.trace or {})
    taxonomy = dict(raw.get("taxonomy") or {})
    facts = taxonomy.get("facts") or []
    taxonomy["facts"] = [{"kind": "", "text": f} if isinstance(f, str) else f for f in facts]
    if taxonomy.get("intent") == "condition":  # before version 1
        taxonomy["intent"] = Intent.CONDITION_OR_SYMPTOM
    raw["taxonomy"] = taxonomy
    raw.setdefault("version", 0)
    return AnswerTrace.model_validate(raw)


@dataclass(frozen=True)
class AnswerMaterial:
    """What a judge or reviewer reads of a stored answer: ``text`` (the served answer, or the
    draft the gate or output guard refused) without citation marks and without the pinned graph
    lines (those are ``facts``), and ``context``: the source text of the chunks it was written
    from, in citation order."""

    question: str
    text: str
    context: tuple[str, ...]
    facts: tuple[str, ...]


def answer_material(*, answer: Answer) -> AnswerMaterial | None:
    """The judgeable material of ``answer``, or ``None`` when nothing was drafted from the
    retrieved text (no results, a red flag, a refusal before generation). One query."""
    trace = answer_trace(answer=answer)
    if answer.outcome == Outcome.ANSWERED:
        text = answer.answer
    elif trace.rejected_answer:
        text = trace.rejected_answer
    else:
        return None
    facts = tuple(f.text for f in trace.taxonomy.facts if f.text)
    plain = answer_plain(text)
    for fact in facts:
        plain = plain.replace(fact, " ")
    plain = " ".join(plain.split())
    if answer.outcome == Outcome.ANSWERED and plain:
        plain = plain.removeprefix(emergency_notice(answer.language)).strip()
    chunks = {c.id: c for c in Chunk.objects.filter(id__in=trace.cited_chunk_ids).select_related("document")}
    context = tuple(chunk_source_text(chunks[i]) for i in trace.cited_chunk_ids if i in chunks)
    if not plain and not facts:
        return None
    return AnswerMaterial(question=answer.question, text=plain or answer_plain(text), context=context, facts=facts)


def cache_lookup(
    *, vector: np.ndarray, model_key: str, config_hash: str, language: str, min_cosine: float
) -> tuple[str, SemanticCacheEntry | None]:
    """``(index version, entry)``: the index's current version (:func:`ingestion.selectors.index_version`,
    its :data:`~ingestion.selectors.INDEX_VERSION_SQL` as a subquery) and the cached answer whose question
    vector is nearest ``vector`` (``(d,)`` float32 of ``model_key``) under the same configuration,
    that index version and ``language`` when its cosine is ≥ ``min_cosine`` (in [-1, 1]), else
    None. The version and the nearest entry's id and distance come in one statement (a live
    request's first look at the cache, and the version its answer is cached under), so a miss
    costs one round trip and a hit two (the entry's row is read then); raw SQL because the ORM
    cannot put the version subquery and the entry in one row when there is no entry
    (docs/BENCHMARKS.md, "Fewer round trips"). A distance that is not a number (a zero vector)
    is a miss. Raises ``django.db.DataError`` for a vector with NaN or infinite values."""
    sql = (
        f"SELECT v.version, e.id, e.distance FROM ({INDEX_VERSION_SQL}) v "
        "LEFT JOIN LATERAL (SELECT c.id, c.vector <=> %s::vector AS distance "
        f"FROM {SemanticCacheEntry._meta.db_table} c WHERE c.model_key = %s AND c.config_hash = %s "
        "AND c.language = %s AND c.index_version = v.version ORDER BY distance LIMIT 1) e ON true"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [Vector(vector).to_text(), model_key, config_hash, language])
        version, entry_id, distance = cursor.fetchone()
    if entry_id is None or not 1.0 - float(distance) >= min_cosine:  # NaN: a miss
        return str(version), None
    return str(version), SemanticCacheEntry.objects.filter(pk=entry_id).first()


def pipeline_flag_values(*, model_key: str) -> dict[str, Any]:
    """The flag rows a live request freezes into its configuration: field → JSON value for every
    catalogued flag whose row holds a value (empty rows mean the default); a row for
    ``model_key`` wins over the row for every model. One query."""
    from zolsearch.search.flags import FLAGS
    from zolsearch.search.models import PipelineFlag

    values: dict[str, Any] = {}
    rows = PipelineFlag.objects.filter(model_key__in=("", model_key), value__isnull=False).order_by("model_key")
    for name, value in rows.values_list("name", "value"):  # blank model_key first, the model's own after
        if name in FLAGS:
            values[name] = value
    return values


def answer_previous_turn(*, conversation_id: str, max_age_s: int, now: datetime | None = None) -> Answer | None:
    """The latest answer served through the API in conversation ``conversation_id`` no more than
    ``max_age_s`` seconds (≥ 0) before ``now`` (default: the current time), or None: for an
    empty ``conversation_id`` (without a query), a conversation without such a turn, or
    ``max_age_s`` 0. Batch and evaluation answers never count. One query."""
    if not conversation_id or max_age_s <= 0:
        return None
    since = (now or timezone.now()) - timedelta(seconds=max_age_s)
    return (
        Answer.objects.filter(conversation_id=conversation_id, channel=Answer.Channel.API, created_at__gte=since)
        .order_by("-created_at", "-id")
        .first()
    )
