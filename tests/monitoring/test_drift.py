"""The daily drift check on real answers and judgements in the test database: shifted score
distributions and a rising refusal rate raise alert rows and move the Prometheus gauges;
steady traffic, too little traffic and evaluation runs raise nothing."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from datetime import datetime, timedelta

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from core.observability import metrics_registry
from evaluation.monitoring.models import DriftAlert, DriftCheck, DriftMetric, Trigger
from evaluation.monitoring.services import drift_check_run
from tests.monitoring.factories import answer_make, judgement_make
from zolsearch.search.contract import Outcome
from zolsearch.search.models import Answer

pytestmark = pytest.mark.django_db

AS_OF = timezone.make_aware(datetime(2026, 11, 20, 0, 30))
# Gate scores of a healthy week (0.75-0.95) and of a bad day (0.45-0.65: e.g. a broken index).
HEALTHY = [0.76, 0.78, 0.8, 0.82, 0.84, 0.86, 0.88, 0.9, 0.92, 0.94]
SHIFTED = [0.46, 0.5, 0.52, 0.56, 0.58, 0.6, 0.62, 0.64]


def _gauge(name: str, **labels: str) -> float | None:
    """The value ``/metrics`` exports for one series (all processes' files, as scraped)."""
    return metrics_registry().get_sample_value(name, labels)


def _week(
    *, per_day: int = 30, scores: Sequence[float] = HEALTHY, outcomes: Sequence[str] | None = None
) -> list[Answer]:
    """``per_day`` live answers on each of the 7 days before the checked day."""
    cycle_scores, cycle_outcomes = itertools.cycle(scores), itertools.cycle(outcomes or [Outcome.ANSWERED])
    return [
        answer_make(
            created_at=AS_OF - timedelta(days=1 + day, minutes=20 * (i + 1)),
            gate_score=next(cycle_scores),
            outcome=next(cycle_outcomes),
        )
        for day in range(7)
        for i in range(per_day)
    ]


def _day(
    *, count: int = 60, scores: Sequence[float] = HEALTHY, outcomes: Sequence[str] | None = None, **kwargs: str
) -> list[Answer]:
    """``count`` answers in the checked day (the 24 h before AS_OF)."""
    cycle_scores, cycle_outcomes = itertools.cycle(scores), itertools.cycle(outcomes or [Outcome.ANSWERED])
    return [
        answer_make(
            created_at=AS_OF - timedelta(minutes=10 * (i + 1)),
            gate_score=next(cycle_scores),
            outcome=next(cycle_outcomes),
            **kwargs,
        )
        for i in range(count)
    ]


def test_a_shifted_gate_score_distribution_raises_an_alert_and_moves_the_gauges() -> None:
    """GIVEN a week of live answers with gate scores 0.76-0.94 and a day with 0.46-0.64
    WHEN the drift check runs THEN it saves a check with every metric, one gate-score alert
    (KL far over 0.1 nats, significant) with both histograms, and /metrics shows the new KL in
    zolsearch_drift_value, zolsearch_drift_alert 1 and one more zolsearch_drift_alerts_total."""
    _week()
    _day(scores=SHIFTED)
    alerts_before = _gauge("zolsearch_drift_alerts_total", metric="gate_score_kl") or 0.0

    check = drift_check_run(as_of=AS_OF)

    assert (check.window_start, check.window_end) == (AS_OF - timedelta(days=1), AS_OF)
    assert check.baseline_start == AS_OF - timedelta(days=8)
    assert (check.answers, check.baseline_answers) == (60, 210)
    assert set(check.results) == set(DriftMetric.values)
    alert = DriftAlert.objects.get(check_run=check)
    assert alert.metric == DriftMetric.GATE_SCORE_KL
    assert alert.value > 1.0 > alert.threshold == 0.1  # nats: the two days barely overlap
    assert alert.p_value is not None and alert.p_value < 1e-10
    assert alert.current == pytest.approx(sum(SHIFTED) / len(SHIFTED), abs=0.01)
    assert alert.baseline == pytest.approx(sum(HEALTHY) / len(HEALTHY), abs=0.01)
    assert sum(alert.details["counts_current"]) == 60 and sum(alert.details["counts_baseline"]) == 210
    assert alert.window_end == AS_OF and alert.acknowledged_at is None
    assert check.alert_count == 1 and check.webhook == ""  # no DRIFT_WEBHOOK_URL in the tests
    assert check.results["refusal_rate_rise"]["exceeded"] is False
    assert check.results["judge_faithfulness_kl"]["skipped"].startswith("fewer than 30 values")

    assert _gauge("zolsearch_drift_value", metric="gate_score_kl") == pytest.approx(alert.value)
    assert _gauge("zolsearch_drift_threshold", metric="gate_score_kl") == 0.1
    assert _gauge("zolsearch_drift_alert", metric="gate_score_kl") == 1.0
    assert _gauge("zolsearch_drift_alert", metric="refusal_rate_rise") == 0.0
    assert _gauge("zolsearch_drift_alerts_total", metric="gate_score_kl") == alerts_before + 1
    assert math.isnan(_gauge("zolsearch_drift_value", metric="judge_faithfulness_kl") or 0.0)
    assert _gauge("zolsearch_drift_check_timestamp_seconds") == pytest.approx(timezone.now().timestamp(), abs=120)


def test_steady_traffic_writes_a_check_without_alerts_and_resets_the_gauge() -> None:
    """GIVEN the same gate-score mix in the day as in the week WHEN the check runs THEN the
    check row holds every computed value, no alert is raised, and the gauges show the small
    divergence and zolsearch_drift_alert 0 (after an earlier check had set 1)."""
    _week()
    day = _day(scores=SHIFTED)
    drift_check_run(as_of=AS_OF)
    assert _gauge("zolsearch_drift_alert", metric="gate_score_kl") == 1.0
    Answer.objects.filter(pk__in=[a.pk for a in day]).delete()
    _day(scores=HEALTHY)

    check = drift_check_run(as_of=AS_OF)

    assert check.alert_count == 0 and not check.alerts.exists()
    gate = check.results["gate_score_kl"]
    assert gate["skipped"] == "" and gate["exceeded"] is False
    assert gate["value"] < 0.05 and gate["p_value"] > 0.5
    assert _gauge("zolsearch_drift_value", metric="gate_score_kl") == pytest.approx(gate["value"])
    assert _gauge("zolsearch_drift_alert", metric="gate_score_kl") == 0.0
    assert DriftCheck.objects.count() == 2


def test_judge_score_drift_alerts_per_score() -> None:
    """GIVEN done judgements whose faithfulness drops from 0.8-1.0 to 0.2-0.4 in the checked day
    while relevancy stays the same WHEN the check runs THEN only faithfulness alerts, and the
    alert names the judge."""
    high, low, relevancy = [0.82, 0.86, 0.9, 0.94, 0.98], [0.22, 0.26, 0.3, 0.34, 0.38], [0.6, 0.7, 0.8]
    for answers, faithfulness in ((_week(per_day=10), high), (_day(count=40), low)):
        for answer, f, r in zip(answers, itertools.cycle(faithfulness), itertools.cycle(relevancy), strict=False):
            judgement_make(answer=answer, faithfulness=f, relevancy=r, created_at=answer.created_at)

    check = drift_check_run(as_of=AS_OF)

    assert [a.metric for a in check.alerts.all()] == [DriftMetric.JUDGE_FAITHFULNESS_KL]
    alert = check.alerts.get()
    assert alert.details["judges_current"] == ["local/1"] and alert.details["n_current"] == 40
    assert check.results["judge_relevancy_kl"]["exceeded"] is False
    assert check.results["judge_relevancy_kl"]["n_baseline"] == 70


def test_a_rising_refusal_rate_alerts_and_a_steady_fallback_rate_does_not() -> None:
    """GIVEN a week with 5 % refusals and 10 % fallbacks and a day with 25 % refusals and 10 %
    fallbacks WHEN the check runs THEN the refusal rate alerts (a rise of about 400 %, binomial
    p < 0.01) and neither the fallback nor the red-flag rate does."""
    week = [Outcome.REFUSED] + [Outcome.GATE_REJECTED, Outcome.NO_RESULTS] + [Outcome.ANSWERED] * 17
    day = [Outcome.REFUSED] * 5 + [Outcome.GATE_REJECTED, Outcome.NO_RESULTS] + [Outcome.ANSWERED] * 13
    _week(outcomes=week)  # 210 answers: 10.5 refusals per 210 -> cycles of 20
    _day(outcomes=day)

    check = drift_check_run(as_of=AS_OF)

    alert = check.alerts.get()
    assert alert.metric == DriftMetric.REFUSAL_RATE_RISE
    assert alert.current == pytest.approx((15 + 0.5) / 61)
    assert alert.baseline == pytest.approx((11 + 0.5) / 211)
    assert alert.current is not None and alert.baseline is not None and alert.p_value is not None
    assert alert.value == pytest.approx(alert.current / alert.baseline - 1)
    assert alert.value > 3 and alert.p_value < 0.01
    assert alert.details["count_current"] == 15 and alert.details["outcomes"] == ["refused"]
    fallback = check.results["fallback_rate_rise"]
    assert fallback["count_current"] == 6 and fallback["exceeded"] is False
    assert check.results["red_flag_rate_rise"]["count_current"] == 0


def test_too_few_answers_and_evaluation_runs_are_skipped() -> None:
    """GIVEN a shifted day of 20 live answers (fewer than DRIFT_MIN_SAMPLES = 30) and 200
    shifted answers of an evaluation run WHEN the check runs THEN every metric of the day is
    skipped with the reason, nothing alerts and the gauges are NaN (no stale value)."""
    _week()
    _day(count=20, scores=SHIFTED)
    _day(count=200, scores=SHIFTED, channel=Answer.Channel.EVALUATION)

    check = drift_check_run(as_of=AS_OF)

    assert check.answers == 20 and check.alert_count == 0
    assert check.results["gate_score_kl"]["skipped"] == "fewer than 30 values (window 20, baseline 210)"
    assert check.results["refusal_rate_rise"]["skipped"] == "fewer than 30 answers (window 20, baseline 210)"
    assert math.isnan(_gauge("zolsearch_drift_value", metric="gate_score_kl") or 0.0)
    with override_settings(DRIFT_MIN_SAMPLES=10):
        assert drift_check_run(as_of=AS_OF).alerts.get().metric == DriftMetric.GATE_SCORE_KL


def test_thresholds_come_from_the_settings() -> None:
    """GIVEN the shifted day WHEN the KL threshold is set above the divergence THEN no alert."""
    _week()
    _day(scores=SHIFTED)
    with override_settings(DRIFT_GATE_KL_THRESHOLD=50.0):
        check = drift_check_run(as_of=AS_OF)
    assert check.alert_count == 0 and check.results["gate_score_kl"]["threshold"] == 50.0
    assert _gauge("zolsearch_drift_threshold", metric="gate_score_kl") == 50.0


def test_drift_check_command_prints_every_metric(capsys: pytest.CaptureFixture[str]) -> None:
    _week()
    _day(scores=SHIFTED)
    call_command("drift_check", "--as-of", "2026-11-20T00:30")
    out = capsys.readouterr().out
    check = DriftCheck.objects.get()
    assert check.trigger == Trigger.COMMAND and check.window_end == AS_OF
    assert f"Drift check {check.pk}: 2026-11-19 00:30 – 2026-11-20 00:30 (60 answers)" in out
    assert "gate_score_kl" in out and "ALERT" in out
    assert f"{'judge_relevancy_kl':<24} skipped: fewer than 30 values" in out
    assert "1 alert(s)." in out


def test_naive_as_of_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        drift_check_run(as_of=datetime(2026, 11, 20))
