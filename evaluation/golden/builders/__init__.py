"""Builders of golden question sets from the real data (and the invented SAMPLE hospital).

Each builder is a pure function returning ``list[GoldenItem]`` in a deterministic order; write
them with :func:`evaluation.golden.io.golden_jsonl_write` (``manage.py golden_build``). Expected
urls are exactly the urls the project's connectors give the documents when they are ingested,
so a run over an index built from the same files can be scored without any mapping.

Sources and licences (also in ``data/golden/README.md``):

- MedQuAD (Ben Abacha & Demner-Fushman, BMC Bioinformatics 20:511, 2019), CC BY 4.0.
- RIVM Corona FAQ (Dutch, 2020): public information of the RIVM.
- MedSafetyBench (Han et al., NeurIPS 2024 Datasets and Benchmarks), MIT.
- The SAMPLE hospital of :mod:`taxonomy.sample`: invented, no real people or places.
"""

from evaluation.golden.builders.ci import CI_SAMPLE_QIDS, ci_golden
from evaluation.golden.builders.common import CI_MEDQUAD_COUNT, CI_SEED, HELDOUT_PERCENT, MEDSAFETY_NOTE_CHARS, SPLITS
from evaluation.golden.builders.hospital_nl import hospital_nl_golden, hospital_nl_qrels, hospital_nl_split_of
from evaluation.golden.builders.medquad import (
    PARAPHRASES,
    medquad_golden,
    medquad_misspelled,
    medquad_paraphrased,
    medquad_split_of,
)
from evaluation.golden.builders.medsafetybench import medsafetybench_golden
from evaluation.golden.builders.rivm import rivm_golden, rivm_salient_terms
from evaluation.golden.builders.safety import red_flags_golden
from evaluation.golden.builders.sample_hospital import SAMPLE_SNOMED_TERMS, sample_hospital_golden

__all__ = [
    "CI_MEDQUAD_COUNT",
    "CI_SAMPLE_QIDS",
    "CI_SEED",
    "hospital_nl_golden",
    "hospital_nl_qrels",
    "hospital_nl_split_of",
    "HELDOUT_PERCENT",
    "MEDSAFETY_NOTE_CHARS",
    "SAMPLE_SNOMED_TERMS",
    "SPLITS",
    "ci_golden",
    "PARAPHRASES",
    "medquad_golden",
    "medquad_misspelled",
    "medquad_paraphrased",
    "medquad_split_of",
    "medsafetybench_golden",
    "red_flags_golden",
    "rivm_golden",
    "rivm_salient_terms",
    "sample_hospital_golden",
]
