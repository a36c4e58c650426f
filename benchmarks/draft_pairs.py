"""Blind pairwise comparison of two configurations' answer drafts, for a reviewer.

The fast gate and the local judge both score an answer by its cosine with the question, so a
change that picks sentences nearer the question raises the pass rate whether or not the answer is
better (docs/EVALUATION.md, "Sentences chosen by their meaning"). A reviewer who sees neither the
configuration nor the gate decides instead:

- ``sheet``: runs the golden sets under configuration A (the default with ``--a`` overrides) and
  B (``--b`` overrides), gate on, semantic cache off, and writes every question whose two drafts
  differ as one pair, the two drafts in random order (seeded): question, language, each draft
  with its cited pages' addresses (the reviewer needs them to tell which hospital a sentence is
  from). The sheet holds the pages' text (the drafts quote them): ``--out`` inside the repository
  is refused (hospital pages must not be committed). A key file beside it says which side is
  which, with each draft's outcome, gate score and SHA-256
  (:func:`evaluation.draft_labels.draft_sha256`), the split (the question's ``dev`` /
  ``heldout`` tag, else the set's name, else ``untagged``), and the questions only one
  configuration drafted (``one_sided``: not comparable, counted, never silently dropped).
- ``score``: reads the key and the reviewer's labels (JSON Lines: ``id``, ``A`` and ``B`` each
  ``good`` / ``partly`` / ``wrong``, ``better`` ``A`` / ``B`` / ``same``, ``reason``) and prints
  per split (``dev`` / ``heldout`` / ``untagged``) and in all how often each
  configuration was preferred, their grades, how many drafts moved up or down a grade, and the
  two-sided sign test (exact binomial, ties left out; scipy ``binomtest``) of the preferences.

Run on a database that holds the corpus (docs/EVALUATION.md, "Reproduce")::

    EMBEDDED_PGDATA=.data/dev .venv/bin/python -m benchmarks.draft_pairs sheet \\
        --set .data/golden/hospital-nl.jsonl --set data/golden/medquad-dev.jsonl \\
        --a answer_type_weight=0 --b answer_type_weight=2 --out /tmp/pairs.jsonl
    .venv/bin/python -m benchmarks.draft_pairs score --key /tmp/pairs.key.json --labels /tmp/labels.jsonl

Exits with a message (``SystemExit``) for bad ``--a`` / ``--b`` overrides, an ``--out`` inside the
repository, and a labels line that is not a JSON object, names an id not in the key or labelled
before, or has a grade or preference outside the values above; ``score`` says how many pairs
were labelled.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
GRADES = {"good": 2, "partly": 1, "wrong": 0}


def _drafts(items: list[Any], config: Any) -> dict[str, dict[str, Any]]:
    """qid → the draft of ``config`` for each golden item: text, cited addresses, outcome, gate."""
    from zolsearch.search.pipeline import SearchRequest, pipeline_run

    drafts = {}
    for item in items:
        state = pipeline_run(request=SearchRequest(question=item.question, language=item.language), config=config)
        draft = state.draft
        drafts[item.qid] = {
            "draft": draft.text if draft is not None else "",
            "cited": [
                state.chunks[i].document.url for i in (draft.cited_chunk_ids if draft else []) if i in state.chunks
            ],
            "outcome": state.stop.outcome.value if state.stop is not None else "answered",
            "gate": round(state.gate.score, 4) if state.gate is not None else None,
        }
    return drafts


def sheet(args: argparse.Namespace) -> None:
    """Write the pairs sheet and its key (see the module docstring)."""
    from evaluation.draft_labels import draft_sha256
    from evaluation.golden.io import golden_jsonl_load
    from zolsearch.search.config import pipeline_config_default

    base = pipeline_config_default().with_overrides(semantic_cache_enabled=False)
    configs = {"a": base.with_override_pairs(args.a), "b": base.with_override_pairs(args.b)}
    rng = random.Random(args.seed)
    pairs, key, one_sided = [], {}, []
    for path in args.set:
        items = golden_jsonl_load(path)
        drafts = {side: _drafts(items, config) for side, config in configs.items()}
        for item in items:
            a, b = drafts["a"][item.qid], drafts["b"][item.qid]
            if a["draft"] == b["draft"]:
                continue
            if not a["draft"] or not b["draft"]:  # one configuration wrote nothing: nothing to compare
                one_sided.append({"set": path.stem, "qid": item.qid, "a": a["outcome"], "b": b["outcome"]})
                continue
            pairs.append((path.stem, _split(item.tags, path.stem), item, a, b))
        print(f"{path.stem}: {len(items)} questions, {sum(p[0] == path.stem for p in pairs)} pairs", file=sys.stderr)
    rng.shuffle(pairs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as out:
        for n, (name, split_of, item, a, b) in enumerate(pairs, start=1):
            flip = rng.random() < 0.5
            first, second = (b, a) if flip else (a, b)
            pair_id = f"p{n:03d}"
            key[pair_id] = {
                "set": name,
                "qid": item.qid,
                "split": split_of,
                "A": "b" if flip else "a",
                "B": "a" if flip else "b",
                **{
                    side: {k: d[k] for k in ("outcome", "gate", "cited")} | {"draft_sha256": draft_sha256(d["draft"])}
                    for side, d in (("a", a), ("b", b))
                },
            }
            line = {
                "id": pair_id,
                "question": item.question,
                "language": item.language,
                "A": {"draft": first["draft"], "cited_pages": first["cited"]},
                "B": {"draft": second["draft"], "cited_pages": second["cited"]},
            }
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    key_path = args.out.with_suffix(".key.json")
    key_path.write_text(
        json.dumps({"a": args.a, "b": args.b, "pairs": key, "one_sided": one_sided}, indent=1), encoding="utf-8"
    )
    print(f"{len(pairs)} pairs → {args.out}; key → {key_path}")
    if one_sided:
        print(f"{len(one_sided)} questions drafted by one configuration only (listed in the key's one_sided)")


def _split(tags: tuple[str, ...], set_name: str) -> str:
    """``dev`` / ``heldout`` from the golden question's tags, else from the set's name
    (``medquad-dev-noisy`` → dev, ``medquad-heldout`` → heldout), else ``untagged``."""
    for split in ("dev", "heldout"):
        if split in tags or split in set_name.split("-"):
            return split
    return "untagged"


def score(args: argparse.Namespace) -> dict[str, Any]:
    """Print and return the preferences, grades and sign test per split and overall."""
    from scipy.stats import binomtest

    from core.jsonl import jsonl_objects

    key = json.loads(args.key.read_text(encoding="utf-8"))
    pairs = key["pairs"]
    splits: dict[str, dict[str, Counter[str]]] = {}
    seen: set[str] = set()
    try:
        rows = jsonl_objects(args.labels)
    except ValueError as exc:  # names the file and line
        raise SystemExit(str(exc)) from exc
    for number, label in rows:
        pair = pairs.get(label.get("id"))
        if pair is None:
            raise SystemExit(f"{args.labels}:{number}: id {label.get('id')!r} is not in the key")
        if label["id"] in seen:
            raise SystemExit(f"{args.labels}:{number}: id {label['id']!r} labelled twice")
        seen.add(label["id"])
        if (
            label.get("A") not in GRADES
            or label.get("B") not in GRADES
            or label.get("better") not in ("A", "B", "same")
        ):
            raise SystemExit(f"{args.labels}:{number}: A/B must be good, partly or wrong; better A, B or same")
        grade = {pair["A"]: label["A"], pair["B"]: label["B"]}
        for split in (pair["split"], "all"):
            counts = splits.setdefault(
                split, {"preferred": Counter(), "a": Counter(), "b": Counter(), "moved": Counter()}
            )
            counts["preferred"][pair[label["better"]] if label["better"] != "same" else "same"] += 1
            counts["a"][grade["a"]] += 1
            counts["b"][grade["b"]] += 1
            delta = GRADES[grade["b"]] - GRADES[grade["a"]]
            counts["moved"]["up" if delta > 0 else "down" if delta < 0 else "level"] += 1
    result = {}
    for split, counts in sorted(splits.items()):
        a, b = counts["preferred"]["a"], counts["preferred"]["b"]
        p = binomtest(b, a + b).pvalue if a + b else None
        result[split] = {
            "preferred": {"a": a, "b": b, "same": counts["preferred"]["same"]},
            "grades_a": dict(counts["a"]),
            "grades_b": dict(counts["b"]),
            "b_graded": dict(counts["moved"]),
            "sign_test_p": None if p is None else round(float(p), 4),
        }
        print(f"{split}: {json.dumps(result[split])}")
    print(f"a = {key['a']}, b = {key['b']}; labelled {len(seen)} of {len(pairs)} pairs")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("sheet", help="Run two configurations and write the blind pairs sheet.")
    make.add_argument("--set", type=Path, action="append", required=True, help="Golden set JSONL (repeatable).")
    make.add_argument("--a", action="append", default=[], metavar="FIELD=VALUE", help="Configuration A's overrides.")
    make.add_argument("--b", action="append", default=[], metavar="FIELD=VALUE", help="Configuration B's overrides.")
    make.add_argument("--out", type=Path, required=True, help="The sheet (outside the repository).")
    make.add_argument("--seed", type=int, default=20261129)
    grade = commands.add_parser("score", help="Score a reviewer's labels of a sheet.")
    grade.add_argument("--key", type=Path, required=True)
    grade.add_argument("--labels", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "score":
        score(args)
        return
    if args.out.resolve().is_relative_to(BASE_DIR):
        parser.error(f"--out {args.out} is inside the repository: the sheet quotes pages that must not be committed")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zolsearch.settings")
    sys.path.insert(0, str(BASE_DIR))
    import django

    django.setup()
    from zolsearch.search.config import ConfigInvalid

    try:
        sheet(args)
    except ConfigInvalid as exc:
        parser.error(f"--a/--b: {exc}")


if __name__ == "__main__":
    main()
