"""Gate calibration per language: the threshold rule on hand-made cohorts, and a calibration
file reaching the served gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.gate_calibrate import MIN_COHORT, gate_calibrate
from zolsearch.search.config import pipeline_config_default
from zolsearch.search.pipeline import SearchRequest, pipeline_run


def test_threshold_is_the_lowest_fpr_point_within_the_false_refusal_cap() -> None:
    """GIVEN related scores 0.70…0.89 and unrelated 0.50…0.69 (20 each, separable at 0.70)
    WHEN calibrated with a 5 % cap THEN the threshold is 0.70: no related draft refused, no
    unrelated one passed; a language with too few drafts gets no threshold, with the reason."""
    related = [round(0.70 + 0.01 * i, 2) for i in range(20)]
    unrelated = [round(0.50 + 0.01 * i, 2) for i in range(20)]
    result = gate_calibrate(
        cohorts={"nl": {"related": related, "unrelated": unrelated}, "fr": {"related": [0.8], "unrelated": [0.1]}},
        model_key="m",
        sets=["dev"],
        max_false_refusal=0.05,
    )["m"]
    assert result["thresholds"] == {"nl": 0.70}
    nl = result["evidence"]["languages"]["nl"]
    assert nl["false_refusal"] == 0.0 and nl["unrelated_passed"] == 0.0 and nl["roc_auc"] == 1.0
    assert result["evidence"]["languages"]["fr"]["threshold"] is None and MIN_COHORT > 1


def test_no_language_with_enough_drafts_is_an_error() -> None:
    with pytest.raises(ValueError, match="no language"):
        gate_calibrate(
            cohorts={"nl": {"related": [0.9], "unrelated": [0.1]}}, model_key="m", sets=[], max_false_refusal=0.05
        )


@pytest.mark.django_db
def test_a_calibration_file_sets_the_gate_threshold_of_the_questions_language(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "gate.json"
    path.write_text(json.dumps({"use-multilingual-v3": {"thresholds": {"en": 0.123}}}))
    settings.GATE_CALIBRATION_PATH = path
    settings.GATE_THRESHOLDS_FROM_ENV = frozenset()
    config = pipeline_config_default()
    assert config.gate_thresholds_by_language == {"en": 0.123}
    english = pipeline_run(
        request=SearchRequest(question="What are the symptoms of ABCD syndrome?", language="en"), config=config
    )
    assert english.gate is not None and english.gate.threshold == 0.123
    settings.GATE_THRESHOLDS_FROM_ENV = frozenset({"use-multilingual-v3"})  # an operator's explicit value wins
    assert pipeline_config_default().gate_thresholds_by_language == {}
