"""The retention purge on real rows: what goes after RETENTION_DAYS (answers of patients with
their feedback, judgements and reviews; old feedback; the semantic cache), what stays (recent
rows, golden sets, evaluation runs with their answers and results), batches, the summary row,
a failure half-way, the dry run and the command."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, models
from django.test import override_settings
from django.utils import timezone

from evaluation.models import EvaluationResult, EvaluationRun, GoldenQuestion, GoldenSet, Judgement
from evaluation.monitoring.models import RetentionPurge, Trigger
from evaluation.monitoring.selectors import retention_preview
from evaluation.monitoring.services import retention_cutoff, retention_purge
from tests.monitoring.factories import answer_make, feedback_make, judgement_make
from zolsearch.search.contract import Outcome
from zolsearch.search.models import Answer, Feedback, SemanticCacheEntry

pytestmark = pytest.mark.django_db

REVIEWS = apps.is_installed("evaluation.review")


def _cache_entry(*, days_ago: int) -> SemanticCacheEntry:
    entry = SemanticCacheEntry.objects.create(
        model_key="use-multilingual-v3",
        config_hash="0" * 64,
        index_version="1",
        language="nl",
        question="Mijn naam is Jan Peeters, wat is hartfalen?",
        vector=[0.1, 0.2, 0.3],
        payload={},
    )
    SemanticCacheEntry.objects.filter(pk=entry.pk).update(created_at=timezone.now() - timedelta(days=days_ago))
    return entry


@pytest.fixture
def rows() -> dict[str, Any]:
    """Three old patient answers (API and batch; 100 days) with feedback, judgements and a
    review; a recent one (10 days) with the same; an old evaluation-run answer with its judgement,
    result and golden question, and old feedback on it; an old and a recent cache entry."""
    now = timezone.now()
    old, recent = now - timedelta(days=100), now - timedelta(days=10)
    old_answers = [
        answer_make(created_at=old, outcome=Outcome.ANSWERED),
        answer_make(created_at=old, outcome=Outcome.GATE_REJECTED),
        answer_make(created_at=old, channel=Answer.Channel.BATCH),
    ]
    for answer in old_answers:
        feedback_make(answer=answer, created_at=old + timedelta(minutes=1))
        judgement_make(answer=answer, faithfulness=0.5, relevancy=0.5, created_at=old + timedelta(minutes=2))
    recent_answer = answer_make(created_at=recent)
    feedback_make(answer=recent_answer, created_at=recent)
    judgement_make(answer=recent_answer, faithfulness=0.9, relevancy=0.9, created_at=recent)

    golden = GoldenQuestion.objects.create(
        golden_set=GoldenSet.objects.create(name="kept-questions"), qid="kept:1", question="Wat is hartfalen?"
    )
    run = EvaluationRun.objects.create(golden_set=golden.golden_set)
    evaluation_answer = answer_make(created_at=old, channel=Answer.Channel.EVALUATION, question=golden.question)
    judgement_make(answer=evaluation_answer, faithfulness=0.8, relevancy=0.8, created_at=old)
    result = EvaluationResult.objects.create(
        run=run, question=golden, answer=evaluation_answer, answer_text="Hartfalen is …", outcome="answered"
    )
    feedback_make(answer=evaluation_answer, created_at=old, client="c2")
    reviews = []
    if REVIEWS:
        review = apps.get_model("review", "Review")
        reviews = [
            review.objects.create(answer=old_answers[1], kind="gate_rejected", risk=50, golden_question=golden),
            review.objects.create(answer=recent_answer, kind="gate_rejected", risk=50),
        ]
    return {
        "old": old_answers,
        "recent": recent_answer,
        "evaluation": evaluation_answer,
        "result": result,
        "golden": golden,
        "reviews": reviews,
        "cache": [_cache_entry(days_ago=100), _cache_entry(days_ago=10)],
    }


def test_purge_deletes_patient_rows_past_the_period_and_keeps_evaluation_data(rows: dict[str, Any]) -> None:
    """GIVEN the rows of the fixture WHEN the purge runs with 90 days in batches of 2 THEN the old
    patient answers go with their feedback, judgements and review, and so do the old feedback on
    an evaluation answer and the old cache entry; recent rows, the golden question, the evaluation
    run's answer, judgement and result stay; the summary row counts each table and the batches."""
    purge = retention_purge(days=90, batch_size=2)

    assert purge.status == RetentionPurge.Status.SUCCEEDED and purge.trigger == Trigger.SCHEDULE
    assert purge.retention_days == 90 and purge.batch_size == 2
    assert purge.cutoff == pytest.approx(timezone.now() - timedelta(days=90), abs=timedelta(minutes=5))
    expected = {
        "search.Answer": 3,
        "search.Feedback": 4,  # three with their answers, one on the kept evaluation answer
        "evaluation.Judgement": 3,
        "search.SemanticCacheEntry": 1,
    }
    if REVIEWS:
        expected["review.Review"] = 1
    assert purge.counts == expected
    # answers: 2 + 1; feedback left: 1; cache: 1
    assert purge.batches == 4
    assert RetentionPurge.objects.get(pk=purge.pk).counts == expected

    assert not Answer.objects.filter(pk__in=[a.pk for a in rows["old"]]).exists()
    assert set(Answer.objects.values_list("pk", flat=True)) == {rows["recent"].pk, rows["evaluation"].pk}
    assert Feedback.objects.get().answer_id == rows["recent"].pk
    assert set(Judgement.objects.values_list("answer_id", flat=True)) == {rows["recent"].pk, rows["evaluation"].pk}
    result = EvaluationResult.objects.get(pk=rows["result"].pk)
    assert result.answer_id == rows["evaluation"].pk and result.answer_text == "Hartfalen is …"
    assert GoldenQuestion.objects.filter(pk=rows["golden"].pk).exists()
    assert list(SemanticCacheEntry.objects.values_list("pk", flat=True)) == [rows["cache"][1].pk]
    if REVIEWS:
        assert list(apps.get_model("review", "Review").objects.values_list("pk", flat=True)) == [rows["reviews"][1].pk]

    again = retention_purge(days=90)  # idempotent: nothing is left to purge
    assert again.total == 0 and again.batches == 0


def test_nothing_cascades_from_answers_to_golden_sets() -> None:
    """GIVEN every relation in the project WHEN following what deleting an Answer deletes
    (CASCADE, transitively) THEN no golden set or golden question is reached: the de-identified
    questions an evaluator kept survive any purge."""
    reached: set[type[models.Model]] = set()
    todo: list[type[models.Model]] = [Answer]
    while todo:
        model = todo.pop()
        for relation in model._meta.related_objects:
            related = relation.related_model
            if relation.on_delete is models.CASCADE and isinstance(related, type) and related not in reached:
                reached.add(related)
                todo.append(related)
    assert Feedback in reached and Judgement in reached
    assert not reached & {GoldenQuestion, GoldenSet, EvaluationResult, EvaluationRun}


def test_a_failure_half_way_is_recorded_with_what_was_already_deleted(rows: dict[str, Any]) -> None:
    """GIVEN the database refuses to delete the second old answer (a trigger raising an error)
    WHEN the purge runs one answer per batch THEN the first batch stays deleted, the error is
    raised, and the row says FAILED with the error and the first batch's counts."""
    blocked = rows["old"][1].pk
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION test_block_purge() RETURNS trigger AS $$ BEGIN "
            f"IF OLD.id = {blocked} THEN RAISE EXCEPTION 'answer % is on legal hold', OLD.id; END IF; "
            "RETURN OLD; END $$ LANGUAGE plpgsql"
        )
        cursor.execute(
            "CREATE TRIGGER test_block_purge BEFORE DELETE ON search_answer "
            "FOR EACH ROW EXECUTE FUNCTION test_block_purge()"
        )
    with pytest.raises(DatabaseError, match="on legal hold"):
        retention_purge(days=90, batch_size=1)

    purge = RetentionPurge.objects.get()
    assert purge.status == RetentionPurge.Status.FAILED and "on legal hold" in purge.error
    assert purge.batches == 1 and purge.counts["search.Answer"] == 1 and purge.finished_at is not None
    assert not Answer.objects.filter(pk=rows["old"][0].pk).exists()
    assert Answer.objects.filter(pk=blocked).exists()


def test_dry_run_counts_what_the_purge_then_deletes(rows: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """GIVEN the fixture rows WHEN ``retention_purge --dry-run`` runs THEN it prints the counts
    per table, deletes nothing and writes no row; the real command then deletes exactly those
    counts and records them (trigger: command)."""
    call_command("retention_purge", "--dry-run")
    out = capsys.readouterr().out
    assert "Dry run: would delete rows created before" in out
    assert f"  {'search.Answer':<28} 3" in out
    assert f"  {'search.Feedback':<28} 4" in out
    assert Answer.objects.count() == 5 and not RetentionPurge.objects.exists()
    preview = retention_preview(cutoff=retention_cutoff())

    with override_settings(RETENTION_DAYS=90, RETENTION_BATCH_SIZE=1000):
        call_command("retention_purge")
    purge = RetentionPurge.objects.get()
    assert purge.trigger == Trigger.COMMAND and purge.batches == 3
    assert purge.counts == preview
    assert f"Retention purge {purge.pk}: deleted rows created before" in capsys.readouterr().out


def test_the_period_comes_from_the_settings_and_must_be_positive(rows: dict[str, Any]) -> None:
    with override_settings(RETENTION_DAYS=5):
        purge = retention_purge()
    assert purge.retention_days == 5 and purge.counts["search.Answer"] == 4  # the recent one too
    with pytest.raises(CommandError, match="at least 1 day"):
        call_command("retention_purge", "--days", "0")
    with pytest.raises(ValueError, match="batch size"):
        retention_purge(batch_size=0)
