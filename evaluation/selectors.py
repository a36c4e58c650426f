"""Reads of evaluation: synonyms for entity recall, the judge's view of an answer, run
comparisons and review lists."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from core.runs import RunStatus
from core.text import text_normalise
from evaluation.judges.base import JudgeInput
from evaluation.models import AblationStudy, EvaluationResult, EvaluationRun
from ingestion.models import Document
from taxonomy.models import Alias, Entity, ReviewState, SnomedDescription
from zolsearch.search.models import Answer
from zolsearch.search.selectors import answer_material


def entity_synonyms(*, names: Sequence[str]) -> dict[str, list[str]]:
    """Other names of each expected entity, from the curated knowledge (for entity recall).

    For each name: when it is (normalised) the name, another-language name or an approved alias
    of a taxonomy entity, that entity's names, approved aliases and the active SNOMED CT
    descriptions of its concept; when it is an active SNOMED CT description, the other active
    descriptions of that concept. Returns ``{name: [synonym, …]}`` (only names with synonyms;
    the name itself excluded). Four queries, whatever the number of names.
    """
    wanted = {text_normalise(n): n for n in names if text_normalise(n)}
    if not wanted:
        return {}
    by_name: dict[str, set[int]] = {}
    entities = {e.id: e for e in Entity.objects.only("id", "name", "names", "snomed_concept_id")}
    for entity in entities.values():
        for label in [entity.name, *[str(v) for v in (entity.names or {}).values()]]:
            key = text_normalise(label)
            if key in wanted:
                by_name.setdefault(key, set()).add(entity.id)
    aliases = list(
        Alias.objects.filter(review_state=ReviewState.APPROVED).values_list("entity_id", "text", "normalised")
    )
    for entity_id, _, normalised in aliases:
        if normalised in wanted:
            by_name.setdefault(normalised, set()).add(entity_id)
    concept_of_entity = {eid: entities[eid].snomed_concept_id for ids in by_name.values() for eid in ids}
    snomed_hits = SnomedDescription.objects.filter(term_normalised__in=list(wanted), active=True).values_list(
        "term_normalised", "concept_id"
    )
    concepts_by_name: dict[str, set[int]] = {}
    for normalised, concept_id in snomed_hits:
        concepts_by_name.setdefault(normalised, set()).add(concept_id)
    all_concepts = {c for c in concept_of_entity.values() if c} | {c for s in concepts_by_name.values() for c in s}
    terms_by_concept: dict[int, list[str]] = {}
    for concept_id, term in SnomedDescription.objects.filter(concept_id__in=all_concepts, active=True).values_list(
        "concept_id", "term"
    ):
        terms_by_concept.setdefault(concept_id, []).append(term)
    aliases_by_entity: dict[int, list[str]] = {}
    for entity_id, text, _ in aliases:
        aliases_by_entity.setdefault(entity_id, []).append(text)

    result: dict[str, list[str]] = {}
    for key, original in wanted.items():
        found: list[str] = []
        for entity_id in sorted(by_name.get(key, ())):
            entity = entities[entity_id]
            found += [entity.name, *[str(v) for v in (entity.names or {}).values()]]
            found += aliases_by_entity.get(entity_id, [])
            if entity.snomed_concept_id:
                found += terms_by_concept.get(entity.snomed_concept_id, [])
        for concept_id in sorted(concepts_by_name.get(key, ())):
            found += terms_by_concept.get(concept_id, [])
        unique = list(dict.fromkeys(s for s in found if text_normalise(s) and text_normalise(s) != key))
        if unique:
            result[original] = unique
    return result


def same_question_urls(*, expected_urls: Sequence[str], qtype: str) -> list[str]:
    """Urls of other pages that answer the same MedQuAD question as an expected page: pages of
    any source whose MedQuAD focus (``metadata["focus"]``, compared after
    :func:`core.text.text_normalise`) is the focus of a document at one of ``expected_urls``,
    and that hold a QA pair of question type ``qtype`` (MedQuAD's qtype, a golden item's
    ``category``), sorted, the expected urls left out; the same site's other pages included
    (CancerGov has several pages on one cancer). ``[]`` when ``qtype`` is blank, matches no QA
    pair (a golden item's default category "general"), or no expected page has a focus (hospital
    pages, RIVM). Urls are matched as stored, exactly: an expected url written otherwise than the
    indexed page's (``evaluation.metrics.retrieval.url_normalise`` would equate them) finds
    nothing. Given to :func:`evaluation.metrics.retrieval.mrr` as expected urls, a returned url's
    sub-pages count half, as an expected url's do.

    Why: MedQuAD holds the same focus at several NIH sites (GHR's and GARD's "Robinow
    syndrome"), and a golden item derived from one QA pair names only that pair's page, so a
    ranking that puts the other site's answer to the same question first scores 0 there. The
    focus's name, not its UMLS CUIs: MedQuAD annotates many foci with a generic concept alone
    (C0039082 "Syndrome" for ADNP syndrome and Aicardi-Goutières syndrome type 3), which would
    make unrelated pages equivalent. Two queries."""
    if not qtype.strip():
        return []
    expected = [u for u in expected_urls if u.strip()]
    foci = {
        text_normalise(focus)
        for focus in Document.objects.filter(url__in=expected).values_list("metadata__focus", flat=True)
        if isinstance(focus, str) and focus.strip()
    }
    if not foci:
        return []
    rows = (
        Document.objects.filter(metadata__qtype=qtype, metadata__has_key="focus")
        .exclude(url__in=expected)
        .values_list("url", "metadata__focus")
    )
    return sorted({url for url, focus in rows if isinstance(focus, str) and text_normalise(focus) in foci})


def judge_input_for_answer(*, answer: Answer) -> JudgeInput | None:
    """What the judge sees of a stored answer, or ``None`` when there is nothing to judge.

    Answered: the answer without citation markers and without the pinned taxonomy lines (those
    go to ``authoritative``), the cited chunks' text as context. Refused by the gate or the
    output guard: the refused draft with its context, so the review queue can compare the gate
    with the judge. Nothing drafted (no results, red flag, input refusal): ``None``. Read through
    :func:`zolsearch.search.selectors.answer_material`.
    """
    material = answer_material(answer=answer)
    if material is None:
        return None
    return JudgeInput(
        question=material.question, answer=material.text, context=material.context, authoritative=material.facts
    )


@dataclass(frozen=True)
class ResultPair:
    """One question in two runs (either side may be missing when the sets differ)."""

    qid: str
    question: str
    category: str
    left: EvaluationResult | None
    right: EvaluationResult | None

    @property
    def change(self) -> str:
        """``regressed`` (pass → fail), ``recovered`` (fail → pass), ``same`` or ``missing``."""
        if self.left is None or self.right is None:
            return "missing"
        if self.left.passed and not self.right.passed:
            return "regressed"
        if not self.left.passed and self.right.passed:
            return "recovered"
        return "same"


def run_results(*, run: EvaluationRun, verdict: str = "") -> QuerySet[EvaluationResult]:
    """Result rows of ``run`` with their question, in set order; ``verdict`` ``pass``/``fail``
    filters on the composite criterion."""
    queryset = EvaluationResult.objects.filter(run=run).select_related("question")
    if verdict == "pass":
        queryset = queryset.filter(passed=True)
    elif verdict == "fail":
        queryset = queryset.filter(passed=False)
    return queryset.order_by("question__position", "id")


def runs_compare(*, left: EvaluationRun, right: EvaluationRun) -> list[ResultPair]:
    """Pairs of results matched by ``qid`` (question ids are stable across set versions), in the
    left run's order, then questions only the right run has. Two queries."""
    lefts = {r.question.qid: r for r in run_results(run=left)}
    rights = {r.question.qid: r for r in run_results(run=right)}
    pairs = []
    for qid in [*lefts, *[q for q in rights if q not in lefts]]:
        a, b = lefts.get(qid), rights.get(qid)
        source = a or b
        assert source is not None
        pairs.append(
            ResultPair(qid=qid, question=source.question.question, category=source.question.category, left=a, right=b)
        )
    return pairs


def studies_with_run_counts(queryset: QuerySet[AblationStudy]) -> QuerySet[AblationStudy]:
    """``queryset`` with each study's evaluation runs counted in the same query: ``runs_total``
    and ``runs_<status>`` for pending, running, succeeded and failed (ints ≥ 0)."""
    runs = "configurations__runs"
    by_status = {
        f"runs_{status}": Count(runs, filter=Q(configurations__runs__status=status)) for status in RunStatus.values
    }
    return queryset.annotate(runs_total=Count(runs), **by_status)


def runs_latest_succeeded(*, names: Sequence[str], model_key: str) -> list[EvaluationRun]:
    """The newest SUCCEEDED evaluation run (not part of a study) of each golden set name in
    ``names`` with embedding model ``model_key``; names without one are left out. One query."""
    runs = (
        EvaluationRun.objects.filter(
            golden_set__name__in=names,
            embedding_model=model_key,
            status=EvaluationRun.Status.SUCCEEDED,
            study_configuration__isnull=True,
        )
        .select_related("golden_set")
        .order_by("golden_set__name", "-finished_at", "-pk")
        .distinct("golden_set__name")  # PostgreSQL DISTINCT ON: the first row per name
    )
    return list(runs)
