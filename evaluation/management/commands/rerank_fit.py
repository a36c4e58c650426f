"""``manage.py rerank_fit --set FILE[#TAG] … --out data/rerank/features-lr.json``.

Fits the offline feature reranker and CRAG's thresholds on dev golden sets (never held-out
ones) over the corpus in the database (:mod:`evaluation.rerank_fit`), and writes the model file
the pipeline loads (``RERANK_MODEL_PATH``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.commands import DatabaseCommand
from core.providers.rerank import FEATURE_NAMES
from evaluation.management.commands._common import dev_questions_collect, dev_set_arguments
from evaluation.rerank_fit import rerank_fit
from zolsearch.search.config import pipeline_config_default


class Command(DatabaseCommand):
    help = "Fit the offline reranker and calibrate CRAG on dev golden sets; write the model file."

    def add_arguments(self, parser: CommandParser) -> None:
        dev_set_arguments(parser)
        parser.add_argument("--out", required=True, help="Model file to write (JSON).")
        parser.add_argument(
            "--exclude",
            action="append",
            default=[],
            metavar="FEATURE",
            help="Leave a feature out of the model (repeatable), e.g. --exclude priority.",
        )

    def handle(self, *args: object, **options: Any) -> None:
        unknown = sorted(set(options["exclude"]) - set(FEATURE_NAMES))
        if unknown:  # before minutes of collecting
            raise CommandError(f"unknown reranker features {unknown}; features: {', '.join(FEATURE_NAMES)}")
        config = pipeline_config_default()
        questions = dev_questions_collect(specs=list(options["sets"]), config=config, stdout=self.stdout)
        try:
            model = rerank_fit(
                questions=questions,
                sets=list(options["sets"]),
                max_false_refusal=float(options["max_false_refusal"]),
                embedding_model=config.embedding_model,
                exclude=list(options["exclude"]),
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        out = Path(str(options["out"]))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(model, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        evidence, crag = model["evidence"], model["crag"]
        self.stdout.write(
            f"Wrote {out}: {evidence['questions']} questions, {evidence['candidates']} candidates; "
            f"CV ROC AUC {evidence['cv_roc_auc']}, MRR@10 fused {evidence['cv_mrr10_fused']} → reranked "
            f"{evidence['cv_mrr10_reranked']}; CRAG lower {crag['crag_lower']}, upper {crag['crag_upper']}"
        )
