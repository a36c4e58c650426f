"""Choose the default embedding model by measurement (issue 2).

Corpus: 1,500 MedQuAD QA pairs sampled with a fixed seed from the full set (16.4k answered
pairs), ingested into a separate embedded database (``BENCH_MODELS_PGDATA``). Queries: 200 of
those pairs → the original question, an English paraphrase and a Dutch paraphrase (templates per
qtype, see ``benchmarks.common.PARAPHRASES``); the pair itself is the one relevant document.
Reports MRR@10 and Recall@10 for dense-only and hybrid (dense + BM25, RRF k = 60) retrieval per
model, and bulk ingestion throughput (chunks/s, embedding + writing) per model.

Run: ``.venv/bin/python -m benchmarks.model_choice`` (about 15 minutes on 2 cores).
"""

from __future__ import annotations

import random
import time
from collections import defaultdict

from benchmarks.common import MEDQUAD, dev_queries, django_setup, reciprocal_rank, results_write

MODELS = ["use-multilingual-v3", "e5-small-q4"]
CORPUS_SIZE = 1500
QUERY_DOCS = 200


def main() -> None:
    django_setup("BENCH_MODELS_PGDATA", ".data/bench-models/postgres")
    from core.providers.embeddings import embedding_provider_get
    from ingestion.connectors import connector_get
    from ingestion.connectors.base import DocumentRecord
    from ingestion.models import Chunk, ChunkEmbedding
    from ingestion.services import documents_upsert, embedding_index_ensure, source_ensure
    from zolsearch.search.config import PipelineConfig
    from zolsearch.search.pipeline import SearchRequest, pipeline_run

    connector = connector_get("medquad")
    records = [r for unit in connector.units(MEDQUAD) for r in connector.records(unit) if isinstance(r, DocumentRecord)]
    corpus = random.Random(7).sample(records, CORPUS_SIZE)
    source = source_ensure(connector=connector)
    throughput = {}
    for key in MODELS:
        provider = embedding_provider_get(key)
        provider.embed_passages(["warm-up"])
        before = ChunkEmbedding.objects.filter(model_key=key).count()
        started = time.perf_counter()
        for start in range(0, len(corpus), 64):
            documents_upsert(source=source, records=corpus[start : start + 64], provider=provider)
        elapsed = time.perf_counter() - started
        embedded = ChunkEmbedding.objects.filter(model_key=key).count() - before
        embedding_index_ensure(model_key=key, dimensions=provider.dimensions)
        throughput[key] = {
            "chunks": embedded,
            "seconds": round(elapsed, 1),
            "chunks_per_s": round(embedded / elapsed, 1) if embedded else None,
        }
        print(key, throughput[key], flush=True)

    rows = [
        (
            r.external_id,
            r.questions[0] if r.questions else r.title,
            r.metadata.get("qtype", ""),
            r.metadata.get("focus", ""),
        )
        for r in corpus
    ]
    queries = dev_queries(rows, n=QUERY_DOCS)
    chunk_doc = dict(Chunk.objects.values_list("id", "document__external_id"))
    results: dict[str, dict[str, dict[str, float]]] = {}
    for key in MODELS:
        for mode, lexical in (("dense", False), ("hybrid", True)):
            config = PipelineConfig(
                embedding_model=key, gate_threshold=0.0, gate_enabled=False, lexical_enabled=lexical
            )
            by_variant: dict[str, list[tuple[float, float]]] = defaultdict(list)
            for query in queries:
                language = "nl" if query.variant == "paraphrase_nl" else "en"
                state = pipeline_run(request=SearchRequest(question=query.text, language=language), config=config)
                ranked: list[str] = []
                for chunk_id, _ in state.fused:
                    doc = chunk_doc[chunk_id]
                    if doc not in ranked:
                        ranked.append(doc)
                rr = reciprocal_rank(ranked, query.relevant, 10)
                by_variant[query.variant].append((rr, 1.0 if query.relevant in ranked[:10] else 0.0))
                by_variant["all"].append(by_variant[query.variant][-1])
            results[f"{key}/{mode}"] = {
                variant: {
                    "mrr@10": round(sum(r for r, _ in v) / len(v), 4),
                    "recall@10": round(sum(h for _, h in v) / len(v), 4),
                    "n": len(v),
                }
                for variant, v in by_variant.items()
            }
            print(key, mode, results[f"{key}/{mode}"]["all"], flush=True)
    path = results_write(
        "model_choice",
        {"corpus_documents": CORPUS_SIZE, "queries": len(queries), "throughput": throughput, "retrieval": results},
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
