"""Rerank providers: the offline feature model's arithmetic and the HTTP rerank API in both
request shapes, against a real local server."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from core.providers.rerank import (
    CrossEncoderReranker,
    FeatureReranker,
    HttpReranker,
    RerankCandidate,
    RerankUnavailable,
    feature_model_load,
    reranker_get,
)
from tests.cross_encoder_model import cross_encoder_save, expected_logit
from tests.rerank_server import RerankServer

DOCS = [
    "Parking at campus Sint-Barbara is free for the first 30 minutes.",
    "Visiting hours on the maternity ward are from 14:00 to 20:00.",
    "Visiting hours in intensive care: two visitors at a time.",
]


def test_feature_reranker_is_a_logistic_model() -> None:
    reranker = FeatureReranker(key="t", weights={"dense": 2.0, "bm25_rel": 1.0}, intercept=-1.0)
    scores = reranker.rerank(
        "q", [RerankCandidate(text="a", features={"dense": 0.5, "bm25_rel": 1.0}), RerankCandidate(text="b")]
    )
    assert scores[0] == pytest.approx(1 / (1 + math.exp(-(2.0 * 0.5 + 1.0 - 1.0))))
    assert scores[1] == pytest.approx(1 / (1 + math.exp(1.0)))  # missing features count as 0


def test_feature_model_file_errors(tmp_path: Path) -> None:
    with pytest.raises(RerankUnavailable):
        feature_model_load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"key": "x", "weights": {"no_such_feature": 1.0}, "intercept": 0}))
    with pytest.raises(RerankUnavailable, match="no_such_feature"):
        feature_model_load(bad)


def test_committed_model_file_loads(settings) -> None:  # type: ignore[no-untyped-def]
    """The model file make run uses exists, loads, and came with CRAG thresholds and evidence."""
    reranker = feature_model_load(Path(settings.RERANK_MODEL_PATH))
    data = json.loads(Path(settings.RERANK_MODEL_PATH).read_text())
    assert reranker.key == "features-lr"
    assert 0.0 <= data["crag"]["crag_lower"] <= data["crag"]["crag_upper"] <= 1.0
    assert data["evidence"]["questions"] >= 100
    for spec in data["evidence"]["sets"]:  # dev questions only: a mixed file must be cut to #dev
        assert "heldout" not in spec and ("hospital-nl" not in spec or spec.endswith("#dev")), spec
    assert data["embedding_model"] == "use-multilingual-v3" and data["version"]


@pytest.mark.parametrize("api", ["cohere", "tei"])
def test_http_reranker_orders_by_the_services_scores(api: str) -> None:
    with RerankServer() as server:
        reranker = HttpReranker(model="tiny", base_url=server.base_url, api_key="k", api=api, timeout_s=2, retries=0)
        scores = reranker.rerank("visiting hours maternity", [RerankCandidate(text=t) for t in DOCS])
    assert list(np.argsort(-scores)) == [1, 2, 0]
    assert scores[1] == pytest.approx(1.0)
    body = server.requests[0]
    if api == "cohere":
        assert body == {"model": "tiny", "query": "visiting hours maternity", "documents": DOCS, "top_n": 3}
    else:
        assert body["texts"] == DOCS and body["query"] == "visiting hours maternity"


def test_http_reranker_failures_raise() -> None:
    with RerankServer() as server:
        reranker = HttpReranker(
            model="tiny", base_url=server.base_url, api_key="", api="cohere", timeout_s=2, retries=0
        )
        server.fault = "http500"
        with pytest.raises(RerankUnavailable, match="500"):
            reranker.rerank("q", [RerankCandidate(text="x")])
        server.fault = "wrong_shape"
        with pytest.raises(RerankUnavailable):
            reranker.rerank("q", [RerankCandidate(text="x")])
    with pytest.raises(RerankUnavailable):  # server stopped: connection refused, after one retry
        HttpReranker(model="t", base_url=server.base_url, api_key="", api="tei", timeout_s=1, retries=1).rerank(
            "q", [RerankCandidate(text="x")]
        )


def test_reranker_get_validates_names(settings) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RerankUnavailable, match="unknown reranker"):
        reranker_get("bge-reranker")
    settings.RERANK_CROSS_ENCODER_PATH = ""
    with pytest.raises(RerankUnavailable, match="RERANK_CROSS_ENCODER_PATH"):
        reranker_get("cross-encoder")
    settings.RERANK_BASE_URL = ""
    with pytest.raises(RerankUnavailable, match="RERANK_BASE_URL"):
        reranker_get("http:tiny")


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny cross-encoder of ``tests/cross_encoder_model.py``, built and saved once."""
    return cross_encoder_save(tmp_path_factory.mktemp("models") / "tiny-ce")


def test_a_cross_encoder_from_a_folder_scores_query_passage_pairs(tiny_cross_encoder: Path) -> None:
    """GIVEN a cross-encoder saved in a folder (tokenizer.json, config.json, onnx/model.onnx)
    WHEN it scores a query against four passages, in batches of 2 (so short passages are padded)
    THEN each score is the sigmoid of the model's logit for (query, passage) as a pair, computed
    by hand, the best passage first, and the batch size does not change a score (the padding is
    masked: the padding token has an embedding of its own in this model)."""
    reranker = CrossEncoderReranker(folder=tiny_cross_encoder, max_tokens=512, batch_size=2, threads=1)
    query = "visiting hours maternity"
    texts = [*DOCS, "Maternity: visiting hours."]
    scores = reranker.rerank(query, [RerankCandidate(text=t) for t in texts])
    assert reranker.key == "cross-encoder:tiny-ce" and reranker.activation == "sigmoid"
    assert scores.shape == (4,) and scores.dtype == np.float64
    assert scores == pytest.approx([_sigmoid(expected_logit(query, t)) for t in texts], abs=1e-6)
    assert list(np.argsort(-scores)) == [3, 1, 2, 0]
    whole = CrossEncoderReranker(folder=tiny_cross_encoder, max_tokens=512, batch_size=16, threads=1)
    assert whole.rerank(query, [RerankCandidate(text=t) for t in texts]) == pytest.approx(scores, abs=1e-6)
    # The passage is the second segment (token type 1): a passage equal to the query scores
    # SCALE + BIAS; with the type ids lost (all 0) the passage side would be empty (BIAS).
    assert whole.logits(query, [query])[0, 0] == pytest.approx(expected_logit(query, query), abs=1e-5)
    assert reranker.rerank(query, []).shape == (0,)


def test_a_cross_encoder_truncates_long_pairs_to_its_positions(tmp_path: Path) -> None:
    """GIVEN a model with 16 positions and a passage of 60 words WHEN scored with max_tokens 512
    THEN the pair is cut to the model's 16 tokens (longest part first), not an error, and the
    score is that of the truncated passage."""
    folder = cross_encoder_save(tmp_path / "short", positions=16)
    reranker = CrossEncoderReranker(folder=folder, max_tokens=512, batch_size=4, threads=1)
    assert reranker.max_tokens == 16
    passage = " ".join(["parking"] * 30 + ["maternity"] * 30)
    (score,) = reranker.rerank("maternity ward", [RerankCandidate(text=passage)])
    # 16 tokens: [CLS] maternity ward [SEP] + 11 passage tokens + [SEP]; all of them 'parking'.
    assert score == pytest.approx(_sigmoid(expected_logit("maternity ward", "parking " * 11)), abs=1e-6)


def test_a_two_label_cross_encoder_scores_the_probability_of_label_1(tmp_path: Path) -> None:
    """GIVEN a two-label model (logits −z, z) WHEN scored THEN the score is softmax(label 1) =
    sigmoid(2z); an Identity activation gives the raw logit."""
    two = CrossEncoderReranker(
        folder=cross_encoder_save(tmp_path / "two", labels=2), max_tokens=64, batch_size=8, threads=1
    )
    query = "heart failure symptoms"
    texts = ["symptoms of heart failure", "parking is free"]
    assert two.rerank(query, [RerankCandidate(text=t) for t in texts]) == pytest.approx(
        [_sigmoid(2 * expected_logit(query, t)) for t in texts], abs=1e-6
    )
    raw = CrossEncoderReranker(
        folder=cross_encoder_save(tmp_path / "raw", activation="Identity"), max_tokens=64, batch_size=8, threads=1
    )
    assert raw.rerank(query, [RerankCandidate(text=t) for t in texts]) == pytest.approx(
        [expected_logit(query, t) for t in texts], abs=1e-5
    )


def test_an_older_export_names_its_activation_under_the_old_key(tmp_path: Path) -> None:
    """GIVEN config.json with sentence-transformers' older key (as cross-encoder/ms-marco-MiniLM-L6-v2
    has: ``sbert_ce_default_activation_function`` = Identity) WHEN scored THEN raw logits, as
    sentence-transformers returns them; an activation the code does not know is refused."""
    folder = cross_encoder_save(
        tmp_path / "old", activation="Identity", activation_key="sbert_ce_default_activation_function"
    )
    old = CrossEncoderReranker(folder=folder, max_tokens=64, batch_size=8, threads=1)
    assert old.activation == "identity"
    assert old.rerank("heart failure", [RerankCandidate(text="heart failure symptoms")]) == pytest.approx(
        [expected_logit("heart failure", "heart failure symptoms")], abs=1e-5
    )
    unknown = cross_encoder_save(tmp_path / "relu", activation="ReLU")
    with pytest.raises(RerankUnavailable, match="ReLU"):
        CrossEncoderReranker(folder=unknown, max_tokens=64, batch_size=8, threads=1)


def test_an_xlm_r_style_cross_encoder_without_token_types(tmp_path: Path) -> None:
    """GIVEN a multilingual-style export (XLM-R: Unigram tokenizer, ``<s> q </s></s> p </s>``,
    ``<pad>`` = 1, no ``token_type_ids`` input, 2 more positions than usable tokens) WHEN it
    scores passages of different lengths in one padded batch THEN each score is the hand
    computation, and the usable length is 512 of 514 positions."""
    folder = cross_encoder_save(tmp_path / "xlmr", style="xlmr", positions=512)
    reranker = CrossEncoderReranker(folder=folder, max_tokens=4096, batch_size=8, threads=1)
    assert reranker.max_tokens == 512
    query = "visiting hours maternity"
    texts = ["visiting hours on the maternity ward", "parking is free", "visiting hours in intensive care two visitors"]
    assert reranker.rerank(query, [RerankCandidate(text=t) for t in texts]) == pytest.approx(
        [_sigmoid(expected_logit(query, t)) for t in texts], abs=1e-6
    )


def test_tokenizer_config_sets_the_usable_length(tmp_path: Path) -> None:
    """GIVEN tokenizer_config.json with model_max_length 16 (what sentence-transformers truncates
    to) and 64 positions WHEN loaded THEN pairs are cut to 16 tokens."""
    folder = cross_encoder_save(tmp_path / "cfg", positions=64)
    (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 16}))
    assert CrossEncoderReranker(folder=folder, max_tokens=512, batch_size=8, threads=1).max_tokens == 16
    (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 1e30}))  # "no limit"
    assert CrossEncoderReranker(folder=folder, max_tokens=512, batch_size=8, threads=1).max_tokens == 64


def test_a_cross_encoder_folder_that_cannot_be_used_raises(tmp_path: Path, tiny_cross_encoder: Path) -> None:
    with pytest.raises(RerankUnavailable, match="does not exist"):
        CrossEncoderReranker(folder=tmp_path / "none", max_tokens=64, batch_size=8, threads=1)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RerankUnavailable, match="no ONNX graph"):
        CrossEncoderReranker(folder=empty, max_tokens=64, batch_size=8, threads=1)
    broken = cross_encoder_save(tmp_path / "broken")
    (broken / "onnx" / "model.onnx").write_bytes(b"not a graph")
    with pytest.raises(RerankUnavailable, match="broken"):
        CrossEncoderReranker(folder=broken, max_tokens=64, batch_size=8, threads=1)
    many = cross_encoder_save(tmp_path / "many")
    config = json.loads((many / "config.json").read_text())
    config["id2label"] = {"0": "a", "1": "b", "2": "c"}
    (many / "config.json").write_text(json.dumps(config))
    with pytest.raises(RerankUnavailable, match="3 labels"):
        CrossEncoderReranker(folder=many, max_tokens=64, batch_size=8, threads=1)
    with pytest.raises(RerankUnavailable, match="no ONNX graph"):
        CrossEncoderReranker(
            folder=tiny_cross_encoder, onnx_file="onnx/other.onnx", max_tokens=64, batch_size=8, threads=1
        )


def test_reranker_get_loads_the_operators_cross_encoder_once(settings, tiny_cross_encoder: Path) -> None:  # type: ignore[no-untyped-def]
    """GIVEN RERANK_CROSS_ENCODER_PATH names the folder WHEN the reranker is asked for twice THEN
    the same loaded model serves both; a replaced graph file is loaded again."""
    settings.RERANK_CROSS_ENCODER_PATH = str(tiny_cross_encoder)
    first = reranker_get("cross-encoder")
    assert isinstance(first, CrossEncoderReranker) and reranker_get("cross-encoder") is first
    graph = tiny_cross_encoder / "onnx" / "model.onnx"
    stat = graph.stat()
    os.utime(graph, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert reranker_get("cross-encoder") is not first
