"""``deploy/prometheus/alerts.yml``: valid rule files whose every metric exists in the code, the
seed's "> 20 % rise in 5 minutes" rules, and (when promtool is installed) promtool's own check
and the rule unit tests in ``deploy/prometheus/alerts_test.yml``."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from prometheus_client import REGISTRY

import core.observability  # noqa: F401  (declares the search and judge metrics)
import evaluation.monitoring.metrics  # noqa: F401  (declares the drift and retention metrics)

RULES_DIR = Path(settings.BASE_DIR) / "deploy" / "prometheus"
RULES = RULES_DIR / "alerts.yml"
PROMQL_KEYWORDS = {"and", "or", "unless", "offset", "bool", "by", "without", "on", "ignoring"}


def _rules() -> list[dict[str, object]]:
    document = yaml.safe_load(RULES.read_text())
    return [rule for group in document["groups"] for rule in group["rules"]]


def _metric_names(expr: str) -> set[str]:
    """The series names an expression selects: identifiers that are not functions, aggregations,
    keywords, label names (inside {} or by/on/without (…)) or durations."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}", "", expr)
    expr = re.sub(r"\[[^\]]*\]", "", expr)
    expr = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    names = set()
    for match in re.finditer(r"(?<![\w.])[a-zA-Z_:][a-zA-Z0-9_:]*", expr):
        if match.group() in PROMQL_KEYWORDS or expr[match.end() :].lstrip().startswith("("):
            continue
        names.add(match.group())
    return names


def test_metric_name_extraction() -> None:
    expr = 'sum by (reason) (rate(zolsearch_refusals_total{reason="refused"}[5m])) / a:b offset 5m and time() - x > 26 * 3600'
    assert _metric_names(expr) == {"zolsearch_refusals_total", "a:b", "x"}


def test_rules_are_well_formed_and_name_only_declared_metrics() -> None:
    """GIVEN the shipped rules WHEN every expression's series names are collected THEN each is a
    metric declared in the code (prometheus_client's registry, the names /metrics exports) or a
    recording rule of the same file; every rule records or alerts, alert names are unique and
    every alert has a severity and a summary."""
    rules = _rules()
    recorded = {str(rule["record"]) for rule in rules if "record" in rule}
    declared = set(REGISTRY._names_to_collectors)  # the registry's public API has no listing
    alerts = [rule for rule in rules if "alert" in rule]
    assert len(recorded) + len(alerts) == len(rules)
    assert len({rule["alert"] for rule in alerts}) == len(alerts)
    for rule in rules:
        names = _metric_names(str(rule["expr"]))
        assert names, rule
        unknown = names - declared - recorded
        assert not unknown, f"{rule.get('alert') or rule.get('record')} names undeclared metrics {unknown}"
    for rule in alerts:
        assert rule["labels"]["severity"] in ("info", "warning", "critical"), rule  # type: ignore[index]
        assert rule["annotations"]["summary"], rule  # type: ignore[index]
    assert {"zolsearch_drift_alert", "zolsearch_drift_check_timestamp_seconds"} <= declared


def test_seed_rises_of_refusals_and_fallbacks_within_5_minutes() -> None:
    """Seed 002: a rise of more than 20 % within 5 minutes, of refusals and of fallbacks."""
    by_name = {rule.get("alert") or rule.get("record"): rule for rule in _rules()}
    for alert, ratio in (("RefusalRateRise", "refusal"), ("FallbackRateRise", "fallback")):
        expr = str(by_name[alert]["expr"])
        assert f"zolsearch:{ratio}_ratio:rate5m > 1.2 *" in expr, expr
        assert "[5m]" in str(by_name[f"zolsearch:{ratio}_ratio:rate5m"]["expr"])
    assert 'reason=~"gate_rejected|no_results"' in str(by_name["zolsearch:fallback_ratio:rate5m"]["expr"])


def test_promtool_checks_the_rules_and_runs_their_unit_tests() -> None:
    """``promtool check rules`` (syntax, PromQL) and ``promtool test rules`` (alerts fire on a
    doubled refusal share, not on steady traffic or too few answers; drift and staleness).
    ``make test`` installs promtool (``make promtool``); without it this fails, never skips."""
    if shutil.which("promtool") is None:
        pytest.fail("promtool is missing: run `make promtool` (Debian's prometheus package)")
    check = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    unit = subprocess.run(
        ["promtool", "test", "rules", "alerts_test.yml"], cwd=RULES_DIR, capture_output=True, text=True, timeout=60
    )
    assert unit.returncode == 0, unit.stdout + unit.stderr
    assert "SUCCESS" in unit.stdout
