"""Retrieval quality of the online pipeline on a golden set, per language: MRR@10, success@1,
NDCG@5 and R@10 of the fused (and reranked) top 10, under any configuration overrides; and
MRR@10 and success@1 counting another site's page with the same MedQuAD focus and a QA pair of
the item's question type as relevant too (``*_same_question``,
:func:`evaluation.selectors.same_question_urls`: MedQuAD's judgements name one page of several);
with ``--qrels`` (every judged page, e.g. ``golden_build hospital-nl --qrels-out``), how much of
the first 1 and 10 pages is judged and MRR@10 with unjudged pages removed
(:func:`evaluation.metrics.retrieval.judged_only_at_k`: incomplete judgements).

Safety stages, CRAG, the gate and the semantic cache are switched off here
(``MEASUREMENT_OVERRIDES``) so every question reaches retrieval and keeps its first ranking
(this measures ranking, not refusals; since CRAG became a default on 2026-11-29 as well, so
figures before and after compare). Relevance: the golden set's expected urls with the project's
URL-prefix grades (``evaluation.metrics.retrieval``; relevant ⇔ grade ≥ 0.5).

Run on a database that holds the corpus, e.g. the full MedQuAD plus the hospital-nl pages::

    EMBEDDED_PGDATA=.data/dev .venv/bin/python -m benchmarks.retrieval_quality \
        --set .data/golden/hospital-nl.jsonl [--override language_boost=0.5 …] [--tag dev] \
        [--qrels .data/golden/hospital-nl.qrels]

Results: printed, and ``docs/bench-results/retrieval_quality-<set>.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", required=True, type=Path, help="Golden set JSONL.")
    parser.add_argument("--override", action="append", default=[], metavar="FIELD=VALUE")
    parser.add_argument("--tag", default="", help="Only questions with this tag (e.g. dev, heldout).")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--misses", type=int, default=15, help="Questions not answered at rank 1 to print (default 15)."
    )
    parser.add_argument(
        "--qrels",
        type=Path,
        action="append",
        default=[],
        help="Judged pages: TREC qrels (golden_build hospital-nl --qrels-out) or a graded pool file (.csv, "
        "--pool-out filled in); repeatable. Adds judged@1, judged@10, mrr@10_judged_only (unjudged pages "
        "removed) and mrr@10_qrels (unjudged pages non-relevant).",
    )
    parser.add_argument(
        "--pool-out",
        type=Path,
        default=None,
        help="With --qrels: write the unjudged pages among each question's first --pool-depth pages "
        "as a CSV for evaluators to grade.",
    )
    parser.add_argument("--pool-depth", type=int, default=3, help="Pages per question to pool (default 3).")
    parser.add_argument(
        "--relevant-grade",
        type=int,
        default=3,
        help="With --qrels: the lowest grade that counts as relevant (default 3: hospital-nl's expected pages).",
    )
    parser.add_argument(
        "--detect-language",
        action="store_true",
        help="Send no language: the pipeline detects it, as for a patient whose client gives none.",
    )
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zolsearch.settings")
    sys.path.insert(0, str(BASE_DIR))
    import django

    django.setup()
    from benchmarks.common import percentile, results_write
    from evaluation.golden.io import golden_jsonl_load
    from evaluation.golden.pool import PoolRow, pool_judgements_read, pool_rows, pool_write
    from evaluation.metrics.retrieval import judged_only_at_k, mrr, ndcg_at_k, recall_at_k
    from evaluation.selectors import same_question_urls
    from zolsearch.search.config import MEASUREMENT_OVERRIDES, pipeline_config_default
    from zolsearch.search.pipeline import SearchRequest, pipeline_run
    from zolsearch.search.trec import trec_qrels_read

    items = [i for i in golden_jsonl_load(args.set) if i.expected_urls and (not args.tag or args.tag in i.tags)]
    config = pipeline_config_default().with_overrides(**MEASUREMENT_OVERRIDES).with_override_pairs(args.override)
    if args.pool_out is not None and not args.qrels:
        parser.error("--pool-out needs --qrels (the judgements the pool leaves out)")
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for path in args.qrels:
        if path.suffix.lower() == ".csv":
            judgements = pool_judgements_read(path)
        else:
            with path.open(encoding="utf-8") as handle:
                judgements = trec_qrels_read(handle)
        for qid, grades in judgements.items():
            qrels[qid].update(grades)
    pool: list[PoolRow] = []
    per_language: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    misses = []
    timings: dict[str, list[float]] = defaultdict(list)
    pipeline_run(request=SearchRequest(question="warm-up", language="en"), config=config)  # trains the classifiers
    for item in items:
        language = "" if args.detect_language else item.language
        state = pipeline_run(request=SearchRequest(question=item.question, language=language), config=config)
        for stage, ms in state.timings_ms.items():
            timings[stage].append(ms)
        ranked = [state.chunks[i].document.url for i, _ in state.fused if i in state.chunks][:10]
        reciprocal = mrr(ranked, item.expected_urls) or 0.0
        # more relevant pages can only raise the first relevant rank: no look-up when it is 1 already
        same = (
            reciprocal
            if reciprocal == 1.0
            else mrr(
                ranked,
                [*item.expected_urls, *same_question_urls(expected_urls=item.expected_urls, qtype=item.category)],
            )
        )
        scores = {
            "mrr@10": reciprocal,
            "success@1": 1.0 if reciprocal == 1.0 else 0.0,
            "ndcg@5": ndcg_at_k(ranked, item.expected_urls, k=5) or 0.0,
            "r@10": recall_at_k(ranked, item.expected_urls, k=10) or 0.0,
            "mrr@10_same_question": same or 0.0,
            "success@1_same_question": 1.0 if same == 1.0 else 0.0,
        }
        judged = judged_only_at_k(ranked, qrels.get(item.qid, {}), relevant_min=args.relevant_grade) if qrels else None
        if judged is not None:
            scores.update(judged)
        if args.pool_out is not None:
            pool += pool_rows(item.qid, item.question, state, qrels.get(item.qid, {}), depth=args.pool_depth)
        for bucket in (item.language, "all", "non-nl" if item.language != "nl" else "nl-only"):
            for name, value in scores.items():
                per_language[bucket][name].append(value)
        if reciprocal < 1.0:
            misses.append({"qid": item.qid, "question": item.question, "first": ranked[:3], "mrr": reciprocal})
    summary = {
        bucket: {"n": len(values["mrr@10"]), **{k: round(sum(v) / len(v), 3) for k, v in values.items()}}
        for bucket, values in sorted(per_language.items())
    }
    for bucket, row in summary.items():
        print(bucket, row)
    stage_ms = {
        stage: {"p50": round(percentile(v, 50), 2), "p95": round(percentile(v, 95), 2)} for stage, v in timings.items()
    }
    print("stage ms (in process, p50/p95):", {k: (v["p50"], v["p95"]) for k, v in stage_ms.items()})
    if not args.quiet:
        for miss in misses[: args.misses]:
            print("miss", miss)
    if args.pool_out is not None:
        print(f"pool: {pool_write(pool, args.pool_out)} unjudged pages written to {args.pool_out}")
    suffix = "" if not args.override else "-" + "-".join(sorted(o.replace("=", "_") for o in args.override))[:80]
    suffix += "-detected" if args.detect_language else ""
    results_write(
        f"retrieval_quality-{args.set.stem}{args.tag and '-' + args.tag}{suffix}",
        {
            "set": str(args.set),
            "tag": args.tag,
            "overrides": args.override,
            "language": "detected" if args.detect_language else "the golden set's",
            "summary": summary,
            "config": config.as_dict(),
        },
    )


if __name__ == "__main__":
    main()
