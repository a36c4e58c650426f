"""Three ways for the fast gate to represent a draft and the context it was written from, on the
same drafts (evidence for issue 13 item 2: the gate's encoder call is the largest part of a
request).

- ``passages`` (the product until 2026-11-24):
  FILCO's filtered text of each cited chunk embedded now, else the chunk's stored vector; mean.
- ``sentences``: a filtered chunk is the L2-normalised mean of its kept sentences' vectors stored
  at ingestion (:class:`ingestion.models.ChunkSentenceVectors`), so the gate embeds the answer
  only; unfiltered chunks as above (the product since 2026-11-24,
  :func:`zolsearch.search.stages.quality_gate.draft_gate_vectors`).
- ``stored``: that context, and the draft itself as the L2-normalised mean of its sentences'
  stored vectors (:func:`zolsearch.search.stages.quality_gate.answer_sentences_vector`; the
  embedded draft when a sentence is not stored): no encoder call at all.

Per golden question (safety stages and the gate off, so every question is drafted; FILCO on as
by default): both context vectors, the draft's vector, the local judge's verdict (faithfulness
and relevancy ≥ 0.5: the *related* cohort), and the *rotated* cohort as calibration builds it
(each draft with its own context put to the next question of the same language:
w·alignment_i + (1 − w)·cos(q_j, a_i)). Per language, representation and context weight w (the
seed's 0.7 and each of :data:`zolsearch.search.gate.CONTEXT_WEIGHTS` calibration may choose):
ROC AUC, the strictest threshold of the 0.20–0.91 sweep refusing ≤ 5 % of the related cohort and
the share of rotated drafts it refuses, Youden's optimum, and the encoder time of the gate's
vectors (ms). The top-level figures of a representation are at w = 0.7; ``by_weight`` has them
all.

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
    from evaluation.calibration import operating_point_with_max_false_refusal, roc_auc, youden_optimum
    from evaluation.judges.base import JudgeInput
    from evaluation.judges.local import LocalJudge
    from evaluation.metrics.criteria import FAITHFULNESS_PASS, RELEVANCY_PASS
    from zolsearch.search import selectors
    from zolsearch.search.config import MEASUREMENT_OVERRIDES, pipeline_config_default
    from zolsearch.search.gate import CONTEXT_WEIGHT, CONTEXT_WEIGHTS
    from zolsearch.search.generation import answer_plain, chunk_source_text
    from zolsearch.search.pipeline import SearchRequest, pipeline_run
    from zolsearch.search.stages.quality_gate import answer_sentences_vector, draft_gate_vectors

    config = pipeline_config_default().with_overrides(**MEASUREMENT_OVERRIDES)
    judge = LocalJudge.from_settings()
    rows: dict[str, list[dict[str, object]]] = defaultdict(list)
    timings: dict[str, list[float]] = defaultdict(list)
    unmatched = 0
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
            cited = state.draft.cited_chunk_ids
            provider._cache[0].clear()  # time the encoder, not its LRU
            started = time.perf_counter()
            filtered = [i for i in cited if i in state.filtered]
            embedded = provider.embed_passages(
                [answer_plain(state.documents_text or state.draft.text), *(state.filtered[i] for i in filtered)]
            )
            answer, fresh = embedded[0], embedded[1:]
            others = selectors.chunk_vectors(ids=[i for i in cited if i not in state.filtered], model_key=provider.key)
            if len(fresh):
                others = np.vstack([fresh, others]) if len(others) else fresh
            passages = others.mean(axis=0) if len(others) else answer * 0
            timings["passages"].append((time.perf_counter() - started) * 1000)
            provider._cache[0].clear()
            started = time.perf_counter()
            _, sentences_context = draft_gate_vectors(state)
            timings["sentences"].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            stored_answer = answer_sentences_vector(state)
            timings["stored"].append((time.perf_counter() - started) * 1000)
            if stored_answer is None:
                unmatched += 1
                stored_answer = answer
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
            s = unit(stored_answer.astype(np.float64))
            rows[item["language"]].append(
                {
                    "question": q,
                    "answer": {"passages": a, "sentences": a, "stored": s},
                    "align": {
                        "passages": float(a @ unit(passages.astype(np.float64))),
                        "sentences": float(a @ unit(sentences_context.astype(np.float64))),
                        "stored": float(s @ unit(sentences_context.astype(np.float64))),
                    },
                    "related": (verdict.faithfulness or 0) >= FAITHFULNESS_PASS
                    and (verdict.relevancy or 0) >= RELEVANCY_PASS,
                }
            )
    report: dict[str, object] = {}
    for language, drafts in sorted(rows.items()):
        per_variant: dict[str, object] = {}
        for variant in ("passages", "sentences", "stored"):
            by_weight = {}
            for w in sorted({CONTEXT_WEIGHT, *CONTEXT_WEIGHTS}):
                related = [
                    w * d["align"][variant] + (1 - w) * float(d["question"] @ d["answer"][variant])  # type: ignore[index, operator]
                    for d in drafts
                    if d["related"]
                ]
                rotated = [
                    w * d["align"][variant]  # type: ignore[index]
                    + (1 - w) * float(drafts[(i + 1) % len(drafts)]["question"] @ d["answer"][variant])  # type: ignore[index, operator]
                    for i, d in enumerate(drafts)
                ]
                point = operating_point_with_max_false_refusal(
                    positive=related, negative=rotated, max_false_refusal=0.05
                )
                youden = youden_optimum(positive=related, negative=rotated)
                by_weight[w] = {
                    "related": len(related),
                    "rotated": len(rotated),
                    "roc_auc": round(roc_auc(positive=related, negative=rotated), 4),
                    "threshold_5pct": round(point.threshold, 2) if point else None,
                    "rotated_refused_5pct": round(1 - point.fpr, 4) if point else None,
                    "youden": {"threshold": round(youden.threshold, 4), "j": round(youden.j, 4)},
                    "related_score_mean": round(float(np.mean(related)), 4),
                }
            per_variant[variant] = by_weight[CONTEXT_WEIGHT] | {
                "by_weight": {
                    str(w): {k: v[k] for k in ("roc_auc", "threshold_5pct", "rotated_refused_5pct")}
                    for w, v in by_weight.items()
                }
            }
        difference = [abs(d["align"]["sentences"] - d["align"]["passages"]) for d in drafts]  # type: ignore[index]
        per_variant["alignment_abs_difference_mean"] = round(float(np.mean(difference)), 4)
        report[language] = per_variant
        print(language, json.dumps(per_variant, indent=1), flush=True)
    encoder = {
        k: {"p50": round(float(np.percentile(v, 50)), 2), "p95": round(float(np.percentile(v, 95)), 2)}
        for k, v in timings.items()
    }
    print("gate vectors, ms:", encoder, "drafts whose sentences were not all stored:", unmatched)
    report_all = {"sets": set_names, "languages": report, "gate_vectors_ms": encoder, "stored_unmatched": unmatched}
    print("wrote", results_write("gate_context", report_all))


if __name__ == "__main__":
    main(sys.argv[1:] or ["medquad-dev", "medquad-heldout-para-nl"])
