"""Fit the offline feature reranker and calibrate CRAG's thresholds on dev golden sets only.

For each dev question the live pipeline retrieves (safety stages, gate and reranker off, the
fused pool of ``rerank_depth`` plus keyword rescue), every candidate gets its rerank features
(:func:`zolsearch.search.rerank.rerank_candidates`) and a label (:func:`_labels`): the
question's own MedQuAD QA pair when it is among the candidates, else any page whose url grade
against the expected urls is ≥ 0.5 (:func:`evaluation.metrics.retrieval.url_grade`).

- Folds: 5-fold ``GroupKFold`` grouped by the original question (a paraphrase shares its
  question's fold), so no QA pair is in train and test.
- Weights: scikit-learn ``LogisticRegression`` (L2, C = 1) on all candidates, every dev set
  weighing the same and every question within a set the same (:func:`_weights`); its quality is
  the 5-fold cross-validation grouped by question (no question in train and test): ROC AUC of
  candidate scores and MRR@10 of the reranked against the fused order.
- CRAG thresholds from the out-of-fold scores: ``crag_lower`` is the highest confidence that
  refuses at most ``max_false_refusal`` of the questions whose reranked top 3 holds a relevant
  page; ``crag_upper`` maximises Youden's J (TPR − FPR) for "the top-ranked page is relevant".
  Confidence: :func:`zolsearch.search.stages.rerank.crag_confidence`.
- ``rerank_languages``: the languages with at least :data:`MIN_LANGUAGE_QUESTIONS` dev
  questions; questions in other languages keep the fused order and skip CRAG, unless the
  reranker does at least as well as the fused order on those languages' dev questions pooled
  (at least :data:`MIN_POOLED_QUESTIONS`; out-of-fold MRR@10): then it serves every language
  (``[]``). The features read no language of their own (dense cosine, BM25, stems in the
  page's language, priority, site), so the few questions of each rare language are judged
  together (:func:`rerank_languages_choose`).

The result (weights, thresholds and their evidence) is the JSON the pipeline loads
(``RERANK_MODEL_PATH``).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold

from core.providers.rerank import FEATURE_NAMES, RerankCandidate, Reranker
from evaluation.calibration import OperatingPoint, operating_point_with_max_false_refusal, youden_optimum
from evaluation.golden.io import GoldenItem
from evaluation.metrics.retrieval import RELEVANT_GRADE, url_grade
from ingestion.models import Document
from zolsearch.search.config import MEASUREMENT_OVERRIDES, PipelineConfig
from zolsearch.search.pipeline import SearchRequest, pipeline_run
from zolsearch.search.rerank import rerank_candidates
from zolsearch.search.stages.rerank import crag_confidence
from zolsearch.search.stages.retrieval import authority_share

RETRIEVAL_ONLY = {**MEASUREMENT_OVERRIDES, "crag_enabled": False, "reranker": ""}
MODEL_KEY = "features-lr"
# A language the reranker serves (reranks and CRAG-checks) needs this many dev questions; the
# others keep the fused order (cross-lingual questions share few terms with their pages).
MIN_LANGUAGE_QUESTIONS = 20
# The rarer languages' dev questions, pooled, that can decide that the reranker serves every
# language (provisional: hospital-nl's dev half has 4 questions in French, Turkish and Arabic).
MIN_POOLED_QUESTIONS = 4


def rerank_languages_choose(per_language: dict[str, dict[str, float | int]]) -> tuple[list[str], dict[str, Any]]:
    """``(rerank_languages, evidence)`` from out-of-fold figures per language (``{language:
    {"questions": n, "mrr10_fused": x, "mrr10_reranked": y}}``, :meth:`Reranked.mrr_by`).

    The languages with ≥ :data:`MIN_LANGUAGE_QUESTIONS` questions are served. The others are
    pooled (MRR@10 weighted by questions); with ≥ :data:`MIN_POOLED_QUESTIONS` of them and a
    reranked MRR@10 at least the fused one, every language is served: ``[]``. ``evidence``: the
    pooled languages, questions and both MRR@10s (rounded to 4 places)."""
    frequent = sorted(lang for lang, row in per_language.items() if int(row["questions"]) >= MIN_LANGUAGE_QUESTIONS)
    rare = {lang: row for lang, row in per_language.items() if lang not in frequent}
    count = sum(int(row["questions"]) for row in rare.values())

    def pooled(key: str) -> float:
        return sum(float(row[key]) * int(row["questions"]) for row in rare.values()) / count if count else 0.0

    fused, reranked = pooled("mrr10_fused"), pooled("mrr10_reranked")
    every = count >= MIN_POOLED_QUESTIONS and reranked >= fused
    evidence = {
        "rule": (
            f"languages with >= {MIN_LANGUAGE_QUESTIONS} dev questions; every language when the others, pooled "
            f"(>= {MIN_POOLED_QUESTIONS} questions), rerank at least as well as the fused order (out-of-fold MRR@10)"
        ),
        "pooled_languages": sorted(rare),
        "pooled_questions": count,
        "pooled_mrr10_fused": round(fused, 4),
        "pooled_mrr10_reranked": round(reranked, 4),
    }
    return ([] if every else frequent), evidence


@dataclass
class Question:
    """One dev question's candidates: ``x`` ``(n, len(FEATURE_NAMES))`` float64 in fused order,
    ``y`` ``(n,)`` 0/1 relevance."""

    qid: str
    language: str
    x: np.ndarray
    y: np.ndarray
    set_name: str = ""
    query: str = ""  # what the rerank stage gives a reranker: the search query, else the question
    texts: tuple[str, ...] = ()  # the candidates' texts as a text reranker reads them, in fused order


def rerank_questions_collect(
    *, items: Sequence[GoldenItem], config: PipelineConfig, set_name: str = ""
) -> list[Question]:
    """Run retrieval for each item with expected urls and return its labelled candidates
    (``set_name``: the golden set they come from, for balanced weights)."""
    retrieval = config.with_overrides(**RETRIEVAL_ONLY, top_k=config.rerank_depth)
    questions = []
    for item in items:
        if not item.expected_urls:
            continue
        state = pipeline_run(request=SearchRequest(question=item.question, language=item.language), config=retrieval)
        if not state.fused:
            continue
        candidates = rerank_candidates(
            question=state.search_query or item.question,
            language=state.language,
            fused=state.fused,
            chunks=state.chunks,
            dense=state.dense,
            lexical=state.lexical,
            query_vector=state.search_vector if state.search_vector is not None else state.query_vector,
            model_key=state.provider.key,
            priorities=retrieval.source_priorities,
            authority=authority_share(state),
            qtype=state.qtype,
            focus=state.focus.text if state.focus is not None else "",
            asked=state.question,
            qtype_needs_topic=retrieval.qtype_match_needs_topic,
            foci_title_variants=retrieval.foci_title_variants,
            foci_equivalents=retrieval.foci_equivalents,
        )
        ids = [i for i, _ in state.fused if i in state.chunks]
        x = np.array([[c.features[n] for n in FEATURE_NAMES] for c in candidates], dtype=np.float64)
        y = _labels(item, [state.chunks[i].document for i in ids])
        questions.append(
            Question(
                qid=item.qid,
                language=item.language,
                x=x,
                y=y,
                set_name=set_name,
                query=state.search_query or item.question,
                texts=tuple(c.text for c in candidates),
            )
        )
    return questions


def _original(qid: str) -> str:
    """The qid of the question a paraphrased or noisy variant was made from."""
    return re.split(r":(?:para|noisy)-", qid)[0]


def _labels(item: GoldenItem, documents: Sequence[Document]) -> np.ndarray:
    """1 for a relevant candidate: the question's own document when the golden qid names one
    (MedQuAD: one QA pair per document, all pairs of a page share its url, and the answer must
    come from the pair that answers the question type asked; paraphrased variants keep the
    original qid before ``:para-``/``:noisy-``), else any page whose url grade is ≥ 0.5."""
    own = _original(item.qid)
    if any(d.external_id == own for d in documents):
        return np.array([d.external_id == own for d in documents], dtype=np.int64)
    return np.array([url_grade(d.url, item.expected_urls) >= RELEVANT_GRADE for d in documents], dtype=np.int64)


def _mrr(order_labels: Sequence[np.ndarray], k: int = 10) -> float:
    values = []
    for labels in order_labels:
        hits = np.flatnonzero(labels[:k])
        values.append(1.0 / (hits[0] + 1) if len(hits) else 0.0)
    return float(np.mean(values)) if values else 0.0


def _weights(questions: Sequence[Question]) -> np.ndarray:
    """One weight per candidate: every dev set weighs the same in total, and within a set every
    question weighs the same (a set of 50 hospital questions counts as much as 200 MedQuAD
    ones; a question with 40 candidates as much as one with 20)."""
    per_set = {name: sum(q.set_name == name for q in questions) for name in {q.set_name for q in questions}}
    return np.concatenate([np.full(len(q.y), 1.0 / (per_set[q.set_name] * len(q.y))) for q in questions]) * (
        len(questions) * 20 / len(per_set)
    )


def _fit(questions: Sequence[Question], columns: Sequence[int]) -> LogisticRegression:
    x = np.vstack([q.x[:, columns] for q in questions])
    y = np.concatenate([q.y for q in questions])
    return LogisticRegression(C=1.0, max_iter=1000).fit(x, y, sample_weight=_weights(questions))


@dataclass(frozen=True)
class Reranked:
    """The dev questions in the order a scorer gives their candidates: ``fused`` / ``reranked``
    (each question's 0/1 labels in fused / reranked order), ``confidences`` ``(questions,)``
    float64 (:func:`crag_confidence` of the reranked top 10), ``top1`` / ``top3`` ``(questions,)``
    bool (a relevant page first / in the top 3)."""

    questions: tuple[Question, ...]
    fused: tuple[np.ndarray, ...]
    reranked: tuple[np.ndarray, ...]
    confidences: np.ndarray
    top1: np.ndarray
    top3: np.ndarray

    @classmethod
    def of(cls, questions: Sequence[Question], scores: Sequence[np.ndarray]) -> Reranked:
        """``scores``: one ``(candidates,)`` array per question, higher first (ties keep the
        fused order)."""
        orders = [np.argsort(-s, kind="stable") for s in scores]
        reranked = tuple(q.y[o] for q, o in zip(questions, orders, strict=True))
        return cls(
            questions=tuple(questions),
            fused=tuple(q.y for q in questions),
            reranked=reranked,
            confidences=np.array([crag_confidence(list(s[o][:10])) for s, o in zip(scores, orders, strict=True)]),
            top1=np.array([bool(r[:1].any()) for r in reranked]),
            top3=np.array([bool(r[:3].any()) for r in reranked]),
        )

    def mrr_by(self, group: Callable[[Question], str]) -> dict[str, dict[str, float | int]]:
        """Questions and MRR@10 fused → reranked per value of ``group``."""
        rows: dict[str, dict[str, list[np.ndarray]]] = defaultdict(lambda: defaultdict(list))
        for question, fused, reranked in zip(self.questions, self.fused, self.reranked, strict=True):
            rows[group(question)]["fused"].append(fused)
            rows[group(question)]["reranked"].append(reranked)
        return {
            key: {
                "questions": len(row["fused"]),
                "mrr10_fused": round(_mrr(row["fused"]), 4),
                "mrr10_reranked": round(_mrr(row["reranked"]), 4),
            }
            for key, row in sorted(rows.items())
        }


def rerank_fit(
    *,
    questions: Sequence[Question],
    sets: Sequence[str],
    max_false_refusal: float = 0.02,
    embedding_model: str = "",
    exclude: Sequence[str] = (),
) -> dict[str, Any]:
    """Weights, cross-validated evidence and CRAG thresholds (see the module docstring).
    ``exclude``: feature names left out of the model (a feature ablation of the reranker; the
    file then has no weight for them, which the reranker reads as weight 0).

    Raises ``ValueError`` with fewer than 10 questions, no relevant candidate at all, or an
    unknown or every feature excluded."""
    unknown = sorted(set(exclude) - set(FEATURE_NAMES))
    if unknown:
        raise ValueError(f"unknown reranker features {unknown}; features: {', '.join(FEATURE_NAMES)}")
    names = [n for n in FEATURE_NAMES if n not in set(exclude)]
    if not names:
        raise ValueError("every feature is excluded")
    columns = [FEATURE_NAMES.index(n) for n in names]
    if len(questions) < 10:
        raise ValueError(f"need at least 10 dev questions with candidates, got {len(questions)}")
    if not any(q.y.any() for q in questions):
        raise ValueError("no candidate of any dev question is relevant: is the corpus ingested?")
    # Group by the original question: a paraphrase (":para-nl") of a question is the same QA
    # pair, so it must fall in the same fold as the question itself.
    originals = {own: n for n, own in enumerate(dict.fromkeys(_original(q.qid) for q in questions))}
    groups = np.concatenate([[originals[_original(q.qid)]] * len(q.y) for q in questions])
    positions = np.concatenate([[n] * len(q.y) for n, q in enumerate(questions)])
    x_all = np.vstack([q.x[:, columns] for q in questions])
    y_all = np.concatenate([q.y for q in questions])
    weights = _weights(questions)
    oof = np.zeros(len(y_all))
    for train, test in GroupKFold(n_splits=5).split(x_all, y_all, groups):
        model = LogisticRegression(C=1.0, max_iter=1000).fit(x_all[train], y_all[train], sample_weight=weights[train])
        oof[test] = model.predict_proba(x_all[test])[:, 1]
    outcomes = Reranked.of(questions, [oof[positions == n] for n in range(len(questions))])
    crag = crag_thresholds(
        confidences=outcomes.confidences,
        top1=outcomes.top1,
        top3=outcomes.top3,
        max_false_refusal=max_false_refusal,
        scores="out-of-fold scores (5-fold GroupKFold by question)",
    )
    final = _fit(questions, columns)
    per_language = outcomes.mrr_by(lambda q: q.language)
    served, served_evidence = rerank_languages_choose(per_language)

    fitted_at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return {
        "key": MODEL_KEY,
        "version": fitted_at,
        "embedding_model": embedding_model,
        "weights": {name: round(float(w), 6) for name, w in zip(names, final.coef_[0], strict=True)},
        "intercept": round(float(final.intercept_[0]), 6),
        "crag": {
            **crag,
            "crag_bypass_languages": [],
            "rerank_languages": served,
            "rerank_languages_evidence": served_evidence,
        },
        "evidence": {
            "fitted_at": fitted_at,
            "sets": list(sets),
            "questions": len(questions),
            "candidates": int(len(y_all)),
            "relevant_candidates": int(y_all.sum()),
            "cv_roc_auc": round(float(roc_auc_score(y_all, oof)), 4) if 0 < y_all.sum() < len(y_all) else None,
            "cv_mrr10_fused": round(_mrr(outcomes.fused), 4),
            "cv_mrr10_reranked": round(_mrr(outcomes.reranked), 4),
            "per_language": per_language,
            "features": names,
            "excluded": sorted(set(exclude)),
            "model": "sklearn LogisticRegression(C=1.0, lbfgs), raw features, sets and questions weighted equally",
            "per_set": outcomes.mrr_by(lambda q: q.set_name),
        },
    }


def crag_thresholds(
    *, confidences: np.ndarray, top1: np.ndarray, top3: np.ndarray, max_false_refusal: float, scores: str
) -> dict[str, Any]:
    """CRAG's thresholds for one scorer, with their evidence (the module docstring).

    ``confidences``: ``(questions,)`` float64, :func:`crag_confidence` of each dev question's
    reranked top 10; ``top1`` / ``top3``: ``(questions,)`` bool, a relevant page first / in the
    top 3. ``crag_lower``: the highest confidence that refuses at most ``max_false_refusal`` of
    the questions with a relevant top 3; ``crag_upper``: Youden's J (Youden 1950) for a relevant
    top-1 page, never below ``crag_lower``. ``scores`` says where the scores came from (evidence).
    Returns ``{"crag_upper", "crag_lower", "evidence"}``."""
    conf, good1, good3 = confidences, top1.astype(bool), top3.astype(bool)
    lower = _lower_threshold(conf, good3, max_false_refusal)
    youden = (
        youden_optimum(positive=conf[good1], negative=conf[~good1])
        if good1.any() and (~good1).any()
        else OperatingPoint(threshold=1.0, tpr=0.0, fpr=0.0)
    )
    upper = float(min(max(youden.threshold, lower), 1.0))
    return {
        # Stored rounded down: a threshold rounded up would pass over the scores it was chosen
        # at (a question with confidence 0.01798 is not ≥ 0.0180).
        "crag_upper": _floor4(upper),
        "crag_lower": _floor4(lower),
        "evidence": {
            "method": f"{scores}; lower: highest confidence refusing ≤ {max_false_refusal:.0%} of questions with a "
            "relevant page in the reranked top 3; upper: Youden's J for a relevant top-1 page",
            "questions": len(conf),
            "top1_relevant": int(good1.sum()),
            "top3_relevant": int(good3.sum()),
            "false_refusal_at_lower": round(float(((conf < lower) & good3).sum() / max(good3.sum(), 1)), 4),
            "refused_without_relevant_top3": int(((conf < lower) & ~good3).sum()),
            "questions_without_relevant_top3": int((~good3).sum()),
            "youden_j_upper": round(youden.j, 4),
            "tpr_upper": round(youden.tpr, 4),
            "fpr_upper": round(youden.fpr, 4),
            "confidence_percentiles": {
                str(p): round(float(np.percentile(conf, p)), 4) for p in (5, 10, 25, 50, 75, 90)
            },
        },
    }


def crag_calibrate(
    *,
    questions: Sequence[Question],
    reranker: Reranker,
    sets: Sequence[str],
    identity: dict[str, Any],
    max_false_refusal: float = 0.02,
) -> dict[str, Any]:
    """CRAG's thresholds for a reranker that is not fitted here (a cross-encoder, a rerank API):
    each dev question's candidates (:func:`rerank_questions_collect`, their texts) scored by
    ``reranker`` as the rerank stage would, confidence of the reranked top 10, thresholds by
    :func:`crag_thresholds`. The reranker serves every language (``rerank_languages`` empty).

    Returns the scorer's entry of the CRAG file (``{"key", "version", "identity", "crag_upper",
    "crag_lower", "crag_bypass_languages", "rerank_languages", "evidence"}``; ``identity``: what
    the thresholds are valid for, :func:`core.providers.rerank.reranker_identity`; evidence adds
    MRR@10 fused → reranked per language and set). Raises ``ValueError`` with fewer than 10
    questions, no relevant candidate, or a score outside [0, 1] (CRAG reads probabilities), and
    what the reranker raises (``RerankUnavailable``)."""
    if len(questions) < 10:
        raise ValueError(f"need at least 10 dev questions with candidates, got {len(questions)}")
    if not any(q.y.any() for q in questions):
        raise ValueError("no candidate of any dev question is relevant: is the corpus ingested?")
    scores = [reranker.rerank(q.query, [RerankCandidate(text=t) for t in q.texts]) for q in questions]
    outside = sum(int(((s < 0.0) | (s > 1.0)).sum()) for s in scores)
    if outside:
        # CRAG's confidence (seed 004) reads scores as probabilities; a raw logit has no scale for it
        raise ValueError(
            f"{reranker.key} gave {outside} scores outside [0, 1] (an Identity or Tanh head, or a rerank API's "
            "raw scores): CRAG needs probabilities"
        )
    outcomes = Reranked.of(questions, scores)
    crag = crag_thresholds(
        confidences=outcomes.confidences,
        top1=outcomes.top1,
        top3=outcomes.top3,
        max_false_refusal=max_false_refusal,
        scores=f"scores of {reranker.key} on the dev questions' fused candidates (not fitted on them)",
    )
    crag["evidence"] |= {
        "sets": list(sets),
        "mrr10_fused": round(_mrr(outcomes.fused), 4),
        "mrr10_reranked": round(_mrr(outcomes.reranked), 4),
        "per_language": outcomes.mrr_by(lambda q: q.language),
        "per_set": outcomes.mrr_by(lambda q: q.set_name),
    }
    return {
        "key": reranker.key,
        "version": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "identity": identity,
        "crag_upper": crag["crag_upper"],
        "crag_lower": crag["crag_lower"],
        "crag_bypass_languages": [],
        "rerank_languages": [],
        "evidence": crag["evidence"],
    }


def _floor4(value: float) -> float:
    """``value`` rounded down to 4 decimals (thresholds: every score at or above it stays so)."""
    return math.floor(value * 10_000) / 10_000


def _lower_threshold(conf: np.ndarray, good: np.ndarray, max_false_refusal: float) -> float:
    """Highest threshold t among the good questions' confidences with P(conf < t | good) ≤ the
    cap: :func:`evaluation.calibration.operating_point_with_max_false_refusal` (the lowest
    false-pass rate within the cap) swept over those confidences."""
    if not good.any():
        return 0.0
    if good.all():
        return float(np.sort(conf)[min(int(np.floor(max_false_refusal * good.sum())), len(conf) - 1)])
    point = operating_point_with_max_false_refusal(
        positive=conf[good],
        negative=conf[~good],
        max_false_refusal=max_false_refusal,
        thresholds=np.unique(conf[good]).tolist(),
    )
    return point.threshold if point is not None else float(conf[good].min())
