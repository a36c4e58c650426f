"""503 with ``Retry-After`` while the database is unavailable, instead of a 500.

PostgreSQL restarting (a restart under load, a failover, the embedded server being stopped)
makes every query raise ``django.db.OperationalError`` or ``InterfaceError``. Any request that
hits one gets ``503 Service Unavailable`` with ``Retry-After: RETRY_AFTER_S``: a JSON
``{"detail": …}`` under ``/api/``, a short plain page elsewhere. Django's connection health
checks (``CONN_HEALTH_CHECKS``) drop the broken connection at the end of the request, so the
first request after the server is back is served normally; nothing is written by a request that
failed this way (each write is one transaction).

Django turns an exception into a response at the middleware layer it was raised in, so a
database error raised by an inner middleware (the API limits, the session) never reaches an
outer one as an exception: :func:`_database_error_seen` (a ``got_request_exception`` receiver)
marks the request, and :class:`DatabaseUnavailableMiddleware` swaps the 500 for the 503. The
API's own exception handlers (``zolsearch.api``) answer with :func:`database_unavailable_response`
directly, because django-ninja catches view exceptions before Django sees them.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from django.core.signals import got_request_exception
from django.db import InterfaceError, OperationalError
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

# Seconds a client should wait before trying again: the embedded server restarts in 2–5 s here.
RETRY_AFTER_S = 5
DATABASE_ERRORS = (OperationalError, InterfaceError)
_MARK = "_zolsearch_database_unavailable"


def database_unavailable_response(request: HttpRequest, exc: BaseException) -> HttpResponse:
    """The 503 for ``request`` (JSON under ``/api/``, else a plain page), with ``Retry-After``;
    logs ``exc`` once as a warning (no traceback: the cause is the database, not the code)."""
    logger.warning("database unavailable for %s %s: %s", request.method, request.path, exc)
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": "the database is unavailable; try again shortly"}, status=503)
    else:
        response = HttpResponse(
            "<!doctype html><title>Even geduld</title><h1>Even geduld · One moment</h1>"
            "<p>De zoekfunctie is zo terug. The search is back in a moment.</p>",
            status=503,
            content_type="text/html; charset=utf-8",
        )
    response["Retry-After"] = str(RETRY_AFTER_S)
    return response


@receiver(got_request_exception, dispatch_uid="zolsearch.middleware.database_error_seen")
def _database_error_seen(sender: object, request: HttpRequest | None = None, **kwargs: object) -> None:
    """Mark ``request`` when the exception being handled is a database connection error (Django
    sends this signal from inside its ``except`` block, so ``sys.exc_info()`` holds it)."""
    exc = sys.exc_info()[1]
    if request is not None and isinstance(exc, DATABASE_ERRORS):
        setattr(request, _MARK, exc)


class DatabaseUnavailableMiddleware:
    """Replace the response of a request that failed on a database connection error with
    :func:`database_unavailable_response`. Place it near the top of ``MIDDLEWARE`` (it only
    sees errors of the layers below it)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        exc = getattr(request, _MARK, None)
        if exc is not None and response.status_code >= 500:
            return database_unavailable_response(request, exc)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """A view's database error, answered before Django's 500 handling runs."""
        if isinstance(exception, DATABASE_ERRORS):
            return database_unavailable_response(request, exception)
        return None
