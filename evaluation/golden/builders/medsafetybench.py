"""Golden set builder: medsafetybench (see the package docstring for sources and licences)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from evaluation.golden.builders.common import MEDSAFETY_NOTE_CHARS, _hash_int
from evaluation.golden.io import GoldenItem

# --- MedSafetyBench ---------------------------------------------------------------------------


def _medsafety_category(csv_path: Path) -> str:
    match = re.search(r"category_(\d+)", csv_path.stem)
    return f"category_{match.group(1)}" if match else csv_path.stem


def medsafetybench_golden(*, path: Path, limit_per_category: int | None, seed: int) -> list[GoldenItem]:
    """Harmful medical requests that must be refused, from MedSafetyBench.

    Source: MedSafetyBench (Han et al., "MedSafetyBench: Evaluating and Improving the Medical
    Safety of Large Language Models", NeurIPS 2024 Datasets and Benchmarks), MIT licence; the
    authors ask that it be used for research only. ``path``: the folder of category CSVs
    (``datasets/test/gpt4``) or one CSV, columns ``,harmful_medical_request,safe_response``
    (the unnamed first column is the row index). Per row: ``qid`` =
    ``medsafetybench:<category>:<index>``, ``must_refuse`` true, category ``harmful_request``,
    tags ``[<category>]`` (``category_1`` … from the file name), language ``en``, no expected
    urls or entities, notes = the authors' safe response cut to
    :data:`MEDSAFETY_NOTE_CHARS` characters.

    ``limit_per_category``: at most this many rows per CSV, a seed-stable sample (``None``: all).
    Items are ordered by category, then index. Raises ``ValueError`` when ``path`` holds no CSV,
    a CSV lacks the two columns, or ``limit_per_category`` is below 1.
    """
    if limit_per_category is not None and limit_per_category < 1:
        raise ValueError("limit_per_category must be at least 1")
    files = sorted(path.glob("*.csv")) if path.is_dir() else [path]
    if not files or not all(f.is_file() for f in files):
        raise ValueError(f"no MedSafetyBench CSV files at {path}")
    items: list[GoldenItem] = []
    for csv_path in sorted(files, key=lambda f: (len(_medsafety_category(f)), _medsafety_category(f))):
        category = _medsafety_category(csv_path)
        with csv_path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            fields = reader.fieldnames or []
            if "harmful_medical_request" not in fields or "safe_response" not in fields:
                raise ValueError(f"{csv_path}: expected columns harmful_medical_request, safe_response; found {fields}")
            index_column = fields[0]
            rows = []
            for number, row in enumerate(reader):
                request = " ".join((row["harmful_medical_request"] or "").split())
                if not request:
                    continue
                index = (row.get(index_column) or "").strip() or str(number)
                rows.append((int(index) if index.isdigit() else number, request, row["safe_response"] or ""))
        if limit_per_category is not None and limit_per_category < len(rows):
            keep = sorted(rows, key=lambda r: _hash_int(f"{seed}:{category}:{r[0]}"))[:limit_per_category]
            rows = sorted(keep)
        for index, request, safe in rows:
            safe = " ".join(safe.split())
            if len(safe) > MEDSAFETY_NOTE_CHARS:
                safe = safe[: MEDSAFETY_NOTE_CHARS - 1].rstrip() + "…"
            items.append(
                GoldenItem(
                    qid=f"medsafetybench:{category}:{index}",
                    question=request,
                    language="en",
                    category="harmful_request",
                    must_refuse=True,
                    tags=(category,),
                    notes=f"Safe response (MedSafetyBench): {safe}",
                )
            )
    return items
