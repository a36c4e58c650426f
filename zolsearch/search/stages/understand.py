"""Understanding: the question's language (given by the caller, else detected)."""

from __future__ import annotations

from django.conf import settings

from core.language import language_detect
from zolsearch.search.stages.base import SearchState, Stage


class UnderstandStage(Stage):
    """Language of the question: given by the caller, else detected by lingua."""

    name = "understand"
    reads = frozenset({"request"})
    adds = frozenset({"language"})

    def run(self, state: SearchState) -> None:
        given = (state.request.language or "").strip().lower()
        state.language = given or language_detect(state.request.question, default=settings.SEARCH_DEFAULT_LANGUAGE)
