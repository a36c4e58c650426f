"""The calibration file (``GATE_CALIBRATION_PATH``, written by ``manage.py calibrate --export``)
reaching the served gate, and an operator's explicit threshold winning over it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zolsearch.search.config import pipeline_config_default
from zolsearch.search.pipeline import SearchRequest, pipeline_run


@pytest.mark.django_db
def test_a_calibration_file_sets_the_gate_threshold_of_the_questions_language(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "gate.json"
    path.write_text(
        json.dumps({"use-multilingual-v3": {"thresholds": {"en": 0.123}, "context_weights": {"en": 0.2, "nl": 7}}})
    )
    settings.GATE_CALIBRATION_PATH = path
    settings.GATE_THRESHOLDS_FROM_ENV = frozenset()
    config = pipeline_config_default()
    assert config.gate_thresholds_by_language == {"en": 0.123}
    assert config.gate_context_weights_by_language == {"en": 0.2}  # a weight outside [0, 1] is ignored
    english = pipeline_run(
        request=SearchRequest(question="What are the symptoms of ABCD syndrome?", language="en"), config=config
    )
    assert english.gate is not None and english.gate.threshold == 0.123 and english.gate.context_weight == 0.2
    settings.GATE_THRESHOLDS_FROM_ENV = frozenset({"use-multilingual-v3"})  # an operator's explicit value wins
    assert pipeline_config_default().gate_thresholds_by_language == {}
    assert pipeline_config_default().gate_context_weights_by_language == {}  # the weight goes with its threshold


@pytest.mark.django_db
def test_a_pooled_row_sets_the_gate_of_a_language_without_its_own(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a calibration file with an English row and a pooled row ('*') WHEN a French question
    (no row of its own) and an English one are answered THEN the French gate takes the pooled
    threshold and weight, the English its own; without a pooled row the model's threshold and
    the seed's weight (gate.gate_setting_for)."""
    from zolsearch.search.gate import CONTEXT_WEIGHT, gate_setting_for

    path = tmp_path / "gate.json"
    path.write_text(
        json.dumps(
            {"use-multilingual-v3": {"thresholds": {"en": 0.123, "*": 0.234}, "context_weights": {"en": 0.2, "*": 0.3}}}
        )
    )
    settings.GATE_CALIBRATION_PATH = path
    settings.GATE_THRESHOLDS_FROM_ENV = frozenset()
    config = pipeline_config_default()
    french = pipeline_run(
        request=SearchRequest(question="Quels sont les symptômes du syndrome ABCD ?", language="fr"), config=config
    )
    assert french.gate is not None and (french.gate.threshold, french.gate.context_weight) == (0.234, 0.3)
    english = pipeline_run(
        request=SearchRequest(question="What are the symptoms of ABCD syndrome?", language="en"), config=config
    )
    assert english.gate is not None and (english.gate.threshold, english.gate.context_weight) == (0.123, 0.2)
    own = {"thresholds": {"en": 0.4}, "context_weights": {"en": 0.1}}
    assert gate_setting_for("fr", **own, default_threshold=0.72) == (0.72, CONTEXT_WEIGHT)
    assert gate_setting_for("en", **own, default_threshold=0.72) == (0.4, 0.1)
    assert gate_setting_for("fr", thresholds={"*": 0.3}, context_weights={}, default_threshold=0.72) == (
        0.3,
        CONTEXT_WEIGHT,
    )
