"""Follow-up resolution: the pure rules, the previous-turn selector, and the stage through the
search API (issue 10 item 1)."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from ninja.testing import TestClient

from core.text import text_normalise
from taxonomy.services import sample_hospital_load
from zolsearch.api import api
from zolsearch.search.config import pipeline_config_default
from zolsearch.search.contract import Generator, Outcome
from zolsearch.search.followup import MAX_WORDS, followup_resolve
from zolsearch.search.models import Answer
from zolsearch.search.pipeline import SearchRequest, pipeline_run
from zolsearch.search.selectors import answer_previous_turn, answer_trace
from zolsearch.search.stages.followup import FollowUpStage

client = TestClient(api)
LABELLED = Path(__file__).resolve().parents[2] / "data" / "understanding" / "followups.jsonl"


# --- the pure rules -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("previous", "message", "language", "resolved", "resolution"),
    [
        ("Waar is de dienst cardiologie?", "en in Maaseik?", "nl", "Waar is de dienst cardiologie in Maaseik?", "place"),
        ("Waar is de spoed in Genk?", "en in Maaseik?", "nl", "Waar is de spoed in Maaseik?", "place"),
        ("Wat is hartfalen?", "en hoe wordt het behandeld?", "nl", "Hoe wordt hartfalen behandeld?", "pronoun"),
        ("Where is the cardiology department?", "and in Genk?", "en", "Where is the cardiology department in Genk?", "place"),
        ("What is heart failure?", "and how is it treated?", "en", "How is heart failure treated?", "pronoun"),
        ("Où se trouve le service de cardiologie ?", "et à Genk ?", "fr", "Où se trouve le service de cardiologie à Genk?", "place"),
        ("Hoe wordt COPD behandeld?", "en wat met astma?", "nl", "Hoe wordt astma behandeld?", "new_focus"),
        ("Wat is epilepsie?", "en bij kinderen?", "nl", "Wat is epilepsie bij kinderen?", "append"),
        ("Wat is de ziekte van Crohn?", "en de symptomen?", "nl", "De symptomen van ziekte van Crohn?", "aspect"),
    ],
)  # fmt: skip
def test_a_follow_up_is_written_as_the_question_it_continues(
    previous: str, message: str, language: str, resolved: str, resolution: str
) -> None:
    result = followup_resolve(previous=previous, message=message, language=language)
    assert result.is_followup and result.resolved == resolved and result.resolution == resolution


@pytest.mark.parametrize(
    ("previous", "message", "rule"),
    [
        ("", "en in Maaseik?", "no_previous"),
        ("Wat is hartfalen?", "Wat zijn de bezoekuren?", "own_content"),
        ("Wat is hartfalen?", "Hoe wordt astma behandeld?", "own_content"),
        ("Wat is hartfalen?", "en waar is de spoedgevallen?", "new_question"),
        ("Wat is hartfalen?", "Bedankt!", "not_a_question"),
        ("Wat is hartfalen?", "en hoe kan ik een afspraak maken bij cardiologie?", "too_long"),
    ],
)
def test_a_new_question_is_left_as_typed(previous: str, message: str, rule: str) -> None:
    result = followup_resolve(previous=previous, message=message, language="nl")
    assert not result.is_followup and result.rule == rule and result.resolved == message and result.resolution == ""


def test_the_taxonomy_vetoes_a_follow_up_without_a_cue() -> None:
    """GIVEN a short message whose words the rules cannot place WHEN the taxonomy says it names
    a condition of its own THEN it is a new question; with a cue it stays a follow-up."""
    assert followup_resolve(previous="Wat is astma?", message="Is het erfelijk?", language="nl").is_followup
    vetoed = followup_resolve(previous="Wat is astma?", message="Is het erfelijk?", language="nl", message_focus=True)
    assert not vetoed.is_followup and vetoed.rule == "own_focus"
    kept = followup_resolve(previous="Wat is astma?", message="en in Genk?", language="nl", message_focus=True)
    assert kept.is_followup and kept.rule == "cue"


def test_the_labelled_set_is_well_formed_and_the_rules_hold_on_it() -> None:
    """GIVEN ``data/understanding/followups.jsonl`` THEN every row is complete, follow-ups are
    short, and the rules keep their measured accuracy (decision ≥ 0.95, key words ≥ 0.9 of the
    follow-ups; ``benchmarks/understanding.py followups`` reports the exact figures)."""
    rows = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= 60 and len({r["id"] for r in rows}) == len(rows)
    assert {r["language"] for r in rows} == {"nl", "en", "fr"} and {r["split"] for r in rows} == {"dev", "check"}
    assert sum(not r["is_followup"] for r in rows) >= 15
    decided = resolved = 0
    for row in rows:
        assert row["previous"] and row["message"]
        if row["is_followup"]:
            assert row["must_contain"] and len(row["message"].split()) <= MAX_WORDS
        result = followup_resolve(previous=row["previous"], message=row["message"], language=row["language"])
        decided += result.is_followup == row["is_followup"]
        text = f" {text_normalise(result.resolved)} "
        resolved += (
            row["is_followup"]
            and result.is_followup
            and all(f" {text_normalise(w)} " in text for w in row["must_contain"])
            and not any(f" {text_normalise(w)} " in text for w in row["must_not_contain"])
        )
    followups = sum(r["is_followup"] for r in rows)
    assert decided / len(rows) >= 0.95 and resolved / followups >= 0.9


# --- the previous turn ----------------------------------------------------------------------


def _answer(*, conversation_id: str, channel: str = Answer.Channel.API, question: str = "Wat is astma?") -> Answer:
    return Answer.objects.create(
        conversation_id=conversation_id,
        channel=channel,
        question=question,
        language="nl",
        answer="",
        generator=Generator.FALLBACK,
        outcome=Outcome.NO_RESULTS,
        gate_passed=False,
        embedding_model="use-multilingual-v3",
        config_hash="0" * 64,
    )


@pytest.mark.django_db
def test_the_previous_turn_is_the_latest_recent_api_answer_of_the_conversation(django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    older = _answer(conversation_id="conv-a", question="Wat is astma?")
    latest = _answer(conversation_id="conv-a", question="Is het erfelijk?")
    _answer(conversation_id="conv-a", channel=Answer.Channel.BATCH, question="batch runs never count")
    _answer(conversation_id="conv-b", question="another conversation")
    with django_assert_num_queries(1):
        assert answer_previous_turn(conversation_id="conv-a", max_age_s=1800) == latest
    Answer.objects.filter(pk=latest.pk).update(created_at=timezone.now() - timedelta(hours=1))
    assert answer_previous_turn(conversation_id="conv-a", max_age_s=1800) == older
    with django_assert_num_queries(0):
        assert answer_previous_turn(conversation_id="", max_age_s=1800) is None
    assert answer_previous_turn(conversation_id="conv-c", max_age_s=1800) is None


@pytest.mark.django_db
def test_old_traces_without_a_follow_up_still_load() -> None:
    answer = _answer(conversation_id="")
    answer.trace = {"version": 1, "lexical_backend": "paradedb"}
    assert answer_trace(answer=answer).followup is None


# --- through the search API -----------------------------------------------------------------


def _ask(question: str, conversation_id: str | None) -> Answer:
    payload: dict[str, object] = {"question": question, "language": "nl"}
    if conversation_id is not None:
        payload["conversation_id"] = conversation_id
    response = client.post("/search", json=payload)
    assert response.status_code == 200, response.content
    return Answer.objects.get(trace_id=uuid.UUID(response.json()["trace_id"]))


@pytest.mark.django_db
def test_a_follow_up_is_searched_as_the_resolved_question_and_stored_as_typed() -> None:
    """GIVEN "Waar is de dienst cardiologie?" in conversation c-1 WHEN "en in Maaseik?" follows
    in c-1 THEN the trace names the previous turn and the resolved question, the graph resolved
    cardiology from it (the message alone names nothing), and ``Answer.question`` is as typed."""
    sample_hospital_load()
    first = _ask("Waar is de dienst cardiologie?", "c-1")
    second = _ask("en in Maaseik?", "c-1")
    assert second.question == "en in Maaseik?" and second.conversation_id == "c-1"
    trace = answer_trace(answer=second)
    assert trace.followup is not None and trace.followup.is_followup
    assert trace.followup.previous_trace_id == str(first.trace_id)
    assert trace.followup.resolved == "Waar is de dienst cardiologie in Maaseik?"
    assert trace.followup.rule == "cue" and trace.followup.cue == "en in" and trace.followup.resolution == "place"
    assert "cardiologie" in {e.slug for e in trace.taxonomy.entities}
    assert answer_trace(answer=first).followup is None  # the conversation's first turn


@pytest.mark.django_db
def test_a_follow_up_of_a_follow_up_continues_the_resolved_question() -> None:
    sample_hospital_load()
    _ask("Waar is de dienst cardiologie in Genk?", "c-2")
    _ask("en in Maaseik?", "c-2")
    third = answer_trace(answer=_ask("en in Lanaken?", "c-2")).followup
    assert third is not None and third.resolved == "Waar is de dienst cardiologie in Lanaken?"


@pytest.mark.django_db
def test_another_conversation_an_old_turn_or_no_conversation_is_not_merged() -> None:
    """GIVEN a question in conversation c-3 WHEN "en in Maaseik?" comes in another conversation,
    without one, or after the previous turn is older than ``followup_max_age_s`` THEN the
    message is searched as typed (no follow-up on the trace, nothing resolved by the graph)."""
    sample_hospital_load()
    first = _ask("Waar is de dienst cardiologie?", "c-3")
    other = answer_trace(answer=_ask("en in Maaseik?", "c-4"))
    assert other.followup is None and other.taxonomy.entities == []
    assert answer_trace(answer=_ask("en in Maaseik?", None)).followup is None
    Answer.objects.filter(pk=first.pk).update(created_at=timezone.now() - timedelta(seconds=1801))
    late = answer_trace(answer=_ask("en in Maaseik?", "c-3"))
    assert late.followup is None and late.taxonomy.entities == []


@pytest.mark.django_db
def test_an_unrelated_question_in_the_same_conversation_is_not_merged() -> None:
    sample_hospital_load()
    _ask("Waar is de dienst cardiologie?", "c-5")
    trace = answer_trace(answer=_ask("Wat zijn de symptomen van epilepsie?", "c-5"))
    assert trace.followup is not None and not trace.followup.is_followup
    assert trace.followup.resolved == "Wat zijn de symptomen van epilepsie?"
    slugs = {e.slug for e in trace.taxonomy.entities}
    assert "epilepsie" in slugs and "cardiologie" not in slugs


@pytest.mark.django_db
def test_the_flag_turns_follow_up_resolution_off(monkeypatch: pytest.MonkeyPatch) -> None:
    sample_hospital_load()
    _ask("Waar is de dienst cardiologie?", "c-6")
    config = pipeline_config_default().with_overrides(followup_enabled=False)
    state = pipeline_run(request=SearchRequest(question="en in Maaseik?", conversation_id="c-6"), config=config)
    assert state.trace.followup is None and state.question == "en in Maaseik?" and "followup" not in state.timings_ms


@pytest.mark.django_db
def test_the_stage_changes_only_what_it_declares(monkeypatch: pytest.MonkeyPatch) -> None:
    sample_hospital_load()
    _ask("Waar is de dienst cardiologie?", "c-7")
    before: dict[str, object] = {}
    original = FollowUpStage.run

    def spy(self: FollowUpStage, state) -> None:  # type: ignore[no-untyped-def]
        before.update({name: getattr(state, name) for name in state.__dataclass_fields__})
        original(self, state)
        changed = {n for n, v in before.items() if n not in ("trace", "timings_ms") and getattr(state, n) is not v}
        assert changed <= self.adds, changed

    monkeypatch.setattr(FollowUpStage, "run", spy)
    state = pipeline_run(
        request=SearchRequest(question="en in Maaseik?", conversation_id="c-7"), config=pipeline_config_default()
    )
    assert state.question == "Waar is de dienst cardiologie in Maaseik?" and before


# --- safety sees the message as typed, and the resolved question ------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("message", ["en hij ademt niet meer!", "et s'il ne respire plus ?"])
def test_an_emergency_typed_as_a_follow_up_is_routed_by_the_rules_as_typed(message: str) -> None:
    """GIVEN an informational question WHEN the next message of the conversation describes an
    emergency now THEN the red-flag rules route it to 112 before the follow-up stage runs."""
    _ask("Wat is een hartstilstand?", "c-8")
    response = client.post("/search", json={"question": message, "conversation_id": "c-8"})
    body = response.json()
    assert body["outcome"] == "red_flag" and body["red_flag"]["number"] == "112"
    answer = Answer.objects.get(trace_id=uuid.UUID(body["trace_id"]))
    trace = answer_trace(answer=answer)
    assert trace.stop_stage == "red_flags" and trace.followup is None


@pytest.mark.django_db
def test_the_red_flag_rules_also_read_the_resolved_question() -> None:
    """GIVEN an emergency in the previous turn WHEN a short follow-up adds a place THEN the
    resolved question is routed to 112 too (the message alone says nothing alarming)."""
    first = client.post(
        "/search", json={"question": "Mijn vader is bewusteloos, wat moet ik doen?", "conversation_id": "c-9"}
    )
    assert first.json()["outcome"] == "red_flag"
    body = client.post("/search", json={"question": "en in Genk?", "conversation_id": "c-9"}).json()
    assert body["outcome"] == "red_flag" and body["red_flag"]["number"] == "112"
    trace = answer_trace(answer=Answer.objects.get(trace_id=uuid.UUID(body["trace_id"])))
    assert trace.stop_stage == "followup" and trace.red_flag is not None and trace.red_flag.rule.startswith("followup:")


@pytest.mark.django_db
def test_if_he_stops_breathing_typed_as_a_follow_up() -> None:
    """GIVEN "Wat is een hartstilstand?" WHEN "en als hij niet meer ademt?" follows THEN it is
    routed to 112 (the rules of ``zolsearch/search/safety/redflags.py`` also match the word
    orders "niet meer ademt" and "ademt hij niet meer")."""
    _ask("Wat is een hartstilstand?", "c-10")
    body = client.post("/search", json={"question": "en als hij niet meer ademt?", "conversation_id": "c-10"}).json()
    trace = answer_trace(answer=Answer.objects.get(trace_id=uuid.UUID(body["trace_id"])))
    assert body["outcome"] == "red_flag" and body["red_flag"]["number"] == "112", (trace.stop_stage, trace.red_flag)
