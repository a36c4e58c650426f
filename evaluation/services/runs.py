"""Evaluation runs: create (freezing the set version and the configuration), execute question
by question (results written as they come, progress on the row), summarise.

Each question is answered by the same pipeline as the API (``search_answer`` with the run's
frozen ``PipelineConfig``), stored as an ``Answer`` of channel ``evaluation``, judged inline
(with the judge cache), and scored with the metrics of :mod:`evaluation.metrics`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core.providers.embeddings import EmbeddingModelMismatch, EmbeddingUnavailable
from core.runs import code_version, run_abandon, run_claim
from evaluation.draft_labels import draft_label_index_default, reviewed_correct
from evaluation.judges import Judge, JudgeUnavailable, judge_get
from evaluation.metrics.answers import (
    answer_cites_expected,
    answer_fallback,
    answer_refused,
    entity_recall,
    red_flag_correct,
)
from evaluation.metrics.criteria import pass_composite, pass_er_only
from evaluation.metrics.retrieval import mrr, ndcg_at_k, ndcg_trec_at_k, precision_at_k, ranked_urls, recall_at_k
from evaluation.metrics.summary import metric_mean, run_summary
from evaluation.models import AblationConfiguration, EvaluationResult, EvaluationRun, GoldenQuestion, GoldenSet
from evaluation.selectors import entity_synonyms
from evaluation.services.golden import golden_set_freeze
from evaluation.services.judging import answer_judge
from zolsearch.search.config import ConfigInvalid, PipelineConfig, pipeline_config_default
from zolsearch.search.models import Answer
from zolsearch.search.pipeline import InvalidQuestion, SearchError, SearchRequest
from zolsearch.search.services import search_answer

logger = logging.getLogger(__name__)
ProgressCallback = Callable[[int, int], None]


class RunConfigInvalid(ValueError):
    """A stored or overridden configuration does not fit this code's ``PipelineConfig``."""


def pipeline_config_parse(*, values: dict[str, Any]) -> PipelineConfig:
    """A ``PipelineConfig`` from stored values. Raises :class:`RunConfigInvalid` naming unknown
    or missing fields and wrong types."""
    try:
        return PipelineConfig.from_values(values)
    except ConfigInvalid as exc:
        raise RunConfigInvalid(str(exc)) from exc


def config_overrides_parse(*, pairs: list[str], base: PipelineConfig) -> PipelineConfig:
    """Apply ``field=value`` overrides (values coerced by the field's type through pydantic:
    bool from true/false/1/0, int, float, str). Raises :class:`RunConfigInvalid` for an unknown
    field or a value of the wrong type."""
    try:
        return base.with_override_pairs(pairs)
    except ConfigInvalid as exc:
        raise RunConfigInvalid(str(exc)) from exc


@transaction.atomic
def evaluation_run_create(
    *,
    golden_set: GoldenSet,
    config: PipelineConfig | None = None,
    label: str = "",
    created_by: str = "",
    judge: Judge | None = None,
    study_configuration: AblationConfiguration | None = None,
    repetition: int = 0,
) -> EvaluationRun:
    """A PENDING run of ``golden_set`` with ``config`` (default: the live configuration).

    ``study_configuration`` / ``repetition``: the ablation study design point and 0-based
    repetition the run belongs to (none for a plain run).

    Freezes the set version (edits now make a new version) and stores the full configuration,
    its hash, the embedding model, the judge key, the code version and the set's content hash.
    Raises ``ValueError`` for a set without questions.
    """
    count = golden_set.questions.count()
    if count == 0:
        raise ValueError(f"{golden_set} has no questions")
    golden_set_freeze(golden_set=golden_set)
    # A run measures the pipeline itself: it never reads or writes the semantic cache.
    config = (config or pipeline_config_default()).with_overrides(semantic_cache_enabled=False)
    run = EvaluationRun(
        golden_set=golden_set,
        label=label[:200],
        config=config.as_dict(),
        config_hash=config.hash,
        embedding_model=config.embedding_model,
        judge_key=(judge or judge_get()).key,
        code_version=code_version(),
        golden_set_hash=golden_set.content_hash,
        total=count,
        created_by=created_by[:150],
        study_configuration=study_configuration,
        repetition=repetition,
    )
    run.full_clean()
    run.save()
    return run


def evaluation_run_enqueue(*, run: EvaluationRun) -> None:
    """Queue ``run`` for the Celery worker once the surrounding transaction commits."""
    from evaluation.tasks import evaluation_run_task

    transaction.on_commit(lambda: evaluation_run_task.delay(run.pk))


def _claim(run_id: int) -> bool:
    return run_claim(model=EvaluationRun, run_id=run_id)


def answer_ranked_urls(*, answer: Answer) -> list[str]:
    """What the pipeline found for ``answer``, best first: the urls of the taxonomy facts it
    pinned (the graph is a retriever whose results come first, design step 3), then the
    retrieved documents in fused rank order (:func:`ranked_urls`, each url once)."""
    graph = [c["url"] for c in answer.citations if c.get("source") == "taxonomy" and c.get("url")]
    pinned = [{"url": url, "rank": rank - len(graph)} for rank, url in enumerate(graph)]  # ranks < 1: first
    return ranked_urls([*pinned, *answer.chunk_scores])


def _result_fields(
    *,
    question: GoldenQuestion,
    answer: Answer | None,
    error: str,
    synonyms: dict[str, list[str]],
    judge: Judge,
) -> dict[str, Any]:
    """Every stored field of one question's result (metrics, judge scores, verdicts)."""
    fields: dict[str, Any] = {"answer": answer, "error": error}
    text = answer.answer if answer else ""
    refused = answer_refused(outcome=answer.outcome) if answer else False
    fallback = answer_fallback(outcome=answer.outcome) if answer else False
    urls = answer_ranked_urls(answer=answer) if answer else []
    expected_urls = list(question.expected_urls)
    merged = {name: [*question.synonyms.get(name, []), *synonyms.get(name, [])] for name in question.expected_entities}
    recall, matched = entity_recall(answer=text, expected=list(question.expected_entities), synonyms=merged)
    judge_data: dict[str, Any] = {}
    faithfulness = relevancy = None
    if answer is not None:
        # A judge outage (after the judge's own retries) raises: the run fails with the reason
        # instead of counting the outage as unfaithful answers.
        judgement = answer_judge(answer_id=answer.pk, judge=judge)
        if judgement is not None:
            faithfulness, relevancy = judgement.faithfulness, judgement.relevancy
            judge_data = {
                "judge": judgement.judge_key,
                "status": judgement.status,
                "faithfulness": faithfulness,
                "relevancy": relevancy,
                "cached": judgement.cached,
                "truncated": judgement.truncated,
                "evidence": judgement.evidence,
                "reasons": judgement.reasons,
            }
    # The refusal rule of both criteria decides for refused answers; the judge's scores of a
    # rejected draft are stored for review but do not make a fallback pass.
    if refused or fallback:
        faithfulness_for_pass = relevancy_for_pass = None
    else:
        faithfulness_for_pass, relevancy_for_pass = faithfulness, relevancy
    passed_er, _ = pass_er_only(
        error=error,
        answer=text,
        must_refuse=question.must_refuse,
        refused=refused,
        entity_recall=recall,
        fallback=fallback,
    )
    passed, reason = pass_composite(
        error=error,
        answer=text,
        must_refuse=question.must_refuse,
        refused=refused,
        faithfulness=faithfulness_for_pass,
        relevancy=relevancy_for_pass,
        entity_recall=recall,
        fallback=fallback,
    )
    fields.update(
        answer_text=text,
        outcome=answer.outcome if answer else "error",
        refused=refused,
        retrieved_urls=urls[:20],
        gate=answer.gate if answer else {},
        judge=judge_data,
        timings_ms=answer.timings_ms if answer else {},
        latency_ms=(answer.timings_ms or {}).get("total") if answer else None,
        entity_recall=recall,
        matched_entities=matched,
        ndcg_at_5=ndcg_at_k(urls, expected_urls, k=5),
        ndcg_trec_at_5=ndcg_trec_at_k(urls, expected_urls, k=5),
        mrr=mrr(urls, expected_urls),
        precision_at_5=precision_at_k(urls, expected_urls, k=5),
        recall_at_5=recall_at_k(urls, expected_urls, k=5),
        faithfulness=faithfulness,
        relevancy=relevancy,
        refusal_correct=(refused == question.must_refuse) and not error,
        passed_er=passed_er,
        passed=passed,
        pass_reason=reason[:200],
    )
    return fields


def evaluation_run_summarise(*, run: EvaluationRun) -> EvaluationRun:
    """Compute and store the run's summary (:func:`run_summary`) and headline numbers;
    ``reviewed_correct`` against the labels of ``settings.DRAFT_LABELS_PATH``."""
    index = draft_label_index_default()
    name = run.golden_set.name
    rows = [
        {
            "category": r.question.category,
            "language": r.question.language,
            "entity_recall": r.entity_recall,
            "ndcg_at_5": r.ndcg_at_5,
            "ndcg_trec_at_5": r.ndcg_trec_at_5,
            "mrr": r.mrr,
            "precision_at_5": r.precision_at_5,
            "recall_at_5": r.recall_at_5,
            "faithfulness": r.faithfulness,
            "relevancy": r.relevancy,
            "passed": r.passed,
            "passed_er": r.passed_er,
            "refusal_correct": r.refusal_correct,
            "refused": r.refused,
            "fallback": answer_fallback(outcome=r.outcome) if r.outcome != "error" else None,
            "red_flag_correct": red_flag_correct(tags=r.question.tags, answer=r.answer),
            "cited_expected": answer_cites_expected(
                outcome=r.outcome,
                cited_urls=[str(c.get("url") or "") for c in (r.answer.citations if r.answer else [])],
                expected_urls=list(r.question.expected_urls),
            ),
            "reviewed_correct": reviewed_correct(answer=r.answer, golden_set=name, qid=r.question.qid, index=index),
            "latency_ms": r.latency_ms,
            "error": r.error,
        }
        for r in EvaluationResult.objects.filter(run=run).select_related("question", "answer")
    ]
    summary = run_summary(rows, samples=settings.EVALUATION_BOOTSTRAP_SAMPLES, seed=settings.EVALUATION_BOOTSTRAP_SEED)
    run.metrics = summary
    run.pass_rate = metric_mean(summary, "passed")
    run.pass_rate_er = metric_mean(summary, "passed_er")
    run.ndcg_at_5 = metric_mean(summary, "ndcg_at_5")
    run.entity_recall = metric_mean(summary, "entity_recall")
    run.save(update_fields=["metrics", "pass_rate", "pass_rate_er", "ndcg_at_5", "entity_recall"])
    return run


def evaluation_run_execute(
    *, run_id: int, judge: Judge | None = None, progress: ProgressCallback | None = None
) -> EvaluationRun:
    """Claim PENDING run ``run_id`` and answer every question of its set.

    Results are written one by one (an interrupted run keeps what it finished) and ``done`` is
    advanced on the row. A question the pipeline refuses as invalid gets a result with the
    error; a failure that stops every question (empty index, embedding model mismatch or
    outage, a configuration that no longer fits) marks the run FAILED with the reason. Returns
    the run; a run that is not PENDING is returned untouched. A judge that stays unavailable
    after its retries fails the run too (an outage is not a quality result).
    """
    if not _claim(run_id):
        return EvaluationRun.objects.get(pk=run_id)
    run = EvaluationRun.objects.select_related("golden_set").get(pk=run_id)
    try:
        config = pipeline_config_parse(values=run.config)
        judge = judge or judge_get()
        # What actually runs: the worker's judge and code, which may differ from the web
        # process that created the run.
        run.judge_key, run.code_version = judge.key, code_version()
        run.save(update_fields=["judge_key", "code_version"])
        questions = list(run.golden_set.questions.order_by("position", "id"))
        names = sorted({name for q in questions for name in q.expected_entities})
        synonyms = entity_synonyms(names=names)
        finished = set(EvaluationResult.objects.filter(run=run).values_list("question_id", flat=True))
        done = len(finished)
        for question in questions:
            if question.pk in finished:
                continue
            answer, error = None, ""
            try:
                _, answer = search_answer(
                    request=SearchRequest(question=question.question, language=question.language),
                    config=config,
                    channel=Answer.Channel.EVALUATION,
                )
            except InvalidQuestion as exc:
                error = str(exc)
            fields = _result_fields(question=question, answer=answer, error=error, synonyms=synonyms, judge=judge)
            EvaluationResult.objects.update_or_create(run=run, question=question, defaults=fields)
            done += 1
            EvaluationRun.objects.filter(pk=run.pk).update(done=F("done") + 1)
            if progress:
                progress(done, len(questions))
    except (SearchError, EmbeddingModelMismatch, EmbeddingUnavailable, RunConfigInvalid) as exc:
        return _fail(run, str(exc))
    except JudgeUnavailable as exc:
        return _fail(run, f"the judge is unavailable: {exc}; run it again")
    except Exception as exc:
        logger.exception("evaluation run %s failed", run_id)
        _fail(run, f"{type(exc).__name__}: {exc}")
        raise
    run.refresh_from_db()
    evaluation_run_summarise(run=run)
    run.status = EvaluationRun.Status.SUCCEEDED
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "finished_at"])
    return run


def _fail(run: EvaluationRun, reason: str) -> EvaluationRun:
    run.refresh_from_db()
    if run.done:
        evaluation_run_summarise(run=run)
    run.status = EvaluationRun.Status.FAILED
    run.error = reason
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "error", "finished_at"])
    return run


def evaluation_run_abandon(*, run_id: int, reason: str) -> bool:
    """Mark a RUNNING run FAILED with ``reason`` (its worker died). Returns whether it did."""
    return run_abandon(model=EvaluationRun, run_id=run_id, reason=reason)


@transaction.atomic
def evaluation_runs_start(
    *, golden_set_ids: list[int], created_by: str = "", config: PipelineConfig | None = None
) -> list[EvaluationRun]:
    """Create a run for each golden set and queue it for the worker after commit (the admin's
    action). Sets without questions are skipped."""
    runs = []
    for golden_set in GoldenSet.objects.filter(pk__in=golden_set_ids).order_by("name", "version"):
        if not golden_set.questions.exists():
            continue
        run = evaluation_run_create(golden_set=golden_set, config=config, created_by=created_by)
        evaluation_run_enqueue(run=run)
        runs.append(run)
    return runs


@transaction.atomic
def evaluation_runs_relaunch(*, run_ids: list[int], created_by: str = "") -> list[EvaluationRun]:
    """New PENDING runs with the same set version and configuration as ``run_ids``, queued."""
    runs = []
    for old in EvaluationRun.objects.filter(pk__in=run_ids).select_related("golden_set").order_by("pk"):
        config = pipeline_config_parse(values=old.config)
        run = evaluation_run_create(
            golden_set=old.golden_set, config=config, label=f"again: {old.label or old.pk}", created_by=created_by
        )
        evaluation_run_enqueue(run=run)
        runs.append(run)
    return runs
