"""A safety model (Llama Guard 3 or another) behind an OpenAI-compatible chat endpoint.

``GUARD_MODEL`` at ``GUARD_BASE_URL``; one call per question with a short timeout
(``GUARD_TIMEOUT_S``) and no retries (the request is waiting). Llama Guard 3 answers ``safe`` or
``unsafe`` followed by a line of category codes (``S1``…``S14``; Llama Guard 3 model card, Meta
2024); :func:`guard_reply_parse` reads that shape. Failures raise :class:`GuardUnavailable`; the
pipeline then applies its fail-open/fail-closed setting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings

from core.providers.llm import ChatLLM, LLMUnavailable

# Llama Guard 3 hazard categories (model card): S6 "Specialized Advice" covers medical advice.
SPECIALISED_ADVICE = "S6"


class GuardUnavailable(Exception):
    """The safety endpoint failed, timed out or answered in an unknown shape."""


@dataclass(frozen=True)
class GuardVerdict:
    """``safe``; ``categories``: the hazard codes of an unsafe verdict (``["S6"]``)."""

    safe: bool
    categories: tuple[str, ...] = ()


def guard_reply_parse(text: str) -> GuardVerdict:
    """Parse a Llama Guard reply (``"safe"`` / ``"unsafe\\nS1,S6"``). Raises
    :class:`GuardUnavailable` for any other shape."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        raise GuardUnavailable("empty guard reply")
    head = lines[0].lower()
    if head == "safe":
        return GuardVerdict(safe=True)
    if head == "unsafe":
        codes = tuple(re.findall(r"S\d{1,2}", " ".join(lines[1:]).upper()))
        return GuardVerdict(safe=False, categories=codes)
    raise GuardUnavailable(f"unexpected guard reply {text[:60]!r}")


class SafetyModel:
    """Classify one user message with the configured safety model."""

    def __init__(self, *, model: str, base_url: str, api_key: str, timeout_s: float) -> None:
        self.model = model
        self._chat = ChatLLM(model=model, base_url=base_url, api_key=api_key, timeout_s=timeout_s, max_retries=0)

    def classify(self, text: str) -> GuardVerdict:
        """The verdict on ``text`` as a user turn. Raises :class:`GuardUnavailable`."""
        try:
            reply = self._chat.complete([{"role": "user", "content": text}], max_tokens=20)
        except LLMUnavailable as exc:
            raise GuardUnavailable(str(exc)) from exc
        return guard_reply_parse(reply)


@lru_cache(maxsize=4)
def _safety_model(model: str, base_url: str, api_key: str, timeout_s: float) -> SafetyModel:
    return SafetyModel(model=model, base_url=base_url, api_key=api_key, timeout_s=timeout_s)


def safety_model_get(model: str) -> SafetyModel:
    """The process-wide client for ``model`` on ``GUARD_BASE_URL`` (connections reused)."""
    return _safety_model(model, settings.GUARD_BASE_URL, settings.GUARD_API_KEY, settings.GUARD_TIMEOUT_S)
