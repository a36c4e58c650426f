"""The admin's language: Belgian Dutch by default, English for a browser that prefers it.

Every label of the admin (models, fields, actions, messages, the project's admin templates) is
marked for translation and a Dutch catalogue ships in ``locale/nl``. The admin renders in
``settings.LANGUAGE_CODE`` (``nl-be``; its catalogue is the ``nl`` one) unless the browser's
``Accept-Language`` header prefers one of :data:`ADMIN_LANGUAGES` first, e.g. ``en-GB,en;q=0.9``
→ English, ``fr-BE,fr;q=0.9,en;q=0.8`` → English (the admin has no French catalogue, so a
French browser gets the English labels rather than French chrome around English labels).

Why not Django's ``LocaleMiddleware``: it would choose a language for every request of the site,
and the patient page at ``/`` has its own ``?lang=`` switch without cookies or content
negotiation (``zolsearch.web.views``); the JSON API answers in the language of the question. This
middleware acts only on paths under the admin and leaves every other request alone.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.translation.trans_real import parse_accept_lang_header

# Languages the admin is translated into (primary subtags). Dutch means settings.LANGUAGE_CODE
# when that is a Dutch variant (nl-be), so dates and numbers follow the Belgian format.
ADMIN_LANGUAGES = ("nl", "en")


def admin_language(accept_language: str) -> str | None:
    """The admin language for an ``Accept-Language`` header value: the first language in the
    header's order of preference (q-values) whose primary subtag is in :data:`ADMIN_LANGUAGES`,
    as a language code (``"nl-be"`` or ``"en"``); ``None`` when the header names none of them
    (the admin then stays in ``settings.LANGUAGE_CODE``)."""
    for code, _quality in parse_accept_lang_header(accept_language):
        primary = code.split("-")[0]
        if primary == "*" or primary not in ADMIN_LANGUAGES:
            continue
        if primary == settings.LANGUAGE_CODE.split("-")[0]:
            return str(settings.LANGUAGE_CODE)
        return primary
    return None


class AdminLanguageMiddleware:
    """Renders admin pages (paths under ``reverse("admin:index")``) in :func:`admin_language` of
    the request, restoring the previous language afterwards; sets ``Content-Language`` and
    ``Vary: Accept-Language`` on them. Placed after ``SessionMiddleware`` and before
    ``MessageMiddleware``, so messages queued by an admin action are stored in that language."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self._admin_prefix: str | None = None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self._admin_prefix is None:
            self._admin_prefix = reverse("admin:index")
        if not request.path_info.startswith(self._admin_prefix):
            return self.get_response(request)
        language = admin_language(request.headers.get("Accept-Language", ""))
        with translation.override(language or translation.get_language()):
            request.LANGUAGE_CODE = translation.get_language()
            response = self.get_response(request)
        patch_vary_headers(response, ("Accept-Language",))
        response.headers.setdefault("Content-Language", request.LANGUAGE_CODE)
        return response
