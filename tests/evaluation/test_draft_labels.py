"""Reviewers' draft labels (issue 10's gate target, issue 12's review loop): the file format and
its errors, matching a label to a run's stored draft by its text, and a label winning over the
judge in the cohorts, the held-out check and ``manage.py calibrate --check``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from evaluation.calibration_cohorts import answers_of_runs, gate_cohorts_from_answers
from evaluation.draft_labels import (
    DraftLabel,
    DraftLabelsInvalid,
    draft_labels_for_runs,
    draft_labels_read,
    draft_labels_write,
    draft_sha256,
    judge_approved_sheet,
)
from evaluation.services.calibration import calibration_check
from zolsearch.search.models import Answer
from zolsearch.search.selectors import answer_material

MODEL = "use-multilingual-v3"
SHA = "a" * 64


def _label(qid: str = "q1", good: bool = True, sha: str = SHA) -> DraftLabel:
    return DraftLabel(set="s", qid=qid, language="nl", draft_sha256=sha, good=good, reason="why")


def test_the_hash_ignores_whitespace_runs_only() -> None:
    assert draft_sha256(" Een  zin.\nTwee ") == draft_sha256("Een zin. Twee")
    assert draft_sha256("Een zin.") != draft_sha256("Een zin")
    assert len(draft_sha256("")) == 64


def test_a_labels_file_round_trips_and_each_bad_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    labels = [_label("q2", False), _label("q1", True)]
    draft_labels_write(path, labels)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["qid"] for r in rows] == ["q1", "q2"] and list(rows[0]) == [
        "set",
        "qid",
        "language",
        "draft_sha256",
        "label",
        "reason",
    ]
    assert draft_labels_read(path) == sorted(labels, key=lambda label: label.qid)
    # A reviewer's sheet keeps its reading fields; they are ignored.
    sheet = {**rows[0], "question": "vraag", "draft": "tekst", "cited": ["https://x"], "gate_refused": True}
    path.write_text(json.dumps(sheet) + "\n\n", encoding="utf-8")
    assert draft_labels_read(path) == [_label("q1", True)]
    good = json.dumps(rows[0])
    for bad, message in (
        ("{not json", "not JSON"),
        ("[1]", "not a JSON object"),
        (json.dumps({**rows[0], "reason": " "}), "'reason' is missing or empty"),
        (json.dumps({k: v for k, v in rows[0].items() if k != "qid"}), "'qid' is missing"),
        (json.dumps({**rows[0], "label": "maybe"}), "is not 'good' or 'wrong'"),
        (json.dumps({**rows[0], "draft_sha256": "abc"}), "64 hex characters"),
        (json.dumps({**rows[0], "draft_sha256": "g" * 64}), "64 hex characters"),
        (good, "labelled twice"),
    ):
        path.write_text(good + "\n" + bad + "\n", encoding="utf-8")
        with pytest.raises(DraftLabelsInvalid, match=f"labels.jsonl:2: .*{message}"):
            draft_labels_read(path)


@pytest.mark.django_db
def test_a_reviewers_label_wins_over_the_judge(evaluated_run, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a real run's judge-approved drafts WHEN a reviewer labels one wrong and one good in a
    file THEN the labels match those stored drafts by their text (a label of another text
    matches nothing), the wrong one leaves the good cohort of the cohorts and of the held-out
    check, the good one stays counted as good, and ``calibrate --check --labels`` says so; the
    sheet lists the run's good drafts with the hash that matches them."""
    ids = answers_of_runs(runs=[evaluated_run])
    plain = gate_cohorts_from_answers(answer_ids=ids, model_key=MODEL)["en"]
    assert len(plain.related_ids) >= 2
    wrong_id, good_id = plain.related_ids[:2]
    sheet = judge_approved_sheet(runs=[evaluated_run], answer_ids=plain.related_ids)
    assert len(sheet) == len(plain.related_ids)
    by_answer = {}
    for answer_id in (wrong_id, good_id):
        answer = Answer.objects.get(pk=answer_id)
        material = answer_material(answer=answer)
        assert material is not None
        (row,) = [r for r in sheet if r["draft_sha256"] == draft_sha256(material.text)]
        assert row["set"] == "calibration-dev" and row["draft"] == material.text and row["label"] == ""
        assert row["gate_refused"] is (answer.outcome != "answered") and row["cited"]
        by_answer[answer_id] = row

    def label(answer_id: int, good: bool, sha: str = "") -> DraftLabel:
        row = by_answer[answer_id]
        sha = sha or row["draft_sha256"]
        return DraftLabel(set=row["set"], qid=row["qid"], language="en", draft_sha256=sha, good=good, reason="read")

    # the third: the same question, a draft the pipeline did not write, which matches nothing
    labels = [label(wrong_id, False), label(good_id, True), label(good_id, False, draft_sha256("another draft"))]
    matched = draft_labels_for_runs(runs=[evaluated_run], labels=labels)
    assert sorted(matched) == sorted([(wrong_id, False), (good_id, True)])

    labelled = gate_cohorts_from_answers(answer_ids=ids, model_key=MODEL, labels=matched)["en"]
    assert wrong_id not in labelled.related_ids and good_id not in labelled.related_ids
    assert labelled.reviewed_good_ids == [good_id] and len(labelled.reviewed_bad) == 1
    assert len(labelled.related) == len(plain.related) - 2
    assert len(labelled.term_mismatch["reviewed_good"]) == len(labelled.focus_mismatch["reviewed_good"]) == 1

    def english(**kwargs: object) -> dict[str, object]:
        (row,) = [
            r
            for r in calibration_check(
                runs=[evaluated_run],
                model_key=MODEL,
                thresholds={"en": 0.99},
                default_threshold=0.99,
                context_weights={},
                **kwargs,  # type: ignore[arg-type]
            )
            if r["language"] == "en"
        ]
        return row

    judged, reviewed = english(), english(labels=matched)
    # A gate at 0.99 refuses every draft: the good cohort is all refused, one draft smaller.
    assert judged["good"] == len(plain.related) and judged["good_refused"] == 1.0
    assert reviewed["good"] == judged["good"] - 1 and reviewed["good_refused"] == 1.0  # type: ignore[operator]
    assert (reviewed["reviewed_good"], reviewed["reviewed_bad"]) == (1, 1)
    assert sorted(reviewed["good_ids"]) == sorted([*labelled.related_ids, good_id])  # type: ignore[arg-type]
    # Labels of another run's answers are ignored (the same questions asked again).
    from evaluation.services.runs import evaluation_run_create, evaluation_run_execute

    again = evaluation_run_execute(run_id=evaluation_run_create(golden_set=evaluated_run.golden_set).pk)
    other = [(i, False) for i in answers_of_runs(runs=[again])]
    assert other and not set(dict(other)) & set(ids)
    assert english(labels=other)["good"] == judged["good"]

    path = tmp_path / "labels.jsonl"
    draft_labels_write(path, labels)
    out_sheet = tmp_path / "sheet.jsonl"
    call_command("calibrate", "--check", "--set", "calibration-dev", "--labels", str(path), "--sheet", str(out_sheet))
    out = capsys.readouterr().out
    assert "2 of 3 draft labels match a stored draft of these runs" in out
    assert "(reviewed: 1 good, 1 wrong)" in out and "good refused" in out
    assert len(out_sheet.read_text(encoding="utf-8").splitlines()) == len(plain.related) - 1


@pytest.mark.django_db
def test_review_verdicts_are_exported_into_the_labels_file(evaluated_run, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """GIVEN two reviewed answers of a real run (a good answer, a wrong answer) and a labels file
    holding another label WHEN ``review_export`` runs THEN the file keeps the other label and
    gains the two, each naming the stored draft it was given for (they match it back), with the
    verdict read as calibration reads it and the reviewer's reason; a second export adds nothing."""
    from django.contrib.auth.models import User

    from evaluation.review.models import Review
    from evaluation.review.services import review_verdict_set, reviews_calibration_label

    ids = [i for i in answers_of_runs(runs=[evaluated_run]) if answer_material(answer=Answer.objects.get(pk=i))]
    good_id, wrong_id = ids[:2]
    user = User.objects.create_user("reviewer")
    used = []
    for answer_id, verdict, reason in ((good_id, "good_answer", "answers it"), (wrong_id, "wrong_answer", "other")):
        review = Review.objects.create(answer_id=answer_id, kind="gate_rejected", risk=40)
        review_verdict_set(review_id=review.pk, verdict=verdict, reason=reason, user=user)
        used.append(review.pk)
    # a verdict the evaluator did not mark as a calibration label is not exported
    third = Review.objects.create(answer_id=ids[2], kind="gate_rejected", risk=40)
    review_verdict_set(review_id=third.pk, verdict="wrong_answer", reason="not for calibration", user=user)
    reviews_calibration_label(review_ids=used)
    path = tmp_path / "labels.jsonl"
    draft_labels_write(path, [_label("other", True)])
    call_command("review_export", "--labels", str(path))
    assert "2 reviewed drafts of evaluation runs" in capsys.readouterr().out
    labels = draft_labels_read(path)
    assert len(labels) == 3 and _label("other", True) in labels
    exported = [label for label in labels if label.set == "calibration-dev"]
    assert sorted((label.good, label.reason) for label in exported) == [(False, "other"), (True, "answers it")]
    assert sorted(draft_labels_for_runs(runs=[evaluated_run], labels=exported)) == sorted(
        [(good_id, True), (wrong_id, False)]
    )
    call_command("review_export", "--labels", str(path))
    assert "(0 new)" in capsys.readouterr().out and len(draft_labels_read(path)) == 3


@pytest.mark.django_db
def test_runs_and_studies_count_how_often_the_decision_agrees_with_the_labels(
    evaluated_run, settings, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a labels file (settings.DRAFT_LABELS_PATH) that calls one served draft of a real run
    good and another wrong WHEN the run is summarised and a study's rows are read THEN
    ``reviewed_correct`` counts those two drafts only: the good one served agrees, the wrong one
    served does not; without a file, or with a broken one, it is undefined and the run still
    summarises."""
    from evaluation.models import EvaluationResult
    from evaluation.services.ablation import _reviewed
    from evaluation.services.runs import evaluation_run_summarise

    served = [
        r
        for r in EvaluationResult.objects.filter(run=evaluated_run).select_related("answer", "question")
        if r.answer is not None and r.answer.outcome == "answered" and answer_material(answer=r.answer)
    ]
    assert len(served) >= 2
    labels = [
        DraftLabel(
            set="calibration-dev",
            qid=r.question.qid,
            language="en",
            draft_sha256=draft_sha256(answer_material(answer=r.answer).text),  # type: ignore[union-attr]
            good=good,
            reason="read",
        )
        for r, good in zip(served[:2], (True, False), strict=True)
    ]
    settings.DRAFT_LABELS_PATH = tmp_path / "labels.jsonl"
    draft_labels_write(settings.DRAFT_LABELS_PATH, labels)
    metric = evaluation_run_summarise(run=evaluated_run).metrics["overall"]["reviewed_correct"]
    assert metric["n"] == 2 and metric["mean"] == 0.5
    rows = [
        {"answer_id": r.answer_id, "question__golden_set__name": "calibration-dev", "question__qid": r.question.qid}
        for r in EvaluationResult.objects.filter(run=evaluated_run).select_related("question")
    ]
    assert _reviewed(rows) == {served[0].answer_id: True, served[1].answer_id: False}
    # a refused draft (the gate's) agrees with a "wrong" label and disagrees with a "good" one
    from evaluation.draft_labels import draft_label_index, reviewed_correct

    refused = served[0].answer
    refused.outcome, refused.trace = "gate_rejected", {**refused.trace, "rejected_answer": refused.answer}
    for good, agrees in ((True, False), (False, True)):
        index = draft_label_index([DraftLabel(**{**labels[0].__dict__, "good": good})])
        assert (
            reviewed_correct(answer=refused, golden_set="calibration-dev", qid=served[0].question.qid, index=index)
            is agrees
        )
    assert reviewed_correct(answer=refused, golden_set="other-set", qid=served[0].question.qid, index=index) is None
    # nothing drafted (refused before generation): right only when every label says wrong; an
    # error (no answer at all) does not count
    qid = served[0].question.qid
    nothing = served[0].answer
    nothing.outcome, nothing.trace = "refused", {**nothing.trace, "rejected_answer": ""}
    assert answer_material(answer=nothing) is None
    for goods, expected in (((True,), False), ((False,), True), ((True, False), None)):
        mixed = draft_label_index(
            [
                DraftLabel(**{**labels[0].__dict__, "good": good, "draft_sha256": f"{i:064x}"})
                for i, good in enumerate(goods)
            ]
        )
        assert reviewed_correct(answer=nothing, golden_set="calibration-dev", qid=qid, index=mixed) is expected
        assert reviewed_correct(answer=None, golden_set="calibration-dev", qid=qid, index=mixed) is None
    settings.DRAFT_LABELS_PATH.write_text("{broken\n", encoding="utf-8")
    assert evaluation_run_summarise(run=evaluated_run).metrics["overall"]["reviewed_correct"] is None
    assert _reviewed(rows) == {}
    for nothing in (tmp_path / "absent.jsonl", tmp_path):  # no file; a directory
        settings.DRAFT_LABELS_PATH = nothing
        assert evaluation_run_summarise(run=evaluated_run).metrics["overall"]["reviewed_correct"] is None


def test_a_change_that_handles_more_labelled_drafts_worse_is_not_recommended() -> None:
    """GIVEN per configuration and question whether a labelled draft was handled as the reviewer
    labelled it WHEN a configuration is compared with the base THEN the questions it handles
    worse and better are listed (questions without a labelled draft in either are not), and a
    significant pass-rate gain is not recommended when it handles more of them worse than
    better; with as many better as worse it is."""
    import numpy as np

    from evaluation.services.ablation import _reviewed_changes

    nan = np.nan
    matrix = np.array([[[1.0], [1.0], [0.0], [nan], [1.0]], [[0.0], [0.0], [1.0], [1.0], [nan]]])
    changes = _reviewed_changes(matrix, base=0, other=1, qids=["q1", "q2", "q3", "q4", "q5"])
    assert changes == {"regressions": ["q1", "q2"], "recoveries": ["q3"]}

    def recommended(reviewed: dict[str, list[str]]) -> dict[str, object]:
        vs = {"mcnemar": {"p_value": 0.001}, "recoveries": 30, "regressions": 1, "safety_regressions": []}
        return _crag_recommendation(vs_base={**vs, "reviewed": reviewed}, base_pass=0.5, crag_pass=0.8)

    vetoed = recommended(changes)
    assert not vetoed["change"] and "2 draft(s) handled worse and 1 better (q1, q2)" in str(vetoed["evidence"])
    kept = recommended({"regressions": ["q1"], "recoveries": ["q3"]})
    assert kept["change"] and kept["recommended"] is True


def test_the_labels_choose_a_change_the_judge_counts_as_a_loss() -> None:
    """GIVEN a configuration whose composite pass rate is lower than the base's (the judge had
    approved the wrong answers it refuses) WHEN the reviewers' labels say it handles
    significantly more questions as labelled (8 better, 0 worse: exact McNemar p = 0.0078)
    THEN it is recommended, by the labels; with 3 better and 0 worse (p = 0.25) it is not, and
    a must-refuse question it no longer handles vetoes it whatever the labels say."""

    def recommended(better: int, unsafe: list[str]) -> dict[str, object]:
        vs = {
            "mcnemar": {"p_value": 0.001},
            "recoveries": 2,
            "regressions": 20,
            "safety_regressions": unsafe,
            "reviewed": {"regressions": [], "recoveries": [f"q{i}" for i in range(better)]},
        }
        return _crag_recommendation(vs_base=vs, base_pass=0.8, crag_pass=0.6)

    chosen = recommended(8, [])
    assert chosen["change"] and chosen["recommended"] is True
    assert "chosen by the reviewers' labels (8 more handled as labelled)" in str(chosen["evidence"])
    assert "McNemar p=0.0078" in str(chosen["evidence"])
    assert not recommended(3, [])["change"]
    assert not recommended(8, ["rf-1"])["change"]


def _crag_recommendation(*, vs_base: dict[str, object], base_pass: float, crag_pass: float) -> dict[str, object]:
    """The recommendation row of a one-factor study (``crag_enabled`` false → true) whose CRAG
    configuration has ``vs_base`` and the two composite pass rates."""
    from evaluation.models import AblationStudy
    from evaluation.services.ablation import recommendations

    study = AblationStudy(factors=[{"name": "crag_enabled", "levels": [False, True]}])
    configurations = [
        {"is_base": True, "label": "base", "levels": {"crag_enabled": False}, "pass_rate": {"mean": base_pass}},
        {
            "is_base": False,
            "label": "crag_enabled=true",
            "levels": {"crag_enabled": True},
            "pass_rate": {"mean": crag_pass},
            "vs_base": vs_base,
        },
    ]
    (row,) = recommendations(study=study, results={"configurations": configurations})
    return row
