"""The patient pages: search (``/``), feedback without JavaScript, the accessibility statement.

Language: the page language comes from ``?lang=`` (nl, en, fr; Dutch when absent or unknown) and
every link and form on the page carries it. No cookie, no session and no ``LocaleMiddleware``:
a patient is never tracked before (or after) asking, and the admin's language is left alone.
The views translate input and call the search services, as the JSON API does. Every text of
these pages has the message context "patient page", so no other catalogue (the admin's) can
change it.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.cache import patch_cache_control
from django.utils.translation import pgettext
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from core.providers.embeddings import EmbeddingModelMismatch, EmbeddingUnavailable
from zolsearch.search.models import Answer
from zolsearch.search.pipeline import MAX_QUESTION_CHARS, IndexEmpty, InvalidQuestion, SearchRequest
from zolsearch.search.schemas import FEEDBACK_COMMENT_MAX_CHARS
from zolsearch.search.services import (
    AnswerNotFound,
    FeedbackRateLimited,
    client_fingerprint,
    feedback_record,
    search_answer,
)
from zolsearch.web.presenters import answer_present, contact_route

logger = logging.getLogger(__name__)

DEFAULT_LANGUAGE = "nl"
LANGUAGE_NAMES = {"nl": "Nederlands", "en": "English", "fr": "Français"}  # each in its own language
# Only this page's own files, the JSON API and fetches to it; citations are ordinary links.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)


def page_language(request: HttpRequest) -> str:
    """The page language from ``?lang=`` (query string or posted form): nl, en or fr; nl otherwise."""
    code = request.GET.get("lang") or request.POST.get("lang") or ""
    return code if code in LANGUAGE_NAMES else DEFAULT_LANGUAGE


def page_url(name: str, language: str, **params: str) -> str:
    """The address of page ``name`` (``web:<name>``) in ``language``; Dutch needs no parameter."""
    query = {**({"lang": language} if language != DEFAULT_LANGUAGE else {}), **params}
    return reverse(f"web:{name}") + (f"?{urlencode(query)}" if query else "")


def _page(
    request: HttpRequest, template: str, context: dict[str, Any], *, name: str, status: int = 200
) -> HttpResponse:
    """Render ``template`` in the page language with the language switch and the contact route."""
    language = page_language(request)
    with translation.override(language):
        response = render(
            request,
            template,
            {
                "lang": language,
                "languages": [
                    {"code": code, "name": label, "url": page_url(name, code), "current": code == language}
                    for code, label in LANGUAGE_NAMES.items()
                ],
                "home_url": page_url("search", language),
                "accessibility_url": page_url("accessibility", language),
                "contact": contact_route(),
                **context,
            },
            status=status,
        )
    response["Content-Language"] = language
    response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    return response


def _script_texts(language: str) -> dict[str, Any]:
    """The strings and settings ``search.js`` needs, translated into ``language``."""
    with translation.override(language):
        return {
            "api_search": reverse("api-v1:search"),
            "api_feedback": reverse("api-v1:feedback"),
            "answer_url": page_url("answer", language, trace_id=""),
            "searching": pgettext("patient page", "Searching the hospital's information…"),
            "invalid": pgettext("patient page", "Please type a question of at most %(max)d characters.")
            % {"max": MAX_QUESTION_CHARS},
            "thanks": pgettext("patient page", "Thank you for your feedback."),
            "too_many": pgettext(
                "patient page", "You sent a lot of feedback in a short time. Please try again in a minute."
            ),
            "feedback_failed": pgettext("patient page", "Your feedback could not be sent. Please try again later."),
        }


@require_GET
def search_page(request: HttpRequest) -> HttpResponse:
    """The search page; with ``?q=`` it answers server-side (the page without JavaScript).

    Status 200 with the answer (any outcome), 422 for an over-long question, 503 when the search
    cannot run (empty index, embedding model unavailable): each with the route to a person.
    """
    language = page_language(request)
    question = request.GET.get("q", "").strip()
    context: dict[str, Any] = {"question": question, "max_chars": MAX_QUESTION_CHARS, "result": None, "error": ""}
    status = 200
    if question:
        with translation.override(language):
            try:
                _state, answer = search_answer(request=SearchRequest(question=question))
                context["result"] = answer_present(answer=answer)
            except InvalidQuestion:
                status, context["error"] = 422, _script_texts(language)["invalid"]
            except (IndexEmpty, EmbeddingModelMismatch, EmbeddingUnavailable):
                logger.exception("the patient page could not search")
                status, context["error"] = 503, pgettext("patient page", "The search is not available right now.")
    context["script_texts"] = _script_texts(language)
    response = _page(request, "web/search.html", context, name="search", status=status)
    if question:
        # The question may be about the patient's health: never kept by a browser or proxy cache.
        patch_cache_control(response, no_store=True, private=True)
    return response


@require_GET
def answer_fragment(request: HttpRequest) -> HttpResponse:
    """The answer ``?trace_id=`` as the page shows it (an HTML fragment, in ``?lang=``), for the
    page's script after the JSON API answered: one template renders the answer with and without
    JavaScript. Only answers the API served (channel ``api``); 404 otherwise.

    The trace id (a random UUID the asker's browser received) is the only key; the fragment does
    not contain the question.
    """
    language = page_language(request)
    try:
        trace_id = uuid.UUID(request.GET.get("trace_id", ""))
    except ValueError:
        trace_id = None
    answer = Answer.objects.filter(trace_id=trace_id, channel=Answer.Channel.API).first() if trace_id else None
    if answer is None:
        return HttpResponse(status=404)
    with translation.override(language):
        html = render_to_string(
            "web/_answer.html",
            {"result": answer_present(answer=answer), "lang": language, "contact": contact_route()},
            request=request,
        )
    response = HttpResponse(html)
    response["Content-Language"] = language
    response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    patch_cache_control(response, no_store=True, private=True)
    return response


# No CSRF token: the form is anonymous (no session, no login), the JSON API takes the same post
# without one, and a token would set a cookie on the patient's browser.
@csrf_exempt
@require_POST
def feedback_post(request: HttpRequest) -> HttpResponse:
    """ "Was this helpful?" without JavaScript: form fields ``trace_id``, ``helpful`` (yes|no),
    ``comment`` (optional, ≤ 1,000 characters), ``lang``. Stored like ``POST /api/v1/feedback``.

    200 with a thank-you page; 400 for a malformed form, 404 for an unknown answer, 429 with
    ``Retry-After`` (seconds) when this client sent too much feedback.
    """
    helpful = request.POST.get("helpful", "")
    comment = request.POST.get("comment", "")
    language = page_language(request)
    try:
        trace_id = uuid.UUID(request.POST.get("trace_id", ""))
    except ValueError:
        trace_id = None
    if trace_id is None or helpful not in ("yes", "no") or len(comment) > FEEDBACK_COMMENT_MAX_CHARS:
        with translation.override(language):
            message = pgettext("patient page", "Your feedback could not be read. Please go back and try again.")
        return _page(request, "web/feedback.html", {"message": message}, name="search", status=400)
    with translation.override(language):
        try:
            feedback_record(
                trace_id=trace_id,
                helpful=helpful == "yes",
                comment=comment,
                client=client_fingerprint(address=request.META.get("REMOTE_ADDR", "")),
            )
        except AnswerNotFound:
            message = pgettext("patient page", "We could not find this answer any more.")
            return _page(request, "web/feedback.html", {"message": message}, name="search", status=404)
        except FeedbackRateLimited as exc:
            message = _script_texts(language)["too_many"]
            response = _page(request, "web/feedback.html", {"message": message}, name="search", status=429)
            response["Retry-After"] = str(exc.retry_after_s)
            return response
        message = pgettext("patient page", "Thank you for your feedback.")
    return _page(request, "web/feedback.html", {"message": message, "stored": True}, name="search")


@require_GET
def accessibility_statement(request: HttpRequest) -> HttpResponse:
    """The accessibility statement (WCAG 2.1 AA) of the patient pages."""
    return _page(request, "web/accessibility.html", {}, name="accessibility")
