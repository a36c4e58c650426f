"""Query understanding accuracy: intent and MedQuAD question type by stratified 5-fold
cross-validation on the labelled set (``data/understanding/labelled.jsonl``; the question-type
model also trains on the ``medquad-dev`` questions, never scored here), per language; and the
reduced query of long messages against the labelled reductions (recall of their content stems,
and the share of words dropped).

Run: ``.venv/bin/python -m benchmarks.understanding`` (part of ``make bench``); results in
``docs/bench-results/understanding.json``. Needs no database.

Focus linking (:func:`focus_accuracy`; needs a database with the knowledge base, e.g. the dev
index): ``EMBEDDED_PGDATA=.data/dev .venv/bin/python -m benchmarks.understanding focus
medquad-heldout medquad-heldout-para-nl medquad-heldout-noisy``; results in
``docs/bench-results/understanding_focus.json``.

Question type of the golden sets' messages (:func:`qtype_accuracy`: the whole message's against
the question sentence's, as the pipeline reads it): ``.venv/bin/python -m benchmarks.understanding
qtype medquad-dev-noisy medquad-heldout-noisy``; results in
``docs/bench-results/understanding_qtype.json``. Needs no database.

The chat-model backend (:func:`llm_accuracy`; needs ``UNDERSTANDING_LLM_MODEL`` and
``LLM_BASE_URL``, and a database, as the pipeline: de-identification reads the taxonomy's
doctors when a message names a person): ``.venv/bin/python -m benchmarks.understanding llm``: intent
and question-type accuracy of the configured model on every labelled message (no training, so no
folds), per language, its reduced queries scored as the offline ones, the replies outside the
schema and the latency per message (ms); results in ``docs/bench-results/understanding_llm.json``.

Follow-up resolution (:func:`followup_accuracy`, also part of the run above; alone, printing
only: ``.venv/bin/python -m benchmarks.understanding followups``): the decision's accuracy on
``data/understanding/followups.jsonl``, and for the labelled follow-ups the share whose resolved
question holds every key word (``must_contain``) and none of the replaced ones
(``must_not_contain``), per language. Words only: the taxonomy's ``message_focus`` (a database
lookup in the stage) is not used here.
"""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent


def _django_setup() -> None:
    """Django with the project's settings, the project on the import path."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zolsearch.settings")
    sys.path.insert(0, str(BASE_DIR))
    import django

    django.setup()


def main() -> None:
    _django_setup()
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    from benchmarks.common import results_write
    from core.providers.embeddings import embedding_provider_get
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
    accuracy = _shares(cells)
    reduction = _reduction([(row, query_reduce(row.text, language=row.language)) for row in rows])
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


def focus_accuracy(set_names: list[str]) -> dict[str, object]:
    """Focus linking (:func:`zolsearch.search.focus.focus_link`) on the database Django is
    configured with (``EMBEDDED_PGDATA``; its taxonomy, SNOMED CT and ingested MedQuAD).

    Golden sets (``data/golden/<name>.jsonl``; MedQuAD-built rows, whose ``expected_entities``
    hold the expected page's MedQuAD focus): per set and language, ``linked`` = share of
    questions given a focus, ``correct`` = share whose focus (accent- and case-folded) is an
    expected entity; rows without expected entities or that must be refused are left out.
    The labelled set (``data/understanding/labelled.jsonl``): ``kind`` = share whose focus kind
    agrees with the label (a label outside condition/drug/procedure/department/doctor, such as
    practical, expects no focus). Returns ``{"sets": {set: {bucket: {"n", "linked",
    "correct"}}}, "labelled": {bucket: {"n", "kind"}}, "misses": [...]}`` (shares in [0, 1]).
    """
    from core.text import text_normalise
    from taxonomy.resolver import text_resolve
    from zolsearch.search.focus import FOCUS_KINDS, focus_link
    from zolsearch.search.understanding import labelled_queries

    def link(text: str, language: str):  # type: ignore[no-untyped-def]
        return focus_link(
            question=text, resolution=text_resolve(text=text, language=language, with_terms=False), language=language
        )

    def share(values: list[int]) -> float:
        return round(sum(values) / len(values), 3) if values else 0.0

    sets: dict[str, object] = {}
    misses: list[dict[str, str]] = []
    for name in set_names:
        cells: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        path = BASE_DIR / "data" / "golden" / f"{name}.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else None
            if not row or row.get("must_refuse") or not row.get("expected_entities"):
                continue
            focus = link(row["question"], row["language"])
            expected = {text_normalise(e) for e in row["expected_entities"]}
            correct = int(focus is not None and text_normalise(focus.text) in expected)
            for bucket in ("all", row["language"]):
                cells[bucket]["linked"].append(int(focus is not None))
                cells[bucket]["correct"].append(correct)
            if not correct and len(misses) < 200:
                misses.append(
                    {
                        "set": name,
                        "question": row["question"],
                        "expected": "; ".join(row["expected_entities"]),
                        "focus": focus.text if focus else "",
                    }  # fmt: skip
                )
        sets[name] = {
            b: {"n": len(v["linked"]), **{k: share(x) for k, x in v.items()}} for b, v in sorted(cells.items())
        }
    kinds: dict[str, list[int]] = defaultdict(list)
    for query in labelled_queries():
        focus = link(query.text, query.language)
        expected_kind = query.focus_kind if query.focus_kind in FOCUS_KINDS else ""
        for bucket in ("all", query.language):
            kinds[bucket].append(int((focus.kind if focus else "") == expected_kind))
    labelled = {b: {"n": len(v), "kind": share(v)} for b, v in sorted(kinds.items())}
    return {"sets": sets, "labelled": labelled, "misses": misses}


def qtype_accuracy(set_names: list[str]) -> dict[str, object]:
    """Question-type accuracy on golden sets (``data/golden/<name>.jsonl``; rows whose category
    is a MedQuAD question type, the type of the question they were written from), per set and
    language: ``message`` = the type of the whole message (:meth:`UnderstandingModel.understand`),
    ``asked`` = the type the pipeline uses with ``qtype_question_sentence``
    (:func:`zolsearch.search.understanding.understanding_as_asked`); ``several_sentences`` = share of messages with a
    question sentence beside other sentences. Needs no database. Returns ``{set: {bucket: {"n",
    "message", "asked", "several_sentences"}}}`` (shares in [0, 1])."""
    from core.providers.embeddings import embedding_provider_get
    from zolsearch.search.focus import question_sentence
    from zolsearch.search.understanding import QTYPES, understanding_as_asked, understanding_model_get

    provider = embedding_provider_get()
    model = understanding_model_get(provider)
    report: dict[str, object] = {}
    for name in set_names:
        cells: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        for line in (BASE_DIR / "data" / "golden" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else None
            if not row or row.get("must_refuse") or row.get("category") not in QTYPES:
                continue
            text, language = row["question"], row["language"]
            understood = model.understand(text=text, vector=provider.embed_query(text), language=language)
            sentence = model.asked(message=text, provider=provider)
            asked = understanding_as_asked(understood, sentence, intent=False, qtype=True).qtype
            for bucket in ("all", language):
                cells[bucket]["message"].append(int(understood.qtype == row["category"]))
                cells[bucket]["asked"].append(int(asked == row["category"]))
                cells[bucket]["several_sentences"].append(int(bool(question_sentence(text))))
        report[name] = {
            b: {"n": len(v["asked"]), **{k: round(sum(x) / len(x), 3) for k, x in v.items()}}
            for b, v in sorted(cells.items())
        }
    return report


def _shares(cells: dict[str, dict[str, list[int]]]) -> dict[str, dict[str, float]]:
    """Bucket (language or "all") → {"n": messages, measure: share right in [0, 1], 3 decimals}
    of ``cells`` (bucket → measure → 1 right / 0 wrong per message)."""
    return {
        bucket: {"n": len(v["intent"]), **{k: round(sum(x) / len(x), 3) for k, x in v.items()}}
        for bucket, v in sorted(cells.items())
    }


def _reduction(reduced: list[tuple[Any, str]]) -> dict[str, object]:
    """How reduced queries compare with the labelled ones, over ``(labelled row, reduced query)``
    pairs whose query is not "" and whose row has a reduction of its own: ``messages`` scored,
    ``reference_stem_recall`` (mean share of the labelled reduction's content stems the query
    holds, [0, 1]) and ``words_kept_share`` (mean words of the query over the message's); None
    when none is scored."""
    from core.text import STOPWORDS, terms_stem

    recalls, kept_shares = [], []
    for row, query in reduced:
        if not query or row.reduced == row.text:
            continue
        stop = STOPWORDS.get(row.language, set())
        reference = {s for s in terms_stem(row.reduced, language=row.language) if s not in stop}
        if reference:
            recalls.append(len(reference & set(terms_stem(query, language=row.language))) / len(reference))
            kept_shares.append(len(query.split()) / len(row.text.split()))
    return {
        "messages": len(recalls),
        "reference_stem_recall": round(sum(recalls) / len(recalls), 3) if recalls else None,
        "words_kept_share": round(sum(kept_shares) / len(kept_shares), 3) if kept_shares else None,
    }


def llm_accuracy() -> dict[str, object]:
    """The configured chat model's understanding (:mod:`zolsearch.search.understanding_llm`) of
    every labelled message: ``accuracy`` per language ({"n", "intent", "qtype"}, shares in
    [0, 1]; a reply outside the schema counts as wrong), ``unavailable`` (replies outside the
    schema or endpoint failures, with the first five reasons), ``reduction`` (reference stem
    recall and the share of words kept, over the long messages the model reduced) and
    ``latency_ms`` (p50 / p95 of one call, ms). Raises ``SystemExit`` when no model is
    configured."""
    import time

    from django.conf import settings

    from benchmarks.common import percentile
    from zolsearch.search.understanding import labelled_queries
    from zolsearch.search.understanding_llm import UnderstandingUnavailable, understanding_llm

    model = settings.UNDERSTANDING_LLM_MODEL
    if not (model and settings.LLM_BASE_URL):
        raise SystemExit("set UNDERSTANDING_LLM_MODEL and LLM_BASE_URL to measure a chat model's understanding")
    cells: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    failures: list[str] = []
    timings: list[float] = []
    reduced: list[tuple[Any, str]] = []
    for row in labelled_queries():
        started = time.perf_counter()
        try:
            understood = understanding_llm(question=row.text, language=row.language, model=model)
        except UnderstandingUnavailable as exc:
            understood = None
            failures.append(f"{row.text[:60]}: {exc}")
        timings.append((time.perf_counter() - started) * 1000)
        for bucket in ("all", row.language):
            cells[bucket]["intent"].append(int(understood is not None and understood.intent == row.intent))
            cells[bucket]["qtype"].append(int(understood is not None and understood.qtype == row.qtype))
        reduced.append((row, understood.reduced if understood is not None else ""))
    return {
        "model": model,
        "accuracy": _shares(cells),
        "unavailable": {"n": len(failures), "first": failures[:5]},
        "reduction": _reduction(reduced),
        "latency_ms": {"p50": round(percentile(timings, 50), 1), "p95": round(percentile(timings, 95), 1)},
    }


if __name__ == "__main__":
    if sys.argv[1:2] == ["llm"]:
        _django_setup()
        from benchmarks.common import results_write

        report = llm_accuracy()
        print("chat-model understanding, labelled set:", json.dumps(report, indent=1))
        print("wrote", results_write("understanding_llm", report))
    elif sys.argv[1:2] == ["qtype"]:
        _django_setup()
        from benchmarks.common import results_write

        names = sys.argv[2:] or ["medquad-dev-noisy", "medquad-heldout-noisy"]
        qtypes = qtype_accuracy(names)
        print("question type, golden sets:", json.dumps(qtypes, indent=1))
        print("wrote", results_write("understanding_qtype", {"sets_asked": names, "sets": qtypes}))
    elif sys.argv[1:2] == ["focus"]:
        _django_setup()
        from benchmarks.common import results_write

        names = sys.argv[2:] or ["ci-slice"]
        report = focus_accuracy(names)
        print("focus, golden sets:", json.dumps(report["sets"], indent=1))
        print("focus kind, labelled set:", report["labelled"])
        print("wrote", results_write("understanding_focus", {"sets_asked": names, **report}))
    elif sys.argv[1:] == ["followups"]:
        sys.path.insert(0, str(BASE_DIR))  # the follow-up rules need neither Django nor a database
        report = followup_accuracy()
        print("follow-ups:", report["accuracy"])
        for error in report["errors"]:  # type: ignore[attr-defined]
            print("  ", error)
    else:
        main()
