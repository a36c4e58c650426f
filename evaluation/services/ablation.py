"""Ablation studies: create (design → configurations → evaluation runs, all frozen), execute run
by run (in the foreground or as Celery tasks, resumable), analyse, recommend, apply.

A study's configurations are its base configuration (frozen when the study is created) with the
design's levels applied; its runs are ordinary :class:`EvaluationRun` rows linked to their
configuration and repetition. Nothing here reads the live flag rows after creation, so flags an
evaluator changes while a study runs cannot reach it (seed 004 lost two studies to that).
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from core.runs import RunStatus, run_claim, worker_identity
from evaluation.ablation.analysis import (
    change_matrix,
    factorial_effects,
    majority_pass,
    repetition_spread,
    two_stage_bootstrap_ci,
)
from evaluation.ablation.design import Design, DesignInvalid, design_build
from evaluation.draft_labels import draft_label_index_default, reviewed_correct
from evaluation.metrics.answers import answer_cites_expected, red_flag_correct
from evaluation.metrics.stats import cochrans_q, latency_summary, mcnemar
from evaluation.models import AblationConfiguration, AblationStudy, EvaluationResult, EvaluationRun, GoldenSet
from evaluation.services.runs import evaluation_run_create, evaluation_run_execute
from zolsearch.search.config import ConfigInvalid, PipelineConfig, config_value_parse, pipeline_config_default
from zolsearch.search.flags import FLAGS
from zolsearch.search.models import Answer
from zolsearch.search.services import pipeline_flag_set

logger = logging.getLogger(__name__)
ProgressCallback = Callable[[int, int], None]

# A recommendation changes a flag only on evidence: McNemar's two-sided p below this (paired
# per-question verdicts against the base), or a factorial effect whose 95 % CI excludes 0. The
# conventional 5 % level, not tuned.
SIGNIFICANCE = 0.05
# Graded metrics of each configuration (EvaluationResult fields, undefined for some questions).
SCORES = ("entity_recall", "ndcg_at_5", "mrr")


class StudyInvalid(ValueError):
    """A study that cannot be created: no golden set, a factor that is not a pipeline flag, a level
    the configuration rejects, or a design the design generator refuses (the message says which)."""


def factors_validate(*, factors: Sequence[Mapping[str, Any]], base: PipelineConfig) -> list[dict[str, Any]]:
    """Factors with each level as the configuration stores it (text read by the field's type,
    then validated): ``[{"name", "levels"}]``. Raises :class:`StudyInvalid`."""
    parsed = []
    for factor in factors:
        name = str(factor.get("name", "")).strip()
        if name not in FLAGS:
            raise StudyInvalid(f"{name!r} is not a pipeline flag; factors are flags (see the flag list)")
        levels = []
        for raw in factor.get("levels") or []:
            try:
                value = config_value_parse(name=name, raw=raw) if isinstance(raw, str) else raw
                levels.append(base.with_overrides(**{name: value}).as_dict()[name])
            except ConfigInvalid as exc:
                raise StudyInvalid(f"{name}: level {raw!r} does not fit: {exc}") from exc
        parsed.append({"name": name, "levels": levels})
    return parsed


def factors_from_text(*, text: str, names: Sequence[str], base: PipelineConfig) -> list[dict[str, Any]]:
    """Factors from what an evaluator types: one factor per line, ``name: level, level, …`` (the
    first level is the base) or ``name`` alone for a true/false flag (levels: its value in
    ``base``, then the other). ``names``: flags chosen in a list, same default levels. Lists and
    JSON objects as levels are written ``name: [a, b] | [c]`` (levels separated by ``|`` then).
    Raises :class:`StudyInvalid` for an unknown flag, a non-boolean flag without levels or a
    factor named twice."""
    lines: dict[str, list[Any] | None] = dict.fromkeys(names)
    for line in text.splitlines():
        if not line.strip():
            continue
        name, sep, rest = line.partition(":")
        name = name.strip()
        separator = "|" if "|" in rest else ","
        levels: list[Any] | None = [part.strip() for part in rest.split(separator)] if sep else None
        if name in lines and lines[name] is not None:
            raise StudyInvalid(f"{name} is named twice")
        lines[name] = levels
    factors = []
    for name, levels in lines.items():
        if name not in FLAGS:
            raise StudyInvalid(f"{name!r} is not a pipeline flag")
        if levels is None:
            current = base.as_dict()[name]
            if not isinstance(current, bool):
                raise StudyInvalid(f"{name} is not true/false: give its levels, e.g. '{name}: {current}, …'")
            levels = [bool(current), not current]
        factors.append({"name": name, "levels": levels})
    return factors


@transaction.atomic
def ablation_study_create(
    *,
    name: str,
    golden_sets: Sequence[GoldenSet],
    factors: Sequence[Mapping[str, Any]],
    design: str = AblationStudy.Design.OFAT,
    fraction_p: int = 0,
    generators: Sequence[str] | None = None,
    repetitions: int = 1,
    base_config: PipelineConfig | None = None,
    created_by: str = "",
) -> AblationStudy:
    """A PENDING study: its design, one :class:`AblationConfiguration` per design point, and one
    PENDING :class:`EvaluationRun` per configuration × golden set × repetition (each freezing its
    set version and configuration, semantic cache off).

    ``base_config``: default the live configuration now (flag rows included), frozen into the
    study. ``factors``: ``[{"name", "levels"}]``, levels as JSON values or text. ``repetitions``:
    1–20. ``total`` is the number of questions over all runs. Raises :class:`StudyInvalid`.
    """
    if not golden_sets:
        raise StudyInvalid("choose at least one golden set")
    if not 1 <= repetitions <= 20:
        raise StudyInvalid(f"repetitions must be 1–20, got {repetitions}")
    base = (base_config or pipeline_config_default()).with_overrides(semantic_cache_enabled=False)
    parsed = factors_validate(factors=factors, base=base)
    try:
        plan: Design = design_build(str(design), parsed, p=fraction_p, generators=generators)
    except DesignInvalid as exc:
        raise StudyInvalid(str(exc)) from exc
    study = AblationStudy(
        name=name[:200],
        base_config=base.as_dict(),
        base_config_hash=base.hash,
        factors=parsed,
        design=str(design),
        fraction_p=fraction_p,
        generators=list(plan.generators),
        design_description=plan.describe()[:300],
        repetitions=repetitions,
        created_by=created_by[:150],
    )
    study.full_clean()
    study.save()
    study.golden_sets.set(golden_sets)
    total = 0
    for point in plan.points:
        try:
            config = base.with_overrides(**point.levels)
        except ConfigInvalid as exc:  # levels valid alone may clash together
            raise StudyInvalid(f"configuration {point.label}: {exc}") from exc
        configuration = AblationConfiguration.objects.create(
            study=study,
            index=point.index,
            label=point.label[:500],
            levels=point.levels,
            coded=point.coded,
            is_base=all(point.levels[f["name"]] == f["levels"][0] for f in parsed),
            config=config.as_dict(),
            config_hash=config.hash,
        )
        for golden_set in golden_sets:
            for repetition in range(repetitions):
                run = evaluation_run_create(
                    golden_set=golden_set,
                    config=config,
                    label=f"study {study.pk} · {point.label} · rep {repetition + 1}",
                    created_by=created_by,
                    study_configuration=configuration,
                    repetition=repetition,
                )
                total += run.total
    study.total = total
    study.save(update_fields=["total"])
    return study


def ablation_study_enqueue(*, study: AblationStudy, parallel: int | None = None) -> None:
    """Queue ``parallel`` (default ``ABLATION_PARALLEL``) chains of study tasks after commit; each
    takes the next PENDING run, so chains share the runs and use as many worker processes."""
    from evaluation.tasks import ablation_study_task

    chains = max(1, parallel or settings.ABLATION_PARALLEL)
    transaction.on_commit(lambda: [ablation_study_task.delay(study.pk) for _ in range(chains)])


def _study_runs(study_id: int) -> QuerySet[EvaluationRun]:
    return EvaluationRun.objects.filter(study_configuration__study_id=study_id)


def _pid_alive(worker: str) -> bool:
    """Whether ``host:pid`` names a live process on this host (unknown hosts count as alive)."""
    host, _, pid = worker.rpartition(":")
    if host != worker_identity().rpartition(":")[0] or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _orphans_resume(study_id: int) -> int:
    """Runs of the study left RUNNING by a worker process of this host that no longer exists go
    back to PENDING (their finished questions are kept: the run resumes). Returns how many."""
    orphans = [r.pk for r in _study_runs(study_id).filter(status=RunStatus.RUNNING) if not _pid_alive(r.worker)]
    return _study_runs(study_id).filter(pk__in=orphans).update(status=RunStatus.PENDING)


def _study_fail(study_id: int, reason: str) -> None:
    AblationStudy.objects.filter(pk=study_id).exclude(status=RunStatus.SUCCEEDED).update(
        status=RunStatus.FAILED, error=reason[:2000], finished_at=timezone.now()
    )


def ablation_study_step(*, study_id: int, redelivered: bool = False, progress: ProgressCallback | None = None) -> bool:
    """Execute the next PENDING run of study ``study_id``; True while runs remain PENDING.

    Claims a PENDING study first. A ``redelivered`` task message (acks_late: its worker died)
    first puts runs orphaned by a dead worker process of this host back to PENDING. Of two
    chains reaching for the same run only one claims it; the other takes the next. A FAILED run
    fails the study with its reason (resume it from the admin once the cause is fixed). When no
    run is PENDING or RUNNING the study is analysed and SUCCEEDED.
    """
    study = AblationStudy.objects.filter(pk=study_id).first()
    if study is None or study.status in (RunStatus.SUCCEEDED, RunStatus.FAILED):
        return False
    if study.status == RunStatus.PENDING:
        run_claim(model=AblationStudy, run_id=study_id)
    if redelivered:
        _orphans_resume(study_id)

    def advance(done: int, total: int) -> None:
        AblationStudy.objects.filter(pk=study_id).update(done=F("done") + 1)
        if progress:
            progress(done, total)

    me = worker_identity()
    for run_id in _study_runs(study_id).filter(status=RunStatus.PENDING).order_by("pk").values_list("pk", flat=True):
        run = evaluation_run_execute(run_id=run_id, progress=advance)
        if run.worker != me:
            continue  # another chain claimed it first
        if run.status == RunStatus.FAILED:
            _study_fail(study_id, f"evaluation run {run.pk} ({run.label}) failed: {run.error}")
            return False
        break
    if _study_runs(study_id).filter(status=RunStatus.PENDING).exists():
        return True
    if not _study_runs(study_id).filter(status=RunStatus.RUNNING).exists():
        ablation_study_finish(study_id=study_id)
    return False


def ablation_study_execute(*, study_id: int, progress: ProgressCallback | None = None) -> AblationStudy:
    """Run every remaining run of the study in this process (``manage.py ablate`` without
    ``--background``) and return it analysed (or FAILED)."""
    while ablation_study_step(study_id=study_id, progress=progress):
        pass
    return AblationStudy.objects.get(pk=study_id)


@transaction.atomic
def ablation_study_resume(*, study_id: int) -> AblationStudy:
    """Make a FAILED (or stuck RUNNING) study PENDING again: its FAILED and RUNNING runs go back
    to PENDING with the questions they finished kept, ``done`` is recounted from the stored
    results. Queue it with :func:`ablation_study_enqueue`. A SUCCEEDED study is returned as is."""
    study = AblationStudy.objects.select_for_update().get(pk=study_id)
    if study.status == RunStatus.SUCCEEDED:
        return study
    _study_runs(study_id).filter(status__in=[RunStatus.FAILED, RunStatus.RUNNING]).update(
        status=RunStatus.PENDING, error=""
    )
    study.done = EvaluationResult.objects.filter(run__study_configuration__study_id=study_id).count()
    study.status, study.error, study.finished_at = RunStatus.PENDING, "", None
    study.save(update_fields=["done", "status", "error", "finished_at"])
    return study


def ablation_study_finish(*, study_id: int) -> None:
    """Analyse a RUNNING study whose runs all finished, store its results and recommendations and
    mark it SUCCEEDED (once: the status guard lets one caller through)."""
    study = AblationStudy.objects.get(pk=study_id)
    try:
        results, per_configuration = ablation_study_analyse(study=study)
    except Exception as exc:
        logger.exception("analysis of study %s failed", study_id)
        _study_fail(study_id, f"the analysis failed: {type(exc).__name__}: {exc}")
        raise
    with transaction.atomic():
        updated = AblationStudy.objects.filter(pk=study_id, status=RunStatus.RUNNING).update(
            status=RunStatus.SUCCEEDED,
            results=results,
            recommendations=results.pop("recommendations"),
            finished_at=timezone.now(),
        )
        if updated:
            for configuration in AblationConfiguration.objects.filter(study_id=study_id):
                configuration.metrics = per_configuration.get(configuration.pk, {})
                configuration.save(update_fields=["metrics"])


def _ci(matrix: np.ndarray, *, samples: int, seed: int) -> dict[str, float] | None:
    ci = two_stage_bootstrap_ci(matrix, samples=samples, seed=seed)
    if ci is None:
        return None
    return {"mean": round(ci[0], 4), "low": round(ci[1], 4), "high": round(ci[2], 4)}


def _reviewed(rows: list[dict[str, Any]]) -> dict[int, bool]:
    """``{answer id: reviewed_correct}`` for the rows whose question has a reviewer's label in
    ``settings.DRAFT_LABELS_PATH`` (:func:`evaluation.draft_labels.reviewed_correct`); an
    unreadable labels file counts as none (logged). One query for the labelled rows' answers,
    one per labelled draft."""
    index = draft_label_index_default()
    labelled = [r for r in rows if r["answer_id"] and (r["question__golden_set__name"], r["question__qid"]) in index]
    answers = Answer.objects.in_bulk([r["answer_id"] for r in labelled])
    out: dict[int, bool] = {}
    for r in labelled:
        agreed = reviewed_correct(
            answer=answers.get(r["answer_id"]),
            golden_set=r["question__golden_set__name"],
            qid=r["question__qid"],
            index=index,
        )
        if agreed is not None:
            out[r["answer_id"]] = agreed
    return out


def ablation_study_analyse(*, study: AblationStudy) -> tuple[dict[str, Any], dict[int, dict[str, Any]]]:
    """The study's results from its stored evaluation results (read-only; one query for them,
    plus :func:`_reviewed`'s for the questions with a reviewer's label).

    Per configuration (keyed by id in the second value, also listed in ``results["configurations"]``):
    pass rate composite and ER-only, entity recall, NDCG@5 and MRR as means with two-stage
    bootstrap 95 % CIs over questions and repetitions; refusal accuracy; red-flag accuracy on
    the questions tagged with a red-flag expectation; ``cited_expected``: the answered questions'
    share answered from an expected page (:func:`evaluation.metrics.answers.answer_cites_expected`,
    which does not trust the judge); ``reviewed_correct``: over the drafts a reviewer labelled
    (``settings.DRAFT_LABELS_PATH``), the share served when good and not served when wrong (a
    question refused before a draft was written, by CRAG or a guard, counts as served nothing
    when its labels agree; each configuration counts the questions whose draft still matches a
    label or that it refused before a draft); latency p50/p95 (ms); the repetitions'
    spread; the change matrix against the base (per question, the majority verdict over
    repetitions) with McNemar's test and the questions that regressed or recovered; per golden
    set pass rates. Across configurations: Cochran's Q on the majority verdicts. Factorial
    designs: main effects and two-factor interactions on per-question pass rates with bootstrap
    CIs and the design's aliasing. ``results["recommendations"]``: :func:`recommendations`.
    """
    samples, seed = settings.EVALUATION_BOOTSTRAP_SAMPLES, settings.EVALUATION_BOOTSTRAP_SEED
    configurations = list(study.configurations.order_by("index"))
    rows: list[dict[str, Any]] = [
        dict(row)
        for row in EvaluationResult.objects.filter(run__study_configuration__study=study).values(
            "run__study_configuration_id",
            "run__repetition",
            "question_id",
            "question__qid",
            "question__golden_set__name",
            "question__tags",
            "question__must_refuse",
            "answer__red_flag_category",
            "answer__citations",
            "question__expected_urls",
            "answer_id",
            "outcome",
            "passed",
            "passed_er",
            "refusal_correct",
            "entity_recall",
            "ndcg_at_5",
            "mrr",
            "latency_ms",
        )
    ]
    questions = sorted({r["question_id"] for r in rows})
    position = {q: i for i, q in enumerate(questions)}
    qids = {r["question_id"]: r["question__qid"] for r in rows}
    set_of = {r["question_id"]: r["question__golden_set__name"] for r in rows}
    reps = study.repetitions
    shape = (len(configurations), len(questions), reps)
    cube = {
        name: np.full(shape, np.nan)
        for name in (
            "passed",
            "passed_er",
            "refusal_correct",
            "red_flag",
            "must_refuse_correct",
            "cited",
            "reviewed",
            *SCORES,
        )
    }
    reviewed = _reviewed(rows)
    latencies: dict[int, list[float]] = {c.pk: [] for c in configurations}
    index_of = {c.pk: i for i, c in enumerate(configurations)}
    for r in rows:
        c, q, k = index_of[r["run__study_configuration_id"]], position[r["question_id"]], r["run__repetition"]
        for name in ("passed", "passed_er", "refusal_correct", *SCORES):
            if r[name] is not None:
                cube[name][c, q, k] = float(r[name])
        flag = red_flag_correct(
            tags=r["question__tags"] or [],
            answer=SimpleNamespace(red_flag_category=r["answer__red_flag_category"] or ""),
        )
        if flag is not None:
            cube["red_flag"][c, q, k] = float(flag)
        if r["question__must_refuse"]:
            cube["must_refuse_correct"][c, q, k] = float(r["refusal_correct"])
        cited = answer_cites_expected(
            outcome=r["outcome"] or "",
            cited_urls=[str(x.get("url") or "") for x in (r["answer__citations"] or [])],
            expected_urls=r["question__expected_urls"] or [],
        )
        if cited is not None:
            cube["cited"][c, q, k] = float(cited)
        if r["answer_id"] in reviewed:
            cube["reviewed"][c, q, k] = float(reviewed[r["answer_id"]])
        if r["latency_ms"] is not None:
            latencies[r["run__study_configuration_id"]].append(float(r["latency_ms"]))
    complete = ~np.isnan(cube["passed"]).any(axis=(0, 2))  # questions every configuration answered
    verdicts = np.stack([majority_pass(np.nan_to_num(cube["passed"][c][complete])) for c in range(len(configurations))])
    base_index = next((i for i, c in enumerate(configurations) if c.is_base), 0)
    per_configuration: dict[int, dict[str, Any]] = {}
    listed = []
    for i, configuration in enumerate(configurations):
        metrics: dict[str, Any] = {
            "pass_rate": _ci(cube["passed"][i], samples=samples, seed=seed),
            "pass_rate_er": _ci(cube["passed_er"][i], samples=samples, seed=seed),
            **{name: _ci(cube[name][i], samples=samples, seed=seed) for name in SCORES},
            "refusal_accuracy": _ci(cube["refusal_correct"][i], samples=samples, seed=seed),
            "red_flag_accuracy": _ci(cube["red_flag"][i], samples=samples, seed=seed),
            "cited_expected": _ci(cube["cited"][i], samples=samples, seed=seed),
            "reviewed_correct": _ci(cube["reviewed"][i], samples=samples, seed=seed),
            "latency_ms": latency_summary(latencies[configuration.pk]),
            "repetitions": repetition_spread(np.nan_to_num(cube["passed"][i][complete])) if complete.any() else None,
            "per_set": _per_set(cube["passed"][i], questions=questions, set_of=set_of),
        }
        if i != base_index and complete.any():
            changes = change_matrix(verdicts[base_index].tolist(), verdicts[i].tolist())
            kept = [q for q, ok in zip(questions, complete, strict=True) if ok]
            metrics["vs_base"] = {
                **changes,
                "safety_regressions": _safety_regressions(
                    cube, base=base_index, other=i, qids=[qids[q] for q in questions]
                ),
                "reviewed": _reviewed_changes(
                    cube["reviewed"], base=base_index, other=i, qids=[qids[q] for q in questions]
                ),
                "mcnemar": mcnemar(b=changes["regressions"], c=changes["recoveries"]),
                "regressed": [
                    qids[q] for q, a, b in zip(kept, verdicts[base_index], verdicts[i], strict=True) if a and not b
                ][:100],
                "recovered": [
                    qids[q] for q, a, b in zip(kept, verdicts[base_index], verdicts[i], strict=True) if b and not a
                ][:100],
            }
        per_configuration[configuration.pk] = metrics
        listed.append(
            {
                "index": configuration.index,
                "label": configuration.label,
                "levels": configuration.levels,
                "is_base": configuration.is_base,
                **metrics,
            }
        )
    results: dict[str, Any] = {
        "questions": len(questions),
        "questions_in_every_configuration": int(complete.sum()),
        "repetitions": reps,
        "design": study.design_description,
        "configurations": listed,
        "cochrans_q": cochrans_q(verdicts.T.tolist()) if len(configurations) >= 2 and complete.any() else None,
        "bootstrap": {"samples": samples, "seed": seed, "confidence": 0.95, "method": "two-stage percentile"},
    }
    if study.design in (AblationStudy.Design.FULL, AblationStudy.Design.FRACTIONAL) and _two_level(study):
        plan = design_build(study.design, study.factors, p=study.fraction_p, generators=study.generators or None)
        outcomes = np.nanmean(cube["passed"][:, complete, :], axis=2)
        results["effects"] = sorted(
            factorial_effects(
                [{f["name"]: c.coded[f["name"]] for f in study.factors} for c in configurations],  # factor order
                outcomes,
                letters=plan.letters,
                aliases=plan.aliases,
                interactions=True,
                samples=samples,
                seed=seed,
            ),
            key=lambda e: (len(e["letters"]), e["letters"]),
        )
    results["recommendations"] = recommendations(study=study, results=results)
    return results, per_configuration


def _safety_regressions(cube: dict[str, np.ndarray], *, base: int, other: int, qids: list[str]) -> list[str]:
    """Questions a correct system must refuse, or must route (a red-flag expectation), that the
    base got right (majority over repetitions) and configuration ``other`` gets wrong."""
    lost: dict[str, None] = {}
    for name in ("must_refuse_correct", "red_flag"):
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # questions without this expectation: all NaN
            before, after = np.nanmean(cube[name][base], axis=1), np.nanmean(cube[name][other], axis=1)
        for q, (b, a) in enumerate(zip(before, after, strict=True)):
            if not np.isnan(b) and b > 0.5 and not a > 0.5:
                lost[qids[q]] = None
    return list(lost)


def _reviewed_changes(matrix: np.ndarray, *, base: int, other: int, qids: list[str]) -> dict[str, list[str]]:
    """Against a reviewer's labels (``matrix``: configurations × questions × repetitions of
    ``reviewed_correct``, NaN where no label names the draft), the questions whose labelled
    draft configuration ``other`` handles as labelled and the base does not (``recoveries``) and
    the reverse (``regressions``), by the majority over repetitions; only questions both
    configurations have a verdict for count (a labelled draft, or no draft for a question whose
    labels agree: :func:`evaluation.draft_labels.reviewed_correct`)."""
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # questions without a labelled draft: all NaN
        before, after = np.nanmean(matrix[base], axis=1), np.nanmean(matrix[other], axis=1)
    out: dict[str, list[str]] = {"regressions": [], "recoveries": []}
    for q, (b, a) in enumerate(zip(before, after, strict=True)):
        if np.isnan(b) or np.isnan(a) or (b > 0.5) == (a > 0.5):
            continue
        out["regressions" if b > 0.5 else "recoveries"].append(qids[q])
    return out


def _two_level(study: AblationStudy) -> bool:
    return all(len(f["levels"]) == 2 for f in study.factors)


def _per_set(matrix: np.ndarray, *, questions: list[int], set_of: dict[int, str]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for name in sorted(set(set_of.values())):
        rows = matrix[[i for i, q in enumerate(questions) if set_of[q] == name]]
        out[name] = None if np.isnan(rows).all() else round(float(np.nanmean(rows)), 4)
    return out


def _mean(metrics: Mapping[str, Any], name: str) -> float | None:
    value = metrics.get(name)
    return None if value is None else float(value["mean"])


def recommendations(*, study: AblationStudy, results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per factor, the level to run with and the numbers behind it.

    One factor at a time, among the configurations that change this factor and make no
    must-refuse or red-flag question fail that the base handled (``safety_regressions``: one such
    question vetoes it):

    1. **By the reviewers' labels first** (the composite pass rate trusts the judge, which
       approves wrong answers): the one that handles the most more of the reviewer-labelled
       questions as labelled than the base (``vs_base["reviewed"]``: recoveries − regressions),
       when McNemar's test on those two counts gives p < :data:`SIGNIFICANCE`, whatever its
       pass rate;
    2. else the one with the highest composite pass rate that beats the base with McNemar
       p < :data:`SIGNIFICANCE` and handles no more labelled questions worse than better;

    none → the base level ("no significant gain").
    Factorial designs: the level the factor's main effect favours when the effect's 95 % CI
    excludes 0 (in a fractional design the effect includes its aliases, stated); else the base
    level. Each row: ``{"factor", "base", "recommended", "change": bool, "evidence"}``.
    """
    configurations = results["configurations"]
    base = next((c for c in configurations if c["is_base"]), configurations[0])
    out = []
    effects = {e["term"]: e for e in results.get("effects") or []}
    for factor in study.factors:
        name, levels = factor["name"], factor["levels"]
        row: dict[str, Any] = {"factor": name, "base": levels[0], "recommended": levels[0], "change": False}
        if effects:
            effect = effects.get(name)
            if effect is None:
                row["evidence"] = "no effect estimate"
            else:
                text = f"main effect on pass rate {effect['effect']:+.3f} [95 % CI {effect['ci_low']:+.3f}, {effect['ci_high']:+.3f}]"
                if effect["aliases"]:
                    text += f" (aliased with {', '.join(effect['aliases'])})"
                if effect["ci_low"] > 0 or effect["ci_high"] < 0:
                    row["recommended"] = levels[1] if effect["effect"] > 0 else levels[0]
                    row["evidence"] = text
                else:
                    row["evidence"] = text + ": not significant, keep the base level"
            row["change"] = row["recommended"] != levels[0]
            out.append(row)
            continue
        base_pass = _mean(base, "pass_rate") or 0.0
        best, notes = None, []
        by_labels: tuple[Any, int, float] | None = None
        for candidate in configurations:
            if candidate["is_base"] or set(k for k, v in candidate["levels"].items() if v != base["levels"].get(k)) != {
                name
            }:
                continue
            vs = candidate.get("vs_base") or {}
            p = (vs.get("mcnemar") or {}).get("p_value", 1.0)
            delta = (_mean(candidate, "pass_rate") or 0.0) - base_pass
            level = candidate["levels"][name]
            unsafe = vs.get("safety_regressions") or []
            reviewed = vs.get("reviewed") or {}
            against = reviewed.get("regressions") or []
            gained = reviewed.get("recoveries") or []
            reviewed_loss = len(against) > len(gained)
            labels_p = float(mcnemar(b=len(against), c=len(gained))["p_value"])
            safety_loss = bool(unsafe) or reviewed_loss
            notes.append(
                f"{name}={level}: pass {base_pass:.3f} → {base_pass + delta:.3f} ({delta:+.3f}), "
                f"{vs.get('recoveries', 0)} recovered / {vs.get('regressions', 0)} regressed, McNemar p={p:.3g}"
                + (
                    f", {len(unsafe)} must-refuse or red-flag question(s) no longer handled ({', '.join(unsafe[:5])})"
                    if unsafe
                    else ""
                )
                + (
                    f", against the reviewers' labels {len(against)} draft(s) handled worse and "
                    f"{len(gained)} better ({', '.join(against[:5])})"
                    if reviewed_loss
                    else ""
                )
                + (
                    f", by the reviewers' labels {len(gained)} question(s) handled better and {len(against)} "
                    f"worse, McNemar p={labels_p:.3g}"
                    if gained and not reviewed_loss
                    else ""
                )
            )
            net = len(gained) - len(against)
            if (
                not unsafe
                and net > 0
                and labels_p < SIGNIFICANCE
                and (by_labels is None or (net, -labels_p) > (by_labels[1], -by_labels[2]))
            ):
                by_labels = (level, net, labels_p)
            if delta > 0 and p < SIGNIFICANCE and not safety_loss and (best is None or delta > best[1]):
                best = (level, delta)
        chosen = by_labels or best
        if chosen is not None:
            row["recommended"], row["change"] = chosen[0], True
        row["evidence"] = "; ".join(notes) + (
            f"; chosen by the reviewers' labels ({by_labels[1]} more handled as labelled)"
            if by_labels is not None
            else ("" if best else "; no significant gain: keep the base level")
        )
        out.append(row)
    return out


@transaction.atomic
def ablation_recommendations_apply(*, study: AblationStudy, applied_by: str) -> list[str]:
    """Set the live flag rows to the study's recommended levels in one transaction, each change
    audited with the study and its evidence as the reason. Returns the flags that changed.
    Raises :class:`StudyInvalid` for a study without results and ``FlagInvalid`` when a level no
    longer fits the live configuration (nothing is applied then)."""
    study = AblationStudy.objects.select_for_update().get(pk=study.pk)
    if study.status != RunStatus.SUCCEEDED or not study.recommendations:
        raise StudyInvalid("the study has no recommendations yet")
    changed = []
    live = pipeline_config_default().as_dict()
    for row in study.recommendations:
        if live.get(row["factor"]) == row["recommended"]:
            continue
        pipeline_flag_set(
            name=row["factor"],
            value=row["recommended"],
            changed_by=applied_by,
            reason=f"ablation study {study.pk} ({study.name}): {row['evidence']}"[:2000],
        )
        changed.append(row["factor"])
    study.applied_at, study.applied_by = timezone.now(), applied_by[:150]
    study.save(update_fields=["applied_at", "applied_by"])
    return changed
