"""``manage.py crag_calibrate --reranker cross-encoder --set FILE[#TAG] … [--out data/rerank/crag.json]``.

Calibrates CRAG's thresholds for a reranker that is not fitted here (the cross-encoder of
``RERANK_CROSS_ENCODER_PATH``, an ``http:<model>`` rerank API) on dev golden sets (never held-out
ones) over the corpus in the database (:func:`evaluation.rerank_fit.crag_calibrate`), and writes
them with their evidence under the reranker's key in the CRAG file the pipeline reads
(``RERANK_CRAG_PATH``; other scorers' entries are kept). The feature reranker's thresholds come
with its fit (``manage.py rerank_fit``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser

from core.commands import DatabaseCommand
from core.providers.rerank import RerankUnavailable, reranker_get, reranker_identity
from evaluation.management.commands._common import dev_questions_collect, dev_set_arguments
from evaluation.rerank_fit import crag_calibrate
from zolsearch.search.config import pipeline_config_default


class Command(DatabaseCommand):
    help = "Calibrate CRAG's thresholds for a cross-encoder or rerank API on dev golden sets; write the CRAG file."

    def add_arguments(self, parser: CommandParser) -> None:
        dev_set_arguments(parser)
        parser.add_argument(
            "--reranker", required=True, help="cross-encoder (RERANK_CROSS_ENCODER_PATH) or http:<model>."
        )
        parser.add_argument("--out", default="", help="CRAG file to update (default: RERANK_CRAG_PATH).")

    def handle(self, *args: object, **options: Any) -> None:
        name = str(options["reranker"])
        if name == "features-lr":
            raise CommandError("the feature reranker's CRAG thresholds come with its fit: manage.py rerank_fit")
        try:
            reranker = reranker_get(name)  # before minutes of collecting
        except RerankUnavailable as exc:
            raise CommandError(str(exc)) from exc
        config = pipeline_config_default()
        questions = dev_questions_collect(specs=list(options["sets"]), config=config, stdout=self.stdout)
        try:
            entry = crag_calibrate(
                questions=questions,
                reranker=reranker,
                sets=list(options["sets"]),
                identity=reranker_identity(name, embedding_model=config.embedding_model),
                max_false_refusal=float(options["max_false_refusal"]),
            )
        except (ValueError, RerankUnavailable) as exc:
            raise CommandError(str(exc)) from exc
        out = Path(str(options["out"] or settings.RERANK_CRAG_PATH))
        try:
            existing = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
        except ValueError as exc:
            raise CommandError(f"{out} is not JSON ({exc}): move it away or fix it") from exc
        scorers = existing.get("scorers") if isinstance(existing, dict) else None
        document = {"scorers": {**(scorers if isinstance(scorers, dict) else {}), entry["key"]: entry}}
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        evidence = entry["evidence"]
        self.stdout.write(
            f"Wrote {entry['key']} to {out}: {evidence['questions']} questions, MRR@10 fused "
            f"{evidence['mrr10_fused']} → reranked {evidence['mrr10_reranked']}; CRAG lower {entry['crag_lower']}, "
            f"upper {entry['crag_upper']} (refuses {evidence['false_refusal_at_lower']:.1%} of questions with a "
            "relevant top 3)"
        )
