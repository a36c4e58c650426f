"""Limits on the patient API, before any view runs: the size of a request body (413) and the
rate of searches per client (429 with ``Retry-After``), on the API and on the patient page."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse

from core.observability import RATE_LIMITED_TOTAL
from zolsearch.access.clients import address_in, client_address, request_fingerprint
from zolsearch.access.services import rate_limit_hit

logger = logging.getLogger(__name__)

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def _json(status: int, detail: str) -> HttpResponse:
    return HttpResponse(json.dumps({"detail": detail}), status=status, content_type="application/json")


class ApiLimitsMiddleware:
    """Placed after the security, static-file and CORS middleware, before sessions.

    - Body size: a POST/PUT/PATCH under ``/api/`` whose ``Content-Length`` exceeds
      ``API_MAX_BODY_BYTES`` (default 16 KiB; a question is at most 1,000 characters) gets 413
      ``{"detail": …}`` without its body being read. Django itself refuses larger bodies
      anywhere (``DATA_UPLOAD_MAX_MEMORY_SIZE``, 400); this is the API's explicit answer.
    - Rate: ``POST /api/v1/search`` and the page's server-side search (``GET /?q=…``) count
      against ``SEARCH_RATE_LIMIT`` = (count, seconds) per client
      (:func:`~zolsearch.access.services.rate_limit_hit`, keyed by the client's fingerprint,
      never its address); over the limit → 429 (``{"detail": …}`` on the API, plain text on the
      page) with ``Retry-After`` (seconds) and ``zolsearch_rate_limited_total{endpoint="search"}``
      (one shared budget for both ways of searching). A count of
      0 turns the limit off; clients in ``RATE_LIMIT_EXEMPT_IPS`` (default loopback in the local
      profile: ``make run``, tests and ``make bench`` talk from there) are not counted. If the
      database cannot count, the request goes on (fail open) and the view meets the outage.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self._paths: tuple[str, str] | None = None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in BODY_METHODS and request.path.startswith("/api/"):
            refused = self._body_too_large(request)
            if refused is not None:
                return refused
        if self._searches(request):
            refused = self._rate_limited(request)
            if refused is not None:
                return refused
        return self.get_response(request)

    def _searches(self, request: HttpRequest) -> bool:
        """A search: ``POST /api/v1/search``, or the patient page answering ``GET /?q=…``
        server-side (``web:search``, when that app is installed)."""
        if self._paths is None:
            try:
                page = reverse("web:search")
            except NoReverseMatch:
                page = ""
            self._paths = (reverse("api-v1:search"), page)
        api_path, page_path = self._paths
        if request.method == "POST":
            return request.path == api_path
        return (
            request.method == "GET"
            and bool(page_path)
            and request.path == page_path
            and bool(request.GET.get("q", "").strip())
        )

    @staticmethod
    def _body_too_large(request: HttpRequest) -> HttpResponse | None:
        limit = int(settings.API_MAX_BODY_BYTES)
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return _json(400, "invalid Content-Length header")
        if length > limit:
            return _json(413, f"request body too large: {length} bytes, the maximum is {limit}")
        return None

    def _rate_limited(self, request: HttpRequest) -> HttpResponse | None:
        count, window_s = settings.SEARCH_RATE_LIMIT
        if count <= 0:
            return None
        if address_in(client_address(request), settings.RATE_LIMIT_EXEMPT_IPS):
            return None
        try:
            decision = rate_limit_hit(
                scope="search", client=request_fingerprint(request), limit=count, window_s=window_s
            )
        except DatabaseError as exc:
            logger.warning("search rate limit not checked (database unavailable): %s", exc)
            return None
        if decision.allowed:
            return None
        RATE_LIMITED_TOTAL.labels(endpoint="search").inc()
        detail = f"too many searches: at most {count} per {window_s} s; try again in {decision.retry_after_s} s"
        if request.path.startswith("/api/"):
            response = _json(429, detail)
        else:
            response = HttpResponse(detail + "\n", status=429, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(decision.retry_after_s)
        return response
