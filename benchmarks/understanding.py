"""Query understanding accuracy: intent and MedQuAD question type by stratified 5-fold
cross-validation on the labelled set (``data/understanding/labelled.jsonl``; the question-type
model also trains on the ``medquad-dev`` questions, never scored here), per language; and the
reduced query of long messages against the labelled reductions (recall of their content stems,
and the share of words dropped).

Run: ``.venv/bin/python -m benchmarks.understanding`` (part of ``make bench``); results in
``docs/bench-results/understanding.json``. Needs no database.

Follow-up resolution (:func:`followup_accuracy`, also part of the run above; alone, printing
only: ``.venv/bin/python -m benchmarks.understanding followups``): the decision's accuracy on
``data/understanding/followups.jsonl``, and for the labelled follow-ups the share whose resolved
question holds every key word (``must_contain``) and none of the replaced ones
(``must_not_contain``), per language. Words only: the taxonomy's ``message_focus`` (a database
lookup in the stage) is not used here.
"""

from __future__ import annotations

import os
import sys
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

    from benchmarks.common import results_write
    from core.providers.embeddings import embedding_provider_get
    from core.text import STOPWORDS, terms_stem
    from zolsearch.search.understanding import UnderstandingModel, _qtype_extra, labelled_queries, query_reduce

    rows = labelled_queries()
    provider = embedding_provider_get()
    vectors = provider.embed_queries([r.text for r in rows])
    extra = _qtype_extra()
    predicted: list[tuple[str, str] | None] = [None] * len(rows)
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
    for train, test in folds.split(np.zeros(len(rows)), [r.intent for r in rows]):
        model = UnderstandingModel().fit([rows[i] for i in train], extra, provider)
        for i in test:
            u = model.understand(text=rows[i].text, vector=vectors[i], language=rows[i].language)
            predicted[i] = (u.intent, u.qtype)
    cells: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    confusions: dict[str, int] = defaultdict(int)
    for row, guess in zip(rows, predicted, strict=True):
        assert guess is not None
        for bucket in ("all", row.language):
            cells[bucket]["intent"].append(int(guess[0] == row.intent))
            cells[bucket]["qtype"].append(int(guess[1] == row.qtype))
        if guess[0] != row.intent:
            confusions[f"{row.intent} → {guess[0]}"] += 1
    accuracy = {
        bucket: {"n": len(v["intent"]), **{k: round(sum(x) / len(x), 3) for k, x in v.items()}}
        for bucket, v in sorted(cells.items())
    }
    recalls, kept_shares = [], []
    for row in rows:
        reduced = query_reduce(row.text, language=row.language)
        if not reduced or row.reduced == row.text:
            continue
        stop = STOPWORDS.get(row.language, set())
        reference = {s for s in terms_stem(row.reduced, language=row.language) if s not in stop}
        mine = set(terms_stem(reduced, language=row.language))
        if reference:
            recalls.append(len(reference & mine) / len(reference))
            kept_shares.append(len(reduced.split()) / len(row.text.split()))
    reduction = {
        "messages": len(recalls),
        "reference_stem_recall": round(float(np.mean(recalls)), 3) if recalls else None,
        "words_kept_share": round(float(np.mean(kept_shares)), 3) if kept_shares else None,
    }
    print("accuracy (5-fold CV):", accuracy)
    print("top intent confusions:", sorted(confusions.items(), key=lambda kv: -kv[1])[:8])
    print("reduced queries:", reduction)
    followups = followup_accuracy()
    print("follow-ups:", followups["accuracy"])
    results_write(
        "understanding",
        {
            "accuracy_cv5": accuracy,
            "intent_confusions": dict(confusions),
            "reduction": reduction,
            "rows": len(rows),
            "followups": followups,
        },
    )


def followup_accuracy() -> dict[str, object]:
    """Accuracy of :func:`zolsearch.search.followup.followup_resolve` on the labelled follow-ups.

    Returns ``{"accuracy": {bucket: {"n", "decision", "followups", "resolution"}}, "errors":
    [...]}`` with buckets ``all``, per language (``nl``/``en``/``fr``) and per split
    (``split:dev``: the rows the rules were written with; ``split:check``: rows written after
    the rules were frozen, scored once as they came): ``decision`` is the share of rows whose
    follow-up decision matches the label (in [0, 1]); ``resolution`` the share of labelled
    follow-ups decided as such whose resolved question (accent- and case-folded) contains every
    ``must_contain`` key word and no ``must_not_contain`` word, counted over all labelled
    follow-ups (a missed follow-up counts as a failed resolution). Pure: no database.
    """
    import json

    from core.text import text_normalise
    from zolsearch.search.followup import followup_resolve

    path = BASE_DIR / "data" / "understanding" / "followups.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    cells: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    errors: list[dict[str, object]] = []
    for row in rows:
        result = followup_resolve(previous=row["previous"], message=row["message"], language=row["language"])
        decided = int(result.is_followup == row["is_followup"])
        folded = f" {text_normalise(result.resolved)} "
        resolved_ok = None
        if row["is_followup"]:
            resolved_ok = int(
                bool(decided)
                and all(f" {text_normalise(w)} " in folded for w in row["must_contain"])
                and not any(f" {text_normalise(w)} " in folded for w in row["must_not_contain"])
            )
        elif decided:
            resolved_ok = None
        for bucket in ("all", row["language"], f"split:{row.get('split', 'dev')}"):
            cells[bucket]["decision"].append(decided)
            if resolved_ok is not None:
                cells[bucket]["resolution"].append(resolved_ok)
        if not decided or resolved_ok == 0:
            errors.append(
                {
                    "id": row["id"],
                    "split": row.get("split", "dev"),
                    "message": row["message"],
                    "expected": row["is_followup"],
                    "rule": result.rule,
                    "resolution": result.resolution,
                    "resolved": result.resolved,
                }
            )
    accuracy = {
        bucket: {
            "n": len(v["decision"]),
            "decision": round(sum(v["decision"]) / len(v["decision"]), 3),
            "followups": len(v["resolution"]),
            "resolution": round(sum(v["resolution"]) / len(v["resolution"]), 3) if v["resolution"] else None,
        }
        for bucket, v in sorted(cells.items())
    }
    return {"accuracy": accuracy, "errors": errors}


if __name__ == "__main__":
    if sys.argv[1:] == ["followups"]:
        sys.path.insert(0, str(BASE_DIR))  # the follow-up rules need neither Django nor a database
        report = followup_accuracy()
        print("follow-ups:", report["accuracy"])
        for error in report["errors"]:  # type: ignore[attr-defined]
            print("  ", error)
    else:
        main()
