"""Chat completion through any OpenAI-compatible endpoint (``LLM_MODEL``, ``LLM_BASE_URL``).

Timeouts per call (``LLM_TIMEOUT_S``), retries with exponential backoff and jitter on transient
errors (connection, timeout, 429, 5xx) through tenacity; other errors are not retried. Callers
fall back to extractive answers on :class:`LLMUnavailable`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, cast

from django.conf import settings
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_random_exponential


class LLMUnavailable(Exception):
    """The chat endpoint failed after retries or answered with nothing usable."""


def openai_error_transient(exc: BaseException) -> bool:
    """Whether an ``openai`` client error is worth retrying: connection errors, timeouts, 429 and
    5xx answers (not 4xx, which repeat identically)."""
    import openai

    if isinstance(exc, openai.APIConnectionError | openai.APITimeoutError | openai.RateLimitError):
        return True
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


class ChatLLM:
    """A pinned chat model on an OpenAI-compatible endpoint, temperature 0 by default."""

    def __init__(self, *, model: str, base_url: str, api_key: str, timeout_s: float, max_retries: int) -> None:
        from openai import OpenAI

        self.model = model
        self.max_retries = max_retries
        # The client's own retries are off: tenacity owns retry policy so it is visible here.
        self._client = OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)

    def complete(self, messages: Sequence[dict[str, str]], *, temperature: float = 0.0, max_tokens: int = 400) -> str:
        """The assistant message text. Raises :class:`LLMUnavailable` after the retries."""
        import openai

        @retry(
            retry=retry_if_exception(openai_error_transient),
            wait=wait_random_exponential(multiplier=0.5, max=4),
            stop=stop_after_attempt(self.max_retries + 1),
            reraise=True,
        )
        def call() -> str:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=cast(Any, list(messages)),
                temperature=temperature,
                max_tokens=max_tokens,
            )
            return (response.choices[0].message.content or "").strip() if response.choices else ""

        try:
            text = call()
        except openai.OpenAIError as exc:
            raise LLMUnavailable(f"{type(exc).__name__}: {exc}") from exc
        if not text:
            raise LLMUnavailable("empty completion")
        return text


@lru_cache(maxsize=8)
def _chat_llm(model: str, base_url: str, api_key: str, timeout_s: float, max_retries: int) -> ChatLLM:
    return ChatLLM(model=model, base_url=base_url, api_key=api_key, timeout_s=timeout_s, max_retries=max_retries)


def chat_llm_get(model: str, *, timeout_s: float | None = None, max_retries: int | None = None) -> ChatLLM:
    """The process-wide client for ``model`` on the configured endpoint (connections reused);
    ``timeout_s``: the client's timeout (s, for the connection and for the reply),
    ``LLM_TIMEOUT_S`` when None; ``max_retries``: retries of transient errors, ``LLM_MAX_RETRIES``
    when None (query understanding uses shorter ones: it runs before retrieval on every
    request). Raises ``openai.OpenAIError`` when the client cannot be built (no API key)."""
    timeout = settings.LLM_TIMEOUT_S if timeout_s is None else timeout_s
    retries = settings.LLM_MAX_RETRIES if max_retries is None else max_retries
    return _chat_llm(model, settings.LLM_BASE_URL, settings.LLM_API_KEY, timeout, retries)
