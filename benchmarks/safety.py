"""Safety benchmark: red-flag recall and false routing per category and language, the input
guard's cross-validated accuracy per label, and the added latency of both (offline).

Data: ``data/safety/red-flags.jsonl`` (hand-written, labelled) and the guard's training examples
(``zolsearch.search.safety.guard.guard_examples``: ``TRAINING_FILES`` and query understanding's
labelled messages). Run: ``.venv/bin/python -m benchmarks.safety``
(also part of ``make bench``); results in ``docs/bench-results/safety.json``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zolsearch.settings")
    sys.path.insert(0, str(BASE_DIR))
    import django

    django.setup()
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    from benchmarks.common import percentile, results_write
    from core.providers.embeddings import embedding_provider_get
    from zolsearch.search.safety.guard import LABELS, GuardClassifier, guard_examples, input_guard_decide
    from zolsearch.search.safety.redflags import red_flag_detect

    # --- red flags ---
    rows = [json.loads(line) for line in (BASE_DIR / "data/safety/red-flags.jsonl").read_text().splitlines() if line]
    cells: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    misses: list[dict[str, str]] = []
    latencies_us = []
    for row in rows:
        t0 = time.perf_counter()
        hit = red_flag_detect(row["text"])
        latencies_us.append((time.perf_counter() - t0) * 1e6)
        routed = hit.category.value if hit and not hit.notice_only else "none"
        key = (row["label"], row["language"])
        cells[key][1] += 1
        if row["label"] == "none":
            cells[key][0] += routed == "none"
        else:
            cells[key][0] += routed == row["label"]
        if routed != row["label"]:
            misses.append({"id": row["id"], "label": row["label"], "routed": routed, "text": row["text"]})
    table = {}
    for (label, language), (good, n) in sorted(cells.items()):
        name = "not_routed_rate" if label == "none" else "recall"
        table[f"{label}/{language}"] = {name: round(good / n, 4), "n": n}
    by_label: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for (label, _), (good, n) in cells.items():
        by_label[label][0] += good
        by_label[label][1] += n
    red_flags = {
        "per_label": {k: {"correct": round(g / n, 4), "n": n} for k, (g, n) in sorted(by_label.items())},
        "per_label_language": table,
        "false_routing_rate": round(1 - by_label["none"][0] / max(1, by_label["none"][1]), 4),
        "latency_us": {"p50": round(percentile(latencies_us, 50), 1), "p95": round(percentile(latencies_us, 95), 1)},
        "errors": misses,
    }
    print(json.dumps({k: v for k, v in red_flags.items() if k != "errors"}, indent=1))
    print(f"{len(misses)} red-flag errors")

    provider = embedding_provider_get()
    # --- rules alone vs rules + the red-flag model, per labelled set ---
    from zolsearch.search.safety.redflag_model import red_flag_classify

    def routed_by(text: str, vector, with_model: bool) -> str:  # type: ignore[no-untyped-def]
        hit = red_flag_detect(text)
        if hit is not None:
            return "none" if hit.notice_only else hit.category.value
        if not with_model:
            return "none"
        model_hit, _ = red_flag_classify(text=text, vector=vector, provider=provider, threshold=0.7)
        return model_hit.category.value if model_hit else "none"

    detectors: dict[str, dict[str, object]] = {}
    for name in ("red-flags", "red-flags-holdout", "red-flags-holdout2"):
        set_rows = [
            json.loads(line) for line in (BASE_DIR / f"data/safety/{name}.jsonl").read_text().splitlines() if line
        ]
        vectors = provider.embed_queries([r["text"] for r in set_rows])
        for with_model in (False, True):
            counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            for row, vector in zip(set_rows, vectors, strict=True):
                counts[row["label"]][1] += 1
                counts[row["label"]][0] += routed_by(row["text"], vector, with_model) == row["label"]
            detectors[f"{name}/{'rules+model' if with_model else 'rules'}"] = {
                k: f"{g}/{n}" for k, (g, n) in sorted(counts.items())
            }
    print(json.dumps(detectors, indent=1))
    red_flags["detectors"] = detectors

    # --- input guard: stratified 5-fold cross-validation on the training examples ---
    examples = guard_examples()
    texts = [e.text for e in examples]
    labels = np.array([e.label for e in examples])
    t0 = time.perf_counter()
    vectors = provider.embed_queries(texts)
    embed_s = time.perf_counter() - t0
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=20261122)
    predicted = np.empty(len(texts), dtype=object)
    for train, test in folds.split(texts, labels):
        model = GuardClassifier().fit([texts[i] for i in train], vectors[train], list(labels[train]))
        for i, p in zip(test, model.predict_proba_many([texts[i] for i in test], vectors[test]), strict=True):
            best = max(p, key=lambda k: p[k])
            predicted[i] = best if best == "allowed" or p[best] >= 0.5 else "allowed"
    per_label = {}
    for label in LABELS:
        mask = labels == label
        per_label[label] = {"recall": round(float((predicted[mask] == label).mean()), 4), "n": int(mask.sum())}
    sources = defaultdict(lambda: [0, 0])
    for e, p in zip(examples, predicted, strict=True):
        key = f"{e.source}:{e.language or 'en'}:{e.label}"
        sources[key][0] += p == e.label
        sources[key][1] += 1
    confusion = defaultdict(int)
    for t, p in zip(labels, predicted, strict=True):
        confusion[f"{t}->{p}"] += 1
    guard = {
        "examples": len(texts),
        "cv": "stratified 5-fold, seed 20261122",
        "accuracy": round(float((predicted == labels).mean()), 4),
        "per_label": per_label,
        "per_source_language_label": {k: {"correct": round(g / n, 4), "n": n} for k, (g, n) in sorted(sources.items())},
        "confusion": dict(sorted(confusion.items())),
        "train_embed_s": round(embed_s, 2),
    }
    print(json.dumps({k: v for k, v in guard.items() if k != "per_source_language_label"}, indent=1))

    # --- added latency (offline): red flags + input guard on a question vector already embedded ---
    sample = [r["text"] for r in rows[:200]]
    sample_vectors = provider.embed_queries(sample)
    input_guard_decide(text=sample[0], vector=sample_vectors[0], provider=provider, threshold=0.6)  # train once
    added_ms = []
    for text, vector in zip(sample * 3, np.vstack([sample_vectors] * 3), strict=True):
        t0 = time.perf_counter()
        if red_flag_detect(text) is None:
            red_flag_classify(text=text, vector=vector, provider=provider, threshold=0.7)
        input_guard_decide(text=text, vector=vector, provider=provider, threshold=0.6)
        added_ms.append((time.perf_counter() - t0) * 1000)
    latency = {
        "red_flags_rules_model_plus_input_guard_ms": {
            "p50": round(percentile(added_ms, 50), 3),
            "p95": round(percentile(added_ms, 95), 3),
            "n": len(added_ms),
        },
        "note": "the question's embedding is not counted: retrieval embeds it anyway and the guard reuses it",
    }
    print(json.dumps(latency, indent=1))
    path = results_write("safety", {"red_flags": red_flags, "input_guard": guard, "latency": latency})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
