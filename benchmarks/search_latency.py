"""Search API latency per stage, HNSW recall@10 against exact search, ingestion throughput.

Needs the full MedQuAD corpus in the benchmark database (``BENCH_PGDATA``, default
``.data/bench/postgres``); ingests it first when missing (about 18 minutes on 2 cores).
Latency: 200 MedQuAD questions (fixed seed) posted to ``/api/v1/search`` through Django's test
client (the whole HTTP stack in-process, no socket), after 5 warm-up requests; per-stage times
come from the response's ``timings_ms``, end-to-end is measured around the request.
HNSW recall@10: |HNSW top-10 ∩ exact top-10| / 10 averaged over the same 200 questions, for
several ``hnsw.ef_search`` values.

Run: ``.venv/bin/python -m benchmarks.search_latency``.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict

from benchmarks.common import MEDQUAD, django_setup, percentile, results_write
from evaluation.calibration import youden_optimum

QUESTIONS = 200


def gate_calibration(provider, answered: list[tuple[str, str, float]]) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Preliminary gate threshold by Youden's J (Youden, Cancer 1950) over two cohorts.

    Related: each question with its own answer, score 0.7·align_i + 0.3·cos(q_i, a_i).
    Unrelated: each question with the answer to the next question (a rotation), score
    0.7·align_j + 0.3·cos(q_i, a_j) — an answer faithful to its context but off the question.
    J = TPR − FPR is maximised over the observed scores.
    """
    import numpy as np

    questions = provider.embed_queries([q for q, _, _ in answered])
    answers = provider.embed_passages([a for _, a, _ in answered])
    align = np.array([x for _, _, x in answered])
    related = 0.7 * align + 0.3 * np.einsum("ij,ij->i", questions, answers)
    rotated = np.roll(np.arange(len(answered)), -1)
    unrelated = 0.7 * align[rotated] + 0.3 * np.einsum("ij,ij->i", questions, answers[rotated])
    best_point = youden_optimum(positive=related.tolist(), negative=unrelated.tolist())
    best = (best_point.j, best_point.threshold, best_point.tpr, best_point.fpr)
    return {
        "youden_j": round(best[0], 4),
        "threshold": round(best[1], 4),
        "tpr": round(best[2], 4),
        "fpr": round(best[3], 4),
        "related_mean": round(float(related.mean()), 4),
        "unrelated_mean": round(float(unrelated.mean()), 4),
        "n": len(answered),
    }


def main() -> None:
    django_setup()
    from django.core.management import call_command
    from django.test import Client

    from core.providers.embeddings import embedding_provider_get
    from ingestion.models import Chunk, ChunkEmbedding, IngestionRun
    from zolsearch.search import selectors
    from zolsearch.search.generation import answer_plain
    from zolsearch.search.models import Answer

    provider = embedding_provider_get()
    if ChunkEmbedding.objects.filter(model_key=provider.key).count() < 20000:
        call_command("ingest", "medquad", str(MEDQUAD))
    runs = [
        {
            "id": r.id,
            "created": r.created_count,
            "unchanged": r.unchanged_count,
            "chunks": r.chunk_count,
            "seconds": round(r.timings_ms.get("total", 0) / 1000, 1),
            "chunks_per_s": round(r.chunk_count / (r.timings_ms["total"] / 1000), 1)
            if r.chunk_count and r.timings_ms.get("total")
            else None,
        }
        for r in IngestionRun.objects.filter(status="succeeded", connector="medquad").order_by("id")
    ]

    questions = list(
        Chunk.objects.filter(position=0, document__source__key="medquad")
        .values_list("questions", flat=True)
        .order_by("id")
    )
    sample = [q[0] for q in random.Random(11).sample(questions, QUESTIONS) if q]
    client = Client()
    for question in sample[:5]:
        client.post("/api/v1/search", {"question": question}, content_type="application/json")
    stages: dict[str, list[float]] = defaultdict(list)
    outcomes: dict[str, int] = defaultdict(int)
    answered: list[tuple[str, str, float]] = []  # question, plain answer, context alignment
    for question in sample:
        started = time.perf_counter()
        response = client.post("/api/v1/search", {"question": question}, content_type="application/json")
        stages["end_to_end"].append((time.perf_counter() - started) * 1000)
        body = response.json()
        outcomes[body["outcome"]] += 1
        if body["gate"]["context_alignment"] is not None and body["outcome"] != "no_results":
            answer = Answer.objects.get(trace_id=body["trace_id"])
            text = answer.trace.get("rejected_answer", answer.answer)
            answered.append((question, answer_plain(text), body["gate"]["context_alignment"]))
        for stage, ms in body["timings_ms"].items():
            stages[stage].append(ms)
    latency = {
        stage: {"p50": round(percentile(v, 50), 1), "p95": round(percentile(v, 95), 1), "n": len(v)}
        for stage, v in stages.items()
    }
    for stage, row in latency.items():
        print(f"{stage:12s} p50 {row['p50']:8.1f} ms   p95 {row['p95']:8.1f} ms", flush=True)

    calibration = gate_calibration(provider, answered)
    print("gate calibration:", calibration, flush=True)

    vectors = provider.embed_queries(sample)
    recall = {}
    for ef in (40, 100, 200):
        overlaps = []
        for vector in vectors:
            approximate = {
                i
                for i, _ in selectors.chunks_dense_search(vector=vector, model_key=provider.key, limit=10, ef_search=ef)
            }
            exact = set(selectors.chunks_exact_search(vector=vector, model_key=provider.key, limit=10))
            overlaps.append(len(approximate & exact) / 10)
        recall[f"ef_search={ef}"] = round(sum(overlaps) / len(overlaps), 4)
        print(f"HNSW recall@10 at ef_search={ef}: {recall[f'ef_search={ef}']}", flush=True)
    path = results_write(
        "search_latency",
        {
            "embedding_model": provider.key,
            "chunks": ChunkEmbedding.objects.filter(model_key=provider.key).count(),
            "questions": len(sample),
            "outcomes": dict(outcomes),
            "latency_ms": latency,
            "gate_calibration": calibration,
            "hnsw_recall_at_10": recall,
            "ingestion_runs": runs,
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
