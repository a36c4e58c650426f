"""Rerankers behind one interface: score (query, candidate) pairs, higher is more relevant.

- :class:`FeatureReranker` (offline default, ``features-lr``): a logistic model over features
  the pipeline already has for each candidate (dense cosine, BM25, RRF rank, term coverage of
  title and text, language match, source priority). Its weights are fitted on dev golden sets
  only (``manage.py rerank_fit``) and stored with their evidence in a JSON file
  (``RERANK_MODEL_PATH``, default ``data/rerank/features-lr.json``). Scores are probabilities of
  relevance in (0, 1).
- :class:`HttpReranker` (``http:<model>`` at ``RERANK_BASE_URL``): a rerank API in the
  Cohere/Jina request shape (``POST {base}/rerank`` with ``{model, query, documents, top_n}`` →
  ``{"results": [{"index", "relevance_score"}]}``) or the Hugging Face TEI shape (``{query,
  texts}`` → ``[{"index", "score"}]``), chosen by ``RERANK_API`` (``cohere`` | ``tei``). Scores
  are the service's (Cohere and Jina: in [0, 1]; TEI: raw logits unless it was started with
  sigmoid). Failures raise :class:`RerankUnavailable`; the pipeline then keeps the fused order.

A cross-encoder from a local folder (sentence-transformers ``CrossEncoder``) needs PyTorch,
which is not installable on this project's machines without a multi-GB download: serve such a
model behind the HTTP shape instead (TEI runs any cross-encoder).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import requests
from django.conf import settings
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential_jitter

FEATURE_NAMES = (
    "dense",  # cosine(query, chunk) in [-1, 1]; 0 when the chunk has no vector of the model
    "bm25_rel",  # BM25 / max BM25 of the query's candidates, in [0, 1]; 0 when not a lexical hit
    "rrf_rank_inv",  # 1 / fused rank (1-based), in (0, 1]
    "title_coverage",  # share of the query's content stems found in the title and context, [0, 1]
    "text_coverage",  # share of the query's content stems found in the chunk text, [0, 1]
    "title_precision",  # share of the document title's stems found in the query, [0, 1]
    "language_match",  # 1 when the chunk is in the question's language, else 0
    "qtype_match",  # 1 when the page answers the question type asked (MedQuAD qtype metadata), else 0
    "focus_match",  # 1 when the page is about the question's linked focus (its focus or a synonym), else 0
    "priority",  # the source's priority / 10, in [0, 1]
    "priority_for_intent",  # the same when the intent wants the hospital's own pages (practical, routing), else 0
    "lexical_hit",  # 1 when BM25 found the chunk, else 0
    "dense_hit",  # 1 when the dense retriever found the chunk, else 0
    "dense_rel",  # dense / max dense of the query's candidates, in [-1, 1] (0 when no dense score is positive)
    "site_named",  # 1 when the question names the hospital of the page's web address ("uz gent" → www.uzgent.be), else 0
)


class RerankUnavailable(Exception):
    """The rerank model file or endpoint could not be used."""


@dataclass(frozen=True)
class RerankCandidate:
    """One candidate passage: its ``text`` (what a text reranker reads) and ``features`` (name →
    value, :data:`FEATURE_NAMES`; what the feature reranker reads)."""

    text: str
    features: dict[str, float] = field(default_factory=dict)


class FeatureReranker:
    """Logistic regression over :data:`FEATURE_NAMES`: ``p = σ(b + Σ w_i · x_i)``.

    ``weights``: feature name → weight; ``intercept``: b. Built from the fitted JSON file by
    :func:`reranker_get`. ``key`` names the model (``features-lr``); the file records its
    version (fit time) and the embedding model it was fitted with.
    """

    def __init__(self, *, key: str, weights: dict[str, float], intercept: float) -> None:
        unknown = set(weights) - set(FEATURE_NAMES)
        if unknown:
            raise RerankUnavailable(f"unknown reranker features {sorted(unknown)}")
        self.key = key
        self._names = tuple(weights)
        self._w = np.array([weights[n] for n in self._names], dtype=np.float64)
        self._b = float(intercept)

    def rerank(self, query: str, candidates: Sequence[RerankCandidate]) -> np.ndarray:
        """Scores ``(len(candidates),)`` float64 in (0, 1); missing features count as 0."""
        if not candidates:
            return np.zeros(0)
        x = np.array([[c.features.get(n, 0.0) for n in self._names] for c in candidates], dtype=np.float64)
        z = x @ self._w + self._b
        return 1.0 / (1.0 + np.exp(-z))


class HttpReranker:
    """A rerank API (Cohere/Jina or TEI request shape, see the module docstring)."""

    def __init__(self, *, model: str, base_url: str, api_key: str, api: str, timeout_s: float, retries: int) -> None:
        if api not in ("cohere", "tei"):
            raise RerankUnavailable(f"RERANK_API must be cohere or tei, not {api!r}")
        self.key = f"http:{model}"
        self.model, self.api, self.timeout_s = model, api, timeout_s
        self._url = base_url.rstrip("/") + "/rerank"
        self._api_key = api_key
        self._local = threading.local()  # requests does not promise a Session is thread-safe
        self._post = retry(
            retry=retry_if_exception_type(requests.ConnectionError),
            stop=stop_after_attempt(1 + retries),
            wait=wait_exponential_jitter(multiplier=0.05, max=0.5),
            reraise=True,
        )(self._post_once)

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
            if self._api_key:
                session.headers["Authorization"] = f"Bearer {self._api_key}"
        return session

    def _post_once(self, body: dict[str, Any]) -> Any:
        response = self._session().post(self._url, json=body, timeout=self.timeout_s)
        response.raise_for_status()
        return response.json()

    def rerank(self, query: str, candidates: Sequence[RerankCandidate]) -> np.ndarray:
        """Scores ``(len(candidates),)`` float64 in the service's scale. Raises
        :class:`RerankUnavailable` on a network error, an HTTP error, a timeout or a reply of
        another shape (every candidate must get a score)."""
        if not candidates:
            return np.zeros(0)
        texts = [c.text for c in candidates]
        body: dict[str, Any] = (
            {"model": self.model, "query": query, "documents": texts, "top_n": len(texts)}
            if self.api == "cohere"
            else {"query": query, "texts": texts, "raw_scores": False}
        )
        try:
            reply = self._post(body)
            rows = reply["results"] if self.api == "cohere" else reply
            score_key = "relevance_score" if self.api == "cohere" else "score"
            scores = np.full(len(texts), np.nan)
            for row in rows:
                scores[int(row["index"])] = float(row[score_key])
        except (requests.RequestException, ValueError, KeyError, TypeError, IndexError) as exc:
            raise RerankUnavailable(f"rerank endpoint {self._url}: {exc}") from exc
        if np.isnan(scores).any() or not all(math.isfinite(s) for s in scores):
            raise RerankUnavailable(f"rerank endpoint {self._url} left candidates unscored")
        return scores


def feature_model_load(path: Path) -> FeatureReranker:
    """The fitted feature reranker stored at ``path`` (``{"key", "weights", "intercept", …}``).
    Raises :class:`RerankUnavailable` when the file is missing or malformed."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return FeatureReranker(key=str(data["key"]), weights=dict(data["weights"]), intercept=float(data["intercept"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RerankUnavailable(f"reranker model {path}: {exc}") from exc


@lru_cache(maxsize=8)
def _reranker(
    mtime_ns: int, name: str, path: str, base_url: str, api: str, api_key: str, timeout_s: float, retries: int
) -> FeatureReranker | HttpReranker:
    if name.startswith("http:"):
        return HttpReranker(
            model=name.removeprefix("http:"),
            base_url=base_url,
            api_key=api_key,
            api=api,
            timeout_s=timeout_s,
            retries=retries,
        )
    return feature_model_load(Path(path))


def reranker_get(name: str) -> FeatureReranker | HttpReranker:
    """The process-wide reranker ``name``: ``features-lr`` (the fitted file at
    ``RERANK_MODEL_PATH``) or ``http:<model>`` (``RERANK_BASE_URL``). Raises
    :class:`RerankUnavailable`."""
    if not name.startswith("http:") and name != "features-lr":
        raise RerankUnavailable(f"unknown reranker {name!r}: features-lr or http:<model>")
    if name.startswith("http:") and not settings.RERANK_BASE_URL:
        raise RerankUnavailable("RERANK_BASE_URL is not set")
    path = Path(settings.RERANK_MODEL_PATH)
    mtime_ns = path.stat().st_mtime_ns if path.exists() else 0  # a refitted file is read again
    return _reranker(
        mtime_ns,
        name,
        str(settings.RERANK_MODEL_PATH),
        settings.RERANK_BASE_URL,
        settings.RERANK_API,
        settings.RERANK_API_KEY,
        settings.RERANK_TIMEOUT_S,
        settings.RERANK_MAX_RETRIES,
    )
