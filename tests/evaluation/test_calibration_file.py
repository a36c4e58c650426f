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
