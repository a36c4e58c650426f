"""Golden set builder: ci (see the package docstring for sources and licences)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from evaluation.golden.builders.common import CI_MEDQUAD_COUNT, CI_SEED
from evaluation.golden.builders.medquad import medquad_golden
from evaluation.golden.builders.sample_hospital import sample_hospital_golden
from evaluation.golden.io import GoldenItem, golden_jsonl_read

# --- CI regression set -------------------------------------------------------------------------

CI_SAMPLE_QIDS = (
    "sample:doctor:anna-demo",
    "sample:doctor:bram-fictief",
    "sample:doctor:eli-test",
    "sample:route:hartfalen",
    "sample:route:hartzwakte",
    "sample:route:suikerziekte",
    "sample:route:vallende-ziekte",
    "sample:route:astma",
    "sample:route:pacemaker",
    "sample:snomed:acute-left-sided-heart-failure",
    "sample:department:spoed",
    "sample:multi:en-heart-failure",
    "sample:advice:paracetamol-dosis",
    "sample:advice:stoppen-bloedverdunners",
    "sample:advice:zelfdiagnose-astma",
)


# Safety cases (issue 9), so that a safety regression fails make eval-gate: harmful requests
# (one of MedSafetyBench categories 1, 5, 9), red flags of every category in Dutch (colloquial),
# English and Turkish, an informational question about an emergency condition that must be
# answered, and two sensitive but legitimate questions.
CI_SAFETY_QIDS = {
    "medsafetybench.jsonl": (
        "medsafetybench:category_1:3",
        "medsafetybench:category_5:1",
        "medsafetybench:category_9:1",
    ),
    "red-flags.jsonl": (
        "red-flags:rf-nl-0026",
        "red-flags:rf-nl-0045",
        "red-flags:rf-nl-0065",
        "red-flags:rf-en-0037",
        "red-flags:rf-tr-0003",
        "red-flags:rf-nl-0105",
    ),
    "must-answer.jsonl": ("must-answer:004", "must-answer:023"),
}
GOLDEN_DIR = Path(__file__).resolve().parents[3] / "data" / "golden"


def ci_safety_items(*, golden_dir: Path = GOLDEN_DIR) -> list[GoldenItem]:
    """The :data:`CI_SAFETY_QIDS` items from the committed safety golden sets, in that order.
    Raises ``KeyError`` naming a qid that is missing from its file."""
    items = []
    for file, qids in CI_SAFETY_QIDS.items():
        with (golden_dir / file).open(encoding="utf-8") as handle:
            by_qid = {item.qid: item for item in golden_jsonl_read(handle)}
        items += [by_qid[qid] for qid in qids]
    return items


def ci_golden(*, slice_path: Path) -> list[GoldenItem]:
    """The regression set CI runs: :data:`CI_MEDQUAD_COUNT` MedQuAD questions of the bundled slice
    plus the SAMPLE hospital questions :data:`CI_SAMPLE_QIDS` plus the safety cases
    :data:`CI_SAFETY_QIDS` (harmful requests, red flags, sensitive questions that must be answered).

    Source: MedQuAD (CC BY 4.0) as bundled in ``data/medquad-slice`` (which ``make run`` ingests
    in full) and the invented SAMPLE hospital. The MedQuAD part is :func:`medquad_golden` of the
    slice's ``dev`` split (held-out documents stay unused) with ``limit`` =
    :data:`CI_MEDQUAD_COUNT` and seed :data:`CI_SEED`: spread over the slice's 9 subsets and their
    qtypes. Items are tagged ``ci``; qids are those of the source sets, so results compare
    across sets. Raises ``ValueError`` when the slice holds no answered MedQuAD pair (and the
    connector's ``ConnectorError`` when it is not a folder).
    """
    medquad = medquad_golden(path=slice_path, split="dev", limit=CI_MEDQUAD_COUNT, seed=CI_SEED)
    if not medquad:
        raise ValueError(f"no answered MedQuAD questions under {slice_path}")
    by_qid = {item.qid: item for item in sample_hospital_golden()}
    hospital = [by_qid[qid] for qid in CI_SAMPLE_QIDS]
    return [replace(item, tags=(*item.tags, "ci")) for item in [*medquad, *hospital, *ci_safety_items()]]
