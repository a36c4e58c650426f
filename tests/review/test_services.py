"""Filling the queue from real pipeline answers, verdicts, and turning verdicts into golden
questions, pending aliases and calibration labels."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from evaluation.golden.io import GoldenItem
from evaluation.models import GoldenSet, Judgement
from evaluation.review.models import Kind, Review, Verdict
from evaluation.review.selectors import calibration_labels, golden_set_names_for_review, review_detail
from evaluation.review.services import (
    ReviewInvalid,
    review_alias_propose,
    review_golden_question_create,
    review_queue_sync,
    review_verdict_set,
    reviews_calibration_label,
    reviews_verdict_set,
)
from evaluation.review.tasks import review_queue_sync_task
from evaluation.services.golden import golden_set_freeze, golden_set_import, golden_set_resolve
from taxonomy.models import Alias, Entity, ReviewState
from taxonomy.services import sample_hospital_load
from tests.review.conftest import HARMFUL_QUESTION, RED_FLAG_QUESTION, answer_copies, ask
from zolsearch.celery import app
from zolsearch.search.models import Answer
from zolsearch.search.services import feedback_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def user() -> User:
    return User.objects.create_user("reviewer", is_staff=True)


def _judge(answer: Answer, faithfulness: float, relevancy: float) -> Judgement:
    return Judgement.objects.create(
        answer=answer,
        judge_key="local-v1:test",
        status=Judgement.Status.DONE,
        faithfulness=faithfulness,
        relevancy=relevancy,
        evidence=[{"sentence": "A sentence.", "supported": False, "score": 0.1}],
    )


def _reviewed(answer: Answer, user: User, verdict: str = Verdict.WRONGLY_REFUSED) -> Review:
    review_queue_sync(answer_ids=[answer.pk])
    return review_verdict_set(review_id=answer.review.pk, verdict=verdict, reason="The draft was right.", user=user)


def test_sync_queues_refusals_red_flags_and_gate_rejections_once(rejected_answer, answered_answer) -> None:
    """GIVEN real answers of each outcome WHEN the queue is synced twice THEN one review per
    refused, routed or rejected answer (none for the good answer), with kind and risk from the
    rules, and the second sync changes nothing."""
    red_flag = ask(RED_FLAG_QUESTION, "nl")
    harmful = ask(HARMFUL_QUESTION, "en")
    assert (red_flag.outcome, harmful.outcome, harmful.refusal_reason) == ("red_flag", "refused", "harmful")
    first = review_queue_sync()
    assert first.created == 3
    rows = {r.answer_id: r for r in Review.objects.all()}
    assert set(rows) == {rejected_answer.pk, red_flag.pk, harmful.pk}
    assert (rows[red_flag.pk].kind, rows[red_flag.pk].risk) == (Kind.RED_FLAG, 90)
    assert (rows[harmful.pk].kind, rows[harmful.pk].risk) == (Kind.GUARD_REFUSED, 85)
    assert (rows[rejected_answer.pk].kind, rows[rejected_answer.pk].risk) == (Kind.GATE_REJECTED, 40)
    second = review_queue_sync()
    assert (second.created, second.updated, second.removed) == (0, 0, 0)
    assert Review.objects.count() == 3


def test_sync_respects_channels_and_the_time_window(rejected_answer) -> None:
    Answer.objects.filter(pk=rejected_answer.pk).update(channel=Answer.Channel.EVALUATION)
    assert review_queue_sync().created == 0  # evaluation runs score their own answers
    assert review_queue_sync(channels=[Answer.Channel.EVALUATION]).created == 1
    Review.objects.all().delete()
    Answer.objects.filter(pk=rejected_answer.pk).update(
        channel=Answer.Channel.API, created_at=timezone.now() - timedelta(days=40)
    )
    assert review_queue_sync(since=timezone.now() - timedelta(days=30)).created == 0
    assert review_queue_sync().created == 1


def test_low_judge_score_and_thumbs_down_raise_an_open_review(answered_answer) -> None:
    """GIVEN a served answer WHEN the judge scores it low THEN it is queued with a risk that grows
    as the score falls; WHEN a patient then says it did not help THEN the open review gains the
    signal; WHEN the patient changes their mind and the judgement is gone THEN it leaves the queue."""
    judgement = _judge(answered_answer, faithfulness=0.25, relevancy=0.9)
    assert review_queue_sync(answer_ids=[answered_answer.pk]).created == 1
    review = Review.objects.get(answer=answered_answer)
    assert (review.kind, review.signals, review.risk) == (Kind.LOW_JUDGE_SCORE, [Kind.LOW_JUDGE_SCORE], 70)
    feedback_record(trace_id=answered_answer.trace_id, helpful=False, comment="", client="c1")
    assert review_queue_sync(answer_ids=[answered_answer.pk]).updated == 1
    review.refresh_from_db()
    assert (review.signals, review.risk) == ([Kind.LOW_JUDGE_SCORE, Kind.THUMBS_DOWN], 75)
    feedback_record(trace_id=answered_answer.trace_id, helpful=True, comment="", client="c1")
    judgement.delete()
    assert review_queue_sync(answer_ids=[answered_answer.pk]).removed == 1
    assert not Review.objects.exists()


def test_a_reviewed_row_is_never_changed_or_removed_by_the_sync(answered_answer, user) -> None:
    feedback_record(trace_id=answered_answer.trace_id, helpful=False, comment="", client="c1")
    review = _reviewed(answered_answer, user, Verdict.GOOD_ANSWER)
    _judge(answered_answer, faithfulness=0.0, relevancy=0.0)
    feedback_record(trace_id=answered_answer.trace_id, helpful=True, comment="", client="c1")
    result = review_queue_sync(answer_ids=[answered_answer.pk])
    assert (result.updated, result.removed) == (0, 0)
    review.refresh_from_db()
    assert (review.kind, review.risk, review.verdict) == (Kind.THUMBS_DOWN, 70, Verdict.GOOD_ANSWER)


def test_crag_refusals_are_told_apart_from_empty_results(rejected_answer) -> None:
    """GIVEN two no-results answers, one stopped by CRAG (trace stop stage) WHEN synced THEN
    crag_refused and no_results."""
    crag, empty = answer_copies(rejected_answer, 2)
    for answer, stage in ((crag, "crag"), (empty, "fusion")):
        answer.outcome = Answer.Outcome.NO_RESULTS
        answer.trace = {**answer.trace, "stop_stage": stage, "rejected_answer": ""}
        answer.save()
    review_queue_sync(answer_ids=[crag.pk, empty.pk])
    assert Review.objects.get(answer=crag).kind == Kind.CRAG_REFUSED
    assert Review.objects.get(answer=empty).kind == Kind.NO_RESULTS


def test_the_review_page_material_comes_from_the_answer(rejected_answer, django_assert_max_num_queries) -> None:
    """The refused draft from the trace, its citations, the retrieved chunks with their scores
    and document, and the frozen configuration, in four queries."""
    review_queue_sync()
    review = Review.objects.get()
    with django_assert_max_num_queries(4):
        detail = review_detail(review_id=review.pk)
    assert detail is not None
    assert "ABCD" in detail.draft and detail.draft_label == "draft refused by the quality gate"
    assert detail.served == rejected_answer.answer and "ABCD" not in detail.served
    assert detail.citations[0]["url"].endswith("abcd-syndrome")
    assert len(detail.chunks) == len(rejected_answer.chunk_scores) > 0
    first = detail.chunks[0]
    assert first.rank == 1 and first.source and first.title and first.text
    assert first.rrf == rejected_answer.chunk_scores[0]["rrf"]
    assert any(c.cited for c in detail.chunks) and "abcd-syndrome" in " ".join(c.url for c in detail.chunks if c.cited)
    assert rejected_answer.config_hash and '"gate_enabled"' in detail.config


def test_a_verdict_needs_a_reason_and_records_who_and_when(rejected_answer, user) -> None:
    review_queue_sync()
    review = Review.objects.get()
    with pytest.raises(ReviewInvalid, match="reason"):
        review_verdict_set(review_id=review.pk, verdict=Verdict.WRONGLY_REFUSED, reason="  ", user=user)
    with pytest.raises(ReviewInvalid, match="unknown verdict"):
        review_verdict_set(review_id=review.pk, verdict="maybe", reason="why", user=user)
    done = review_verdict_set(
        review_id=review.pk, verdict=Verdict.WRONGLY_REFUSED, reason=" Draft is right. ", user=user
    )
    assert (done.verdict, done.reason, done.reviewed_by, done.assigned_to) == (
        "wrongly_refused",
        "Draft is right.",
        user,
        user,
    )
    assert done.reviewed_at is not None


def test_bulk_verdicts_and_calibration_labels_reach_the_calibration_selector(rejected_answer, user) -> None:
    """GIVEN three gate rejections, two reviewed WHEN all three are made calibration labels THEN
    the unreviewed one is skipped and the selector returns the two with their gate score,
    language, model and polarity; a model key filters."""
    copies = answer_copies(rejected_answer, 2)
    review_queue_sync()
    ids = list(Review.objects.order_by("answer_id").values_list("pk", flat=True))
    assert reviews_verdict_set(review_ids=ids[:1], verdict=Verdict.WRONGLY_REFUSED, reason="good draft", user=user) == 1
    reviews_verdict_set(review_ids=ids[1:2], verdict=Verdict.WRONG_ANSWER, reason="off topic", user=user)
    assert calibration_labels() == []  # reviewed is not yet a label
    assert reviews_calibration_label(review_ids=ids) == (2, 1)
    labels = calibration_labels()
    assert [(x.answer_id, x.positive) for x in labels] == [(rejected_answer.pk, True), (copies[0].pk, False)]
    assert labels[0].gate_score == pytest.approx(rejected_answer.gate_score)
    assert (labels[0].language, labels[0].embedding_model) == ("en", "use-multilingual-v3")
    assert calibration_labels(model_key="e5-small-q4") == []
    assert len(calibration_labels(model_key="use-multilingual-v3")) == 2
    assert reviews_calibration_label(review_ids=ids, label=False) == (2, 0)
    assert calibration_labels() == []


def test_a_golden_question_is_de_identified_and_respects_frozen_versions(settings, user) -> None:
    """GIVEN a reviewed question with a name and a phone number WHEN it becomes a golden
    question THEN it is stored de-identified in the "review" set (version 1); GIVEN that
    version frozen by a run WHEN another review is added THEN a new version holds both and the
    frozen one is unchanged."""
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": 1.01}
    typed = "Mijn naam is Jan Peeters, bel me op 0470 12 34 56: wat zijn de symptomen van ABCD syndroom?"
    first = ask(typed, "nl")
    second = ask("What are the symptoms of ABCD syndrome?", "en")
    review_queue_sync()
    with pytest.raises(ReviewInvalid, match="verdict first"):
        review_golden_question_create(review_id=Review.objects.get(answer=first).pk)
    review = _reviewed(first, user)
    # the evaluator's text (here the question as the patient typed it) is de-identified again
    question, removed = review_golden_question_create(
        review_id=review.pk, question=typed, expected_urls=["https://rarediseases.info.nih.gov/gard/5/abcd-syndrome"]
    )
    assert {"PERSON", "PHONE"} <= set(removed)
    assert "Peeters" not in question.question and "0470" not in question.question and "[PHONE]" in question.question
    assert "symptomen van ABCD syndroom" in question.question
    assert (question.golden_set.name, question.golden_set.version, question.qid) == ("review", 1, f"review:{review.pk}")
    assert question.tags == ["review", "verdict:wrongly_refused", f"kind:{review.kind}"] and not question.must_refuse
    v1 = GoldenSet.objects.get(name="review")
    assert v1.question_count == 1 and v1.content_hash
    with pytest.raises(ReviewInvalid, match="already a golden question"):
        review_golden_question_create(review_id=review.pk)

    golden_set_freeze(golden_set=v1)
    other = _reviewed(second, user, Verdict.GOOD_ANSWER)
    added, _ = review_golden_question_create(review_id=other.pk, category="symptoms")
    assert (added.golden_set.name, added.golden_set.version) == ("review", 2)
    assert sorted(added.golden_set.questions.values_list("qid", flat=True)) == sorted(
        [f"review:{review.pk}", f"review:{other.pk}"]
    )
    v1.refresh_from_db()
    assert v1.question_count == 1 and list(v1.questions.values_list("qid", flat=True)) == [f"review:{review.pk}"]
    other.refresh_from_db()
    assert other.golden_question == added


def test_committed_golden_sets_are_refused_and_stored_sets_can_be_picked(rejected_answer, user) -> None:
    """A set kept as a committed file is re-imported from it (which would drop the question), so
    it is refused and not offered; a set made in the admin is offered and gets the question."""
    golden_set_resolve(name="ci-slice")
    stored, _ = golden_set_import(name="dutch-review", items=[GoldenItem(qid="x1", question="Wat is astma?")])
    assert "dutch-review" in golden_set_names_for_review() and "ci-slice" not in golden_set_names_for_review()
    review = _reviewed(rejected_answer, user)
    with pytest.raises(ReviewInvalid, match="ci-slice"):
        review_golden_question_create(review_id=review.pk, golden_set_name="ci-slice")
    question, _ = review_golden_question_create(review_id=review.pk, golden_set_name="dutch-review")
    stored.refresh_from_db()
    assert question.golden_set == stored and stored.question_count == 2 and question.position == 1


def test_a_pending_alias_is_proposed_for_the_picked_entity(rejected_answer, user) -> None:
    """GIVEN a reviewed answer WHEN the evaluator proposes an alias THEN a PENDING editor alias
    in the question's language, by the evaluator, linked to the review; proposing the same words
    again links the existing alias."""
    sample_hospital_load()
    entity = Entity.objects.filter(type="department").order_by("pk").first()
    assert entity is not None
    review = _reviewed(rejected_answer, user)
    alias, created = review_alias_propose(review_id=review.pk, entity_id=entity.pk, text=" ABCD  syndroom ", user=user)
    assert created and (alias.text, alias.language, alias.review_state) == ("ABCD syndroom", "en", ReviewState.PENDING)
    assert (alias.entity, alias.created_by, alias.origin) == (entity, user, "editor")
    review.refresh_from_db()
    assert review.alias == alias
    again, created_again = review_alias_propose(
        review_id=review.pk, entity_id=entity.pk, text="abcd syndroom", user=user
    )
    assert (
        again == alias
        and not created_again
        and Alias.objects.filter(entity=entity, normalised="abcd syndroom").count() == 1
    )
    with pytest.raises(ReviewInvalid, match="entity"):
        review_alias_propose(review_id=review.pk, entity_id=0, text="x", user=user)


def test_judging_and_feedback_fill_the_queue_after_commit(
    client, django_capture_on_commit_callbacks, eager_tasks, settings
) -> None:
    """GIVEN the worker in eager mode WHEN a patient's question is rejected by the gate through
    the API THEN after commit background judging runs and, when its judgement is saved, the
    review sync task queues the answer; WHEN a patient gives a thumbs down on a served answer
    THEN its sync task queues it too. The search request itself writes no review."""
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": 1.01}
    settings.JUDGE_SAMPLE_RATE = 1.0
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(
            "/api/v1/search", {"question": "What are the symptoms of ABCD syndrome?"}, content_type="application/json"
        )
    assert response.status_code == 200 and not Review.objects.exists()  # nothing in the request
    with django_capture_on_commit_callbacks(execute=True):
        for callback in callbacks:
            callback()
    answer = Answer.objects.get(trace_id=response.json()["trace_id"])
    assert answer.judgements.get().status == Judgement.Status.DONE
    assert Review.objects.get().answer == answer and answer.review.kind == Kind.GATE_REJECTED

    settings.GATE_THRESHOLDS = {"use-multilingual-v3": -1.0}
    served = ask("What is Holmes-Adie syndrome?", "en")
    with django_capture_on_commit_callbacks(execute=True):
        feedback_record(trace_id=served.trace_id, helpful=False, comment="klopt niet", client="c9")
    assert Review.objects.get(answer=served).kind == Kind.THUMBS_DOWN


def test_review_sync_command(rejected_answer) -> None:
    out = StringIO()
    call_command("review_sync", stdout=out)
    assert "1 created" in out.getvalue() and Review.objects.count() == 1
    call_command("review_sync", "--days", "0", stdout=out)
    assert "0 created" in out.getvalue()


def test_the_scheduled_task_fills_the_queue(rejected_answer) -> None:
    """The beat row created by the migration names the registered task, and the task run with
    its arguments queues the recent answers once."""
    row = PeriodicTask.objects.get(name="Review queue sync")
    assert row.task in app.tasks and row.interval is not None and row.interval.every == 10
    kwargs = json.loads(row.kwargs)
    assert review_queue_sync_task.apply(kwargs=kwargs).get() == {"created": 1, "updated": 0, "removed": 0}
    assert review_queue_sync_task.apply(kwargs=kwargs).get()["created"] == 0
