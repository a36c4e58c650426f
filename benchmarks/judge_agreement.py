"""Agreement of the offline local judge with hand labels, and its relevancy calibration.

Labels: ``data/golden/judge-agreement.jsonl`` (80 items written and labelled by hand from the
MedQuAD slice, the RIVM FAQ and sample taxonomy lines; how in ``data/golden/JUDGE_AGREEMENT.md``).
Split: ids ending in an even digit are 'tune' (the only half used to choose the judge's support
threshold), odd ones are 'test'. Judge scores are binarised at 0.5 (faithfulness ≥ 0.5 ↔
faithful, relevancy ≥ 0.5 ↔ relevant); reported per split: accuracy, Cohen's kappa (Cohen,
Educational and Psychological Measurement 1960), TPR/FPR with the label 1 as positive,
confusion matrices, per kind, score distributions. A diagnostic 'strict' rule (faithful only
when every answer sentence is supported, faithfulness = 1) shows what the 0.5 share rule costs.

Calibration: cos(question, answer) of the embedding model over the QA pairs of the bundled
MedQuAD slice whose documents the agreement set does not use: each question with the first three
sentences of its own answer ('related'), with those of the pair half the list away ('unrelated',
always another document), and with the next pair of the same document ('same document, other
question'); medians and the Youden-J threshold (Youden, Cancer 1950). These are the anchors of
``evaluation.judges.local.CALIBRATIONS``.

No database is needed. Run: ``.venv/bin/python -m benchmarks.judge_agreement`` (≈ 10 seconds on
2 cores).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.common import BASE_DIR, percentile, results_write
from evaluation.calibration import cohen_kappa, youden_optimum

AGREEMENT = BASE_DIR / "data" / "golden" / "judge-agreement.jsonl"
SLICE = BASE_DIR / "data" / "medquad-slice"
MODEL = "use-multilingual-v3"
THRESHOLD_GRID = [round(0.40 + 0.05 * i, 2) for i in range(9)]
PASS_LINE_GRID = [round(0.15 + 0.01 * i, 2) for i in range(21)]


def django_setup_settings_only() -> None:
    """Settings and apps, no database connection (the judge needs none)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zolsearch.settings")
    sys.path.insert(0, str(BASE_DIR))
    import django

    django.setup()


def items_load(path: Path = AGREEMENT) -> list[dict[str, Any]]:
    """The labelled lines, each with ``split`` ('tune' for ids ending in an even digit)."""
    items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for item in items:
        item["split"] = "tune" if int(item["id"][-1]) % 2 == 0 else "test"
    return items


def agreement(labels: list[int], predictions: list[int]) -> dict[str, Any]:
    """Accuracy, Cohen's kappa, TPR/FPR (positive = 1) and the confusion matrix."""
    pairs = list(zip(labels, predictions, strict=True))
    n = len(pairs)
    tp = sum(1 for y, p in pairs if y == 1 and p == 1)
    tn = sum(1 for y, p in pairs if y == 0 and p == 0)
    fp = sum(1 for y, p in pairs if y == 0 and p == 1)
    fn = sum(1 for y, p in pairs if y == 1 and p == 0)
    observed = (tp + tn) / n if n else float("nan")
    kappa = cohen_kappa(labels, predictions)
    return {
        "n": n,
        "accuracy": round(observed, 4),
        "kappa": round(kappa, 4) if kappa is not None else None,
        "tpr": round(tp / (tp + fn), 4) if tp + fn else None,
        "fpr": round(fp / (fp + tn), 4) if fp + tn else None,
        "confusion": {"tp": tp, "fn": fn, "fp": fp, "tn": tn},
    }


def distribution(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "min": round(min(values), 4),
        "p25": round(percentile(values, 25), 4),
        "median": round(percentile(values, 50), 4),
        "p75": round(percentile(values, 75), 4),
        "max": round(max(values), 4),
    }


def faithfulness_at(evidence: list[dict[str, Any]], threshold: float) -> float:
    """Faithfulness recomputed from the per-sentence support scores for another threshold."""
    scores = [e["score"] for e in evidence]
    if not scores or any(s is None for s in scores):
        return 0.0
    return sum(1 for s in scores if s >= threshold) / len(scores)


def report(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Agreement blocks for a list of scored rows."""
    out: dict[str, Any] = {
        "faithfulness": agreement([r["label_faithful"] for r in rows], [int(r["faithfulness"] >= 0.5) for r in rows]),
        "faithfulness_strict": agreement(
            [r["label_faithful"] for r in rows], [int(r["faithfulness"] >= 1.0) for r in rows]
        ),
        "relevancy": agreement([r["label_relevant"] for r in rows], [int(r["relevancy"] >= 0.5) for r in rows]),
    }
    out["distributions"] = {
        "faithfulness_label_1": distribution([r["faithfulness"] for r in rows if r["label_faithful"] == 1]),
        "faithfulness_label_0": distribution([r["faithfulness"] for r in rows if r["label_faithful"] == 0]),
        "relevancy_label_1": distribution([r["relevancy"] for r in rows if r["label_relevant"] == 1]),
        "relevancy_label_0": distribution([r["relevancy"] for r in rows if r["label_relevant"] == 0]),
        "relevancy_cosine_label_1": distribution([r["relevancy_cosine"] for r in rows if r["label_relevant"] == 1]),
        "relevancy_cosine_label_0": distribution([r["relevancy_cosine"] for r in rows if r["label_relevant"] == 0]),
        "sentence_support_in_label_1_answers": distribution(
            [e["score"] for r in rows if r["label_faithful"] == 1 for e in r["evidence"] if e["score"] is not None]
        ),
    }
    return out


def per_kind(rows: list[dict[str, Any]]) -> dict[str, Any]:
    kinds: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        kinds[row["kind"]].append(row)
    out = {}
    for kind, members in sorted(kinds.items()):
        out[kind] = {
            "n": len(members),
            "label_faithful": sorted({m["label_faithful"] for m in members}),
            "label_relevant": sorted({m["label_relevant"] for m in members}),
            "faithfulness_agree": sum(1 for m in members if int(m["faithfulness"] >= 0.5) == m["label_faithful"]),
            "faithfulness_strict_agree": sum(
                1 for m in members if int(m["faithfulness"] >= 1.0) == m["label_faithful"]
            ),
            "relevancy_agree": sum(1 for m in members if int(m["relevancy"] >= 0.5) == m["label_relevant"]),
            "faithfulness_mean": round(sum(m["faithfulness"] for m in members) / len(members), 4),
            "relevancy_mean": round(sum(m["relevancy"] for m in members) / len(members), 4),
        }
    return out


def tune_grids(rows: list[dict[str, Any]], calibration) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """What the tune half says about the support threshold and the relevancy pass line."""
    from evaluation.judges.local import RelevancyCalibration

    tune = [r for r in rows if r["split"] == "tune"]
    labels_f = [r["label_faithful"] for r in tune]
    labels_r = [r["label_relevant"] for r in tune]
    thresholds = {
        str(t): agreement(labels_f, [int(faithfulness_at(r["evidence"], t) >= 0.5) for r in tune])
        for t in THRESHOLD_GRID
    }
    pass_lines = {}
    for line in PASS_LINE_GRID:
        shifted = RelevancyCalibration(unrelated=calibration.unrelated, pass_line=line, related=calibration.related)
        pass_lines[str(line)] = agreement(labels_r, [int(shifted.score(r["relevancy_cosine"]) >= 0.5) for r in tune])
    return {
        "support_threshold": {k: {"accuracy": v["accuracy"], "kappa": v["kappa"]} for k, v in thresholds.items()},
        "relevancy_pass_line": {k: {"accuracy": v["accuracy"], "kappa": v["kappa"]} for k, v in pass_lines.items()},
    }


def calibration_measure(provider, items: list[dict[str, Any]]) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Question–answer cosines on the MedQuAD slice minus the documents the agreement set uses."""
    import numpy as np

    from core.text import sentences_split
    from ingestion.connectors import connector_get
    from ingestion.connectors.base import DocumentRecord

    connector = connector_get("medquad")
    records = [r for unit in connector.units(SLICE) for r in connector.records(unit) if isinstance(r, DocumentRecord)]
    used_text = " ".join(" ".join(item["context"]) + " " + item["answer"] for item in items)

    def document(record: DocumentRecord) -> str:
        return f"{record.metadata['source']}:{record.metadata['document_id']}"

    def excerpt(record: DocumentRecord) -> str:
        sentences = [s for s in sentences_split(record.sections[0].text) if not s.endswith("?")]
        return " ".join(sentences[:3])

    used_documents = {
        document(r) for r in records if any(len(s) > 40 and s in used_text for s in sentences_split(r.sections[0].text))
    }
    kept = [r for r in records if document(r) not in used_documents and r.questions]
    questions = provider.embed_queries([r.questions[0] for r in kept])
    answers = provider.embed_passages([excerpt(r) for r in kept])
    related = np.einsum("ij,ij->i", questions, answers)
    n = len(kept)
    other = np.roll(np.arange(n), n // 2)
    assert all(document(kept[i]) != document(kept[j]) for i, j in enumerate(other))
    unrelated = np.einsum("ij,ij->i", questions, answers[other])
    same = [
        (i, i + 1)
        for i in range(n - 1)
        if document(kept[i]) == document(kept[i + 1]) and kept[i].metadata["qtype"] != kept[i + 1].metadata["qtype"]
    ]
    same_document = np.array([float(questions[i] @ answers[j]) for i, j in same])

    def youden(positive: np.ndarray, negative: np.ndarray) -> dict[str, float]:
        best = youden_optimum(positive=positive.tolist(), negative=negative.tolist())
        return {"j": round(best.j, 4), "threshold": round(best.threshold, 4)}

    return {
        "model": provider.key,
        "pairs": n,
        "documents_excluded": len(used_documents),
        "related_median": round(float(np.median(related)), 4),
        "unrelated_median": round(float(np.median(unrelated)), 4),
        "same_document_other_question_median": round(float(np.median(same_document)), 4),
        "same_document_pairs": len(same),
        "youden_related_vs_unrelated": youden(related, unrelated),
        "youden_related_vs_same_document": youden(related, same_document),
        "related": distribution(related.tolist()),
        "unrelated": distribution(unrelated.tolist()),
        "same_document_other_question": distribution(same_document.tolist()),
    }


def main() -> None:
    django_setup_settings_only()
    from core.providers.embeddings import embedding_provider_get
    from evaluation.judges.base import JudgeInput
    from evaluation.judges.local import LocalJudge

    provider = embedding_provider_get(MODEL)
    judge = LocalJudge(provider=provider)
    items = items_load()
    judge.judge(JudgeInput(question="warm-up", answer="Warm-up.", context=("Warm-up.",)))
    rows, latencies = [], []
    for item in items:
        started = time.perf_counter()
        verdict = judge.judge(
            JudgeInput(
                question=item["question"],
                answer=item["answer"],
                context=tuple(item["context"]),
                authoritative=tuple(item["authoritative"]),
            )
        )
        latencies.append((time.perf_counter() - started) * 1000)
        cosine = judge.relevancy_cosine(question=item["question"], answer=item["answer"])
        rows.append(
            {
                "id": item["id"],
                "kind": item["kind"],
                "split": item["split"],
                "label_faithful": item["label_faithful"],
                "label_relevant": item["label_relevant"],
                "faithfulness": verdict.faithfulness,
                "relevancy": verdict.relevancy,
                "relevancy_cosine": cosine,
                "evidence": [
                    {k: e.get(k) for k in ("sentence", "supported", "score", "mismatches", "authoritative", "support")}
                    for e in verdict.evidence
                ],
            }
        )
    splits = {
        name: report([r for r in rows if name == "all" or r["split"] == name]) for name in ("tune", "test", "all")
    }
    for name, block in splits.items():
        f, s, r = block["faithfulness"], block["faithfulness_strict"], block["relevancy"]
        print(
            f"{name:5s} n={f['n']:3d}  faithfulness acc {f['accuracy']:.3f} κ {f['kappa']:.3f}"
            f"  (strict acc {s['accuracy']:.3f} κ {s['kappa']:.3f})"
            f"  relevancy acc {r['accuracy']:.3f} κ {r['kappa']:.3f}",
            flush=True,
        )
    calibration = calibration_measure(provider, items)
    print("calibration:", {k: v for k, v in calibration.items() if not isinstance(v, dict)}, flush=True)
    path = results_write(
        "judge_agreement",
        {
            "judge": judge.key,
            "constants": {
                "support_threshold": judge.support_threshold,
                "mismatch_penalty": judge.mismatch_penalty,
                "cosine_weight": judge.cosine_weight,
                "relevancy_calibration": {
                    "unrelated": judge.calibration.unrelated,
                    "pass_line": judge.calibration.pass_line,
                    "related": judge.calibration.related,
                },
                "context_tokens": judge.context_tokens,
            },
            "items": len(rows),
            "split_rule": "tune: id ends in an even digit; test: odd",
            "binarisation": "faithfulness >= 0.5 and relevancy >= 0.5; strict: faithfulness == 1",
            "splits": splits,
            "per_kind": {"test": per_kind([r for r in rows if r["split"] == "test"]), "all": per_kind(rows)},
            "tune_grids": tune_grids(rows, judge.calibration),
            "latency_ms": {"p50": round(percentile(latencies, 50), 1), "p95": round(percentile(latencies, 95), 1)},
            "calibration": calibration,
            "rows": rows,
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
