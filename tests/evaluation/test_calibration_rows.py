"""Calibration rows (issue 12 item 3): cohorts from the stored answers of a real evaluation run,
the operating point on hand-made cohorts, activation reaching the served gate through the audited
per-model flag, the admin pages (bounded queries, evaluators only), and ``manage.py calibrate``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.urls import reverse

from evaluation.calibration_cohorts import LanguageCohorts, gate_cohorts_from_answers
from evaluation.metrics.criteria import FAITHFULNESS_PASS, RELEVANCY_PASS
from evaluation.models import Calibration, CalibrationChange, EvaluationResult
from evaluation.services.calibration import (
    MIN_COHORT,
    CalibrationInvalid,
    calibrate_from_runs,
    calibration_activate,
    calibration_from_cohort,
    calibration_retire,
)
from ingestion.models import Document
from zolsearch.search.config import pipeline_config_default
from zolsearch.search.models import PipelineFlag, PipelineFlagChange
from zolsearch.search.pipeline import SearchRequest, pipeline_run

pytestmark = pytest.mark.django_db

MODEL = "use-multilingual-v3"


def _separable(n: int = 20) -> LanguageCohorts:
    """Positives 0.70…0.89 and negatives 0.50…0.69 (n each): separable at 0.70."""
    return LanguageCohorts(
        related=[round(0.70 + 0.01 * i, 2) for i in range(n)],
        unrelated=[round(0.50 + 0.01 * i, 2) for i in range(n)],
    )


def _row(language: str = "en", cohort: LanguageCohorts | None = None, cap: float = 0.05) -> Calibration:
    return calibration_from_cohort(
        model_key=MODEL,
        language=language,
        cohort=cohort or _separable(),
        max_false_refusal=cap,
        sources={"runs": []},
        created_by="tester",
    )


def test_cohorts_from_a_runs_stored_answers_follow_the_judge_and_rescore_the_gate(evaluated_run) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a run's stored answers and judgements WHEN the cohorts are built THEN the related
    cohort is exactly the gate-scored answers the judge rated faithful and relevant, every draft
    is rotated once into the unrelated cohort, and recomputing cos(question, answer) gives the
    gate's stored value (so the rotated scores are on the served scale)."""
    results = list(EvaluationResult.objects.filter(run=evaluated_run).select_related("answer"))
    cohorts = gate_cohorts_from_answers(answer_ids=[r.answer_id for r in results], model_key=MODEL)
    approved = sorted(
        r.answer_id
        for r in results
        if r.answer.gate_score is not None
        and (r.judge.get("faithfulness") or 0) >= FAITHFULNESS_PASS
        and (r.judge.get("relevancy") or 0) >= RELEVANCY_PASS
    )
    english = cohorts["en"]
    assert sorted(english.related_ids) == approved and approved
    scored = [r for r in results if r.answer.gate_score is not None]
    assert english.drafts == len(scored) == len(english.unrelated) > 1
    assert english.rescore_error is not None and english.rescore_error < 0.02
    # An answer put to another question scores lower on average than with its own question.
    assert sum(english.unrelated) / len(english.unrelated) < sum(r.answer.gate_score for r in scored) / len(scored)
    # Each score kept its cosines: rescored with the weight it was served with, it is unchanged.
    served = {r.answer.gate["context_weight"] for r in scored}
    assert english.reweighable and len(served) == 1
    again = english.reweighted(served.pop())
    assert again.related == pytest.approx(english.related, abs=1e-5)
    assert again.unrelated == pytest.approx(english.unrelated, abs=1e-5)


def test_the_cross_lingual_term_agreement_is_recorded_per_draft(evaluated_run) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a run's stored answers from English pages, their questions relabelled Dutch (as a
    Dutch question answered from English MedQuAD pages is stored) WHEN the cohorts are built THEN
    the same-language term agreement never fires (the pages are in another language), while its
    cross-lingual rule keeps every judge-approved draft (each shares words with its own question)
    and refuses some rotated drafts."""
    from zolsearch.search.models import Answer

    ids = list(EvaluationResult.objects.filter(run=evaluated_run).values_list("answer_id", flat=True))
    Answer.objects.filter(pk__in=ids).update(language="nl")
    dutch = gate_cohorts_from_answers(answer_ids=ids, model_key=MODEL)["nl"]
    assert dutch.related and len(dutch.unrelated) > 1
    assert not any(dutch.term_mismatch["related"]) and not any(dutch.term_mismatch["unrelated"])
    assert len(dutch.term_mismatch_across["related"]) == len(dutch.related)
    assert not any(dutch.term_mismatch_across["related"])
    assert any(dutch.term_mismatch_across["unrelated"])


def test_the_term_agreement_reads_each_stored_answers_spelling_corrections(evaluated_run) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a run's stored answers WHEN each question is replaced by one word no page has
    ("xqzwvk") THEN the cohorts' same-language term agreement refuses every judge-approved draft;
    WHEN each answer's trace then records that word corrected to its original question (as
    ``understanding.corrected`` records "faktuur → factuur") THEN the term flags, of the
    judge-approved and of the rotated drafts alike, are again those of the original questions."""
    from zolsearch.search.models import Answer

    ids = list(EvaluationResult.objects.filter(run=evaluated_run).values_list("answer_id", flat=True))
    original = gate_cohorts_from_answers(answer_ids=ids, model_key=MODEL)["en"]
    asked = dict(Answer.objects.filter(pk__in=ids).values_list("pk", "question"))

    def stored(corrected: bool) -> LanguageCohorts:
        for answer in Answer.objects.filter(pk__in=ids):
            understanding = {**(answer.trace.get("understanding") or {})}
            understanding["corrected"] = f"xqzwvk → {asked[answer.pk]}" if corrected else ""
            answer.question, answer.trace = "xqzwvk", {**answer.trace, "understanding": understanding}
            answer.save(update_fields=["question", "trace"])
        return gate_cohorts_from_answers(answer_ids=ids, model_key=MODEL)["en"]

    garbled = stored(corrected=False)
    assert garbled.term_mismatch["related"] and all(garbled.term_mismatch["related"])
    read_back = stored(corrected=True)
    assert read_back.term_mismatch["related"] == original.term_mismatch["related"]
    assert read_back.term_mismatch["unrelated"] == original.term_mismatch["unrelated"]
    assert not all(original.term_mismatch["related"]) and not all(original.term_mismatch["unrelated"])


def test_a_rotated_draft_from_a_page_relevant_to_the_next_question_is_not_off_topic(evaluated_run) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a run's stored answers WHEN the golden set says the page draft i cites is relevant to
    question i + 1 THEN that rotated draft is left out of the off-topic cohort and counted; the
    golden expected urls of the run are read per answer; with no expected urls nothing is left out."""
    from evaluation.calibration_cohorts import answers_of_runs, expected_urls_of_runs
    from evaluation.metrics.retrieval import RELEVANT_GRADE, url_grade

    results = list(
        EvaluationResult.objects.filter(run=evaluated_run, answer__gate_score__isnull=False)
        .select_related("answer", "question")
        .order_by("answer_id")
    )
    expected = expected_urls_of_runs(runs=[evaluated_run])
    assert {r.answer_id: tuple(r.question.expected_urls) for r in results if r.question.expected_urls} == {
        k: v for k, v in expected.items() if k in {r.answer_id for r in results}
    }
    ids = answers_of_runs(runs=[evaluated_run])
    plain = gate_cohorts_from_answers(answer_ids=ids, model_key=MODEL)["en"]
    assert plain.rotated_on_topic == 0 and len(plain.unrelated) == plain.drafts == len(results)
    # Rotation follows answer ids: the draft of results[0] is put to the question of results[1].
    cited = Document.objects.filter(chunks__id__in=results[0].answer.trace["cited_chunk_ids"]).values_list(
        "url", flat=True
    )
    first_page = next(iter(cited))
    # Question 2's expected pages made unrelated to every draft except the first's cited page.
    unrelated_to_all = {r.answer_id: ("https://example.org/none",) for r in results}
    made = {**unrelated_to_all, results[1].answer_id: (first_page,)}
    assert url_grade(first_page, made[results[1].answer_id]) >= RELEVANT_GRADE
    cohort = gate_cohorts_from_answers(answer_ids=ids, model_key=MODEL, expected_urls=made)["en"]
    assert cohort.rotated_on_topic == 1
    assert len(cohort.unrelated) == len(cohort.focus_mismatch["unrelated"]) == plain.drafts - 1
    assert cohort.unrelated == plain.unrelated[1:]


def _components(related: list[tuple[float, float]], unrelated: list[tuple[float, float]]) -> LanguageCohorts:
    """Cohorts with their (alignment, question similarity) pairs, scored with the seed's 0.7."""
    cohort = LanguageCohorts()
    for name, pairs in (("related", related), ("unrelated", unrelated)):
        for a, s in pairs:
            cohort._add(name, 0.7 * a + 0.3 * s, (a, s))
    return cohort


def test_the_context_weight_is_chosen_with_the_threshold_and_reaches_the_served_gate() -> None:
    """GIVEN cohorts whose drafts all agree with their own sources (alignment 0.75-0.94 in both)
    and differ in their agreement with the question (0.50-0.69 vs 0.10-0.29) WHEN calibrated
    THEN the weight refusing the most off-topic drafts within the cap is chosen (of those refusing
    every one, the nearest the seed's 0.7: 0.6), the sweep of every weight is kept as evidence,
    and activation puts the weight with the threshold into the served gate through its own
    audited flag."""
    n = 20
    cohort = _components(
        related=[(0.75 + 0.01 * i, 0.50 + 0.01 * i) for i in range(n)],
        unrelated=[(0.94 - 0.01 * i, 0.10 + 0.01 * i) for i in range(n)],
    )
    seed = _row()  # scores without their cosines: the seed's weight, no sweep
    assert seed.context_weight == 0.7 and seed.evidence["context_weights"] == []
    row = _row(cohort=cohort)
    sweep = {r["w"]: r for r in row.evidence["context_weights"]}
    assert sorted(sweep) == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    assert row.context_weight == 0.6 and row.negatives_refused == 1.0 and row.false_refusal <= 0.05
    assert sweep[0.7]["negatives_refused"] < 1.0 and all(sweep[w]["negatives_refused"] == 1.0 for w in (0.1, 0.3, 0.6))
    assert row.threshold == sweep[0.6]["threshold"]
    assert not LanguageCohorts(related=[0.8], unrelated=[0.3]).reweighable  # scores without cosines
    with pytest.raises(ValueError):
        LanguageCohorts(related=[0.8], unrelated=[0.3]).reweighted(0.5)

    calibration_activate(calibration_id=row.pk, changed_by="eva", reason="question-heavy gate")
    flag = PipelineFlag.objects.get(name="gate_context_weights_by_language", model_key=MODEL)
    assert flag.value["en"] == 0.6
    assert f"calibration {row.pk}" in PipelineFlagChange.objects.filter(flag=flag).latest("changed_at").reason
    state = pipeline_run(
        request=SearchRequest(question="What are the symptoms of ABCD syndrome?", language="en"),
        config=pipeline_config_default(),
    )
    assert state.gate is not None and state.gate.context_weight == 0.6 and state.gate.threshold == row.threshold
    expected = 0.6 * state.gate.context_alignment + 0.4 * state.gate.semantic_similarity
    assert state.gate.score == pytest.approx(expected, abs=1e-5)


def test_calibrating_a_run_stores_rows_with_evidence_and_review_labels_count(evaluated_run) -> None:  # type: ignore[no-untyped-def]
    """Review labels join the cohorts (a labelled-bad answer is a negative); with fewer than
    MIN_COHORT positives the row has no threshold and says why."""
    answer_id = EvaluationResult.objects.filter(run=evaluated_run, answer__gate_score__isnull=False).values_list(
        "answer_id", flat=True
    )[0]
    rows = calibrate_from_runs(runs=[evaluated_run], model_key=MODEL, labels=[(answer_id, False)], created_by="t")
    (row,) = rows
    assert row.language == "en" and row.status == Calibration.Status.PROPOSED
    assert row.evidence["cohorts"]["reviewed_bad"] == 1 and row.evidence["runs"] == [evaluated_run.pk]
    assert row.positives < MIN_COHORT and row.threshold is None and "each needs" in row.rule
    with pytest.raises(CalibrationInvalid, match="other embedding models"):
        evaluated_run.embedding_model = "e5-small"
        calibrate_from_runs(runs=[evaluated_run], model_key=MODEL, created_by="t")


def test_the_threshold_is_the_strictest_within_the_cap_and_the_targets_are_stated() -> None:
    row = _row()
    assert row.threshold == 0.70 and row.false_refusal == 0.0 and row.negatives_refused == 1.0
    assert row.roc_auc == 1.0 and row.evidence["targets"]["met"] is True and len(row.curve) == 72
    overlapping = LanguageCohorts(
        related=[round(0.60 + 0.01 * i, 2) for i in range(20)], unrelated=[round(0.55 + 0.01 * i, 2) for i in range(20)]
    )
    loose = _row(cohort=overlapping)  # 0.60 keeps every good answer but lets 75 % of off-topic drafts through
    assert loose.threshold == 0.60 and loose.negatives_refused == 0.25
    assert (
        loose.evidence["targets"]["met"] is False
        and "25.0% of off-topic drafts" in loose.evidence["targets"]["why_not"]
    )
    with pytest.raises(CalibrationInvalid):
        _row(cap=1.5)


def test_activation_reaches_the_served_gate_through_the_audited_flag() -> None:
    """GIVEN a proposed English calibration WHEN an evaluator activates it THEN the per-model
    flag holds its threshold (with a history entry naming it), a search in English is gated at
    it, a second activation retires the first, and retiring the active one goes back to the
    default."""
    first = _row()
    with pytest.raises(CalibrationInvalid, match="say why"):
        calibration_activate(calibration_id=first.pk, changed_by="eva", reason=" ")
    calibration_activate(calibration_id=first.pk, changed_by="eva", reason="dev runs of 2026-11-24")
    flag = PipelineFlag.objects.get(name="gate_thresholds_by_language", model_key=MODEL)
    assert flag.value["en"] == 0.70
    assert f"calibration {first.pk}" in PipelineFlagChange.objects.filter(flag=flag).latest("changed_at").reason
    config = pipeline_config_default()
    assert config.gate_thresholds_by_language["en"] == 0.70
    state = pipeline_run(
        request=SearchRequest(question="What are the symptoms of ABCD syndrome?", language="en"), config=config
    )
    assert state.gate is not None and state.gate.threshold == 0.70

    second = _row(cohort=LanguageCohorts(related=[0.8] * 20, unrelated=[0.3] * 20))
    calibration_activate(calibration_id=second.pk, changed_by="eva", reason="more runs")
    first.refresh_from_db()
    assert (
        first.status == Calibration.Status.RETIRED
        and pipeline_config_default().gate_thresholds_by_language["en"] == second.threshold
    )
    assert list(CalibrationChange.objects.filter(calibration=first).values_list("action", flat=True)) == [
        "retired",
        "activated",
    ]
    calibration_retire(calibration_id=second.pk, changed_by="eva", reason="judge changed")
    assert "en" not in pipeline_config_default().gate_thresholds_by_language
    assert PipelineFlag.objects.get(name="gate_thresholds_by_language", model_key=MODEL).value is None
    no_threshold = _row(cohort=LanguageCohorts(related=[0.8], unrelated=[0.3]))
    with pytest.raises(CalibrationInvalid, match="no threshold"):
        calibration_activate(calibration_id=no_threshold.pk, changed_by="eva", reason="x")


def test_calibration_pages_render_with_bounded_queries_and_only_evaluators_change(
    admin_client, client, django_assert_max_num_queries
) -> None:  # type: ignore[no-untyped-def]
    rows = [_row(language=lang) for lang in ("en", "nl", "fr")]
    calibration_activate(calibration_id=rows[0].pk, changed_by="eva", reason="first")
    with django_assert_max_num_queries(12):
        page = admin_client.get(reverse("admin:evaluation_calibration_changelist"))
    assert page.status_code == 200 and b"nl" in page.content
    with django_assert_max_num_queries(12):
        detail = admin_client.get(reverse("admin:evaluation_calibration_change", args=[rows[0].pk]))
    text = detail.content.decode()
    assert (
        detail.status_code == 200 and "<svg" in text and "first" in text and "0,70" in text
    )  # nl-be admin: decimal comma

    response = admin_client.post(reverse("admin:evaluation_calibration_activate", args=[rows[1].pk]), {"reason": "ok"})
    assert response.status_code == 302
    rows[1].refresh_from_db()
    assert rows[1].status == Calibration.Status.ACTIVE and rows[1].activated_by == "admin"

    viewer = User.objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_calibration"))
    client.force_login(viewer)
    assert client.get(reverse("admin:evaluation_calibration_change", args=[rows[2].pk])).status_code == 200
    denied = client.post(reverse("admin:evaluation_calibration_activate", args=[rows[2].pk]), {"reason": "x"})
    assert denied.status_code == 403


def test_the_add_form_calibrates_on_chosen_runs(admin_client, evaluated_run) -> None:  # type: ignore[no-untyped-def]
    form = admin_client.get(reverse("admin:evaluation_calibration_add")).content.decode()
    assert 'name="pooled"' in form and 'name="languages"' in form
    response = admin_client.post(
        reverse("admin:evaluation_calibration_add"),
        {"runs": [evaluated_run.pk], "languages": "en", "max_false_refusal": "0.05"},
        follow=True,
    )
    assert response.status_code == 200
    row = Calibration.objects.get()
    assert row.language == "en" and row.created_by == "admin" and row.evidence["runs"] == [evaluated_run.pk]
    admin_client.post(  # the pooled box: a row for '*' beside the language's own
        reverse("admin:evaluation_calibration_add"),
        {"runs": [evaluated_run.pk], "languages": "en", "max_false_refusal": "0.05", "pooled": "on"},
        follow=True,
    )
    assert sorted(Calibration.objects.exclude(pk=row.pk).values_list("language", flat=True)) == ["*", "en"]


def test_the_languages_pool_into_one_row_for_those_without_their_own(evaluated_run) -> None:  # type: ignore[no-untyped-def]
    """GIVEN cohorts of two languages (the run's answers, one of them relabelled French) WHEN
    pooled THEN every list is both concatenated and the counts add up; calibrating with
    ``pooled_only`` stores one row for '*' on all of them; cohorts of different weights without
    their cosines cannot be pooled."""
    from zolsearch.search.models import Answer

    ids = list(EvaluationResult.objects.filter(run=evaluated_run).values_list("answer_id", flat=True))
    Answer.objects.filter(pk__in=ids[:4]).update(language="fr")
    from evaluation.calibration_cohorts import expected_urls_of_runs

    expected = expected_urls_of_runs(runs=[evaluated_run])  # as calibration reads them
    cohorts = gate_cohorts_from_answers(answer_ids=ids, model_key=MODEL, expected_urls=expected)
    assert set(cohorts) == {"en", "fr"}
    pool = LanguageCohorts.pooled([cohorts["en"], cohorts["fr"]])
    for name in ("related", "unrelated", "related_ids"):
        assert getattr(pool, name) == getattr(cohorts["en"], name) + getattr(cohorts["fr"], name)
    assert pool.drafts == cohorts["en"].drafts + cohorts["fr"].drafts and pool.reweighable
    assert pool.term_mismatch_across["unrelated"] == (
        cohorts["en"].term_mismatch_across["unrelated"] + cohorts["fr"].term_mismatch_across["unrelated"]
    )
    (row,) = calibrate_from_runs(runs=[evaluated_run], model_key=MODEL, created_by="t", pooled_only=True)
    assert row.language == "*" and row.positives == len(pool.positives) and row.negatives == len(pool.negatives)
    rows = calibrate_from_runs(runs=[evaluated_run], model_key=MODEL, created_by="t", pooled=True)
    assert sorted(r.language for r in rows) == ["*", "en", "fr"]
    with pytest.raises(ValueError, match="cannot be pooled"):  # scores without their cosines
        LanguageCohorts.pooled([LanguageCohorts(related=[0.8]), LanguageCohorts(related=[0.7], context_weight=0.1)])
    misaligned = LanguageCohorts(related=[0.8], components={"related": [(0.8, 0.8)]}, term_mismatch={"related": []})
    with pytest.raises(ValueError, match="one to one"):
        LanguageCohorts.pooled([cohorts["en"], misaligned])
    assert LanguageCohorts.pooled([]).related == []


def test_the_calibrate_command_exports_the_active_calibration(evaluated_run, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "gate.json"
    out.write_text(json.dumps({"other-model": {"thresholds": {"nl": 0.5}}, MODEL: {"thresholds": {"fr": 0.4}}}))
    call_command("calibrate", "--set", "calibration-dev")
    assert "calibration" in capsys.readouterr().out
    calibration_activate(calibration_id=_row(language="nl").pk, changed_by="eva", reason="test")
    call_command("calibrate", "--set", "calibration-dev", "--export", str(out))
    written = json.loads(out.read_text())
    assert written["other-model"] == {"thresholds": {"nl": 0.5}}
    assert written[MODEL]["thresholds"] == {"fr": 0.4, "nl": 0.70}  # a language without a row here is kept
    assert written[MODEL]["context_weights"] == {"nl": 0.7}
    # a row retired here takes its language out of the file (the file's own "fr" stays)
    from evaluation.services.calibration import calibration_retire

    english = _row(language="en")
    calibration_activate(calibration_id=english.pk, changed_by="eva", reason="test")
    dutch = Calibration.objects.get(language="nl", status=Calibration.Status.ACTIVE)
    calibration_retire(calibration_id=dutch.pk, changed_by="eva", reason="test")
    call_command("calibrate", "--set", "calibration-dev", "--export", str(out))
    assert json.loads(out.read_text())[MODEL]["thresholds"] == {"en": english.threshold, "fr": 0.4}
    with pytest.raises(Exception, match="no succeeded run"):
        call_command("calibrate", "--set", "nope")


def test_the_check_reports_what_the_live_gate_refuses_of_held_out_drafts(evaluated_run, capsys) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a run and an active English calibration (threshold 0.70, w 0.7) WHEN the run is
    checked THEN per language the shares refused are those of the run's judge-approved and
    rotated drafts rescored with the live gate's w and threshold, the command prints them, and
    no calibration row is created."""
    from evaluation.calibration_cohorts import answers_of_runs, expected_urls_of_runs
    from evaluation.services.calibration import calibration_check

    calibration_activate(calibration_id=_row(language="en").pk, changed_by="eva", reason="test")
    before = Calibration.objects.count()
    config = pipeline_config_default()
    assert config.gate_thresholds_by_language == {"en": 0.70}
    rows = calibration_check(
        runs=[evaluated_run],
        model_key=MODEL,
        thresholds=config.gate_thresholds_by_language,
        default_threshold=config.gate_threshold,
        context_weights=config.gate_context_weights_by_language,
    )
    cohort = gate_cohorts_from_answers(
        answer_ids=answers_of_runs(runs=[evaluated_run]),
        model_key=MODEL,
        expected_urls=expected_urls_of_runs(runs=[evaluated_run]),
    )["en"]
    scored = cohort.reweighted(0.7)
    (english,) = [r for r in rows if r["language"] == "en"]
    assert english["rotated_on_topic"] == cohort.rotated_on_topic
    assert len(cohort.unrelated) + cohort.rotated_on_topic == cohort.drafts
    assert english["threshold"] == 0.70 and english["context_weight"] == 0.7
    assert english["good"] == len(scored.related) > 0 and english["off_topic"] == len(scored.unrelated) > 0
    assert english["good_refused"] == pytest.approx(
        sum(s < 0.70 for s in scored.related) / len(scored.related), abs=1e-4
    )
    assert english["off_topic_refused"] == pytest.approx(
        sum(s < 0.70 for s in scored.unrelated) / len(scored.unrelated), abs=1e-4
    )
    # The focus agreement is recorded per related and rotated draft; with it on, a draft it
    # refuses counts as refused whatever its score.
    assert len(cohort.focus_mismatch["related"]) == len(cohort.related)
    assert len(cohort.focus_mismatch["unrelated"]) == len(cohort.unrelated)

    def english_checked(**checks: bool) -> dict[str, object]:
        (row,) = [
            r
            for r in calibration_check(
                runs=[evaluated_run],
                model_key=MODEL,
                thresholds=config.gate_thresholds_by_language,
                default_threshold=config.gate_threshold,
                context_weights=config.gate_context_weights_by_language,
                **checks,
            )
            if r["language"] == "en"
        ]
        return row

    focused = english_checked(focus_check=True)
    flagged = cohort.focus_mismatch["unrelated"]
    assert focused["focus_check"] and focused["off_topic_refused"] == pytest.approx(
        sum(s < 0.70 or f for s, f in zip(scored.unrelated, flagged, strict=True)) / len(flagged), abs=1e-4
    )
    # The site agreement too (the run's pages are MedQuAD's and the sample hospital's, without a
    # priority: it never fires here, see tests/search/test_sites.py for the hospital pages).
    assert len(cohort.site_mismatch["unrelated"]) == len(cohort.unrelated)
    assert not any(cohort.site_mismatch["unrelated"]) and not any(cohort.site_mismatch["related"])
    # The term agreement too: with it on, a draft that shares no word with its question counts
    # as refused whatever its score.
    assert len(cohort.term_mismatch["related"]) == len(cohort.related)
    assert len(cohort.term_mismatch["unrelated"]) == len(cohort.unrelated)
    termed = english_checked(term_check=True)
    no_terms = cohort.term_mismatch["unrelated"]
    assert termed["term_check"] and termed["off_topic_refused"] == pytest.approx(
        sum(s < 0.70 or f for s, f in zip(scored.unrelated, no_terms, strict=True)) / len(no_terms), abs=1e-4
    )
    # Its cross-lingual rule is recorded beside it and applied only with the term check on.
    assert len(cohort.term_mismatch_across["related"]) == len(cohort.related)
    assert len(cohort.term_mismatch_across["unrelated"]) == len(cohort.unrelated)
    across = english_checked(term_check=True, term_check_across=True)
    no_terms_across = cohort.term_mismatch_across["unrelated"]
    assert across["term_check_across"] and across["off_topic_refused"] == pytest.approx(
        sum(s < 0.70 or f for s, f in zip(scored.unrelated, no_terms_across, strict=True)) / len(no_terms_across),
        abs=1e-4,
    )
    assert not english_checked(term_check_across=True)["term_check_across"]
    # A stricter gate refuses at least as much of both cohorts.
    (strict,) = calibration_check(
        runs=[evaluated_run], model_key=MODEL, thresholds={"en": 0.9}, default_threshold=0.9, context_weights={}
    )
    assert (
        strict["good_refused"] >= english["good_refused"]
        and strict["off_topic_refused"] >= english["off_topic_refused"]
    )

    call_command("calibrate", "--check", "--set", "calibration-dev")
    out = capsys.readouterr().out
    assert (
        f"run {evaluated_run.pk} calibration-dev en: threshold 0.70, w 0.7, focus check, site check, term check (also across languages); "
        "judge-approved refused" in out
    )
    assert Calibration.objects.count() == before
    with pytest.raises(Exception, match="cannot be combined"):
        call_command("calibrate", "--check", "--set", "calibration-dev", "--activate", "--reason", "x")
