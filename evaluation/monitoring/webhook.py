"""The optional drift webhook: one JSON POST per check that raised alerts, to DRIFT_WEBHOOK_URL
(a chat incoming webhook, an alert router, any HTTP endpoint).

Transient failures (connection errors, timeouts, HTTP 429 and 5xx) are retried with
exponential backoff and jitter (tenacity); other HTTP errors are not. The caller records the
outcome on the check; a failure never fails the check.
"""

from __future__ import annotations

import logging
from typing import Any

import requests
from django.conf import settings
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential_jitter

logger = logging.getLogger(__name__)


class WebhookFailed(Exception):
    """The webhook did not accept the payload after the retries (the message says why)."""


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, requests.HTTPError):
        status = exc.response.status_code if exc.response is not None else 0
        return status == 429 or status >= 500
    return isinstance(exc, requests.ConnectionError | requests.Timeout)


def drift_webhook_post(*, url: str, payload: dict[str, Any]) -> int:
    """POST ``payload`` as JSON to ``url`` with a timeout of DRIFT_WEBHOOK_TIMEOUT_S seconds per
    attempt and at most DRIFT_WEBHOOK_ATTEMPTS attempts (waits of about 0.5, 1, 2 s … between
    them, capped at 10 s, with up to 0.5 s jitter). Returns the accepting HTTP status (2xx).

    Raises :class:`WebhookFailed` with the last error after the final attempt, or at once for a
    non-transient HTTP error (4xx other than 429).
    """
    timeout = float(settings.DRIFT_WEBHOOK_TIMEOUT_S)

    @retry(
        retry=retry_if_exception(_transient),
        stop=stop_after_attempt(max(1, int(settings.DRIFT_WEBHOOK_ATTEMPTS))),
        wait=wait_exponential_jitter(multiplier=0.5, max=10.0, jitter=0.5),
        reraise=True,
    )
    def attempt() -> int:
        response = requests.post(url, json=payload, timeout=timeout)
        response.raise_for_status()
        return response.status_code

    try:
        return attempt()
    except requests.RequestException as exc:
        raise WebhookFailed(f"{type(exc).__name__}: {exc}") from exc
