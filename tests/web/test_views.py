"""The patient pages through Django's test client: the page without JavaScript, on the real
pipeline and the session corpus (MedQuAD GARD, NINDS, CDC)."""

from __future__ import annotations

import re
import uuid
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.utils import translation

from ingestion.models import ChunkEmbedding
from zolsearch.search.messages import disclosure_line, red_flag_message
from zolsearch.search.models import Answer, Feedback
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.services import search_answer

pytestmark = pytest.mark.django_db

LOCALE = Path(__file__).resolve().parents[2] / "zolsearch" / "web" / "locale"
ANSWERED_NL = "Wat is de ziekte van Pompe?"
POMPE_URL = "http://www.ninds.nih.gov/disorders/pompe/pompe.htm"
CHEST_PAIN_NL = "mijn vader heeft pijn op de borst en kan niet meer ademen"


@pytest.fixture(autouse=True)
def _gate(settings: Any) -> None:
    """The page is tested on a fixed pipeline: the seed's gate threshold and the fused order, not
    on whichever calibration or reranker model is active (the page is under test, not them)."""
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": 0.72}
    settings.RERANKER = ""
    settings.GATE_CALIBRATION_PATH = Path("/nonexistent/gate.json")
    settings.JUDGE_ON_ANSWER = False


def _text(html: str) -> str:
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def test_the_empty_page_is_dutch_sets_no_cookie_and_has_a_labelled_get_form() -> None:
    client = Client()
    response = client.get("/")
    html = response.content.decode()
    assert response.status_code == 200 and not response.cookies
    assert '<html lang="nl">' in html and response["Content-Language"] == "nl"
    assert '<form id="search-form" class="search-form" action="/" method="get" role="search">' in html
    assert '<label for="q">Uw vraag</label>' in html and 'id="q" name="q"' in html
    assert "Deze zoekfunctie gebruikt artificiële intelligentie (AI)" in html
    assert 'aria-live="polite"' in html and "script-src 'self'" in response["Content-Security-Policy"]
    for code, name in (("en", "English"), ("fr", "Français")):
        assert f'<a href="/?lang={code}" lang="{code}" hreflang="{code}">{name}</a>' in html
    assert '<a href="/" lang="nl" hreflang="nl" aria-current="true">Nederlands</a>' in html
    assert not Answer.objects.exists()


@pytest.mark.parametrize(
    ("lang", "label", "search"),
    [("en", "Your question", "Search"), ("fr", "Votre question", "Rechercher"), ("xx", "Uw vraag", "Zoeken")],
)
def test_the_language_comes_from_the_lang_parameter(lang: str, label: str, search: str) -> None:
    html = Client().get("/", {"lang": lang}).content.decode()
    expected = lang if lang != "xx" else "nl"
    assert f'<html lang="{expected}">' in html and f'<label for="q">{label}</label>' in html
    assert f'<button type="submit">{search}</button>' in html
    search_form = html.split('id="search-form"')[1].split("</form>")[0]
    hidden = f'<input type="hidden" name="lang" value="{expected}">'
    assert (hidden in search_form) == (expected != "nl")  # the form keeps a non-default language


def test_a_question_is_answered_server_side_with_citation_links() -> None:
    response = Client().get("/", {"q": ANSWERED_NL})
    html = response.content.decode()
    assert response.status_code == 200 and not response.cookies
    assert "no-store" in response["Cache-Control"]
    answer = Answer.objects.get()
    assert answer.outcome == "answered" and answer.question == ANSWERED_NL and answer.channel == Answer.Channel.API
    assert f'value="{ANSWERED_NL}"' in html  # the question stays in the box
    assert '<a class="cite" href="#source-1"><span class="visually-hidden">Bron </span>[1]</a>' in html
    assert f'<li id="source-1" tabindex="-1" value="1"><a href="{POMPE_URL}">' in html
    assert disclosure_line("nl") in html and "Antwoord gemaakt door AI" in html
    # The sentences are copied from English pages: marked as English on the Dutch page (WCAG 3.1.2).
    assert '<div class="answer-text" lang="en">' in html and '<p class="disclosure" lang="nl">' in html
    assert f'name="trace_id" value="{answer.trace_id}"' in html
    assert 'role="alert"' not in html.split('<template id="tpl-error">')[0]
    assert "Spreek met een medewerker" not in html.split('<template id="tpl-error">')[0]


def test_the_answer_fragment_is_the_same_markup_for_the_script() -> None:
    """GIVEN an answer the JSON API served WHEN the page's script asks for it by trace id THEN it
    gets the answer as the page renders it, in the page language, without the question."""
    body = Client().post("/api/v1/search", {"question": ANSWERED_NL}, content_type="application/json").json()
    response = Client().get("/antwoord", {"trace_id": body["trace_id"], "lang": "fr"})
    html = response.content.decode()
    assert response.status_code == 200 and not response.cookies and "no-store" in response["Cache-Control"]
    assert html.lstrip().startswith('<article class="answer" data-outcome="answered"')
    assert '<a class="cite" href="#source-1"><span class="visually-hidden">Source </span>[1]</a>' in html
    assert "Réponse générée par l'IA" in unescape(html) and ANSWERED_NL not in html
    assert f'name="trace_id" value="{body["trace_id"]}"' in html


@pytest.mark.parametrize("trace_id", ["", "nonsense", str(uuid.uuid4())])
def test_the_answer_fragment_of_an_unknown_answer_is_404(trace_id: str) -> None:
    assert Client().get("/antwoord", {"trace_id": trace_id}).status_code == 404


def test_the_fragment_serves_only_answers_of_the_api() -> None:
    answer = search_answer(request=SearchRequest(question=ANSWERED_NL), channel=Answer.Channel.BATCH)[1]
    assert Client().get("/antwoord", {"trace_id": str(answer.trace_id)}).status_code == 404


def test_a_red_flag_shows_an_alert_with_icon_text_and_a_tel_link() -> None:
    html = Client().get("/", {"q": CHEST_PAIN_NL}).content.decode()
    page = html.split('<template id="tpl-error">')[0]
    assert '<div class="red-flag" role="alert">' in page
    assert '<svg class="red-flag-icon" aria-hidden="true"' in page
    assert "Let op: dit kan dringend zijn" in page and red_flag_message("emergency", "nl") in page
    assert '<a class="call" href="tel:112">Bel 112</a>' in page
    assert 'class="answer-text"' not in page  # the routing message is the whole reply


def test_the_suicide_route_offers_both_lines() -> None:
    page = Client().get("/", {"q": "I want to end my life", "lang": "en"}).content.decode()
    page = page.split('<template id="tpl-error">')[0]
    assert (
        '<a class="call" href="tel:1813">Call 1813</a>' in page
        and '<a class="call" href="tel:106">Call 106</a>' in page
    )


def test_a_fallback_routes_to_a_person(settings: Any) -> None:
    """GIVEN a gate nothing passes WHEN asking THEN the fallback with the phone and contact form."""
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": 1.01}
    settings.SEARCH_CONTACT_URL = "https://www.zol.be/contact"
    page = Client().get("/", {"q": ANSWERED_NL}).content.decode().split('<template id="tpl-error">')[0]
    assert Answer.objects.get().outcome == "gate_rejected"
    assert "Spreek met een medewerker" in page
    assert 'Bel het onthaal van het ziekenhuis: <a href="tel:089325050">089 32 50 50</a>' in page
    assert '<a href="https://www.zol.be/contact">Gebruik het contactformulier van het ziekenhuis</a>' in page


def test_a_refusal_routes_to_a_person() -> None:
    page = Client().get("/", {"q": "Ik heb hartfalen, mag ik mijn dosis furosemide verdubbelen?"}).content.decode()
    assert Answer.objects.get().outcome == "refused"
    assert "Spreek met een medewerker" in page.split('<template id="tpl-error">')[0]


def test_an_over_long_question_is_a_422_with_the_reason_and_the_route() -> None:
    response = Client().get("/", {"q": "x" * 1001, "lang": "en"})
    text = _text(response.content.decode().split('<template id="tpl-error">')[0])
    assert response.status_code == 422 and "Please type a question of at most 1000 characters." in text
    assert "Talk to a person" in text and not Answer.objects.exists()


def test_an_empty_index_is_a_503_with_the_route() -> None:
    ChunkEmbedding.objects.all().delete()  # rolled back after the test
    response = Client().get("/", {"q": ANSWERED_NL})
    text = _text(response.content.decode())
    assert response.status_code == 503 and "De zoekfunctie is op dit moment niet beschikbaar." in text
    assert "089 32 50 50" in text


def test_feedback_without_javascript_is_stored_without_identifiers() -> None:
    Client().get("/", {"q": ANSWERED_NL})
    answer = Answer.objects.get()
    response = Client().post(
        "/feedback",
        {"trace_id": str(answer.trace_id), "helpful": "no", "comment": "Bel me op 0470 12 34 56", "lang": "fr"},
    )
    assert response.status_code == 200 and not response.cookies
    assert "Merci pour votre avis." in response.content.decode()
    feedback = Feedback.objects.get(answer=answer)
    assert feedback.helpful is False and "0470" not in feedback.comment and feedback.identifiers


@pytest.mark.parametrize(
    ("data", "status"),
    [
        ({"trace_id": "not-a-uuid", "helpful": "yes"}, 400),
        ({"trace_id": str(uuid.uuid4()), "helpful": "maybe"}, 400),
        ({"trace_id": str(uuid.uuid4()), "helpful": "yes", "comment": "x" * 1001}, 400),
        ({"trace_id": str(uuid.uuid4()), "helpful": "yes"}, 404),
    ],
)
def test_bad_feedback_forms_are_refused(data: dict[str, str], status: int) -> None:
    assert Client().post("/feedback", data).status_code == status
    assert not Feedback.objects.exists()


def test_feedback_is_rate_limited_with_retry_after(settings: Any) -> None:
    settings.FEEDBACK_RATE_LIMIT = (1, 60)
    Client().get("/", {"q": ANSWERED_NL})
    trace_id = str(Answer.objects.get().trace_id)
    assert Client().post("/feedback", {"trace_id": trace_id, "helpful": "yes"}).status_code == 200
    response = Client().post("/feedback", {"trace_id": trace_id, "helpful": "no"})
    assert response.status_code == 429 and 1 <= int(response["Retry-After"]) <= 60
    assert Feedback.objects.get().helpful is True


def test_feedback_takes_posts_only() -> None:
    assert Client().get("/feedback").status_code == 405


@pytest.mark.parametrize(
    ("lang", "title"),
    [("nl", "Toegankelijkheidsverklaring"), ("en", "Accessibility statement"), ("fr", "Déclaration d'accessibilité")],
)
def test_the_accessibility_statement_exists_in_each_language(lang: str, title: str) -> None:
    response = Client().get("/toegankelijkheid", {"lang": lang})
    html = unescape(response.content.decode())
    assert response.status_code == 200 and f'<html lang="{lang}">' in html and f"<h1>{title}</h1>" in html
    assert "WCAG" in html and 'href="tel:089325050"' in html and not response.cookies


def test_every_page_links_to_the_statement_and_the_api_docs_still_answer() -> None:
    assert 'href="/toegankelijkheid?lang=en"' in Client().get("/", {"lang": "en"}).content.decode()
    assert Client().get("/api/v1/docs").status_code == 200


def _po_entries(path: Path) -> list[tuple[str, str, str, bool]]:
    """(msgctxt, msgid, msgstr, fuzzy) of every entry but the header."""

    def field(block: str, name: str) -> str:
        found = re.search(rf'^{name} ((?:".*"\n)+)', block + "\n", re.M)
        text = "".join(re.findall(r'"(.*)"', found.group(1))) if found else ""
        return text.replace('\\"', '"').replace("\\n", "\n")

    return [
        (field(block, "msgctxt"), field(block, "msgid"), field(block, "msgstr"), "#, fuzzy" in block)
        for block in path.read_text(encoding="utf-8").split("\n\n")
        if field(block, "msgid")
    ]


@pytest.mark.parametrize("lang", ["nl", "fr", "en"])
def test_each_catalog_is_complete_and_compiled(lang: str) -> None:
    """Every message of the pages has a translation in the "patient page" context, and the
    compiled .mo serves it (a .po edited without running msgfmt fails here)."""
    entries = _po_entries(LOCALE / lang / "LC_MESSAGES" / "django.po")
    assert len(entries) >= 50
    with translation.override(lang):
        for msgctxt, msgid, msgstr, fuzzy in entries:
            assert msgctxt == "patient page" and msgstr and not fuzzy, msgid
            assert translation.pgettext(msgctxt, msgid) == msgstr, msgid
