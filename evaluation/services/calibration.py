"""Calibration rows: create them from cohorts, activate or retire them with an audit entry
(issue 12 item 3, seed 000).

A threshold t passes scores ≥ t. The operating point is the lowest-FPR point of the 0.20–0.91
sweep (:data:`evaluation.calibration.SWEEP`) whose false refusals of the positive cohort are at
most the evaluator's ``max_false_refusal`` (:func:`evaluation.calibration.
operating_point_with_max_false_refusal`): the pure Youden optimum is stored beside it as evidence
but not chosen, because seed 000 rejected it when it refused too many good answers. The targets
of issue 10/12 (≤ 5 % of judge-approved answers refused, ≥ 90 % of the unrelated cohort refused)
are checked and stated on each row.

Activation freezes the threshold into every request's configuration through the per-model
pipeline flag ``gate_thresholds_by_language`` (:func:`zolsearch.search.services.pipeline_flag_set`,
whose history names the calibration), and records a :class:`CalibrationChange`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from django.db import transaction
from django.utils import timezone

from evaluation.calibration import (
    operating_point_with_max_false_refusal,
    roc_auc,
    threshold_sweep,
    youden_optimum,
)
from evaluation.calibration_cohorts import (
    LanguageCohorts,
    answers_of_runs,
    expected_urls_of_runs,
    gate_cohorts_from_answers,
)
from evaluation.models import Calibration, CalibrationChange, EvaluationRun
from zolsearch.search.config import gate_context_weights_by_language_for, gate_thresholds_by_language_for
from zolsearch.search.gate import CONTEXT_WEIGHTS, POOLED_LANGUAGE, gate_setting_for
from zolsearch.search.services import pipeline_flag_set

MIN_COHORT = 20  # fewer positives or negatives than this: no threshold (too noisy to choose one)
TARGET_FALSE_REFUSAL = 0.05  # issue 10 target: refuse ≤ 5 % of judge-approved answers
TARGET_NEGATIVES_REFUSED = 0.90  # issue 10 target: refuse ≥ 90 % of off-topic drafts
FLAG = "gate_thresholds_by_language"
WEIGHTS_FLAG = "gate_context_weights_by_language"


class CalibrationInvalid(ValueError):
    """A calibration that cannot be activated or created (the message says why)."""


def _percentiles(values: Sequence[float], points: Sequence[int]) -> dict[str, float]:
    return {str(p): round(float(np.percentile(values, p)), 4) for p in points} if values else {}


def _evidence(cohort: LanguageCohorts, sources: dict[str, Any]) -> dict[str, Any]:
    return {
        **sources,
        "cohorts": {
            "related": len(cohort.related),
            "reviewed_good": len(cohort.reviewed_good),
            "unrelated": len(cohort.unrelated),
            "reviewed_bad": len(cohort.reviewed_bad),
            "judged_off_topic": len(cohort.judged_off_topic),
            "drafts": cohort.drafts,
            "rotated_on_topic": cohort.rotated_on_topic,
        },
        "percentiles": {
            "related": _percentiles(cohort.related, (5, 10, 25, 50)),
            "reviewed_good": _percentiles(cohort.reviewed_good, (5, 10, 25, 50)),
            "unrelated": _percentiles(cohort.unrelated, (50, 75, 90, 95)),
            "reviewed_bad": _percentiles(cohort.reviewed_bad, (50, 75, 90, 95)),
            "judged_off_topic": _percentiles(cohort.judged_off_topic, (50, 75, 90, 95)),
        },
        "rescore_error": None if cohort.rescore_error is None else round(cohort.rescore_error, 4),
        "method": "positives: drafts the judge rated faithful (≥ 0.5) and relevant (≥ 0.5), and reviewed good; "
        "negatives: each draft with its context put to the next question of the same language (rotated; left out "
        "when it cites a page relevant to that question), and reviewed bad; gate score w·cos(answer, context) + (1 − w)·cos(question, answer), w chosen from "
        f"{', '.join(str(w) for w in CONTEXT_WEIGHTS)} with the threshold (most negatives refused within the cap)",
    }


def context_weights_sweep(cohort: LanguageCohorts, *, max_false_refusal: float) -> list[dict[str, float]]:
    """Per context weight w of :data:`zolsearch.search.gate.CONTEXT_WEIGHTS` with an operating
    point: ``{"w", "threshold", "false_refusal", "negatives_refused", "roc_auc"}`` of ``cohort``
    rescored with w (:meth:`LanguageCohorts.reweighted`); empty when the cohort cannot be
    rescored or has fewer than :data:`MIN_COHORT` positives or negatives. The chosen w is the
    one refusing the most negatives within ``max_false_refusal`` (ties: higher ROC AUC, then the
    w nearer the cohort's own). Measured on the dev runs of 2026-11-24 (``docs/EVALUATION.md``):
    English 56.7 % of off-topic drafts refused at w = 0.7 vs 82.3 % at 0.1, Dutch 21.4 % vs
    77.5 %, each with ≤ 5 % of good answers refused."""
    if not cohort.reweighable or len(cohort.positives) < MIN_COHORT or len(cohort.negatives) < MIN_COHORT:
        return []
    rows = []
    for w in CONTEXT_WEIGHTS:
        scored = cohort.reweighted(w)
        pos, neg = scored.positives, scored.negatives
        point = operating_point_with_max_false_refusal(positive=pos, negative=neg, max_false_refusal=max_false_refusal)
        if point is None:
            continue
        rows.append(
            {
                "w": w,
                "threshold": point.threshold,
                "false_refusal": round(1 - point.tpr, 4),
                "negatives_refused": round(1 - point.fpr, 4),
                "roc_auc": round(roc_auc(positive=pos, negative=neg), 4),
            }
        )
    return rows


def calibration_from_cohort(
    *,
    model_key: str,
    language: str,
    cohort: LanguageCohorts,
    max_false_refusal: float,
    sources: dict[str, Any],
    created_by: str,
) -> Calibration:
    """Create one PROPOSED gate calibration of ``model_key`` for ``language`` from ``cohort``.

    ``max_false_refusal`` in [0, 1]; ``sources``: what the cohorts came from (runs, sets, labels),
    stored in the evidence. The gate's context weight is chosen with the threshold
    (:func:`context_weights_sweep`; a cohort that cannot be rescored keeps its own weight). With
    fewer than :data:`MIN_COHORT` positives or negatives the row has no threshold and says so.
    Raises :class:`CalibrationInvalid` for a cap outside [0, 1].
    """
    if not 0.0 <= max_false_refusal <= 1.0:
        raise CalibrationInvalid(f"the maximum false-refusal rate must be in [0, 1], not {max_false_refusal}")
    weights = context_weights_sweep(cohort, max_false_refusal=max_false_refusal)
    if weights:
        best = max(weights, key=lambda r: (r["negatives_refused"], r["roc_auc"], -abs(r["w"] - cohort.context_weight)))
        cohort = cohort.reweighted(float(best["w"]))
    pos, neg = cohort.positives, cohort.negatives
    row = Calibration(
        scorer=Calibration.Scorer.GATE,
        model_key=model_key,
        language=language,
        max_false_refusal=max_false_refusal,
        positives=len(pos),
        negatives=len(neg),
        evidence={**_evidence(cohort, sources), "context_weights": weights},
        context_weight=cohort.context_weight,
        created_by=created_by[:150],
    )
    if len(pos) < MIN_COHORT or len(neg) < MIN_COHORT:
        row.rule = f"no threshold: {len(pos)} positives and {len(neg)} negatives (each needs ≥ {MIN_COHORT})"
        row.save()
        return row
    row.curve = [
        {"t": p.threshold, "tpr": round(p.tpr, 4), "fpr": round(p.fpr, 4), "j": round(p.j, 4)}
        for p in threshold_sweep(positive=pos, negative=neg)
    ]
    youden = youden_optimum(positive=pos, negative=neg)
    row.roc_auc = round(roc_auc(positive=pos, negative=neg), 4)
    chosen = operating_point_with_max_false_refusal(positive=pos, negative=neg, max_false_refusal=max_false_refusal)
    row.evidence["youden"] = {
        "threshold": round(youden.threshold, 4),
        "false_refusal": round(1 - youden.tpr, 4),
        "negatives_refused": round(1 - youden.fpr, 4),
        "j": round(youden.j, 4),
    }
    if chosen is None:
        row.rule = f"no threshold of the sweep refuses ≤ {max_false_refusal:.0%} of the positives"
        row.save()
        return row
    row.threshold = chosen.threshold
    row.false_refusal = round(1 - chosen.tpr, 4)
    row.negatives_refused = round(1 - chosen.fpr, 4)
    row.rule = f"lowest false-pass rate with ≤ {max_false_refusal:.0%} good answers refused" + (
        ", context weight with the most negatives refused" if weights else ""
    )
    meets = row.false_refusal <= TARGET_FALSE_REFUSAL and row.negatives_refused >= TARGET_NEGATIVES_REFUSED
    row.evidence["targets"] = {
        "false_refusal_max": TARGET_FALSE_REFUSAL,
        "negatives_refused_min": TARGET_NEGATIVES_REFUSED,
        "met": meets,
        "why_not": ""
        if meets
        else (
            f"at {chosen.threshold:.2f} {row.false_refusal:.1%} of good answers are refused and "
            f"{row.negatives_refused:.1%} of off-topic drafts (target ≤ {TARGET_FALSE_REFUSAL:.0%} and "
            f"≥ {TARGET_NEGATIVES_REFUSED:.0%}); ROC AUC {row.roc_auc:.3f} at context weight {row.context_weight}"
        ),
    }
    row.save()
    return row


def calibrations_create(
    *,
    model_key: str,
    cohorts: dict[str, LanguageCohorts],
    max_false_refusal: float,
    sources: dict[str, Any],
    created_by: str,
) -> list[Calibration]:
    """One PROPOSED calibration per language of ``cohorts`` (:func:`calibration_from_cohort`),
    in one transaction."""
    with transaction.atomic():
        return [
            calibration_from_cohort(
                model_key=model_key,
                language=language,
                cohort=cohort,
                max_false_refusal=max_false_refusal,
                sources=sources,
                created_by=created_by,
            )
            for language, cohort in sorted(cohorts.items())
        ]


def _flag_sync(*, model_key: str, changed_by: str, reason: str) -> None:
    """Write the active thresholds of ``model_key`` and their context weights over the calibration
    file's into the per-model flags (``None``: no active row, back to the file and the model's
    default)."""
    rows = Calibration.objects.filter(
        scorer=Calibration.Scorer.GATE, model_key=model_key, status=Calibration.Status.ACTIVE
    ).values_list("language", "threshold", "context_weight")
    active = {language: threshold for language, threshold, _ in rows}
    weights = {language: weight for language, _, weight in rows}
    value = {**gate_thresholds_by_language_for(model_key), **active} if active else None
    pipeline_flag_set(name=FLAG, value=value, changed_by=changed_by, reason=reason, model_key=model_key)
    value = {**gate_context_weights_by_language_for(model_key), **weights} if weights else None
    pipeline_flag_set(name=WEIGHTS_FLAG, value=value, changed_by=changed_by, reason=reason, model_key=model_key)


@transaction.atomic
def calibration_activate(*, calibration_id: int, changed_by: str, reason: str) -> Calibration:
    """Make calibration ``calibration_id`` the active one of its scorer, model and language (the
    previous active row is retired), freeze it into the live configuration and audit both.

    Raises :class:`CalibrationInvalid` without a reason, for a row without a threshold, or for a
    retired row; ``Calibration.DoesNotExist`` for an unknown id.
    """
    if not reason.strip():
        raise CalibrationInvalid("say why the calibration is activated (the reason is kept in its history)")
    row = Calibration.objects.select_for_update().get(pk=calibration_id)
    if row.threshold is None:
        raise CalibrationInvalid(f"calibration {row.pk} has no threshold: {row.rule}")
    if row.status == Calibration.Status.ACTIVE:
        return row
    if row.status == Calibration.Status.RETIRED:
        raise CalibrationInvalid(f"calibration {row.pk} was retired: calibrate again instead")
    previous = (
        Calibration.objects.select_for_update()
        .filter(scorer=row.scorer, model_key=row.model_key, language=row.language, status=Calibration.Status.ACTIVE)
        .first()
    )
    old = previous.threshold if previous is not None else None
    if previous is not None:
        previous.status = Calibration.Status.RETIRED
        previous.save(update_fields=["status"])
        CalibrationChange.objects.create(
            calibration=previous,
            action=CalibrationChange.Action.RETIRED,
            old_threshold=previous.threshold,
            new_threshold=row.threshold,
            changed_by=changed_by[:150],
            reason=f"replaced by calibration {row.pk}: {reason.strip()}",
        )
    row.status, row.activated_by, row.activated_at = Calibration.Status.ACTIVE, changed_by[:150], timezone.now()
    row.save(update_fields=["status", "activated_by", "activated_at"])
    CalibrationChange.objects.create(
        calibration=row,
        action=CalibrationChange.Action.ACTIVATED,
        old_threshold=old,
        new_threshold=row.threshold,
        changed_by=changed_by[:150],
        reason=reason.strip(),
    )
    _flag_sync(
        model_key=row.model_key,
        changed_by=changed_by,
        reason=f"calibration {row.pk} ({row.language}: {row.threshold:.2f}) activated: {reason.strip()}",
    )
    return row


@transaction.atomic
def calibration_retire(*, calibration_id: int, changed_by: str, reason: str) -> Calibration:
    """Retire calibration ``calibration_id``; when it was active its language falls back to the
    calibration file's threshold, else the model's default. Audited. Raises
    :class:`CalibrationInvalid` without a reason."""
    if not reason.strip():
        raise CalibrationInvalid("say why the calibration is retired (the reason is kept in its history)")
    row = Calibration.objects.select_for_update().get(pk=calibration_id)
    if row.status == Calibration.Status.RETIRED:
        return row
    was_active = row.status == Calibration.Status.ACTIVE
    row.status = Calibration.Status.RETIRED
    row.save(update_fields=["status"])
    CalibrationChange.objects.create(
        calibration=row,
        action=CalibrationChange.Action.RETIRED,
        old_threshold=row.threshold,
        new_threshold=None,
        changed_by=changed_by[:150],
        reason=reason.strip(),
    )
    if was_active:
        _flag_sync(
            model_key=row.model_key,
            changed_by=changed_by,
            reason=f"calibration {row.pk} ({row.language}) retired: {reason.strip()}",
        )
    return row


def calibration_file_entry(*, model_key: str) -> dict[str, Any]:
    """The active gate calibrations of ``model_key`` in the shape of ``GATE_CALIBRATION_PATH``
    (``{model_key: {"thresholds": {language: t}, "evidence": {language: {…}}}}``), for
    ``manage.py calibrate --export`` so a fresh install (``make run``) starts with them. Raises
    :class:`CalibrationInvalid` when the model has no active calibration."""
    rows = list(
        Calibration.objects.filter(
            scorer=Calibration.Scorer.GATE, model_key=model_key, status=Calibration.Status.ACTIVE
        ).order_by("language")
    )
    if not rows:
        raise CalibrationInvalid(f"{model_key} has no active gate calibration to export")
    return {
        model_key: {
            "thresholds": {r.language: r.threshold for r in rows},
            "context_weights": {r.language: r.context_weight for r in rows},
            "evidence": {
                r.language: {
                    "calibration": r.pk,
                    "activated_at": r.activated_at.strftime("%Y-%m-%d %H:%M UTC") if r.activated_at else "",
                    "rule": r.rule,
                    "max_false_refusal": r.max_false_refusal,
                    "false_refusal": r.false_refusal,
                    "negatives_refused": r.negatives_refused,
                    "roc_auc": r.roc_auc,
                    "context_weight": r.context_weight,
                    "positives": r.positives,
                    "negatives": r.negatives,
                    **{
                        k: r.evidence.get(k)
                        for k in ("cohorts", "youden", "targets", "context_weights", "runs", "sets")
                    },
                }
                for r in rows
            },
        }
    }


def calibration_file_merged(*, existing: dict[str, Any], model_key: str) -> dict[str, Any]:
    """The calibration file's content ``existing`` (model key → ``{"thresholds", "context_weights",
    "evidence"}``) with ``model_key``'s active rows of this database written in
    (:func:`calibration_file_entry`): other models' entries are kept, and so are this model's
    languages without an active row here (a database made on another index than the file's
    rows), except a language whose row was retired here and none activated since (its old
    threshold must not come back from the file). Raises :class:`CalibrationInvalid` without an
    active row."""
    entry = calibration_file_entry(model_key=model_key)[model_key]
    retired = set(
        Calibration.objects.filter(
            scorer=Calibration.Scorer.GATE, model_key=model_key, status=Calibration.Status.RETIRED
        ).values_list("language", flat=True)
    ) - set(entry["thresholds"])
    kept = existing.get(model_key) or {}
    merged = {**existing}
    merged[model_key] = {
        **{name: values for name, values in kept.items() if name not in entry},
        **{
            name: {
                **{lang: v for lang, v in (kept.get(name) or {}).items() if lang not in retired},
                **values,
            }
            for name, values in entry.items()
        },
    }
    return merged


def calibrate_from_runs(
    *,
    runs: Sequence[EvaluationRun],
    model_key: str,
    labels: Sequence[tuple[int, bool]] = (),
    languages: Sequence[str] = (),
    max_false_refusal: float = TARGET_FALSE_REFUSAL,
    created_by: str,
    pooled: bool = False,
    pooled_only: bool = False,
) -> list[Calibration]:
    """Calibrate the gate of ``model_key`` per language on the stored answers of ``runs`` (their
    judgements) and the review ``labels`` (``(answer_id, positive)``); one PROPOSED row per
    language (:func:`calibrations_create`), and with ``pooled`` one more for :data:`zolsearch.search.gate.POOLED_LANGUAGE` from
    the drafts of every language as one cohort (:meth:`LanguageCohorts.pooled`; the gate uses it
    for a question language without an active row of its own; ``pooled_only``: that row alone).
    Runs of another embedding model
    are refused: their scores are on another cosine scale. Raises :class:`CalibrationInvalid`
    when nothing is left to calibrate on."""
    other = sorted({r.embedding_model for r in runs if r.embedding_model and r.embedding_model != model_key})
    if other:
        raise CalibrationInvalid(f"runs of other embedding models ({', '.join(other)}) cannot calibrate {model_key}")
    answer_ids = answers_of_runs(runs=runs)
    if not answer_ids and not labels:
        raise CalibrationInvalid("the chosen runs stored no answers and there are no review labels")
    cohorts = gate_cohorts_from_answers(
        answer_ids=answer_ids,
        model_key=model_key,
        labels=labels,
        languages=languages,
        expected_urls=expected_urls_of_runs(runs=runs),
    )
    if not cohorts:
        raise CalibrationInvalid(f"no answer scored by the gate with {model_key} in the chosen runs and labels")
    if pooled or pooled_only:
        try:
            pool = LanguageCohorts.pooled([cohorts[language] for language in sorted(cohorts)])
        except ValueError as exc:
            raise CalibrationInvalid(f"the languages cannot be pooled: {exc}") from exc
        cohorts = {POOLED_LANGUAGE: pool} if pooled_only else {**cohorts, POOLED_LANGUAGE: pool}
    sources = {
        "runs": [r.pk for r in runs],
        "sets": sorted({str(r.golden_set) for r in runs}),
        "labels": len(labels),
    }
    return calibrations_create(
        model_key=model_key,
        cohorts=cohorts,
        max_false_refusal=max_false_refusal,
        sources=sources,
        created_by=created_by,
    )


def calibration_check(
    *,
    runs: Sequence[EvaluationRun],
    model_key: str,
    thresholds: Mapping[str, float],
    default_threshold: float,
    context_weights: Mapping[str, float],
    focus_check: bool = False,
    site_check: bool = False,
    term_check: bool = False,
    term_check_across: bool = False,
    labels: Sequence[tuple[int, bool]] = (),
) -> list[dict[str, Any]]:
    """What a gate would have done to the drafts of each of ``runs`` (held-out runs, never
    used to choose it): per run and question language, the share of good drafts it refuses
    (judge-approved, or labelled good by a reviewer: ``labels``, ``(answer_id, positive)`` from
    the review queue or a draft-labels file, win over the judge, so a wrong answer the judge
    approved and a reviewer read is not counted as good; labels of other runs' answers are
    ignored) and of rotated (off-topic) drafts it refuses, against issue 10's targets (≤ 5 % and
    ≥ 90 %). The gate is ``thresholds`` (language → threshold, else the pooled row's
    (:data:`zolsearch.search.gate.POOLED_LANGUAGE`), else ``default_threshold``) with ``context_weights`` (language → w in
    [0, 1], else the pooled row's, else the seed's 0.7: :func:`gate_setting_for`, as the live
    gate reads them); each draft's stored cosines
    are rescored with that w (:meth:`LanguageCohorts.reweighted`), so runs made under another
    calibration are checked against this one. ``focus_check`` (the live ``gate_focus_check``): a
    draft the focus agreement refuses counts as refused whatever its score
    (:func:`zolsearch.search.gate.subject_disagrees`, recorded per draft in the cohorts);
    ``site_check`` (the live ``gate_site_check``): the same for the site agreement
    (:func:`zolsearch.search.gate.site_disagrees`); ``term_check`` (the live ``gate_term_check``):
    the same for the term agreement (:func:`zolsearch.search.gate.terms_disagree`), with its
    cross-lingual rule when ``term_check_across`` (the live ``gate_term_check_across``) too. Rows:
    ``run``, ``set``, ``language``, ``threshold``, ``context_weight``, ``focus_check``, ``site_check``,
    ``term_check``, ``term_check_across``, ``good``
    and ``off_topic`` (cohort sizes; ``good`` counts the reviewed good drafts too),
    ``reviewed_good`` and ``reviewed_bad`` (labelled drafts of the run and language),
    ``good_ids`` (the answer ids of the good drafts: judge-approved, then reviewed good), ``rotated_on_topic`` (rotated drafts left out: they cite a
    page relevant to the question put to them), ``good_refused`` and ``off_topic_refused`` (shares in
    [0, 1]; None for an empty cohort), ``met``. Creates no
    row; embeds each run's drafts and questions once (as calibration does)."""
    rows: list[dict[str, Any]] = []
    for run in runs:
        answer_ids = answers_of_runs(runs=[run])
        own = set(answer_ids)
        cohorts = gate_cohorts_from_answers(
            answer_ids=answer_ids,
            model_key=model_key,
            labels=[(i, positive) for i, positive in labels if i in own],
            expected_urls=expected_urls_of_runs(runs=[run]),
        )
        for language, cohort in sorted(cohorts.items()):
            threshold, weight = gate_setting_for(
                language, thresholds=thresholds, context_weights=context_weights, default_threshold=default_threshold
            )
            scored = cohort.reweighted(weight) if cohort.reweighable else cohort

            def refused(*names: str, t: float = threshold, cohort: LanguageCohorts = scored) -> float | None:
                scores: list[float] = []
                flags: list[bool] = []
                for name in names:
                    part: list[float] = getattr(cohort, name)
                    part_flags = [False] * len(part)
                    for on, mismatch in (
                        (focus_check, cohort.focus_mismatch),
                        (site_check, cohort.site_mismatch),
                        (term_check, cohort.term_mismatch_across if term_check_across else cohort.term_mismatch),
                    ):
                        found = mismatch.get(name, []) if on else []
                        if found and len(found) != len(part):
                            raise ValueError(f"{name}: {len(found)} agreement flags for {len(part)} scores")
                        part_flags = [a or b for a, b in zip(part_flags, found or part_flags, strict=True)]
                    scores += part
                    flags += part_flags
                count = sum(s < t or flag for s, flag in zip(scores, flags, strict=True))
                return round(count / len(scores), 4) if scores else None

            good, off_topic = refused("related", "reviewed_good"), refused("unrelated")
            rows.append(
                {
                    "run": run.pk,
                    "set": run.golden_set.name,
                    "language": language,
                    "threshold": threshold,
                    "context_weight": weight if cohort.reweighable else cohort.context_weight,
                    "focus_check": focus_check,
                    "site_check": site_check,
                    "term_check": term_check,
                    "term_check_across": term_check and term_check_across,
                    "good": len(scored.related) + len(scored.reviewed_good),
                    "reviewed_good": len(scored.reviewed_good),
                    "good_ids": [*scored.related_ids, *scored.reviewed_good_ids],
                    "reviewed_bad": len(scored.reviewed_bad),
                    "good_refused": good,
                    "off_topic": len(scored.unrelated),
                    "rotated_on_topic": scored.rotated_on_topic,
                    "off_topic_refused": off_topic,
                    "met": good is not None
                    and off_topic is not None
                    and good <= TARGET_FALSE_REFUSAL
                    and off_topic >= TARGET_NEGATIVES_REFUSED,
                }
            )
    return rows
