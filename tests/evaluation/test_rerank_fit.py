"""The offline reranker's fit (``evaluation.rerank_fit``) on dev questions of the real test corpus:
a model file the reranker loads, and a feature left out on request."""

from __future__ import annotations

import pytest

from core.providers.rerank import FEATURE_NAMES, FeatureReranker, RerankCandidate
from evaluation.rerank_fit import rerank_fit, rerank_questions_collect
from ingestion.models import Document
from tests.evaluation.factories import medquad_items
from zolsearch.search.config import pipeline_config_default

pytestmark = pytest.mark.django_db


def test_the_fit_writes_weights_the_reranker_loads_and_leaves_out_an_excluded_feature() -> None:
    """GIVEN 24 MedQuAD questions of the test corpus with their own pages as the relevant ones
    WHEN the reranker is fitted THEN every feature has a weight, the cross-validated MRR@10 is
    stated, and the weights load into the reranker; fitted with ``priority`` excluded, the file
    has no weight for it and says so, and scores do not move with it; an unknown name is refused."""
    ids = list(
        Document.objects.filter(external_id__startswith="medquad:")
        .order_by("external_id")
        .values_list("external_id", flat=True)[:24]
    )
    questions = rerank_questions_collect(items=medquad_items(external_ids=ids), config=pipeline_config_default())
    assert len(questions) >= 10 and any(q.y.any() for q in questions)
    model = rerank_fit(questions=questions, sets=["test"], embedding_model="use-multilingual-v3")
    assert set(model["weights"]) == set(FEATURE_NAMES) and model["evidence"]["excluded"] == []
    assert 0.0 < model["evidence"]["cv_mrr10_reranked"] <= 1.0

    without = rerank_fit(questions=questions, sets=["test"], exclude=["priority"])
    assert set(without["weights"]) == set(FEATURE_NAMES) - {"priority"}
    assert without["evidence"]["excluded"] == ["priority"] and "priority" not in without["evidence"]["features"]
    reranker = FeatureReranker(key="features-lr", weights=without["weights"], intercept=without["intercept"])
    features = {name: 0.5 for name in FEATURE_NAMES}
    low, high = (
        RerankCandidate(text="", features={**features, "priority": 0.0}),
        RerankCandidate(text="", features={**features, "priority": 1.0}),
    )
    first, second = reranker.rerank("q", [low, high])
    assert first == second  # the left-out feature weighs nothing
    with pytest.raises(ValueError, match="unknown reranker features"):
        rerank_fit(questions=questions, sets=["test"], exclude=["nope"])
