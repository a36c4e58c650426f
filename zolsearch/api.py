"""The ninja API root: routers of the apps and the one place mapping domain errors to HTTP.

Staff routers are mounted with :data:`zolsearch.access.auth.staff_auth`: a staff API token
(``Authorization: Bearer zst_…``) or the admin session of a staff user; anything else gets 401.
The patient routes need no login; their body size and rate limits are enforced before the view
(``zolsearch.access.middleware.ApiLimitsMiddleware``: 413, 429 with ``Retry-After``).
"""

from __future__ import annotations

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import ValidationError

from core.providers.embeddings import EmbeddingModelMismatch, EmbeddingUnavailable
from taxonomy.api import router as taxonomy_router
from zolsearch.access.auth import staff_auth
from zolsearch.middleware import RETRY_AFTER_S, database_unavailable_response
from zolsearch.search.api import router as search_router
from zolsearch.search.pipeline import IndexEmpty, InvalidQuestion
from zolsearch.search.services import AnswerNotFound, FeedbackRateLimited

api = NinjaAPI(title="ZOL Search API", version="1", urls_namespace="api-v1", docs_url="/docs")
api.add_router("/", search_router)
api.add_router("/taxonomy", taxonomy_router, auth=staff_auth)


@api.exception_handler(InvalidQuestion)
def _invalid(request: HttpRequest, exc: InvalidQuestion) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc)}, status=422)


@api.exception_handler(ValidationError)
def _validation(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    messages = []
    for error in exc.errors:
        field = ".".join(str(p) for p in error.get("loc", ()) if p not in ("body", "payload"))
        message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
        messages.append(f"{field}: {message}" if field else message)
    return api.create_response(request, {"detail": "; ".join(messages) or "invalid request"}, status=422)


@api.exception_handler(IndexEmpty)
def _empty(request: HttpRequest, exc: IndexEmpty) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc)}, status=503)


@api.exception_handler(EmbeddingModelMismatch)
def _mismatch(request: HttpRequest, exc: EmbeddingModelMismatch) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc)}, status=503)


@api.exception_handler(EmbeddingUnavailable)
def _unavailable(request: HttpRequest, exc: EmbeddingUnavailable) -> HttpResponse:
    response = api.create_response(request, {"detail": f"the embedding service is unavailable: {exc}"}, status=503)
    response["Retry-After"] = str(RETRY_AFTER_S)
    return response


@api.exception_handler(OperationalError)
@api.exception_handler(InterfaceError)
def _database_unavailable(request: HttpRequest, exc: Exception) -> HttpResponse:
    return database_unavailable_response(request, exc)


@api.exception_handler(AnswerNotFound)
def _answer_missing(request: HttpRequest, exc: AnswerNotFound) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc)}, status=404)


@api.exception_handler(FeedbackRateLimited)
def _rate_limited(request: HttpRequest, exc: FeedbackRateLimited) -> HttpResponse:
    response = api.create_response(request, {"detail": str(exc)}, status=429)
    response["Retry-After"] = str(exc.retry_after_s)
    return response
