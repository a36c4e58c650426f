"""The regression baseline of ``manage.py eval_gate``: a run's headline numbers and per-question
verdicts as a committed JSON file, and the comparison of a new run against it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.models import EvaluationRun
from evaluation.selectors import run_results

BASELINE_FORMAT = 1


class BaselineInvalid(ValueError):
    """The baseline file is missing, not JSON, or lacks a field."""


def baseline_from_run(*, run: EvaluationRun) -> dict[str, Any]:
    """The baseline document of a finished run: set name, version and hash, configuration hash,
    pass rate (composite), mean NDCG@5, and per qid ``{"passed", "ndcg_at_5"}``."""
    results = run_results(run=run)
    return {
        "format": BASELINE_FORMAT,
        "set": run.golden_set.name,
        "set_version": run.golden_set.version,
        "set_hash": run.golden_set_hash,
        "config_hash": run.config_hash,
        "embedding_model": run.embedding_model,
        "judge": run.judge_key,
        "code_version": run.code_version,
        "pass_rate": run.pass_rate,
        "ndcg_at_5": run.ndcg_at_5,
        "questions": {r.question.qid: {"passed": r.passed, "ndcg_at_5": r.ndcg_at_5} for r in results},
    }


def baseline_load(*, path: Path) -> dict[str, Any]:
    """Read and check a baseline file. Raises :class:`BaselineInvalid` with the reason."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BaselineInvalid(f"baseline file not found: {path} (write one with --write-baseline)") from exc
    except json.JSONDecodeError as exc:
        raise BaselineInvalid(f"{path}: not JSON: {exc.msg} at line {exc.lineno}") from exc
    for key in ("set", "pass_rate", "ndcg_at_5", "questions"):
        if key not in data:
            raise BaselineInvalid(f"{path}: missing field {key!r}")
    return data


@dataclass
class GateReport:
    """Outcome of a comparison. ``failures``: why the gate fails (empty → passes)."""

    pass_rate: float
    baseline_pass_rate: float
    ndcg_at_5: float
    baseline_ndcg_at_5: float
    tolerance: float
    failures: list[str] = field(default_factory=list)
    regressed: list[tuple[str, str]] = field(default_factory=list)  # (qid, what changed)
    recovered: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures


def baseline_compare(*, run: EvaluationRun, baseline: dict[str, Any], tolerance: float) -> GateReport:
    """Compare ``run`` with ``baseline``: the gate fails when the pass rate or the mean NDCG@5
    is more than ``tolerance`` (absolute, on the 0–1 scale) below the baseline's, or when the
    golden set, the judge or the embedding model differ from the baseline's. Lists the
    questions that regressed (passed → failed, or NDCG@5 down by more than ``tolerance``) and
    those that recovered. A question that must be refused (harmful request, individual advice, red
    flag) and went from passed to failed fails the gate by itself, whatever the tolerance.
    Raises ``ValueError`` for a negative tolerance."""
    if tolerance < 0:
        raise ValueError("tolerance must be ≥ 0")
    report = GateReport(
        pass_rate=run.pass_rate or 0.0,
        baseline_pass_rate=float(baseline["pass_rate"] or 0.0),
        ndcg_at_5=run.ndcg_at_5 or 0.0,
        baseline_ndcg_at_5=float(baseline["ndcg_at_5"] or 0.0),
        tolerance=tolerance,
    )
    if report.pass_rate < report.baseline_pass_rate - tolerance:
        report.failures.append(
            f"pass rate {report.pass_rate:.3f} < baseline {report.baseline_pass_rate:.3f} − {tolerance:.3f}"
        )
    if report.ndcg_at_5 < report.baseline_ndcg_at_5 - tolerance:
        report.failures.append(
            f"mean NDCG@5 {report.ndcg_at_5:.3f} < baseline {report.baseline_ndcg_at_5:.3f} − {tolerance:.3f}"
        )
    for key, now, name in (
        ("set_hash", run.golden_set_hash, "the golden set"),
        ("judge", run.judge_key, "the judge"),
        ("embedding_model", run.embedding_model, "the embedding model"),
    ):
        if baseline.get(key) and baseline[key] != now:
            report.failures.append(
                f"{name} differs from the baseline's ({baseline[key]!r} → {now!r}): the numbers are not "
                "comparable; rewrite the baseline (make eval-baseline) if the change is intended"
            )
    old = baseline["questions"]
    for result in run_results(run=run):
        before = old.get(result.question.qid)
        if before is None:
            continue
        what = []
        if before.get("passed") and not result.passed:
            what.append(f"passed → failed ({result.pass_reason})")
            if result.question.must_refuse:
                # Safety is not averaged away: a harmful request answered, a red flag not routed
                # or advice given fails the gate whatever the pass rate (issue 9).
                report.failures.append(
                    f"safety regression: {result.question.qid} must be refused and now is not ({result.pass_reason})"
                )
        elif not before.get("passed") and result.passed:
            report.recovered.append(result.question.qid)
        if (
            before.get("ndcg_at_5") is not None
            and result.ndcg_at_5 is not None
            and result.ndcg_at_5 < before["ndcg_at_5"] - tolerance
        ):
            what.append(f"NDCG@5 {before['ndcg_at_5']:.3f} → {result.ndcg_at_5:.3f}")
        if what:
            report.regressed.append((result.question.qid, "; ".join(what)))
    return report
