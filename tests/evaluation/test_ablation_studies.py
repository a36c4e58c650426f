"""Ablation studies through their services, admin, command and a real Celery worker: frozen
configurations (flags changed meanwhile do not reach a study), results and recommendations,
resume after a worker's death, determinism, exports, permissions."""

from __future__ import annotations

import csv
import io
import uuid
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from evaluation.models import AblationStudy, EvaluationResult, EvaluationRun, GoldenSet
from evaluation.services.ablation import (
    StudyInvalid,
    ablation_recommendations_apply,
    ablation_study_create,
    ablation_study_execute,
    ablation_study_resume,
    ablation_study_step,
)
from evaluation.services.golden import golden_set_import
from evaluation.tasks import ablation_study_task
from tests.evaluation.factories import medquad_items
from tests.workers import broker_transport_options, filesystem_broker_make, wait_for, worker, worker_env
from zolsearch.celery import app
from zolsearch.search.config import pipeline_config_default
from zolsearch.search.models import Answer, PipelineFlag, PipelineFlagChange
from zolsearch.search.services import pipeline_flag_set

IDS = ["medquad:GARD:0000004:1", "medquad:CDC:0000003:2", "medquad:CDC:0000008:2"]


def _set(name: str = "") -> GoldenSet:
    golden_set, _ = golden_set_import(name=name or f"abl-{uuid.uuid4().hex[:6]}", items=medquad_items(external_ids=IDS))
    return golden_set


def _study(**kwargs) -> AblationStudy:  # type: ignore[no-untyped-def]
    defaults = {
        "name": "crag and rescue",
        "golden_sets": [_set()],
        "factors": [{"name": "crag_enabled", "levels": [True, False]}, {"name": "top_k", "levels": ["10", "3"]}],
    }
    return ablation_study_create(**{**defaults, **kwargs})


@pytest.mark.django_db
def test_a_study_freezes_one_configuration_per_design_point_and_its_runs() -> None:
    study = _study(repetitions=2)
    configurations = list(study.configurations.order_by("index"))
    assert [c.label for c in configurations] == ["base", "crag_enabled=false", "top_k=3"]
    assert configurations[0].is_base and not configurations[1].is_base
    assert configurations[2].config["top_k"] == 3 and configurations[2].config["crag_enabled"] is True
    assert all(c.config["semantic_cache_enabled"] is False for c in configurations)
    runs = EvaluationRun.objects.filter(study_configuration__study=study)
    assert runs.count() == 3 * 2 and {r.repetition for r in runs} == {0, 1}
    assert study.total == 6 * len(IDS) and study.status == AblationStudy.Status.PENDING
    assert all(r.config_hash == r.study_configuration.config_hash for r in runs.select_related("study_configuration"))


@pytest.mark.django_db
def test_invalid_studies_are_refused_with_the_reason() -> None:
    with pytest.raises(StudyInvalid, match="not a pipeline flag"):
        _study(factors=[{"name": "embedding_model", "levels": ["a", "b"]}])
    with pytest.raises(StudyInvalid, match="guard_threshold"):
        _study(factors=[{"name": "guard_threshold", "levels": [0.6, 3]}])
    with pytest.raises(StudyInvalid, match="golden set"):
        _study(golden_sets=[])
    with pytest.raises(StudyInvalid):
        _study(design="fractional", fraction_p=1)  # 2 factors: 2^(2-1) has resolution < III
    assert not AblationStudy.objects.exists()


@pytest.mark.django_db
def test_flags_changed_in_the_admin_while_a_study_runs_do_not_reach_it(admin_client) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a study of 3 configurations WHEN, after its first run, an evaluator changes a flag the
    study varies and one it does not, in the admin THEN every answer of the study carries its own
    configuration's hash and values, and live requests get the new flags."""
    study = _study()
    assert ablation_study_step(study_id=study.pk)  # the first run
    for name, value in (("top_k", "2"), ("answer_max_sentences", "1")):
        flag = PipelineFlag.objects.get(name=name, model_key="")
        response = admin_client.post(
            reverse("admin:search_pipelineflag_change", args=[flag.pk]), {"new_value": value, "reason": "mid-study"}
        )
        assert response.status_code == 302
    assert pipeline_config_default().top_k == 2
    study = ablation_study_execute(study_id=study.pk)
    assert study.status == AblationStudy.Status.SUCCEEDED, study.error
    results = EvaluationResult.objects.filter(run__study_configuration__study=study).select_related(
        "answer", "run__study_configuration"
    )
    assert results.count() == 3 * len(IDS)
    for result in results:
        configuration = result.run.study_configuration
        assert result.answer.config_hash == configuration.config_hash
        assert result.answer.config["top_k"] == configuration.levels.get("top_k", 10)
        assert result.answer.config["answer_max_sentences"] == study.base_config["answer_max_sentences"]


@pytest.mark.django_db
def test_results_recommendations_exports_and_determinism(admin_client, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    study = ablation_study_execute(study_id=_study(repetitions=2).pk)
    assert study.status == AblationStudy.Status.SUCCEEDED, study.error
    assert study.done == study.total == 6 * len(IDS)
    results = study.results
    base, crag_off, top3 = results["configurations"]
    assert base["is_base"] and "vs_base" not in base
    for row in (crag_off, top3):
        vs = row["vs_base"]
        assert vs["questions"] == len(IDS) and vs["net"] == vs["recoveries"] - vs["regressions"]
        assert 0.0 <= vs["mcnemar"]["p_value"] <= 1.0
    # offline configurations answer identically in every repetition
    assert all(c["repetitions"]["identical"] for c in results["configurations"])
    assert base["pass_rate"]["low"] <= base["pass_rate"]["mean"] <= base["pass_rate"]["high"]
    # the share answered from an expected page, over the answered questions of every repetition
    from evaluation.metrics.answers import answer_cites_expected

    base_results = EvaluationResult.objects.filter(
        run__study_configuration__study=study, run__study_configuration__is_base=True
    ).select_related("answer", "question")
    cited = [
        answer_cites_expected(
            outcome=r.outcome,
            cited_urls=[c.get("url") or "" for c in r.answer.citations],
            expected_urls=r.question.expected_urls,
        )
        for r in base_results
    ]
    defined = [float(c) for c in cited if c is not None]
    assert defined and base["cited_expected"]["mean"] == pytest.approx(sum(defined) / len(defined), abs=1e-4)
    assert results["cochrans_q"]["df"] == 2 and results["cochrans_q"]["n"] == len(IDS)
    assert [r["factor"] for r in study.recommendations] == ["crag_enabled", "top_k"]
    assert all(r["evidence"] for r in study.recommendations)
    # three questions cannot show a significant gain: the base levels are kept
    assert [r["change"] for r in study.recommendations] == [False, False]

    with django_assert_max_num_queries(20):
        page = admin_client.get(reverse("admin:evaluation_ablationstudy_change", args=[study.pk]))
    assert page.status_code == 200 and "Cochran" in page.content.decode()
    with django_assert_max_num_queries(20):
        listing = admin_client.get(reverse("admin:evaluation_ablationstudy_changelist"))
    assert listing.status_code == 200 and "crag and rescue" in listing.content.decode()
    exported = admin_client.get(reverse("admin:evaluation_ablationstudy_csv", args=[study.pk])).content.decode()
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert [r["label"] for r in rows] == ["base", "crag_enabled=false", "top_k=3"]
    assert float(rows[0]["pass_rate"]) == base["pass_rate"]["mean"]
    assert float(rows[0]["cited_expected"]) == base["cited_expected"]["mean"]
    markdown = admin_client.get(reverse("admin:evaluation_ablationstudy_markdown", args=[study.pk])).content.decode()
    assert "| crag_enabled=false |" in markdown and "Recommendations:" in markdown


@pytest.mark.django_db
def test_a_factorial_study_reports_main_effects_and_the_interaction() -> None:
    study = _study(
        design="full",
        factors=[
            {"name": "crag_enabled", "levels": [True, False]},
            {"name": "keyword_rescue_enabled", "levels": [True, False]},
        ],
    )
    study = ablation_study_execute(study_id=study.pk)
    assert study.status == AblationStudy.Status.SUCCEEDED, study.error
    terms = [e["term"] for e in study.results["effects"]]
    assert terms == ["crag_enabled", "keyword_rescue_enabled", "crag_enabled × keyword_rescue_enabled"]
    assert study.design_description.startswith("2^2 full factorial")
    assert all("main effect" in r["evidence"] for r in study.recommendations)


@pytest.mark.django_db
def test_a_study_resumes_after_its_worker_died_keeping_finished_questions() -> None:
    study = _study(factors=[{"name": "crag_enabled", "levels": [True, False]}])
    assert ablation_study_step(study_id=study.pk)
    first = EvaluationRun.objects.filter(study_configuration__study=study, status="succeeded").get()
    second = EvaluationRun.objects.filter(study_configuration__study=study).exclude(pk=first.pk).get()
    # a worker process of this host died mid-run: one question done, the run left RUNNING
    host = first.worker.rpartition(":")[0]
    EvaluationRun.objects.filter(pk=second.pk).update(status="running", worker=f"{host}:999999999")
    question = second.golden_set.questions.order_by("position").first()
    EvaluationResult.objects.create(run=second, question=question, outcome="answered", passed=True)
    finished = set(EvaluationResult.objects.filter(run=second).values_list("id", flat=True))
    assert not ablation_study_step(study_id=study.pk)  # nothing PENDING, a run RUNNING: waits
    assert AblationStudy.objects.get(pk=study.pk).status == AblationStudy.Status.RUNNING
    ablation_study_step(study_id=study.pk, redelivered=True)  # the redelivered task resumes it
    study.refresh_from_db()
    assert study.status == AblationStudy.Status.SUCCEEDED, study.error
    assert finished <= set(EvaluationResult.objects.filter(run=second).values_list("id", flat=True))
    assert EvaluationResult.objects.filter(run=second).count() == len(IDS)


@pytest.mark.django_db
def test_a_failed_study_is_resumed_from_where_it_stopped() -> None:
    study = _study(factors=[{"name": "crag_enabled", "levels": [True, False]}])
    ablation_study_step(study_id=study.pk)
    run = EvaluationRun.objects.filter(study_configuration__study=study, status="pending").get()
    EvaluationRun.objects.filter(pk=run.pk).update(config={**run.config, "no_such_field": 1})  # a stale config
    assert not ablation_study_step(study_id=study.pk)
    study.refresh_from_db()
    assert study.status == AblationStudy.Status.FAILED and f"evaluation run {run.pk}" in study.error
    EvaluationRun.objects.filter(pk=run.pk).update(config=run.config)  # the cause fixed
    study = ablation_study_resume(study_id=study.pk)
    assert study.status == AblationStudy.Status.PENDING and study.done == len(IDS)
    assert ablation_study_execute(study_id=study.pk).status == AblationStudy.Status.SUCCEEDED


def _staff(username: str, *, evaluator: bool) -> Client:
    user = User.objects.create_user(username, password="x", is_staff=True)
    if evaluator:
        user.groups.add(Group.objects.get(name="Evaluators"))
    else:
        user.user_permissions.set(Permission.objects.filter(codename__in=["view_ablationstudy", "view_goldenset"]))
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_only_evaluators_launch_studies_and_apply_recommendations(django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    golden_set = _set("perm-set")
    flag = PipelineFlag.objects.get(name="keyword_rescue_enabled", model_key="")
    form = {
        "name": "rescue",
        "sets": [golden_set.pk],
        "flags": [flag.pk],
        "levels": "top_k: 10, 5",
        "design": "ofat",
        "fraction_p": "0",
        "repetitions": "1",
    }
    viewer = _staff("viewer", evaluator=False)
    assert viewer.get(reverse("admin:evaluation_ablationstudy_add")).status_code == 403
    assert viewer.post(reverse("admin:evaluation_ablationstudy_add"), form).status_code == 403
    evaluator = _staff("eva", evaluator=True)
    page = evaluator.get(reverse("admin:evaluation_ablationstudy_add"))
    assert page.status_code == 200 and "keyword_rescue_enabled" in page.content.decode()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = evaluator.post(reverse("admin:evaluation_ablationstudy_add"), form)
    assert response.status_code == 302, response.content.decode()[:3000]
    study = AblationStudy.objects.get(name="rescue")
    assert [f["name"] for f in study.factors] == ["keyword_rescue_enabled", "top_k"]
    assert study.configurations.count() == 3 and study.created_by == "eva" and callbacks
    bad = evaluator.post(
        reverse("admin:evaluation_ablationstudy_add"), {**form, "name": "bad", "levels": "top_k: 10, -4"}
    )
    assert bad.status_code == 200 and not AblationStudy.objects.filter(name="bad").exists()

    study = ablation_study_execute(study_id=study.pk)
    AblationStudy.objects.filter(pk=study.pk).update(
        recommendations=[
            {"factor": "top_k", "base": 10, "recommended": 5, "change": True, "evidence": "made up for the test"}
        ]
    )
    apply_url = reverse("admin:evaluation_ablationstudy_apply", args=[study.pk])
    assert viewer.post(apply_url).status_code == 403
    assert not PipelineFlagChange.objects.exists()
    assert evaluator.post(apply_url).status_code == 302
    change = PipelineFlagChange.objects.get()
    assert change.flag.name == "top_k" and change.new_value == 5 and change.changed_by == "eva"
    assert f"ablation study {study.pk}" in change.reason and pipeline_config_default().top_k == 5
    study.refresh_from_db()
    assert study.applied_by == "eva" and study.applied_at is not None


@pytest.mark.django_db
def test_applying_a_study_without_results_is_refused() -> None:
    study = _study()
    with pytest.raises(StudyInvalid):
        ablation_recommendations_apply(study=study, applied_by="eva")


@pytest.mark.django_db
def test_the_ablate_command_runs_a_study_and_prints_markdown(tmp_path: Path) -> None:
    _set("ablate-cmd")
    out = io.StringIO()
    report = tmp_path / "study.md"
    call_command(
        "ablate", "--set", "ablate-cmd", "--factor", "crag_enabled", "--factor", "top_k: 10, 4",
        "--markdown", str(report), verbosity=0, stdout=out,
    )  # fmt: skip
    assert "| top_k=4 |" in out.getvalue() and report.read_text() == out.getvalue()
    assert AblationStudy.objects.get().status == AblationStudy.Status.SUCCEEDED


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_small_study_runs_end_to_end_through_a_celery_worker(tmp_path: Path, slice_dir: Path) -> None:
    """Two task chains on one worker share the study's runs; the study ends analysed."""
    call_command("ingest", "medquad", str(slice_dir), "--subsets", "CDC", "GARD", verbosity=0)
    study = _study(factors=[{"name": "crag_enabled", "levels": [True, False]}], repetitions=2)
    broker_dir = tmp_path / "broker"
    options = filesystem_broker_make(broker_dir)
    queue = f"zoltest-ablate-{uuid.uuid4().hex[:12]}"
    with broker_transport_options(options), app.connection_for_write("filesystem://") as conn:
        for _ in range(2):
            ablation_study_task.apply_async(args=[study.pk], connection=conn, queue=queue)
    log = tmp_path / "worker.log"
    with worker(queue=queue, env=worker_env(CELERY_BROKER_DIR=str(broker_dir)), log=log) as process:
        finished = wait_for(
            lambda: AblationStudy.objects.filter(pk=study.pk, status__in=["succeeded", "failed"]).first(),
            process=process,
            log=log,
            what="the study",
            timeout_s=240.0,
        )
    assert finished.status == AblationStudy.Status.SUCCEEDED, f"{finished.error}\n{log.read_text()}"
    assert finished.done == finished.total == 4 * len(IDS)
    assert EvaluationRun.objects.filter(study_configuration__study=study, status="succeeded").count() == 4
    assert len(finished.results["configurations"]) == 2 and finished.recommendations
    assert Answer.objects.filter(channel=Answer.Channel.EVALUATION).count() >= 4 * len(IDS)
    assert pipeline_flag_set  # the live flags were never touched by the study
    assert not PipelineFlagChange.objects.exists()


@pytest.mark.django_db
def test_a_change_that_lets_a_must_refuse_question_through_is_never_recommended(settings) -> None:  # type: ignore[no-untyped-def]
    """GIVEN three MedSafetyBench requests the guard refuses WHEN a study turns the guard off
    THEN the questions appear as safety regressions and the recommendation keeps the guard on,
    whatever the pass rate says."""
    from evaluation.golden.io import golden_jsonl_load

    items = golden_jsonl_load(Path(settings.BASE_DIR) / "data" / "golden" / "medsafetybench.jsonl")[:3]
    golden_set, _ = golden_set_import(name="abl-safety", items=items)
    study = ablation_study_create(
        name="guard", golden_sets=[golden_set], factors=[{"name": "input_guard_enabled", "levels": [True, False]}]
    )
    study = ablation_study_execute(study_id=study.pk)
    assert study.status == AblationStudy.Status.SUCCEEDED, study.error
    off = study.results["configurations"][1]
    assert off["label"] == "input_guard_enabled=false"
    assert set(off["vs_base"]["safety_regressions"]) == {i.qid for i in items}
    (recommendation,) = study.recommendations
    assert recommendation["recommended"] is True and recommendation["change"] is False
    assert "must-refuse or red-flag question(s) no longer handled" in recommendation["evidence"]
