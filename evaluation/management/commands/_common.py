"""Shared pieces of the evaluation commands: run a set in the foreground with a progress bar,
print a run's summary, and collect dev questions' candidates for the reranker's fit and CRAG's
calibration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser, OutputWrapper
from tqdm import tqdm

from evaluation.golden.io import golden_jsonl_load
from evaluation.models import EvaluationRun
from evaluation.rerank_fit import Question, rerank_questions_collect
from evaluation.services.golden import GoldenSetNotFound, golden_set_resolve
from evaluation.services.runs import (
    RunConfigInvalid,
    config_overrides_parse,
    evaluation_run_create,
    evaluation_run_execute,
)
from zolsearch.search.config import PipelineConfig, pipeline_config_default


def run_create(*, name: str, version: int | None, overrides: list[str], label: str) -> EvaluationRun:
    """A PENDING run of set ``name`` (committed sets imported first) with the live configuration
    changed by ``overrides``. Raises ``CommandError`` for an unknown set or a bad override."""
    try:
        golden_set = golden_set_resolve(name=name, version=version)
        config = config_overrides_parse(pairs=overrides, base=pipeline_config_default())
    except (GoldenSetNotFound, RunConfigInvalid) as exc:
        raise CommandError(str(exc)) from exc
    return evaluation_run_create(golden_set=golden_set, config=config, label=label, created_by="manage.py")


def run_foreground(*, name: str, version: int | None, overrides: list[str], label: str, quiet: bool) -> EvaluationRun:
    """Create and execute a run of set ``name`` in this process. Raises ``CommandError``."""
    run = run_create(name=name, version=version, overrides=overrides, label=label)
    with tqdm(total=run.total, desc=f"evaluate {run.golden_set}", disable=quiet) as bar:
        run = evaluation_run_execute(run_id=run.pk, progress=lambda done, total: bar.update(1))
    if run.status != EvaluationRun.Status.SUCCEEDED:
        raise CommandError(f"run {run.pk} {run.status}: {run.error}")
    return run


def _fmt(value: Any) -> str:
    if not value:
        return "—"
    return f"{value['mean']:.3f} [{value['low']:.3f}, {value['high']:.3f}]"


def summary_print(*, run: EvaluationRun, stdout: OutputWrapper) -> None:
    """Headline metrics with 95 % CIs, latency, and the per-category table."""
    overall = run.metrics.get("overall", {})
    latency = run.metrics.get("latency_ms") or {}
    stdout.write(
        f"Run {run.pk} on {run.golden_set} ({run.total} questions), config {run.config_hash[:12]}, judge {run.judge_key}"
    )
    for name in ("passed", "passed_er", "refusal_correct", "refused", "fallback", "red_flag_correct",
                 "cited_expected", "reviewed_correct", "entity_recall", "ndcg_at_5", "ndcg_trec_at_5", "mrr", "precision_at_5", "recall_at_5", "faithfulness",
                 "relevancy"):  # fmt: skip
        stdout.write(f"  {name:<16} {_fmt(overall.get(name))}")
    if latency:
        stdout.write(f"  latency ms       p50 {latency.get('p50')}  p95 {latency.get('p95')}")
    stdout.write(f"  {'category':<22} {'n':>4} {'pass':>6} {'ER':>6} {'NDCG@5':>7}")
    for category, group in run.metrics.get("per_category", {}).items():
        cells = [group.get(k) for k in ("passed", "entity_recall", "ndcg_at_5")]
        text = " ".join(f"{c['mean']:>6.3f}" if c else f"{'—':>6}" for c in cells)
        stdout.write(f"  {category:<22} {group['n']:>4} {text}")


def dev_questions_collect(*, specs: list[str], config: PipelineConfig, stdout: OutputWrapper) -> list[Question]:
    """The labelled candidates of the questions of ``specs`` (``FILE[#TAG]``: a golden JSONL,
    only the questions tagged ``TAG`` when given), retrieved with ``config``
    (:func:`evaluation.rerank_fit.rerank_questions_collect`). Raises ``CommandError`` for a
    missing file and for held-out questions (a file named ``…heldout…`` without ``#dev``, or a
    question tagged ``heldout``): fits and calibrations use dev questions only."""
    questions: list[Question] = []
    for spec in specs:
        path_text, _, tag = str(spec).partition("#")
        path = Path(path_text)
        if not path.is_file():
            raise CommandError(f"no golden set at {path}")
        if "heldout" in path.name and tag != "dev":
            raise CommandError(f"{path.name} is a held-out set: use dev questions only")
        chosen = [i for i in golden_jsonl_load(path) if not tag or tag in i.tags]
        if any("heldout" in i.tags for i in chosen):
            raise CommandError(f"{spec} holds held-out questions: pass #dev")
        stdout.write(f"{spec}: {len(chosen)} questions")
        questions += rerank_questions_collect(items=chosen, config=config, set_name=str(spec))
    return questions


def dev_set_arguments(parser: CommandParser) -> None:
    """``--set FILE[#TAG]`` (repeatable, required) and ``--max-false-refusal`` (CRAG's lower
    threshold, default 0.02): the options of the commands that fit or calibrate on dev sets."""
    parser.add_argument(
        "--set",
        action="append",
        required=True,
        dest="sets",
        metavar="FILE[#TAG]",
        help="Golden JSONL (repeatable); #TAG keeps only questions with that tag, e.g. hospital-nl.jsonl#dev.",
    )
    parser.add_argument(
        "--max-false-refusal",
        type=float,
        default=0.02,
        help="CRAG lower threshold: refusals of answerable questions.",
    )
