"""Calibration cohorts from stored answers and review labels (issue 12 item 3, seed 000).

For one embedding model, per language of the question, from answers whose draft the fast gate
scored (``Answer.gate_score`` set: served or gate-rejected):

- **related** (should pass): drafts the judge rated faithful and relevant (faithfulness ≥
  :data:`~evaluation.metrics.criteria.FAITHFULNESS_PASS` and relevancy ≥
  :data:`~evaluation.metrics.criteria.RELEVANCY_PASS`, the composite pass criterion's cut-offs),
  scored as served;
- **unrelated** (should be refused): each draft with its own context put to the next question of
  the same language (rotated by one): ``w·context_alignment_i + (1 − w)·cos(q_j, a_i)``, the
  gate's formula (:func:`zolsearch.search.gate.gate_score`) with the draft's served weight w,
  its stored context alignment and fresh vectors of question ``j`` and draft ``i``. A rotated
  draft that cites a page the golden set marks relevant to question ``j`` (grade ≥
  :data:`~evaluation.metrics.retrieval.RELEVANT_GRADE` against ``j``'s expected urls) answers
  ``j`` from the right page and is not off-topic: it is left out and counted
  (``rotated_on_topic``). Golden sets ordered by topic (hospital-nl) make such pairs common;
- **reviewed good / reviewed bad**: answers an evaluator labelled for calibration in the review
  queue (verdicts good answer and wrongly refused / rightly refused, wrong answer, unsafe), or
  whose draft a reviewer labelled in a draft-labels file (:mod:`evaluation.draft_labels`). A
  reviewer's label wins over the judge: a labelled answer is in no judged cohort (related,
  judged off-topic), so a wrong answer the judge approved does not count as a good one;
- **judged off-topic** (evidence only): drafts with relevancy < ``RELEVANCY_FLOOR``.

Positives = related ∪ reviewed good; negatives = unrelated ∪ reviewed bad. Each score keeps its two
cosines, so calibration can rescore the cohorts with another context weight
(:meth:`LanguageCohorts.reweighted`). Each related and unrelated draft also records whether the
gate's focus agreement refuses it (:func:`zolsearch.search.gate.subject_disagrees`: the question's
linked focus, question type and candidates from its answer's trace, the cited pages of the draft; for a rotated
draft, question ``j``'s focus and candidates against draft ``i``'s cited pages), and whether its
site agreement does (:func:`zolsearch.search.gate.site_disagrees`: the hospital the question
names, the same way), and whether its term agreement does (:func:`zolsearch.search.gate.terms_disagree`:
the question's words against the draft's, given the languages of the chunks the draft cites).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.db.models import Prefetch

from core.providers.embeddings import embedding_provider_get
from core.text import text_normalise
from evaluation.metrics.criteria import FAITHFULNESS_PASS, RELEVANCY_FLOOR, RELEVANCY_PASS
from evaluation.metrics.retrieval import RELEVANT_GRADE, url_grade
from evaluation.models import EvaluationResult, EvaluationRun, Judgement
from ingestion.models import Chunk
from zolsearch.search.focus import focus_equivalents
from zolsearch.search.gate import CONTEXT_WEIGHT, Subject, site_disagrees, subject_disagrees, terms_disagree
from zolsearch.search.models import Answer
from zolsearch.search.selectors import AnswerMaterial, answer_material
from zolsearch.search.sites import SiteMatcher, index_site_labels

COHORT_NAMES = ("related", "unrelated", "reviewed_good", "reviewed_bad", "judged_off_topic")


@dataclass
class LanguageCohorts:
    """Scores (gate scale, floats in [−1, 1]) of one language's cohorts, with the answer ids
    behind the related cohort (``related_ids``, parallel to ``related``) so an evaluator can open
    the good answers a threshold would refuse."""

    related: list[float] = field(default_factory=list)
    related_ids: list[int] = field(default_factory=list)
    reviewed_good_ids: list[int] = field(default_factory=list)  # parallel to ``reviewed_good``
    unrelated: list[float] = field(default_factory=list)
    reviewed_good: list[float] = field(default_factory=list)
    reviewed_bad: list[float] = field(default_factory=list)
    judged_off_topic: list[float] = field(default_factory=list)
    drafts: int = 0
    rescore_error: float | None = None  # mean |stored − recomputed| of cos(question, answer)
    # cohort name → (context alignment, question similarity) per score, parallel to its list; a
    # list without all its pairs (answers stored before the gate kept them) cannot be reweighted
    components: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    context_weight: float = CONTEXT_WEIGHT  # the w of the scores above
    # "related" / "unrelated" / "reviewed_good" → whether the focus agreement refuses each draft,
    # parallel to the list (reviewed bad drafts have none: they are refused or not, never counted good)
    focus_mismatch: dict[str, list[bool]] = field(default_factory=dict)
    # the same for the site agreement
    site_mismatch: dict[str, list[bool]] = field(default_factory=dict)
    # the same for the term agreement, and with its cross-lingual rule too (``gate_term_check_across``)
    term_mismatch: dict[str, list[bool]] = field(default_factory=dict)
    term_mismatch_across: dict[str, list[bool]] = field(default_factory=dict)
    # rotated drafts left out of ``unrelated``: they cite a page relevant to the question put to them
    rotated_on_topic: int = 0

    def _add(self, name: str, score: float, pair: tuple[float, float] | None) -> None:
        getattr(self, name).append(score)
        if pair is not None:
            self.components.setdefault(name, []).append(pair)

    @property
    def reweighable(self) -> bool:
        """Every score of every cohort has its two cosines (:meth:`reweighted` can rescore)."""
        return all(len(self.components.get(name, ())) == len(getattr(self, name)) for name in COHORT_NAMES)

    def reweighted(self, context_weight: float) -> LanguageCohorts:
        """The same cohorts scored ``w·alignment + (1 − w)·similarity`` with ``context_weight`` w
        in [0, 1] (:func:`zolsearch.search.gate.gate_score`). Raises ``ValueError`` when not
        :attr:`reweighable`."""
        if not self.reweighable:
            raise ValueError("some scores were stored without their cosines: they cannot be reweighted")
        w = context_weight
        scores = {name: [w * a + (1 - w) * s for a, s in self.components.get(name, [])] for name in COHORT_NAMES}
        return LanguageCohorts(
            **scores,
            related_ids=list(self.related_ids),
            reviewed_good_ids=list(self.reviewed_good_ids),
            drafts=self.drafts,
            rescore_error=self.rescore_error,
            components={k: list(v) for k, v in self.components.items()},
            context_weight=w,
            focus_mismatch={k: list(v) for k, v in self.focus_mismatch.items()},
            site_mismatch={k: list(v) for k, v in self.site_mismatch.items()},
            term_mismatch={k: list(v) for k, v in self.term_mismatch.items()},
            term_mismatch_across={k: list(v) for k, v in self.term_mismatch_across.items()},
            rotated_on_topic=self.rotated_on_topic,
        )

    @classmethod
    def pooled(cls, cohorts: Sequence[LanguageCohorts]) -> LanguageCohorts:
        """The cohorts of several languages as one, for the pooled calibration of the languages
        too small for their own (:data:`zolsearch.search.gate.POOLED_LANGUAGE`): every list
        concatenated in the given order (scores, their cosines, answer ids, agreement flags),
        draft and left-out counts summed, the rescore errors averaged by drafts. An empty
        ``cohorts`` gives empty cohorts. Every score must keep its two cosines
        (:attr:`reweighable`): the pool is rescored with each candidate context weight when it is
        calibrated, and scores served under different weights (a calibrated language at 0.1,
        another at the seed's 0.7) would otherwise be mixed on different scales. Raises
        ``ValueError`` when a cohort is not reweighable or a cohort's agreement flags do not
        match its scores one to one."""
        cohorts = list(cohorts)
        if not all(c.reweighable for c in cohorts):
            raise ValueError("some scores were stored without their cosines: languages cannot be pooled")
        flag_names = ("focus_mismatch", "site_mismatch", "term_mismatch", "term_mismatch_across")
        for name in flag_names:
            keys = {k for c in cohorts for k in getattr(c, name)}
            for cohort, key in ((c, k) for c in cohorts for k in keys):
                if len(getattr(cohort, name).get(key, [])) != len(getattr(cohort, key)):
                    raise ValueError(f"{name}[{key!r}] does not match its scores one to one")
        drafts = sum(c.drafts for c in cohorts)
        errors = [(c.rescore_error, c.drafts) for c in cohorts if c.rescore_error is not None and c.drafts]

        def joined(name: str) -> dict[str, list[Any]]:
            out: dict[str, list[Any]] = {}
            for cohort in cohorts:
                for key, values in getattr(cohort, name).items():
                    out.setdefault(key, []).extend(values)
            return out

        return cls(
            **{name: [s for c in cohorts for s in getattr(c, name)] for name in COHORT_NAMES},
            related_ids=[i for c in cohorts for i in c.related_ids],
            reviewed_good_ids=[i for c in cohorts for i in c.reviewed_good_ids],
            drafts=drafts,
            rescore_error=sum(e * n for e, n in errors) / sum(n for _, n in errors) if errors else None,
            components=joined("components"),
            context_weight=cohorts[0].context_weight if cohorts else CONTEXT_WEIGHT,
            focus_mismatch=joined("focus_mismatch"),
            site_mismatch=joined("site_mismatch"),
            term_mismatch=joined("term_mismatch"),
            term_mismatch_across=joined("term_mismatch_across"),
            rotated_on_topic=sum(c.rotated_on_topic for c in cohorts),
        )

    @property
    def positives(self) -> list[float]:
        return [*self.related, *self.reviewed_good]

    @property
    def negatives(self) -> list[float]:
        return [*self.unrelated, *self.reviewed_bad]


@dataclass(frozen=True)
class _Draft:
    answer_id: int
    language: str
    question: str
    text: str
    score: float
    context_alignment: float
    semantic_similarity: float
    context_weight: float = CONTEXT_WEIGHT
    focus: str = ""  # the question's linked focus, normalised
    qtype: str = ""  # its predicted MedQuAD question type
    candidates: tuple[Subject, ...] = ()  # its candidate pages
    cited: tuple[Subject, ...] = ()  # the pages the draft cites
    cited_urls: tuple[str, ...] = ()  # their web addresses
    cited_languages: tuple[str, ...] = ()  # their chunks' languages
    searched: str = ""  # the words understanding added to the question's search (:func:`_searched`)
    corrected: str = ""  # the question's spelling corrections (:func:`_corrected`)
    expected_urls: tuple[str, ...] = ()  # the golden question's relevant pages ("" none known)

    def answers_from_a_relevant_page(self, other: _Draft) -> bool:
        """This draft cites a page the golden set marks relevant to ``other``'s question."""
        return any(url_grade(url, other.expected_urls) >= RELEVANT_GRADE for url in self.cited_urls)


class _FocusView:
    """The focus- and site-agreement inputs of stored answers: each answer's linked focus and
    question type (its trace), the :class:`~zolsearch.search.gate.Subject` of its candidates
    (``chunk_scores``) and of the chunks its draft cites (one query for all their documents; a
    page is a hospital's own when its source has a priority now, and is about the names its
    focus title holds and the focus another site names the same condition by too, as the
    defaults ``foci_title_variants`` and ``foci_equivalents`` read it, whatever the
    configuration the answer was served with), and the index's site labels."""

    def __init__(self, answers: Sequence[Answer]) -> None:
        ids = {int(row["chunk_id"]) for a in answers for row in (a.chunk_scores or []) if "chunk_id" in row}
        ids |= {int(i) for a in answers for i in ((a.trace or {}).get("cited_chunk_ids") or [])}
        rows = list(
            Chunk.objects.filter(id__in=ids).values_list(
                "id", "document__metadata", "document__url", "document__source__priority", "language"
            )
        )
        self.subjects: dict[int, Subject] = {}
        self.urls: dict[int, str] = {}
        self.languages: dict[int, str] = {}
        equivalents = focus_equivalents()
        for chunk_id, metadata, url, priority, language in rows:
            self.subjects[chunk_id] = Subject.of(metadata or {}, url=url, own=priority > 0, equivalents=equivalents)
            self.urls[chunk_id] = url or ""
            self.languages[chunk_id] = language or ""
        self.sites = index_site_labels()

    def site_mismatch(
        self, question: str, language: str, candidates: Sequence[Subject], cited: Sequence[Subject]
    ) -> bool:
        """:func:`~zolsearch.search.gate.site_disagrees` of ``question`` (as asked, in ``language``)."""
        if not any(c.site for c in candidates):
            return False
        names = SiteMatcher(question, language, self.sites).names
        return site_disagrees(names, candidates=candidates, cited=cited)

    def of(self, answer: Answer) -> tuple[str, str, tuple[Subject, ...], tuple[Subject, ...]]:
        """``(focus, qtype, candidates, cited)`` of ``answer``."""
        trace = answer.trace or {}
        understanding = trace.get("understanding") or {}
        focus = text_normalise(str(understanding.get("focus") or ""))
        none = Subject(foci=frozenset())
        rows = answer.chunk_scores or []
        candidates = tuple(self.subjects.get(int(r["chunk_id"]), none) for r in rows if "chunk_id" in r)
        cited = tuple(self.subjects.get(int(i), none) for i in (trace.get("cited_chunk_ids") or []))
        return focus, str(understanding.get("qtype") or ""), candidates, cited

    def cited_languages(self, answer: Answer) -> tuple[str, ...]:
        """The languages of the chunks ``answer``'s draft cites ("" when unknown)."""
        return tuple(self.languages.get(int(i), "") for i in ((answer.trace or {}).get("cited_chunk_ids") or []))

    def cited_urls(self, answer: Answer) -> tuple[str, ...]:
        """The web addresses of the pages ``answer``'s draft cites (blank ones skipped)."""
        urls = (self.urls.get(int(i), "") for i in ((answer.trace or {}).get("cited_chunk_ids") or []))
        return tuple(u for u in urls if u)


def _searched(answer: Answer) -> str:
    """The words understanding added to ``answer``'s search (its trace's ``expanded``), as the
    live gate's cross-lingual term agreement reads them."""
    understanding = (answer.trace or {}).get("understanding") or {}
    return str(understanding.get("expanded") or "")


def _corrected(answer: Answer) -> str:
    """``answer``'s spelling corrections (its trace's ``corrected``, "faktuur → factuur"), as
    the live gate's term agreement reads them."""
    understanding = (answer.trace or {}).get("understanding") or {}
    return str(understanding.get("corrected") or "")


def answers_of_runs(*, runs: Sequence[EvaluationRun]) -> list[int]:
    """Ids of the stored answers of ``runs`` (their :class:`EvaluationResult` rows). One query."""
    return list(
        EvaluationResult.objects.filter(run__in=runs, answer__isnull=False)
        .values_list("answer_id", flat=True)
        .distinct()
    )


def expected_urls_of_runs(*, runs: Sequence[EvaluationRun]) -> dict[int, tuple[str, ...]]:
    """``{answer id: its golden question's expected urls}`` for the stored answers of ``runs``
    (questions without expected urls are left out). One query."""
    rows = EvaluationResult.objects.filter(run__in=runs, answer__isnull=False).values_list(
        "answer_id", "question__expected_urls"
    )
    return {int(answer_id): tuple(str(u) for u in urls) for answer_id, urls in rows if urls}


def _latest_judgements(answers: Iterable[Answer]) -> dict[int, Judgement]:
    latest: dict[int, Judgement] = {}
    for answer in answers:
        done = [j for j in answer.judgements.all() if j.status == Judgement.Status.DONE]
        if done:
            latest[answer.pk] = max(done, key=lambda j: j.created_at)
    return latest


def _agreement_flags(
    cohort: LanguageCohorts,
    name: str,
    answer: Answer,
    view: _FocusView,
    material: AnswerMaterial | None,
    *,
    subject: tuple[str, str, tuple[Subject, ...], tuple[Subject, ...]],
    cited_languages: tuple[str, ...],
) -> None:
    """Append to ``cohort``'s agreement flags under cohort ``name`` whether each agreement rule
    of the gate (focus, site, term, term across languages) refuses ``answer``'s draft;
    ``subject``: ``view.of(answer)``, ``cited_languages``: ``view.cited_languages(answer)``."""
    focus, qtype, candidates, cited = subject
    cohort.focus_mismatch.setdefault(name, []).append(
        subject_disagrees(focus, qtype, candidates=candidates, cited=cited)
    )
    cohort.site_mismatch.setdefault(name, []).append(
        view.site_mismatch(answer.question, answer.language, candidates, cited)
    )
    for across, found in ((False, cohort.term_mismatch), (True, cohort.term_mismatch_across)):
        no_terms = material is not None and terms_disagree(
            answer.question,
            material.text,
            language=answer.language,
            draft_languages=cited_languages,
            searched=_searched(answer),
            across=across,
            corrected=_corrected(answer),
        )
        found.setdefault(name, []).append(no_terms)


def gate_cohorts_from_answers(
    *,
    answer_ids: Sequence[int],
    model_key: str,
    labels: Sequence[tuple[int, bool]] = (),
    languages: Sequence[str] = (),
    expected_urls: Mapping[int, Sequence[str]] | None = None,
) -> dict[str, LanguageCohorts]:
    """``{language: LanguageCohorts}`` from the stored answers ``answer_ids`` of ``model_key``
    (others are skipped) and review ``labels`` (``(answer_id, positive)``; see the module
    docstring). ``languages``: keep only these (empty: all). ``expected_urls``: answer id → its
    golden question's expected urls (:func:`expected_urls_of_runs`); a rotated draft citing a
    page relevant to the question put to it is left out of ``unrelated`` (module docstring; None
    or a missing id: never left out). Embeds each draft and question once
    with ``model_key``'s provider (local: no network); raises what the provider raises when it is
    unavailable."""
    wanted = set(languages)
    labelled = dict(labels)
    answers = list(
        Answer.objects.filter(pk__in=[*answer_ids, *labelled], embedding_model=model_key, gate_score__isnull=False)
        .prefetch_related(Prefetch("judgements", queryset=Judgement.objects.order_by("created_at")))
        .order_by("pk")
    )
    judgements = _latest_judgements(answers)
    view = _FocusView(answers)
    cohorts: dict[str, LanguageCohorts] = defaultdict(LanguageCohorts)
    drafts: dict[str, list[_Draft]] = defaultdict(list)
    for answer in answers:
        if wanted and answer.language not in wanted:
            continue
        gate = answer.gate or {}
        score = float(answer.gate_score)  # type: ignore[arg-type]  # filtered not null
        pair = (
            (float(gate["context_alignment"]), float(gate["semantic_similarity"]))
            if "context_alignment" in gate and "semantic_similarity" in gate
            else None
        )
        cohort = cohorts[answer.language]
        focus, qtype, candidates, cited = view.of(answer)
        judgement = judgements.get(answer.pk)
        material = answer_material(answer=answer)
        cited_languages = view.cited_languages(answer)
        good_cohort = ""  # the cohort of good drafts this one joins, if any
        if answer.pk in labelled:
            # a reviewer's label wins over the judge: the answer is in no judged cohort
            if labelled[answer.pk]:
                good_cohort = "reviewed_good"
                cohort.reviewed_good_ids.append(answer.pk)
            else:
                cohort._add("reviewed_bad", score, pair)
        elif judgement is not None and judgement.faithfulness is not None and judgement.relevancy is not None:
            if judgement.faithfulness >= FAITHFULNESS_PASS and judgement.relevancy >= RELEVANCY_PASS:
                good_cohort = "related"
                cohort.related_ids.append(answer.pk)
            elif judgement.relevancy < RELEVANCY_FLOOR:
                cohort._add("judged_off_topic", score, pair)
        if good_cohort:
            cohort._add(good_cohort, score, pair)
            _agreement_flags(
                cohort,
                good_cohort,
                answer,
                view,
                material,
                subject=(focus, qtype, candidates, cited),
                cited_languages=cited_languages,
            )
        if material is None or "context_alignment" not in gate or "semantic_similarity" not in gate:
            continue
        drafts[answer.language].append(
            _Draft(
                answer_id=answer.pk,
                language=answer.language,
                question=answer.question,
                text=material.text,
                score=score,
                context_alignment=float(gate["context_alignment"]),
                semantic_similarity=float(gate["semantic_similarity"]),
                context_weight=float(gate.get("context_weight", CONTEXT_WEIGHT)),
                focus=focus,
                qtype=qtype,
                candidates=candidates,
                cited=cited,
                cited_urls=view.cited_urls(answer),
                cited_languages=cited_languages,
                searched=_searched(answer),
                corrected=_corrected(answer),
                expected_urls=tuple((expected_urls or {}).get(answer.pk, ())),
            )
        )
    provider = embedding_provider_get(model_key) if drafts else None
    for language, rows in drafts.items():
        cohort = cohorts[language]
        cohort.drafts = len(rows)
        if len(rows) < 2 or provider is None:
            continue
        questions = provider.embed_queries([d.question for d in rows])
        texts = provider.embed_passages([d.text for d in rows])
        own = np.einsum("ij,ij->i", questions, texts)
        cohort.rescore_error = float(np.mean(np.abs(own - np.array([d.semantic_similarity for d in rows]))))
        rotated = np.roll(questions, -1, axis=0)  # question j = i + 1 of the same language
        cross = np.einsum("ij,ij->i", rotated, texts)
        following = rows[1:] + rows[:1]  # question j = i + 1, as ``rotated``
        pairs = [
            (i, j, float(c))
            for i, j, c in zip(rows, following, cross, strict=True)
            if not i.answers_from_a_relevant_page(j)
        ]
        cohort.rotated_on_topic = len(rows) - len(pairs)
        cohort.unrelated = [i.context_weight * i.context_alignment + (1 - i.context_weight) * c for i, _j, c in pairs]
        cohort.components["unrelated"] = [(i.context_alignment, c) for i, _j, c in pairs]
        cohort.focus_mismatch["unrelated"] = [
            subject_disagrees(j.focus, j.qtype, candidates=j.candidates, cited=i.cited) for i, j, _c in pairs
        ]
        cohort.site_mismatch["unrelated"] = [
            view.site_mismatch(j.question, j.language, j.candidates, i.cited) for i, j, _c in pairs
        ]
        for across, found in ((False, cohort.term_mismatch), (True, cohort.term_mismatch_across)):
            found["unrelated"] = [
                terms_disagree(
                    j.question,
                    i.text,
                    language=j.language,
                    draft_languages=i.cited_languages,
                    searched=j.searched,
                    across=across,
                    corrected=j.corrected,
                )
                for i, j, _c in pairs
            ]
    return dict(cohorts)
