"""The review queue in the admin, as an evaluator uses it: the list with filters and bulk
actions, the review page side by side, the verdict, and turning it into a golden question, an
alias or a calibration label; pages with a bounded number of queries."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.contrib.messages import get_messages
from django.urls import reverse
from django.utils.html import escape

from evaluation.models import GoldenQuestion, Judgement
from evaluation.review.models import Kind, Review, Verdict
from evaluation.review.services import review_queue_sync, review_verdict_set
from taxonomy.models import Alias, Entity, ReviewState
from taxonomy.services import sample_hospital_load
from tests.review.conftest import RED_FLAG_QUESTION, answer_copies, ask
from zolsearch.search.models import Answer

pytestmark = pytest.mark.django_db
LIST = "admin:review_review_changelist"


@pytest.fixture
def queue(rejected_answer) -> list[Review]:
    """30 reviews: a real gate rejection with a judgement and 29 copies, and a red flag."""
    Judgement.objects.create(
        answer=rejected_answer,
        judge_key="local-v1:use-multilingual-v3",
        status=Judgement.Status.DONE,
        faithfulness=0.9,
        relevancy=0.8,
        evidence=[{"sentence": "ABCD syndrome is rare.", "supported": True, "support": "ABCD syndrome", "score": 0.91}],
    )
    answer_copies(rejected_answer, 28)
    ask(RED_FLAG_QUESTION, "nl")
    assert review_queue_sync().created == 30
    return list(Review.objects.all())


def _post_action(client, action: str, reviews: list[Review], **extra: str):
    data = {"action": action, "_selected_action": [str(r.pk) for r in reviews], "index": "0", **extra}
    return client.post(reverse(LIST), data, follow=True)


def _messages(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_the_list_renders_riskiest_first_with_a_bounded_number_of_queries(
    evaluator_client, queue, django_assert_max_num_queries
) -> None:
    with django_assert_max_num_queries(12):
        response = evaluator_client.get(reverse(LIST))
    assert response.status_code == 200
    rows = list(response.context["cl"].result_list)
    assert len(rows) == 30
    assert rows[0].kind == Kind.RED_FLAG and rows[0].risk == 90  # red flag first
    assert [r.risk for r in rows] == sorted((r.risk for r in rows), reverse=True)
    content = response.content.decode()
    assert "90 · high" in content and "40 · low" in content and "Refresh queue" in content
    assert "0.80" in content  # the lowest judge score of the judged answer


def test_the_review_page_shows_everything_side_by_side_with_a_bounded_number_of_queries(
    evaluator_client, queue, rejected_answer, django_assert_max_num_queries
) -> None:
    """GIVEN 30 reviews WHEN the gate rejection's page opens THEN the question, the refused draft
    from the trace, the fallback the patient got, the chunks as a table with scores and source,
    the gate's scores, the judge's evidence and the frozen configuration, in bounded queries."""
    review = Review.objects.get(answer=rejected_answer)
    with django_assert_max_num_queries(14):
        response = evaluator_client.get(reverse("admin:review_review_change", args=[review.pk]))
    assert response.status_code == 200
    content = response.content.decode()
    detail = response.context["detail"]
    assert escape(rejected_answer.question) in content
    assert "Draft — draft refused by the quality gate" in content and escape(detail.draft[:40]) in content
    assert "What the patient got" in content and escape(rejected_answer.answer[:40]) in content
    assert "Retrieved chunks" in content and escape(detail.chunks[0].title) in content
    assert escape(detail.chunks[0].source) in content
    assert f"{rejected_answer.gate['score']:.3f}" in content and "rejected" in content
    assert "ABCD syndrome is rare." in content and "0.91" in content  # the judge's evidence
    assert rejected_answer.config_hash[:12] in content and "gate_enabled" in content
    assert 'name="verdict"' in content and 'name="reason"' in content
    assert "Assign to me" in content and "Turn into golden question" not in content  # no verdict yet


def test_filters_kind_status_assignee_language_outcome(evaluator_client, evaluator, queue) -> None:
    url = reverse(LIST)
    red = Review.objects.get(kind=Kind.RED_FLAG)
    review_verdict_set(review_id=red.pk, verdict=Verdict.RIGHTLY_REFUSED, reason="a real emergency", user=evaluator)

    def count(**params: str) -> int:
        response = evaluator_client.get(url, params)
        assert response.status_code == 200, params
        return response.context["cl"].result_count

    assert count(kind="red_flag") == 1 and count(kind="gate_rejected") == 29
    assert count(status="open") == 29 and count(status="reviewed") == 1
    assert count(assigned="me") == 1 and count(assigned="nobody") == 29  # a verdict assigns the reviewer
    assert count(verdict__exact="rightly_refused") == 1
    assert count(language="nl") == 1 and count(language="en") == 29
    assert count(answer__outcome__exact="gate_rejected") == 29


def test_bulk_actions_assign_mark_and_label(evaluator_client, evaluator, queue) -> None:
    """GIVEN three reviews selected WHEN the evaluator assigns them, marks a verdict without a
    reason (refused), with a reason, and uses them as calibration labels THEN each is stored."""
    chosen = [r for r in queue if r.kind == Kind.GATE_REJECTED][:3]
    ids = [r.pk for r in chosen]
    _post_action(evaluator_client, "assign_to_me", chosen)
    assert Review.objects.filter(pk__in=ids, assigned_to=evaluator).count() == 3
    response = _post_action(evaluator_client, "mark_verdict", chosen, verdict="wrongly_refused", reason="")
    assert "a verdict needs a reason" in _messages(response)
    assert not Review.objects.filter(pk__in=ids).exclude(verdict="").exists()
    response = _post_action(evaluator_client, "mark_verdict", chosen, verdict="wrongly_refused", reason="drafts ok")
    assert "3 reviews marked “Wrongly refused”." in _messages(response)
    rows = Review.objects.filter(pk__in=ids)
    assert {(r.verdict, r.reason, r.reviewed_by_id) for r in rows} == {("wrongly_refused", "drafts ok", evaluator.pk)}
    open_one = next(r for r in queue if r.pk not in ids)
    response = _post_action(evaluator_client, "use_as_calibration_label", [*chosen, open_one])
    assert "3 reviews are now calibration labels." in _messages(response)
    assert "1 reviews have no verdict yet and were skipped." in _messages(response)
    assert Review.objects.filter(calibration_label=True).count() == 3


def test_the_verdict_form_saves_through_the_service(evaluator_client, evaluator, queue) -> None:
    review = next(r for r in queue if r.kind == Kind.GATE_REJECTED)
    url = reverse("admin:review_review_change", args=[review.pk])
    response = evaluator_client.post(url, {"verdict": "wrongly_refused", "reason": ""})
    assert response.status_code == 200 and "This field is required." in response.content.decode()
    response = evaluator_client.post(
        url, {"verdict": "wrongly_refused", "reason": "The draft answers it.", "_continue": "1"}
    )
    assert response.status_code == 302
    review.refresh_from_db()
    assert (review.verdict, review.reviewed_by, review.assigned_to) == ("wrongly_refused", evaluator, evaluator)
    page = evaluator_client.get(url).content.decode()
    assert "Turn into golden question" in page and "Use as calibration label" in page
    evaluator_client.post(reverse("admin:review_review_calibration", args=[review.pk]), {"label": "1"})
    review.refresh_from_db()
    assert review.calibration_label


def test_refresh_assign_and_no_add_or_delete(evaluator_client, evaluator, rejected_answer) -> None:
    assert evaluator_client.get(reverse("admin:review_review_refresh")).status_code == 405  # POST only
    response = evaluator_client.post(reverse("admin:review_review_refresh"), follow=True)
    assert "Queue refreshed: 1 new, 0 updated" in _messages(response)[0]
    review = Review.objects.get()
    evaluator_client.post(reverse("admin:review_review_assign", args=[review.pk]))
    review.refresh_from_db()
    assert review.assigned_to == evaluator
    assert evaluator_client.get(reverse("admin:review_review_add")).status_code == 403
    assert evaluator_client.get(reverse("admin:review_review_delete", args=[review.pk])).status_code == 403


def test_a_viewer_without_change_permission_cannot_act(client, rejected_answer) -> None:
    from django.contrib.auth.models import Permission

    viewer = User.objects.create_user("viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_review"))
    client.force_login(viewer)
    review_queue_sync()
    review = Review.objects.get()
    page = client.get(reverse("admin:review_review_change", args=[review.pk])).content.decode()
    assert "Assign to me" not in page
    assert client.post(reverse("admin:review_review_assign", args=[review.pk])).status_code == 403
    assert client.post(reverse("admin:review_review_refresh")).status_code == 403
    assert Review.objects.get().assigned_to is None


def test_turning_a_verdict_into_a_golden_question(evaluator_client, evaluator, rejected_answer) -> None:
    """GIVEN a reviewed gate rejection WHEN the evaluator opens "Turn into golden question" THEN
    the proposal has the question, the refused draft's urls and must_refuse off; WHEN posted with
    an edited question holding a phone number THEN the stored question is de-identified."""
    review_queue_sync()
    review = Review.objects.get()
    url = reverse("admin:review_review_golden", args=[review.pk])
    assert evaluator_client.get(url).status_code == 200  # no verdict yet: the page says so, the service refuses
    assert (
        "verdict first"
        in evaluator_client.post(url, {"golden_set": "review", "question": "x", "category": "g"}).content.decode()
    )
    review_verdict_set(review_id=review.pk, verdict=Verdict.WRONGLY_REFUSED, reason="good draft", user=evaluator)
    form = evaluator_client.get(url).context["form"]
    assert form.initial["question"] == rejected_answer.question
    assert "abcd-syndrome" in form.initial["expected_urls"] and form.initial["must_refuse"] is False
    response = evaluator_client.post(
        url,
        {
            "golden_set": "review",
            "question": "Bel me op 0470 12 34 56: what are the symptoms of ABCD syndrome?",
            "category": "symptoms",
            "expected_urls": form.initial["expected_urls"],
            "expected_entities": "ABCD syndrome",
        },
    )
    assert response.status_code == 302
    question = GoldenQuestion.objects.get(qid=f"review:{review.pk}")
    assert "0470" not in question.question and "[PHONE]" in question.question
    assert question.expected_entities == ["ABCD syndrome"] and question.category == "symptoms"
    assert question.golden_set.name == "review"
    review.refresh_from_db()
    assert review.golden_question == question


def test_turning_a_verdict_into_a_pending_alias(evaluator_client, evaluator, rejected_answer) -> None:
    sample_hospital_load()
    entity = Entity.objects.filter(type="department").order_by("pk").first()
    assert entity is not None
    review_queue_sync()
    review = Review.objects.get()
    review_verdict_set(review_id=review.pk, verdict=Verdict.WRONGLY_REFUSED, reason="synonym missing", user=evaluator)
    url = reverse("admin:review_review_alias", args=[review.pk])
    page = evaluator_client.get(url)
    assert page.status_code == 200 and escape(entity.name) in page.content.decode()
    response = evaluator_client.post(url, {"text": "ABCD-syndroom", "entity": str(entity.pk), "language": "nl"})
    assert response.status_code == 302
    alias = Alias.objects.get(text="ABCD-syndroom")
    assert (alias.entity, alias.review_state, alias.language, alias.created_by) == (
        entity,
        ReviewState.PENDING,
        "nl",
        evaluator,
    )
    review.refresh_from_db()
    assert review.alias == alias
    assert Answer.objects.count() == 1
