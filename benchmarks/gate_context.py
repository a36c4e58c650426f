"""Two ways for the fast gate to represent the context a draft was written from, on the same
drafts (evidence for issue 13 item 2: the gate's encoder call is the largest part of a request).

- ``passages`` (the product today, :func:`zolsearch.search.stages.quality_gate.draft_gate_vectors`):
  FILCO's filtered text of each cited chunk embedded now, else the chunk's stored vector; mean.
- ``sentences``: a filtered chunk is the L2-normalised mean of its kept sentences' vectors stored
  at ingestion (:class:`ingestion.models.ChunkSentenceVectors`), so the gate embeds the answer
  only; unfiltered chunks as above.

Per golden question (safety stages and the gate off, so every question is drafted; FILCO on as
by default): both context vectors, the draft's vector, the local judge's verdict (faithfulness
and relevancy ≥ 0.5: the *related* cohort), and the *rotated* cohort as calibration builds it
(each draft with its own context put to the next question of the same language:
0.7·alignment_i + 0.3·cos(q_j, a_i)). Per language and representation: ROC AUC, the strictest
threshold of the 0.20–0.91 sweep refusing ≤ 5 % of the related cohort and the share of rotated
drafts it refuses, Youden's optimum, and the encoder time of the gate's vectors (ms).

Needs an index with the sets' pages (the full MedQuAD for the MedQuAD sets):
``EMBEDDED_PGDATA=.data/bench-ingest/postgres .venv/bin/python -m benchmarks.gate_context
medquad-dev medquad-heldout-para-nl``; results in ``docs/bench-results/gate_context.json``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def main(set_names: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zolsearch.settings")
    sys.path.insert(0, str(BASE_DIR))
    import django

    django.setup()
    import numpy as np

    from benchmarks.common import results_write
    from core.text import sentences_split
    from evaluation.calibration import operating_point_with_max_false_refusal, roc_auc, youden_optimum
    from evaluation.judges.base import JudgeInput
    from evaluation.judges.local import LocalJudge
    from evaluation.metrics.criteria import FAITHFULNESS_PASS, RELEVANCY_PASS
    from ingestion.chunking import chunk_sentences
    from zolsearch.search import selectors
    from zolsearch.search.config import MEASUREMENT_OVERRIDES, pipeline_config_default
    from zolsearch.search.gate import CONTEXT_WEIGHT, QUESTION_WEIGHT
    from zolsearch.search.generation import answer_plain, chunk_source_text
    from zolsearch.search.pipeline import SearchRequest, pipeline_run
    from zolsearch.search.stages.quality_gate import draft_gate_vectors

    config = pipeline_config_default().with_overrides(**MEASUREMENT_OVERRIDES)
    judge = LocalJudge.from_settings()
    rows: dict[str, list[dict[str, object]]] = defaultdict(list)
    timings: dict[str, list[float]] = defaultdict(list)
    for name in set_names:
        for line in (BASE_DIR / "data" / "golden" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            item = json.loads(line) if line.strip() else None
            if not item or item.get("must_refuse"):
                continue
            state = pipeline_run(
                request=SearchRequest(question=item["question"], language=item["language"]), config=config
            )
            if state.draft is None or state.query_vector is None or not state.draft.cited_chunk_ids:
                continue
            provider = state.provider
            provider._cache[0].clear()  # time the encoder, not its LRU
            started = time.perf_counter()
            answer, passages = draft_gate_vectors(state)
            timings["passages"].append((time.perf_counter() - started) * 1000)
            provider._cache[0].clear()
            started = time.perf_counter()
            answer_only = provider.embed_passages([answer_plain(state.documents_text or state.draft.text)])[0]
            cited = state.draft.cited_chunk_ids
            stored = selectors.chunk_sentence_vectors(
                ids=[i for i in cited if i in state.filtered], model_key=provider.key
            )
            parts = []
            for chunk_id in cited:
                if chunk_id in state.filtered and chunk_id in stored:
                    chunk = state.chunks[chunk_id]
                    sentences = chunk_sentences(
                        summary=chunk.document.summary, position=chunk.position, text=chunk.text
                    )
                    kept = set(sentences_split(state.filtered[chunk_id]))
                    _, matrix = stored[chunk_id]
                    rows_kept = [matrix[i] for i, s in enumerate(sentences) if s in kept and i < len(matrix)]
                    mean = np.mean(rows_kept, axis=0) if rows_kept else matrix.mean(axis=0)
                    parts.append(mean / (np.linalg.norm(mean) or 1.0))
                else:
                    vectors = selectors.chunk_vectors(ids=[chunk_id], model_key=provider.key)
                    if len(vectors):
                        parts.append(vectors[0])
            sentences_context = np.mean(parts, axis=0) if parts else answer_only * 0
            timings["sentences"].append((time.perf_counter() - started) * 1000)
            verdict = judge.judge(
                JudgeInput(
                    question=item["question"],
                    answer=answer_plain(state.documents_text or state.draft.text),
                    context=tuple(
                        state.filtered.get(i) or chunk_source_text(state.chunks[i]) for i in cited if i in state.chunks
                    ),
                )
            )

            def unit(v: np.ndarray) -> np.ndarray:
                return v / (np.linalg.norm(v) or 1.0)

            q = unit(state.query_vector.astype(np.float64))
            a = unit(answer.astype(np.float64))
            rows[item["language"]].append(
                {
                    "question": q,
                    "answer": a,
                    "align": {
                        "passages": float(a @ unit(passages.astype(np.float64))),
                        "sentences": float(a @ unit(sentences_context.astype(np.float64))),
                    },
                    "related": (verdict.faithfulness or 0) >= FAITHFULNESS_PASS
                    and (verdict.relevancy or 0) >= RELEVANCY_PASS,
                }
            )
    report: dict[str, object] = {}
    for language, drafts in sorted(rows.items()):
        per_variant = {}
        for variant in ("passages", "sentences"):
            related = [
                CONTEXT_WEIGHT * d["align"][variant] + QUESTION_WEIGHT * float(d["question"] @ d["answer"])  # type: ignore[index, operator]
                for d in drafts
                if d["related"]
            ]
            rotated = [
                CONTEXT_WEIGHT * d["align"][variant]  # type: ignore[index]
                + QUESTION_WEIGHT * float(drafts[(i + 1) % len(drafts)]["question"] @ d["answer"])  # type: ignore[operator]
                for i, d in enumerate(drafts)
            ]
            point = operating_point_with_max_false_refusal(positive=related, negative=rotated, max_false_refusal=0.05)
            youden = youden_optimum(positive=related, negative=rotated)
            per_variant[variant] = {
                "related": len(related),
                "rotated": len(rotated),
                "roc_auc": round(roc_auc(positive=related, negative=rotated), 4),
                "threshold_5pct": round(point.threshold, 2) if point else None,
                "rotated_refused_5pct": round(1 - point.fpr, 4) if point else None,
                "youden": {"threshold": round(youden.threshold, 4), "j": round(youden.j, 4)},
                "related_score_mean": round(float(np.mean(related)), 4),
            }
        difference = [abs(d["align"]["sentences"] - d["align"]["passages"]) for d in drafts]  # type: ignore[index]
        per_variant["alignment_abs_difference_mean"] = round(float(np.mean(difference)), 4)
        report[language] = per_variant
        print(language, json.dumps(per_variant, indent=1), flush=True)
    encoder = {
        k: {"p50": round(float(np.percentile(v, 50)), 2), "p95": round(float(np.percentile(v, 95)), 2)}
        for k, v in timings.items()
    }
    print("gate vectors, ms:", encoder)
    print("wrote", results_write("gate_context", {"sets": set_names, "languages": report, "gate_vectors_ms": encoder}))


if __name__ == "__main__":
    main(sys.argv[1:] or ["medquad-dev", "medquad-heldout-para-nl"])
