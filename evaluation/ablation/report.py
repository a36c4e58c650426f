"""A study's results as CSV (one row per configuration) and Markdown (for docs and reviews).
Pure: the ``results`` and ``recommendations`` dicts of an analysed study in, text out."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

COLUMNS = (
    ("pass_rate", "pass rate"),
    ("pass_rate_er", "pass rate (ER-only)"),
    ("entity_recall", "entity recall"),
    ("ndcg_at_5", "NDCG@5"),
    ("mrr", "MRR"),
    ("refusal_accuracy", "refusal accuracy"),
    ("red_flag_accuracy", "red-flag accuracy"),
    ("cited_expected", "answered from an expected page"),
    ("reviewed_correct", "served as the reviewer labelled"),
)


def _levels(levels: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in levels.items())


def _cell(value: Mapping[str, Any] | None) -> tuple[str, str, str]:
    if not value:
        return "", "", ""
    return f"{value['mean']:.4f}", f"{value['low']:.4f}", f"{value['high']:.4f}"


def study_csv(results: Mapping[str, Any]) -> str:
    """CSV text: per configuration its index, label, levels, each metric's mean and 95 % CI
    bounds, latency p50/p95 (ms), and against the base the regressions, recoveries, net and
    McNemar's p (blank for the base)."""
    out = io.StringIO()
    writer = csv.writer(out)
    header = ["index", "label", "base", "levels"]
    for key, _ in COLUMNS:
        header += [key, f"{key}_low", f"{key}_high"]
    header += ["latency_p50_ms", "latency_p95_ms", "regressions", "recoveries", "net", "mcnemar_p"]
    writer.writerow(header)
    for c in results.get("configurations") or []:
        row: list[Any] = [c["index"], c["label"], c["is_base"], _levels(c["levels"])]
        for key, _ in COLUMNS:
            row += list(_cell(c.get(key)))
        latency = c.get("latency_ms") or {}
        vs = c.get("vs_base") or {}
        row += [latency.get("p50", ""), latency.get("p95", ""), vs.get("regressions", ""), vs.get("recoveries", "")]
        row += [vs.get("net", ""), (vs.get("mcnemar") or {}).get("p_value", "")]
        writer.writerow(row)
    return out.getvalue()


def _pct(value: Mapping[str, Any] | None) -> str:
    if not value:
        return "—"
    return f"{value['mean']:.3f} [{value['low']:.3f}, {value['high']:.3f}]"


def study_markdown(
    *, title: str, description: str, results: Mapping[str, Any], recommendations: Sequence[Mapping[str, Any]]
) -> str:
    """Markdown: the design, a table of configurations (pass rates, NDCG@5, MRR, refusal and
    red-flag accuracy, the share answered from an expected page, with 95 % CIs, p95 latency, change against the base with McNemar's p),
    Cochran's Q, factorial effects when there are any, and the recommendations with their
    evidence."""
    lines = [f"### {title}", "", f"{description}; {results.get('questions', 0)} questions, "
             f"{results.get('repetitions', 1)} repetition(s); 95 % CIs by a two-stage bootstrap over questions "
             "and repetitions.", ""]  # fmt: skip
    lines += [
        "| configuration | pass | pass (ER-only) | NDCG@5 | MRR | refusal acc. | red-flag acc. | "
        "from an expected page | as reviewed | p95 ms | regressed / recovered | McNemar p |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in results.get("configurations") or []:
        vs = c.get("vs_base") or {}
        change = f"{vs['regressions']} / {vs['recoveries']}" if vs else "(base)"
        p = f"{vs['mcnemar']['p_value']:.3g}" if vs else ""
        p95 = (c.get("latency_ms") or {}).get("p95")
        lines.append(
            f"| {c['label']} | {_pct(c.get('pass_rate'))} | {_pct(c.get('pass_rate_er'))} | "
            f"{_pct(c.get('ndcg_at_5'))} | {_pct(c.get('mrr'))} | {_pct(c.get('refusal_accuracy'))} | "
            f"{_pct(c.get('red_flag_accuracy'))} | {_pct(c.get('cited_expected'))} | "
            f"{_pct(c.get('reviewed_correct'))} | "
            f"{'' if p95 is None else f'{p95:.0f}'} | {change} | {p} |"
        )
    q = results.get("cochrans_q")
    if q:
        lines += ["", f"Cochran's Q across all configurations: Q = {q['statistic']:.2f}, df = {q['df']}, "
                      f"p = {q['p_value']:.3g} (n = {q['n']} questions)."]  # fmt: skip
    effects = results.get("effects") or []
    if effects:
        lines += ["", "| effect | letters | on pass rate | 95 % CI | aliased with |", "|---|---|---|---|---|"]
        for e in effects:
            lines.append(
                f"| {e['term']} | {e['letters']} | {e['effect']:+.3f} | [{e['ci_low']:+.3f}, {e['ci_high']:+.3f}] | "
                f"{', '.join(e['aliases']) or '—'} |"
            )
    if recommendations:
        lines += ["", "Recommendations:", ""]
        for r in recommendations:
            verdict = f"use **{json.dumps(r['recommended'])}**" if r["change"] else f"keep {json.dumps(r['base'])}"
            lines.append(f"- `{r['factor']}`: {verdict}. {r['evidence']}")
    return "\n".join(lines) + "\n"
