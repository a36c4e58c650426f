"""What the patient page shows of a served answer: plain values for the templates.

The same shapes are built in the browser from the JSON API (``static/web/search.js``); both follow
the rules here: a citation marker ``[n]`` becomes a link to source ``n`` when that source exists,
only ``http(s)`` addresses become links, and a fallback or refusal carries a route to a person.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.conf import settings

from core.language import language_detect
from zolsearch.search.contract import FALLBACKS, RED_FLAG_NUMBERS, TELE_ONTHAAL, Generator, Outcome, RedFlagCategory
from zolsearch.search.messages import disclosure_line
from zolsearch.search.models import Answer

# Outcomes that end in "I can't answer this": they always show the phone and contact form.
HUMAN_ROUTE_OUTCOMES: frozenset[str] = frozenset({*FALLBACKS, Outcome.REFUSED})
# Numbers a red-flag banner offers as tel: links, per category (the suicide route also names
# Tele-Onthaal, as its message does: zolsearch.search.messages).
RED_FLAG_CALLS: dict[str, tuple[str, ...]] = {
    category: (number, TELE_ONTHAAL) if category == RedFlagCategory.SUICIDE else (number,)
    for category, number in RED_FLAG_NUMBERS.items()
}
_MARKER = re.compile(r"\[(\d+)\]")


def tel_href(number: str) -> str:
    """``tel:`` link of a Belgian number as written ("070 245 245" → "tel:070245245")."""
    return "tel:" + re.sub(r"[^\d+]", "", number)


def safe_href(url: str) -> str:
    """``url`` when it is an ``http(s)`` or site-relative address, else "" (no link): ingested
    content must never put a ``javascript:`` or ``data:`` address behind a citation."""
    url = url.strip()
    if re.match(r"(?i)^https?://", url) or (url.startswith("/") and not url.startswith("//")):
        return url
    return ""


@dataclass(frozen=True)
class Segment:
    """A piece of an answer paragraph: text, or the citation marker of source ``n``."""

    text: str
    n: int | None = None


@dataclass(frozen=True)
class Phone:
    number: str  # as written, e.g. "070 245 245"
    href: str  # tel: link


@dataclass(frozen=True)
class AnswerView:
    """A stored answer as the page renders it.

    ``paragraphs``: the answer text split at line breaks, each a list of segments; ``citations``:
    the API's ``{n, title, url, snippet, source}`` plus ``href`` (a safe link or ""); ``red_flag``:
    the routing message with its numbers, or None; ``human_route``: show the phone and contact
    form (fallbacks and refusals); ``disclosure``: the standing AI line in the answer's language.
    ``language`` is the answer's (its messages and disclosure); ``text_language`` that of the
    answer text, which differs for sentences copied from pages in another language (WCAG 3.1.2).
    """

    trace_id: str
    outcome: str
    language: str
    text_language: str
    paragraphs: list[list[Segment]]
    citations: list[dict[str, object]]
    disclosure: str
    red_flag_message: str = ""
    red_flag_calls: list[Phone] = field(default_factory=list)
    human_route: bool = False


def paragraphs_split(text: str, *, cited: set[int]) -> list[list[Segment]]:
    """Split ``text`` into paragraphs (non-empty lines) of segments; a marker ``[n]`` with ``n``
    in ``cited`` becomes a citation segment, any other bracketed number stays text."""
    paragraphs: list[list[Segment]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        segments: list[Segment] = []
        position = 0
        for match in _MARKER.finditer(line):
            n = int(match.group(1))
            if n not in cited:
                continue
            if match.start() > position:
                segments.append(Segment(text=line[position : match.start()]))
            segments.append(Segment(text=match.group(0), n=n))
            position = match.end()
        if position < len(line):
            segments.append(Segment(text=line[position:]))
        paragraphs.append(segments)
    return paragraphs


def text_language(*, answer: Answer) -> str:
    """Language (ISO 639-1) of ``answer``'s text: detected for copied sentences (the extractive
    generator copies them from pages in their own language), the answer's language otherwise."""
    if answer.generator != Generator.EXTRACTIVE:
        return answer.language
    return language_detect(_MARKER.sub(" ", answer.answer), default=answer.language)


def answer_present(*, answer: Answer) -> AnswerView:
    """The :class:`AnswerView` of a stored ``answer``."""
    citations = [{**c, "href": safe_href(str(c.get("url") or ""))} for c in answer.citations]
    cited = {int(c["n"]) for c in answer.citations}
    red_flag = answer.outcome == Outcome.RED_FLAG and bool(answer.red_flag_category)
    return AnswerView(
        trace_id=str(answer.trace_id),
        outcome=answer.outcome,
        language=answer.language,
        text_language=text_language(answer=answer),
        paragraphs=[] if red_flag else paragraphs_split(answer.answer, cited=cited),
        citations=citations,
        disclosure=disclosure_line(answer.language),
        red_flag_message=answer.answer if red_flag else "",
        red_flag_calls=[Phone(number=n, href=tel_href(n)) for n in RED_FLAG_CALLS.get(answer.red_flag_category, ())]
        if red_flag
        else [],
        human_route=answer.outcome in HUMAN_ROUTE_OUTCOMES,
    )


def contact_route() -> dict[str, str]:
    """The hospital's reception phone (``SEARCH_FALLBACK_PHONE``) and its contact address
    (``SEARCH_CONTACT_URL``), as the fallback messages name them."""
    return {
        "phone": settings.SEARCH_FALLBACK_PHONE,
        "phone_href": tel_href(settings.SEARCH_FALLBACK_PHONE),
        "url": safe_href(settings.SEARCH_CONTACT_URL) or safe_href(settings.SEARCH_FALLBACK_URL),
    }
