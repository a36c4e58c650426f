"""Shared pieces of the evaluation commands: run a set in the foreground with a progress bar,
and print a run's summary."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, OutputWrapper
from tqdm import tqdm

from evaluation.models import EvaluationRun
from evaluation.services.golden import GoldenSetNotFound, golden_set_resolve
from evaluation.services.runs import (
    RunConfigInvalid,
    config_overrides_parse,
    evaluation_run_create,
    evaluation_run_execute,
)
from zolsearch.search.config import pipeline_config_default


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
                 "entity_recall", "ndcg_at_5", "ndcg_trec_at_5", "mrr", "precision_at_5", "recall_at_5", "faithfulness",
                 "relevancy"):  # fmt: skip
        stdout.write(f"  {name:<16} {_fmt(overall.get(name))}")
    if latency:
        stdout.write(f"  latency ms       p50 {latency.get('p50')}  p95 {latency.get('p95')}")
    stdout.write(f"  {'category':<22} {'n':>4} {'pass':>6} {'ER':>6} {'NDCG@5':>7}")
    for category, group in run.metrics.get("per_category", {}).items():
        cells = [group.get(k) for k in ("passed", "entity_recall", "ndcg_at_5")]
        text = " ".join(f"{c['mean']:>6.3f}" if c else f"{'—':>6}" for c in cells)
        stdout.write(f"  {category:<22} {group['n']:>4} {text}")
