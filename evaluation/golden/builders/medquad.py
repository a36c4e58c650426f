"""Golden set builder: medquad (see the package docstring for sources and licences)."""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from evaluation.golden.builders.common import HELDOUT_PERCENT, SPLITS, _hash_int
from evaluation.golden.io import GoldenItem
from ingestion.connectors.base import DocumentRecord
from ingestion.connectors.medquad import MedQuADConnector

# --- MedQuAD -----------------------------------------------------------------------------------


def medquad_split_of(*, source: str, document_id: str) -> str:
    """``"heldout"`` for :data:`HELDOUT_PERCENT` % of MedQuAD documents, ``"dev"`` for the rest.

    Decided by the SHA-256 of ``"<source>:<document id>"`` alone (no seed), so every QA pair of
    a document lands on the same side and the split never moves when sets are rebuilt.
    """
    return "heldout" if _hash_int(f"{source}:{document_id}") % 100 < HELDOUT_PERCENT else "dev"


def _medquad_records(path: Path) -> list[DocumentRecord]:
    """Every answered QA pair under ``path`` as read by the ingestion connector, file order."""
    connector = MedQuADConnector()
    return [r for unit in connector.units(path) for r in connector.records(unit) if isinstance(r, DocumentRecord)]


def _spread_sample(
    items: Sequence[GoldenItem], *, strata: Sequence[tuple[str, str]], limit: int, seed: int
) -> set[str]:
    """qids of ``limit`` items spread over first-level strata (e.g. sources) and, within each,
    over second-level strata (e.g. qtypes): round-robin at both levels, items in each cell in
    seeded-hash order. A larger ``limit`` with the same seed gives a superset."""
    cells: dict[str, dict[str, list[GoldenItem]]] = defaultdict(lambda: defaultdict(list))
    for item, (outer, inner) in zip(items, strata, strict=True):
        cells[outer][inner].append(item)

    def seeded(key: str) -> int:
        return _hash_int(f"{seed}:{key}")

    per_outer: dict[str, list[GoldenItem]] = {}
    for outer, inners in cells.items():
        queues = [sorted(inners[k], key=lambda i: seeded(i.qid)) for k in sorted(inners, key=seeded)]
        per_outer[outer] = _round_robin(queues)
    ordered = _round_robin([per_outer[k] for k in sorted(per_outer, key=seeded)])
    return {item.qid for item in ordered[:limit]}


def _round_robin(queues: Sequence[Sequence[GoldenItem]]) -> list[GoldenItem]:
    out: list[GoldenItem] = []
    for position in range(max((len(q) for q in queues), default=0)):
        out.extend(q[position] for q in queues if position < len(q))
    return out


def medquad_golden(*, path: Path, split: str, limit: int | None, seed: int) -> list[GoldenItem]:
    """Golden questions from MedQuAD XML: one per answered QA pair of the requested split.

    Source: MedQuAD (Ben Abacha & Demner-Fushman, 2019), CC BY 4.0; ``path`` is a MedQuAD folder
    (``1_CancerGov_QA`` …) or the bundled ``data/medquad-slice``, read with the ingestion
    :class:`~ingestion.connectors.medquad.MedQuADConnector`. Per item: ``qid`` =
    ``medquad:<source>:<document id>:<pid>`` (the indexed document's ``external_id``), the
    question text, ``expected_urls`` = that document's url, ``expected_entities`` = the Focus,
    ``synonyms`` = ``{focus: FocusAnnotations synonyms}``, ``category`` = the qtype, language
    ``en``, tags ``[split, "source:<source>"]``. Pairs with an empty answer are not indexed and
    are skipped. An identity that occurs in more than one file (CancerGov reuses the document id
    ``0000013_2`` in seven files with different questions; ingestion keeps the last) is skipped
    because the indexed document it names is ambiguous.

    ``split``: ``"dev"`` or ``"heldout"`` (:func:`medquad_split_of`, by document). ``limit``:
    at most this many items, a seed-stable sample spread round-robin over sources and, within a
    source, over qtypes; ``None`` keeps all. Items keep the files' order. Raises ``ValueError``
    for an unknown split or a ``limit`` below 1, and the connector's ``ConnectorError`` when
    ``path`` is not a folder.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    if limit is not None and limit < 1:
        raise ValueError("limit must be at least 1")
    records = _medquad_records(path)
    files_per_id = Counter(r.external_id for r in records)
    items: list[GoldenItem] = []
    strata: list[tuple[str, str]] = []
    for record in records:
        meta = record.metadata
        source, document_id = meta["source"], meta["document_id"]
        if files_per_id[record.external_id] > 1 or not record.questions:
            continue
        if medquad_split_of(source=source, document_id=document_id) != split:
            continue
        focus = meta["focus"]
        synonyms = list(dict.fromkeys(s for s in meta["synonyms"] if s.casefold() != focus.casefold()))
        items.append(
            GoldenItem(
                qid=record.external_id,
                question=record.questions[0],
                language="en",
                category=meta["qtype"] or "general",
                expected_entities=(focus,) if focus else (),
                synonyms={focus: synonyms} if focus and synonyms else {},
                expected_urls=(record.url,) if record.url else (),
                tags=(split, f"source:{source}"),
                notes=f"MedQuAD {meta['subset']}, question {meta['qid']}",
            )
        )
        strata.append((source, meta["qtype"]))
    if limit is not None and limit < len(items):
        keep = _spread_sample(items, strata=strata, limit=limit, seed=seed)
        items = [item for item in items if item.qid in keep]
    return items


# Paraphrase templates per MedQuAD qtype (English and Dutch), written for the project's
# benchmarks (not tuned on results): the MedQuAD questions are stored verbatim in the chunks they
# retrieve, so scores on the original wording flatter retrieval (issue 8 review).
PARAPHRASES = {
    "information": ("Can you explain what {f} is?", "Wat is {f}?"),
    "symptoms": ("How do I recognise {f}?", "Wat zijn de symptomen van {f}?"),
    "treatment": ("How can {f} be treated?", "Hoe wordt {f} behandeld?"),
    "causes": ("Why does someone get {f}?", "Wat is de oorzaak van {f}?"),
    "inheritance": ("Can {f} be passed on to children?", "Is {f} erfelijk?"),
    "frequency": ("How common is {f}?", "Hoe vaak komt {f} voor?"),
    "genetic changes": ("Which genes are involved in {f}?", "Welke genen spelen een rol bij {f}?"),
    "outlook": ("What is the long-term outlook with {f}?", "Wat is de prognose bij {f}?"),
    "prevention": ("How can I avoid getting {f}?", "Hoe kan ik {f} voorkomen?"),
    "susceptibility": ("Who is at risk for {f}?", "Wie loopt risico op {f}?"),
    "exams and tests": ("Which tests show {f}?", "Welke onderzoeken tonen {f} aan?"),
    "research": ("Are there studies on {f}?", "Wordt er onderzoek gedaan naar {f}?"),
    "complications": ("What problems can {f} lead to?", "Welke complicaties kan {f} geven?"),
    "stages": ("What are the stages of {f}?", "Welke stadia heeft {f}?"),
    "support groups": ("Where can I find support for {f}?", "Waar vind ik steun bij {f}?"),
    "considerations": ("What should I keep in mind with {f}?", "Waar moet ik op letten bij {f}?"),
}


def medquad_paraphrased(*, items: list[GoldenItem], language: str) -> list[GoldenItem]:
    """The MedQuAD ``items`` asked in other words: the template of their qtype (the category)
    filled with their focus (the first expected entity), in English (``language`` ``en``) or
    Dutch (``nl``, a cross-lingual probe: the pages are English). Expected urls and entities
    stay; qids gain ``:para-<language>``; items whose qtype has no template are left out.
    Raises ``ValueError`` for another language."""
    if language not in ("en", "nl"):
        raise ValueError(f"paraphrase language must be en or nl, got {language!r}")
    column = 0 if language == "en" else 1
    out = []
    for item in items:
        templates = PARAPHRASES.get(item.category)
        if not templates or not item.expected_entities:
            continue
        out.append(
            replace(
                item,
                qid=f"{item.qid}:para-{language}",
                question=templates[column].format(f=item.expected_entities[0]),
                language=language,
                tags=(*item.tags, f"paraphrase-{language}"),
                notes=f"{item.notes}; paraphrased from: {item.question}",
            )
        )
    return out


TYPO_MIN_CHARS = 5
_TYPO_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _typo(word: str, rng: random.Random) -> str:
    """``word`` (at least 2 letters) with one edit, never ``word`` itself: a deletion, a
    transposition of two neighbours, a substitution or an insertion of a letter a–z (Damerau's
    four single-error kinds, which account for about 80 % of misspellings in his material), the
    kind equally likely, then the place uniform over the places that kind has (n letters: n
    deletions and substitutions, n − 1 transpositions, n + 1 insertions); a draw that changes
    nothing (a substitution by the same letter, a transposition of equal letters) is drawn again."""
    while True:
        kind, letter = rng.randrange(4), rng.choice(_TYPO_LETTERS)
        if kind == 0:
            place = rng.randrange(len(word))
            edited = word[:place] + word[place + 1 :]
        elif kind == 1:
            place = rng.randrange(len(word) - 1)
            edited = word[:place] + word[place + 1] + word[place] + word[place + 2 :]
        elif kind == 2:
            place = rng.randrange(len(word))
            edited = word[:place] + letter + word[place + 1 :]
        else:
            place = rng.randrange(len(word) + 1)
            edited = word[:place] + letter + word[place:]
        if edited != word:
            return edited


def medquad_misspelled(*, items: list[GoldenItem], seed: int = 0) -> list[GoldenItem]:
    """The English MedQuAD ``items`` with their focus misspelled: one word of at least
    :data:`TYPO_MIN_CHARS` letters of the focus (the first expected entity, where the question
    names it, case-insensitively) gets one random edit (:func:`_typo`); the word and the edit are
    drawn from a generator seeded by ``seed`` and the item's qid, so a rebuild gives the same set.
    A probe of robustness to misspelled condition names (issue 10: patients misspell them), not a
    sample of real misspellings: those are often two edits and phonetic ("nefrotic"). Expected
    urls and entities stay; qids gain ``:typo``, tags ``typo``; items whose question does not
    name their focus, or whose focus has no word that long, are left out."""
    out = []
    for item in items:
        if item.language != "en" or not item.expected_entities:
            continue
        focus = item.expected_entities[0]
        start = item.question.lower().find(focus.lower())
        if start < 0:
            continue
        spans = [(m.start() + start, m.end() + start) for m in _TYPO_WORD.finditer(focus)]
        spans = [(a, b) for a, b in spans if b - a >= TYPO_MIN_CHARS]
        if not spans:
            continue
        rng = random.Random(f"{seed}:{item.qid}")
        a, b = rng.choice(spans)
        question = item.question[:a] + _typo(item.question[a:b], rng) + item.question[b:]
        out.append(
            replace(
                item,
                qid=f"{item.qid}:typo",
                question=question,
                tags=(*item.tags, "typo"),
                notes=f"{item.notes}; misspelled from: {item.question}",
            )
        )
    return out


_TYPO_WORD = re.compile(r"[A-Za-z]+")
