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

- :class:`CrossEncoderReranker` (``cross-encoder``): a cross-encoder from the folder the
  operator names in ``RERANK_CROSS_ENCODER_PATH``, in the layout of a Hugging Face or
  sentence-transformers ``CrossEncoder`` export: ``tokenizer.json`` (a fast tokenizer),
  ``config.json`` and an ONNX graph (``onnx/model.onnx`` or ``model.onnx``, as
  ``CrossEncoder(..., backend="onnx")`` saves and as cross-encoder repositories such as
  ``cross-encoder/ms-marco-MiniLM-L6-v2`` ship it). It runs on ONNX Runtime with the
  ``tokenizers`` library: PyTorch, which sentence-transformers needs, is not installable on this
  project's machines without a multi-GB download, and ONNX Runtime gives the same scores on the
  CPU. Nothing is ever fetched from a hub. Scores follow sentence-transformers' defaults: one
  logit → sigmoid, in (0, 1); two logits → softmax probability of label 1; the activation named
  in ``config.json`` (``sentence_transformers.activation_fn``: Sigmoid or Identity) wins.
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
    "qtype_match",  # 1 when the page answers the question type asked (MedQuAD qtype metadata), else 0; with
    # qtype_match_needs_topic only when the page is also about what the question names
    "focus_match",  # 1 when the page is about the question's linked focus (its focus or a synonym; with
    # foci_title_variants also a name its focus title holds; with foci_equivalents another site's name of it), else 0
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


CROSS_ENCODER_ONNX_FILES = ("onnx/model.onnx", "model.onnx")  # where exports put the graph, first found wins
# sentence-transformers names a CrossEncoder's activation by its torch class in config.json:
# ``sentence_transformers.activation_fn`` (v4 and later) or ``sbert_ce_default_activation_function``
# (older exports, e.g. cross-encoder/ms-marco-MiniLM-L6-v2: Identity, raw logits).
_ACTIVATIONS = {"Sigmoid": "sigmoid", "Identity": "identity", "Tanh": "tanh"}
# Models whose position table holds two more rows than usable tokens (padding offset).
_POSITION_OFFSET = {"roberta": 2, "xlm-roberta": 2, "camembert": 2}
_NO_LIMIT = 1_000_000  # transformers' "no limit" model_max_length is ~1e30


def cross_encoder_limits(folder: Path, config: dict[str, Any], *, labels: int) -> tuple[int, str]:
    """``(usable tokens per pair, activation)`` of the cross-encoder in ``folder`` with
    ``config`` (its ``config.json``) and ``labels`` output labels.

    Tokens: ``model_max_length`` of ``tokenizer_config.json`` when it sets one (what
    sentence-transformers truncates to), else ``max_position_embeddings`` less the padding
    offset of RoBERTa-style models (514 → 512). Activation: ``sigmoid``, ``identity`` or
    ``tanh`` as ``config.json`` names it, else sentence-transformers' default (sigmoid for one
    label, ``softmax`` over two). Raises :class:`RerankUnavailable` for another activation."""
    limit = 0
    try:
        tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        limit = int(tokenizer_config.get("model_max_length") or 0)
    except (OSError, ValueError, TypeError):
        pass
    if not 0 < limit < _NO_LIMIT:
        positions = int(config.get("max_position_embeddings") or 512)
        limit = positions - _POSITION_OFFSET.get(str(config.get("model_type") or ""), 0)
    named = (config.get("sentence_transformers") or {}).get("activation_fn") or config.get(
        "sbert_ce_default_activation_function"
    )
    if not named:
        return limit, "sigmoid" if labels == 1 else "softmax"
    short = str(named).rsplit(".", 1)[-1]
    if short not in _ACTIVATIONS:
        raise RerankUnavailable(
            f"cross-encoder {folder}: activation {named} is not supported ({', '.join(_ACTIVATIONS)})"
        )
    return limit, _ACTIVATIONS[short]


class CrossEncoderReranker:
    """A cross-encoder from a local folder (module docstring), run with ONNX Runtime.

    ``folder``: the model folder (``tokenizer.json``, ``config.json``, optionally
    ``tokenizer_config.json``, an ONNX graph at ``onnx_file`` relative to it, or the first of
    :data:`CROSS_ENCODER_ONNX_FILES`). BERT-style graphs read ``input_ids``, ``attention_mask``
    and ``token_type_ids``; XLM-R-style ones have no ``token_type_ids`` (both work).
    ``max_tokens``: a (query, passage) pair is truncated to at most this many tokens, longest
    part first, as ``CrossEncoder`` does, and never beyond the model's own limit
    (:func:`cross_encoder_limits`). Batches are padded to their longest pair only.
    ``batch_size``: pairs per ONNX call (bounds memory: ``batch × max_tokens`` int64 per input).
    ``threads``: ONNX Runtime's intra-op threads (1 per process when workers share the cores).
    ``key``: ``cross-encoder:<folder name>``, recorded on the trace. Thread-safe (ONNX Runtime's
    ``run`` and the tokenizer's ``encode_batch`` are; nothing is changed after construction).
    Raises :class:`RerankUnavailable` when the folder, a file or the graph cannot be used, the
    activation is unknown, or the model has more than two output labels (not a relevance model).
    """

    def __init__(self, *, folder: Path, onnx_file: str = "", max_tokens: int, batch_size: int, threads: int) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        if max_tokens < 8 or batch_size < 1 or threads < 1:
            raise RerankUnavailable(
                f"cross-encoder: max_tokens {max_tokens} (>= 8), batch {batch_size}, threads {threads}"
            )
        if not folder.is_dir():
            raise RerankUnavailable(f"cross-encoder folder {folder} does not exist (RERANK_CROSS_ENCODER_PATH)")
        candidates = [onnx_file] if onnx_file else list(CROSS_ENCODER_ONNX_FILES)
        graph = next((folder / name for name in candidates if (folder / name).is_file()), None)
        if graph is None:
            raise RerankUnavailable(f"cross-encoder folder {folder} holds no ONNX graph ({', '.join(candidates)})")
        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            self._session = onnxruntime.InferenceSession(
                str(graph), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # ONNX Runtime and tokenizers raise classes of their own, with no common base
            raise RerankUnavailable(f"cross-encoder {folder}: {exc}") from exc
        labels = len(config.get("id2label") or {}) or int(config.get("num_labels") or 1)
        if labels > 2:
            raise RerankUnavailable(f"cross-encoder {folder} has {labels} labels: not a relevance model")
        limit, self.activation = cross_encoder_limits(folder, config, labels=labels)
        self.labels = labels
        self.max_tokens = min(max_tokens, limit)
        self.batch_size = batch_size
        self.key = f"cross-encoder:{folder.name}"  # as reranker_key
        self._inputs = {i.name for i in self._session.get_inputs()}
        unknown = self._inputs - {"input_ids", "attention_mask", "token_type_ids"}
        if unknown or "input_ids" not in self._inputs:
            raise RerankUnavailable(f"cross-encoder {graph}: unexpected inputs {sorted(self._inputs)}")
        self._tokenizer.enable_truncation(self.max_tokens, strategy="longest_first")
        # Pad each batch to its longest pair: exports often carry a fixed padding length (512).
        padding = self._tokenizer.padding or {}
        pad = padding.get("pad_token") or next(
            (t for t in ("[PAD]", "<pad>") if self._tokenizer.token_to_id(t) is not None), "[PAD]"
        )
        pad_id = padding.get("pad_id", self._tokenizer.token_to_id(pad))
        if pad_id is None:
            pad_id = int(config.get("pad_token_id") or 0)
        self._tokenizer.enable_padding(pad_id=pad_id, pad_token=pad, length=None)

    def logits(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Raw logits ``(len(texts), labels)`` float32 of the pairs ``(query, text)``."""
        rows = []
        for start in range(0, len(texts), self.batch_size):
            pairs = [(query, t) for t in texts[start : start + self.batch_size]]
            encodings = self._tokenizer.encode_batch(pairs)
            feed = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            out = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
            rows.append(np.asarray(out, dtype=np.float32).reshape(len(pairs), -1))
        return np.concatenate(rows) if rows else np.zeros((0, self.labels), dtype=np.float32)

    def rerank(self, query: str, candidates: Sequence[RerankCandidate]) -> np.ndarray:
        """Scores ``(len(candidates),)`` float64: for one label the activation of the logit
        (sigmoid: (0, 1); tanh: (−1, 1); identity: the raw logit), for two labels the softmax
        probability of label 1. Raises :class:`RerankUnavailable` when ONNX Runtime fails or
        the output has another width."""
        if not candidates:
            return np.zeros(0)
        try:
            z = self.logits(query, [c.text for c in candidates]).astype(np.float64)
        except Exception as exc:  # ORT's errors have no common public base class
            raise RerankUnavailable(f"{self.key}: {exc}") from exc
        if z.shape != (len(candidates), self.labels):
            raise RerankUnavailable(
                f"{self.key}: output of shape {z.shape}, expected ({len(candidates)}, {self.labels})"
            )
        if self.labels == 2:
            z = z - z.max(axis=1, keepdims=True)
            p = np.exp(z)
            return p[:, 1] / p.sum(axis=1)
        score = z[:, 0]
        if self.activation == "identity":
            return score
        return np.tanh(score) if self.activation == "tanh" else 1.0 / (1.0 + np.exp(-score))


def feature_model_load(path: Path) -> FeatureReranker:
    """The fitted feature reranker stored at ``path`` (``{"key", "weights", "intercept", …}``).
    Raises :class:`RerankUnavailable` when the file is missing or malformed."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return FeatureReranker(key=str(data["key"]), weights=dict(data["weights"]), intercept=float(data["intercept"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RerankUnavailable(f"reranker model {path}: {exc}") from exc


Reranker = FeatureReranker | HttpReranker | CrossEncoderReranker
RERANKER_NAMES = "features-lr, cross-encoder or http:<model>"


@lru_cache(maxsize=1)  # one cross-encoder in memory per process: a replaced or reconfigured one is dropped
def _cross_encoder(
    mtime_ns: int, folder: str, onnx_file: str, max_tokens: int, batch_size: int, threads: int
) -> CrossEncoderReranker:
    # mtime_ns is part of the key only: a replaced file loads the model again.
    return CrossEncoderReranker(
        folder=Path(folder), onnx_file=onnx_file, max_tokens=max_tokens, batch_size=batch_size, threads=threads
    )


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


def reranker_key(name: str) -> str:
    """The key the reranker ``name`` records on the trace and its CRAG calibration is stored
    under, without loading it: ``features-lr``, ``http:<model>``, ``cross-encoder:<folder name>``
    (of ``RERANK_CROSS_ENCODER_PATH``; ``cross-encoder`` when unset); "" for the fused order."""
    if name == "cross-encoder" and settings.RERANK_CROSS_ENCODER_PATH:
        return f"cross-encoder:{Path(settings.RERANK_CROSS_ENCODER_PATH).name}"
    return name


def reranker_identity(name: str, *, embedding_model: str) -> dict[str, Any]:
    """What a calibration of reranker ``name`` is valid for: the embedding model whose
    retrieval made the candidates and the settings that change the scorer's scores (a
    cross-encoder's graph file and token limit; a rerank API's address and request shape).
    Stored with CRAG's thresholds by ``manage.py crag_calibrate`` and compared when they are
    read (:func:`zolsearch.search.config.reranker_config`). JSON-ready."""
    identity: dict[str, Any] = {"key": reranker_key(name), "embedding_model": embedding_model}
    if name == "cross-encoder":
        identity |= {
            "onnx_file": settings.RERANK_CROSS_ENCODER_ONNX,
            "max_tokens": settings.RERANK_CROSS_ENCODER_MAX_TOKENS,
        }
    elif name.startswith("http:"):
        identity |= {"base_url": settings.RERANK_BASE_URL, "api": settings.RERANK_API}
    return identity


def reranker_get(name: str) -> Reranker:
    """The process-wide reranker ``name``: ``features-lr`` (the fitted file at
    ``RERANK_MODEL_PATH``), ``cross-encoder`` (the folder at ``RERANK_CROSS_ENCODER_PATH``) or
    ``http:<model>`` (``RERANK_BASE_URL``). A changed model file is read again. Raises
    :class:`RerankUnavailable`."""
    if not name.startswith("http:") and name not in ("features-lr", "cross-encoder"):
        raise RerankUnavailable(f"unknown reranker {name!r}: {RERANKER_NAMES}")
    if name.startswith("http:") and not settings.RERANK_BASE_URL:
        raise RerankUnavailable("RERANK_BASE_URL is not set")
    if name == "cross-encoder":
        if not settings.RERANK_CROSS_ENCODER_PATH:
            raise RerankUnavailable("RERANK_CROSS_ENCODER_PATH is not set: the folder of a cross-encoder")
        folder = Path(settings.RERANK_CROSS_ENCODER_PATH)
        names = (settings.RERANK_CROSS_ENCODER_ONNX, *CROSS_ENCODER_ONNX_FILES, "tokenizer.json", "config.json")
        stamp = max(
            (folder.joinpath(n).stat().st_mtime_ns for n in names if n and folder.joinpath(n).is_file()), default=0
        )
        return _cross_encoder(
            stamp,
            str(folder),
            settings.RERANK_CROSS_ENCODER_ONNX,
            settings.RERANK_CROSS_ENCODER_MAX_TOKENS,
            settings.RERANK_CROSS_ENCODER_BATCH,
            settings.RERANK_THREADS,
        )
    path = Path(settings.RERANK_MODEL_PATH)
    mtime_ns = path.stat().st_mtime_ns if path.exists() else 0  # a refitted file is read again
    return _reranker(
        mtime_ns,
        name,
        str(path),
        settings.RERANK_BASE_URL,
        settings.RERANK_API,
        settings.RERANK_API_KEY,
        settings.RERANK_TIMEOUT_S,
        settings.RERANK_MAX_RETRIES,
    )
