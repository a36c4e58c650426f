"""Flags and thresholds as audited rows: the catalogue covers the configuration, a change is
validated and audited, live requests freeze the rows, runs keep their own configuration."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from zolsearch.search.config import (
    ConfigInvalid,
    PipelineConfig,
    config_value_parse,
    flags_apply,
    pipeline_config_default,
    pipeline_config_settings,
)
from zolsearch.search.flags import FLAGS, NOT_FLAGS
from zolsearch.search.models import Answer, PipelineFlag, PipelineFlagChange
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.services import FlagInvalid, pipeline_flag_set, search_answer

pytestmark = pytest.mark.django_db


def test_every_configuration_field_is_a_flag_or_says_why_not() -> None:
    fields = set(PipelineConfig.model_fields)
    assert set(FLAGS) | set(NOT_FLAGS) == fields
    assert not set(FLAGS) & set(NOT_FLAGS)


def test_migrate_created_a_row_for_every_flag() -> None:
    assert set(PipelineFlag.objects.filter(model_key="").values_list("name", flat=True)) == set(FLAGS)


def test_changing_the_reranker_brings_its_own_calibration(settings) -> None:  # type: ignore[no-untyped-def]
    """GIVEN the feature reranker with CRAG thresholds from its model file WHEN a configuration
    switches to another scorer THEN CRAG's thresholds and languages are that scorer's (none for
    an uncalibrated cross-encoder), back again when switched back, and values set in the same
    change win."""
    import json
    from pathlib import Path

    settings.RERANKER = "features-lr"
    crag = json.loads(Path(settings.RERANK_MODEL_PATH).read_text())["crag"]
    base = pipeline_config_settings()
    assert base.crag_upper == crag["crag_upper"] and base.rerank_languages == tuple(crag["rerank_languages"])
    other = base.with_overrides(reranker="cross-encoder")
    assert other.crag_upper is None and other.crag_lower is None and other.rerank_languages == ()
    back = other.with_overrides(reranker="features-lr")
    assert (back.crag_upper, back.crag_lower, back.rerank_languages) == (
        base.crag_upper,
        base.crag_lower,
        base.rerank_languages,
    )
    chosen = base.with_overrides(reranker="cross-encoder", crag_upper=0.8, crag_lower=0.2)
    assert (chosen.crag_upper, chosen.crag_lower) == (0.8, 0.2)
    assert base.with_overrides(top_k=5).crag_upper == base.crag_upper  # other changes leave it
    # Flag rows: one row out of range is skipped; the others apply together, so a reranker row
    # does not reset a threshold row that comes before it.
    rows = {"crag_upper": 0.7, "reranker": "cross-encoder", "rerank_depth": -1}
    applied = flags_apply(base, rows)
    assert (applied.crag_upper, applied.reranker, applied.rerank_depth) == (0.7, "cross-encoder", base.rerank_depth)


def test_text_values_are_read_by_the_field_type() -> None:
    assert config_value_parse(name="crag_bypass_languages", raw=" nl, en ,") == ("nl", "en")
    assert config_value_parse(name="crag_upper", raw="default") is None
    assert config_value_parse(name="gate_thresholds_by_language", raw='{"nl": 0.6}') == {"nl": 0.6}
    with pytest.raises(ConfigInvalid):
        config_value_parse(name="gate_thresholds_by_language", raw="[1]")
    with pytest.raises(ConfigInvalid):
        config_value_parse(name="no_such_flag", raw="1")
    config = pipeline_config_default().with_override_pairs(["crag_bypass_languages=fr,de", "crag_enabled=no"])
    assert config.crag_bypass_languages == ("fr", "de") and config.crag_enabled is False


def test_a_change_is_audited_and_frozen_into_the_next_request() -> None:
    before = pipeline_config_default()
    assert before.keyword_rescue_enabled is True
    pipeline_flag_set(name="keyword_rescue_enabled", value="false", changed_by="eva", reason="ablation says so")
    after = pipeline_config_default()
    assert after.keyword_rescue_enabled is False and after.hash != before.hash
    change = PipelineFlagChange.objects.get(flag__name="keyword_rescue_enabled")
    assert (change.old_value, change.new_value, change.changed_by, change.reason) == (
        None,
        False,
        "eva",
        "ablation says so",
    )
    _, answer = search_answer(request=SearchRequest(question="What is Holmes-Adie syndrome?"))
    assert answer.config_hash == after.hash and answer.config["keyword_rescue_enabled"] is False
    # the same value again writes no history; back to the default does
    pipeline_flag_set(name="keyword_rescue_enabled", value=False, changed_by="eva", reason="again")
    pipeline_flag_set(name="keyword_rescue_enabled", value=None, changed_by="eva", reason="back")
    assert PipelineFlagChange.objects.filter(flag__name="keyword_rescue_enabled").count() == 2
    assert pipeline_config_default().hash == before.hash


def test_invalid_changes_are_refused_with_the_reason() -> None:
    with pytest.raises(FlagInvalid, match="not a pipeline flag"):
        pipeline_flag_set(name="embedding_model", value="x", changed_by="eva", reason="r")
    with pytest.raises(FlagInvalid, match="say why"):
        pipeline_flag_set(name="crag_enabled", value=False, changed_by="eva", reason=" ")
    with pytest.raises(FlagInvalid, match="guard_threshold"):
        pipeline_flag_set(name="guard_threshold", value=1.5, changed_by="eva", reason="r")
    with pytest.raises(FlagInvalid, match="every embedding model"):
        pipeline_flag_set(name="crag_enabled", value=False, changed_by="eva", reason="r", model_key="m")
    assert not PipelineFlagChange.objects.exists()


def test_a_model_row_wins_over_the_row_for_every_model() -> None:
    model_key = pipeline_config_default().embedding_model
    pipeline_flag_set(name="gate_threshold", value=0.5, changed_by="eva", reason="all models")
    pipeline_flag_set(name="gate_threshold", value=0.61, changed_by="eva", reason="this model", model_key=model_key)
    pipeline_flag_set(name="gate_threshold", value=0.99, changed_by="eva", reason="other", model_key="other-model")
    assert pipeline_config_default().gate_threshold == 0.61


def test_a_stale_row_is_skipped_not_fatal() -> None:
    """A row written by an older version (out of today's range) must not fail every request."""
    PipelineFlag.objects.filter(name="top_k", model_key="").update(value=-3)
    PipelineFlag.objects.filter(name="rrf_k", model_key="").update(value=30)
    config = pipeline_config_default()
    assert config.top_k == pipeline_config_settings().top_k
    assert config.rrf_k == 30


def _evaluator() -> Client:
    user = User.objects.create_user("eva", password="x", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=["view_pipelineflag", "change_pipelineflag"]))
    client = Client()
    client.force_login(user)
    return client


def test_the_admin_changes_a_flag_with_a_reason(django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    client = _evaluator()
    with django_assert_max_num_queries(15):
        listing = client.get(reverse("admin:search_pipelineflag_changelist") + "?group=CRAG")
    assert listing.status_code == 200 and "crag_upper" in listing.content.decode()
    flag = PipelineFlag.objects.get(name="filco_threshold", model_key="")
    url = reverse("admin:search_pipelineflag_change", args=[flag.pk])
    page = client.get(url)
    assert page.status_code == 200 and "Sentence–question cosine" in page.content.decode()
    missing_reason = client.post(url, {"new_value": "0.3", "reason": ""})
    assert missing_reason.status_code == 200 and not PipelineFlagChange.objects.exists()
    out_of_range = client.post(url, {"new_value": "7", "reason": "try"})
    assert out_of_range.status_code == 200 and "filco_threshold" in out_of_range.content.decode()
    done = client.post(url, {"new_value": "0.3", "reason": "calibrated on dev"})
    assert done.status_code == 302
    change = PipelineFlagChange.objects.get()
    assert (change.new_value, change.changed_by, change.reason) == (0.3, "eva", "calibrated on dev")
    assert pipeline_config_default().filco_threshold == 0.3
    client.post(url, {"use_default": "on", "reason": "undo"})
    assert PipelineFlag.objects.get(pk=flag.pk).value is None


def test_a_viewer_cannot_change_a_flag() -> None:
    user = User.objects.create_user("viewer", password="x", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename="view_pipelineflag"))
    client = Client()
    client.force_login(user)
    flag = PipelineFlag.objects.get(name="crag_enabled", model_key="")
    response = client.post(reverse("admin:search_pipelineflag_change", args=[flag.pk]), {"reason": "x"})
    assert response.status_code == 403
    assert not PipelineFlagChange.objects.exists() and not Answer.objects.exists()
