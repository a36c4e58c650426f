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


def test_crag_is_calibrated_for_a_cross_encoder_and_read_by_the_live_configuration(settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a cross-encoder from a folder (the tests' tiny model) and 24 MedQuAD questions of
    the test corpus WHEN ``crag_calibrate`` writes its thresholds THEN they are the thresholds of
    the model's own scores computed by hand (confidence of each question's reranked top 10), the
    CRAG file keeps another scorer's entry, the live configuration with that reranker reads them
    and CRAG then runs on its scores; the feature reranker and held-out sets are refused."""
    import json
    import math

    import numpy as np
    from django.core.management import CommandError, call_command

    from evaluation.rerank_fit import crag_calibrate, crag_thresholds
    from tests.cross_encoder_model import cross_encoder_save, expected_logit
    from zolsearch.search.config import pipeline_config_settings
    from zolsearch.search.pipeline import SearchRequest, pipeline_run
    from zolsearch.search.stages.rerank import crag_confidence

    settings.RERANK_CROSS_ENCODER_PATH = str(cross_encoder_save(tmp_path / "tiny-ce", positions=4096))
    settings.RERANK_CROSS_ENCODER_MAX_TOKENS = 4096
    settings.RERANK_CRAG_PATH = tmp_path / "crag.json"
    settings.RERANK_CRAG_PATH.write_text(
        json.dumps({"scorers": {"http:other": {"crag_upper": 0.9, "crag_lower": 0.1}}})
    )
    ids = list(
        Document.objects.filter(external_id__startswith="medquad:")
        .order_by("external_id")
        .values_list("external_id", flat=True)[:24]
    )
    items = medquad_items(external_ids=ids)
    questions = rerank_questions_collect(items=items, config=pipeline_config_default())
    assert all(len(q.texts) == len(q.y) and q.query for q in questions)
    from core.providers.rerank import reranker_get, reranker_identity

    identity = reranker_identity("cross-encoder", embedding_model="use-multilingual-v3")
    entry = crag_calibrate(
        questions=questions, reranker=reranker_get("cross-encoder"), sets=["test"], identity=identity
    )
    by_hand, top1, top3 = [], [], []
    for q in questions:
        scores = np.array([1 / (1 + math.exp(-expected_logit(q.query, t))) for t in q.texts])
        order = np.argsort(-scores, kind="stable")
        by_hand.append(crag_confidence(list(scores[order][:10])))
        top1.append(bool(q.y[order][:1].any()))
        top3.append(bool(q.y[order][:3].any()))
    expected = crag_thresholds(
        confidences=np.array(by_hand), top1=np.array(top1), top3=np.array(top3), max_false_refusal=0.02, scores="x"
    )
    assert entry["key"] == "cross-encoder:tiny-ce" and entry["rerank_languages"] == []
    assert (entry["crag_lower"], entry["crag_upper"]) == pytest.approx(
        (expected["crag_lower"], expected["crag_upper"]), abs=2e-4
    )
    assert 0.0 <= entry["crag_lower"] <= entry["crag_upper"] <= 1.0
    assert entry["evidence"]["questions"] == len(questions) and entry["evidence"]["top3_relevant"] == sum(top3)
    assert entry["identity"] == identity
    # crag_thresholds checked by hand on the same confidences: the lower threshold refuses at
    # most 2 % of the questions with a relevant top 3; the upper one has the best TPR − FPR for
    # a relevant top 1 (scores ≥ threshold pass). (The model's float32 scores tie otherwise than
    # these float64 ones, so the model's own J is compared through the thresholds above.)
    conf, good1, good3 = np.array(by_hand), np.array(top1), np.array(top3)
    assert ((conf < expected["crag_lower"]) & good3).sum() <= 0.02 * good3.sum()
    if good1.any() and (~good1).any():
        j = [
            ((conf >= t) & good1).mean() / good1.mean() - ((conf >= t) & ~good1).mean() / (~good1).mean() for t in conf
        ]
        assert expected["evidence"]["youden_j_upper"] == pytest.approx(max(j), abs=1e-4)

    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps({**i.as_json(), "tags": ["dev"]}) + "\n" for i in items))
    call_command("crag_calibrate", reranker="cross-encoder", sets=[str(path)])
    written = json.loads(settings.RERANK_CRAG_PATH.read_text())["scorers"]
    assert set(written) == {"http:other", "cross-encoder:tiny-ce"}
    assert written["cross-encoder:tiny-ce"]["crag_upper"] == entry["crag_upper"]

    settings.RERANKER = "cross-encoder"
    live = pipeline_config_settings()
    assert (live.crag_upper, live.crag_lower) == (entry["crag_upper"], entry["crag_lower"])
    settings.RERANK_CROSS_ENCODER_MAX_TOKENS = 512  # another scorer than the one calibrated
    assert pipeline_config_settings().crag_upper is None
    settings.RERANK_CROSS_ENCODER_MAX_TOKENS = 4096
    state = pipeline_run(
        request=SearchRequest(question=items[0].question, language="en"), config=live.with_overrides(crag_enabled=True)
    )
    assert state.trace.retrieval.reranker == "cross-encoder:tiny-ce"
    assert state.trace.retrieval.crag_action in {"correct", "ambiguous", "incorrect"}

    with pytest.raises(CommandError, match="rerank_fit"):
        call_command("crag_calibrate", reranker="features-lr", sets=[str(path)])
    # The feature reranker's own command reads the same dev sets and writes its model file.
    call_command("rerank_fit", sets=[str(path)], out=str(tmp_path / "features-lr.json"))
    fitted = json.loads((tmp_path / "features-lr.json").read_text())
    assert fitted["evidence"]["questions"] == len(questions) and 0.0 <= fitted["crag"]["crag_lower"] <= 1.0
    held_out = tmp_path / "x-heldout.jsonl"
    held_out.write_text(path.read_text())
    with pytest.raises(CommandError, match="held-out"):
        call_command("crag_calibrate", reranker="cross-encoder", sets=[str(held_out)])


def test_a_calibration_entry_that_does_not_fit_turns_crag_off_instead_of_failing(settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """GIVEN entries of the CRAG file with languages that are not lists of strings, a lower
    threshold above the upper one, or thresholds out of [0, 1] WHEN the live configuration is
    built with that reranker THEN CRAG has no thresholds (no exception), as without an entry."""
    import json

    from core.providers.rerank import reranker_identity
    from zolsearch.search.config import pipeline_config_settings

    settings.RERANK_BASE_URL = "http://127.0.0.1:9"
    settings.RERANKER = "http:tiny"
    settings.RERANK_CRAG_PATH = tmp_path / "crag.json"
    identity = reranker_identity("http:tiny", embedding_model="use-multilingual-v3")
    good = {"identity": identity, "crag_upper": 0.6, "crag_lower": 0.2, "rerank_languages": ["nl"]}
    for entry, expected in (
        (good, (0.6, 0.2, ("nl",))),
        ({**good, "rerank_languages": 5}, (None, None, ())),
        ({**good, "rerank_languages": "nl"}, (None, None, ())),
        ({**good, "crag_lower": 0.7}, (None, None, ())),
        ({**good, "crag_upper": 2.0}, (None, None, ())),
        ({**good, "identity": {**identity, "api": "tei"}}, (None, None, ())),
        ("not an object", (None, None, ())),
    ):
        settings.RERANK_CRAG_PATH.write_text(json.dumps({"scorers": {"http:tiny": entry}}))
        config = pipeline_config_settings()
        assert (config.crag_upper, config.crag_lower, config.rerank_languages) == expected, entry


def test_crag_is_not_calibrated_on_scores_that_are_not_probabilities(tmp_path) -> None:
    """GIVEN a cross-encoder with an Identity head (raw logits, negative here) WHEN CRAG is
    calibrated on it THEN ValueError: CRAG's confidence reads probabilities."""
    import numpy as np

    from core.providers.rerank import CrossEncoderReranker
    from evaluation.rerank_fit import Question, crag_calibrate
    from tests.cross_encoder_model import cross_encoder_save

    raw = CrossEncoderReranker(
        folder=cross_encoder_save(tmp_path / "raw", activation="Identity"), max_tokens=64, batch_size=8, threads=1
    )
    questions = [
        Question(
            qid=f"q{n}", language="en", x=np.zeros((2, 1)), y=np.array([1, 0]), query="heart", texts=("heart", "x")
        )
        for n in range(10)
    ]
    with pytest.raises(ValueError, match="outside"):
        crag_calibrate(questions=questions, reranker=raw, sets=["t"], identity={})


def test_the_rarer_languages_pooled_decide_whether_the_reranker_serves_every_language() -> None:
    """GIVEN out-of-fold MRR@10 per language WHEN the languages are chosen THEN the frequent
    ones are served; the rarer ones pooled (weighted by questions) open every language when
    they are numerous enough and reranked at least as well as fused, else stay on the fused
    order."""
    from evaluation.rerank_fit import MIN_POOLED_QUESTIONS, rerank_languages_choose

    def row(n: int, fused: float, reranked: float) -> dict[str, float | int]:
        return {"questions": n, "mrr10_fused": fused, "mrr10_reranked": reranked}

    frequent = {"en": row(200, 0.6, 0.9), "nl": row(240, 0.5, 0.8)}
    # the model file's own evidence (2026-11-24): ar 1, fr 2, tr 1 question
    rare = {"ar": row(1, 0.5, 0.5), "fr": row(2, 0.3333, 0.6667), "tr": row(1, 0.5, 0.5)}
    served, evidence = rerank_languages_choose({**frequent, **rare})
    assert served == [] and evidence["pooled_questions"] == 4 == MIN_POOLED_QUESTIONS
    assert evidence["pooled_languages"] == ["ar", "fr", "tr"]
    assert evidence["pooled_mrr10_fused"] == pytest.approx(0.4167, abs=1e-4)
    assert evidence["pooled_mrr10_reranked"] == pytest.approx(0.5834, abs=1e-4)
    # worse on the pooled rare languages: only the frequent ones
    worse = {"fr": row(4, 0.6, 0.4)}
    assert rerank_languages_choose({**frequent, **worse})[0] == ["en", "nl"]
    # too few pooled questions to decide: only the frequent ones
    assert rerank_languages_choose({**frequent, "fr": row(3, 0.2, 0.9)})[0] == ["en", "nl"]
    assert rerank_languages_choose(frequent) == (["en", "nl"], rerank_languages_choose(frequent)[1])
