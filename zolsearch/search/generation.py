"""Answer composition with numbered citations: extractive by default, an LLM when configured.

Extractive: the sentences of the top chunks that best answer the question, scored by stemmed
term overlap weighted by inverse sentence frequency among the candidates, plus a prior for the
chunk's rank and the sentence's position (leading sentences of a passage usually define the
topic). It copies the hospital's own text verbatim; it never invents wording.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from core.providers.llm import chat_llm_get
from core.text import sentences_split, terms_stem, text_normalise
from ingestion.chunking import chunk_source_text_compose
from ingestion.models import Chunk
from taxonomy.selectors import DepartmentFact, RoutingFact
from zolsearch.search.answer_type import answer_types, sentence_states
from zolsearch.search.contract import Generator
from zolsearch.search.messages import fact_templates
from zolsearch.search.privacy import question_external

MAX_SNIPPET_CHARS = 240
CITATION_MARK = re.compile(r"\s*\[\d+\]")


@dataclass
class Citation:
    """One cited document: ``n`` is the number used in the answer text (1-based)."""

    n: int
    title: str
    url: str
    snippet: str
    external_id: str
    chunk_ids: list[int] = field(default_factory=list)
    source: str = "document"  # or "taxonomy": the hospital's curated graph

    def public(self) -> dict[str, object]:
        """The API shape ``{n, title, url, snippet, source}``."""
        return {"n": self.n, "title": self.title, "url": self.url, "snippet": self.snippet, "source": self.source}


EXTRACTIVE_MODEL = "zolsearch-extractive/1"  # the extractive composer's name and version


@dataclass
class Draft:
    """A composed answer before the gate; ``cited_chunk_ids`` feed the gate's context.
    ``model``: the generator's model and version (``zolsearch-extractive/1``, the LLM's name)."""

    text: str
    citations: list[Citation]
    cited_chunk_ids: list[int]
    generator: Generator
    model: str = ""


def _department_line(department: DepartmentFact, t: dict[str, str]) -> str:
    """'Cardiologie, Campus Noord, tel. …; artsen: …' for one department."""
    parts = [department.name, *department.campuses]
    if department.phone:
        parts.append(t["phone"].format(phone=department.phone))
    line = ", ".join(parts)
    if department.doctors:
        line += "; " + t["doctors"].format(names=", ".join(department.doctors))
    return line


def fact_sentence(*, fact: RoutingFact, language: str) -> str:
    """One sentence phrasing a graph fact in ``language`` (Dutch for a language without its own
    templates, :func:`zolsearch.search.messages.fact_templates`)."""
    t = fact_templates(language)
    if fact.kind == "doctor":
        parts = [", ".join(d.name for d in fact.departments) or "—", *fact.campuses]
        parts += [t["phone"].format(phone=d.phone) for d in fact.departments[:1] if d.phone]
        return t["doctor"].format(doctor=fact.subject, places=", ".join(parts))
    if fact.kind == "department":
        return t["department"].format(places=_department_line(fact.departments[0], t))
    places = "; ".join(_department_line(d, t) for d in fact.departments)
    return t["condition"].format(topic=fact.subject.lower(), places=places)


def draft_pin(*, draft: Draft, facts: Sequence[RoutingFact], language: str) -> Draft:
    """Place graph facts first, numbered [1]…[p], and renumber the draft's citations after them.

    The pinned lines (:func:`fact_sentence`) are not reranked or filtered: the graph is the
    authority for routing. ``cited_chunk_ids`` stay those of the documents, so the gate still
    measures the retrieved part against its own context.
    """
    if not facts:
        return draft
    p = len(facts)
    source = fact_templates(language)["source"]
    pinned = [
        Citation(
            n=i + 1,
            title=f.title,
            url=f.url,
            snippet=source,
            external_id=f"taxonomy:{f.entity_ids[0]}",
            source="taxonomy",
        )
        for i, f in enumerate(facts)
    ]
    renumbered = re.sub(r"\[(\d+)\]", lambda m: f"[{int(m.group(1)) + p}]", draft.text)
    for citation in draft.citations:
        citation.n += p
    lines = " ".join(f"{fact_sentence(fact=fact, language=language)} [{i + 1}]" for i, fact in enumerate(facts))
    text = f"{lines} {renumbered}".strip()
    return Draft(
        text=text,
        citations=pinned + draft.citations,
        cited_chunk_ids=draft.cited_chunk_ids,
        generator=draft.generator,
        model=draft.model,
    )


def answer_plain(text: str) -> str:
    """Answer text without citation markers (what the gate embeds)."""
    return CITATION_MARK.sub("", text).strip()


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_SNIPPET_CHARS else text[: MAX_SNIPPET_CHARS - 1].rsplit(" ", 1)[0] + "…"


def citations_number(chunks: list[Chunk]) -> dict[int, Citation]:
    """Citation per document in order of first appearance; returns chunk id → its Citation."""
    by_document: dict[int, Citation] = {}
    by_chunk: dict[int, Citation] = {}
    for chunk in chunks:
        document = chunk.document
        citation = by_document.get(document.id)
        if citation is None:
            citation = Citation(
                n=len(by_document) + 1,
                title=document.title,
                url=document.url,
                snippet=_snippet(chunk.text),
                external_id=document.external_id,
            )
            by_document[document.id] = citation
        citation.chunk_ids.append(chunk.id)
        by_chunk[chunk.id] = citation
    return by_chunk


def chunk_source_text(chunk: Chunk) -> str:
    """The text a chunk contributes as a source: its text, after its document's summary when it
    is the document's first chunk (:func:`ingestion.chunking.chunk_source_text_compose`)."""
    return chunk_source_text_compose(summary=chunk.document.summary, position=chunk.position, text=chunk.text)


def answer_extractive(
    *,
    question: str,
    language: str,
    chunks: list[Chunk],
    max_sentences: int,
    exclude_names: frozenset[str] = frozenset(),
    texts: dict[int, str] | None = None,
    answer_type_weight: float = 0.0,
) -> Draft:
    """Compose an answer from ``chunks`` (best first) with ``[n]`` after each sentence.

    Sentence score = Σ over distinct question stems in the sentence of 1 / log(2 + sf)
    (sf = number of candidate sentences containing the stem) + 1.5 / (1 + chunk rank)
    + 0.25 / (1 + position in chunk) + β when the question asks for a duration, clock time,
    price, count or phone number and the sentence states one
    (:mod:`zolsearch.search.answer_type`; β = ``answer_type_weight`` ≥ 0, 0 leaves it out);
    sentences ending in "?" are skipped, and so are sentences
    naming any of ``exclude_names`` (normalised department names the graph does not route
    this question to: when text and graph disagree about routing, the graph wins). The rank prior is
    strong on purpose: the fused ranking already chose the best passage, and mixing sentences
    of different documents reads badly; the best sentence of the first chunk (when it has one
    left after the filters above) is always chosen first. At most ``max_sentences`` sentences, at most 3 per chunk;
    they are output in reading order (chunk rank, then position). ``texts``: chunk id → the text
    to use instead of the chunk's own (FILCO's filtered text). Returns an empty draft when
    ``chunks`` is empty.
    """
    by_chunk = citations_number(chunks)
    # The question is stemmed in its own language and in each document language, so that an
    # English page matches a question detected as Dutch ("syndrome" → "syndrom" in both).
    doc_languages = {chunk.language or language for chunk in chunks}
    query_stems = {stem for lang in doc_languages | {language} for stem in terms_stem(question, language=lang)}
    candidates: list[tuple[int, int, str, set[str]]] = []
    for rank, chunk in enumerate(chunks):
        doc_language = chunk.language or language
        source = (texts or {}).get(chunk.id) or chunk_source_text(chunk)
        for position, sentence in enumerate(sentences_split(source)):
            if len(sentence) < 3 or sentence.endswith("?"):
                continue  # a question restated in the page is not an answer
            if exclude_names and _names_in(sentence, exclude_names):
                continue  # routes elsewhere than the graph: the graph wins
            candidates.append((rank, position, sentence, set(terms_stem(sentence, language=doc_language))))
    frequency: dict[str, int] = {}
    for *_, stems in candidates:
        for stem in stems & query_stems:
            frequency[stem] = frequency.get(stem, 0) + 1
    scored = []
    wanted = answer_types(question) if answer_type_weight else frozenset()
    for rank, position, sentence, stems in candidates:
        overlap = sum(1.0 / math.log(2 + frequency[s]) for s in stems & query_stems)
        typed = answer_type_weight if wanted and sentence_states(sentence, wanted) else 0.0
        scored.append((overlap + 1.5 / (1 + rank) + 0.25 / (1 + position) + typed, rank, position, sentence))
    scored.sort(key=lambda item: (-item[0], item[1], item[2]))
    # The best passage speaks first: its best sentence is chosen before any other, so sentences
    # of lower passages that repeat the condition's name cannot crowd out the page the ranking
    # put first (the inheritance page of "Is glutaric acidemia type II inherited?" lost all four
    # places to the overview and frequency pages, which name the disease in every sentence).
    first = next((i for i, item in enumerate(scored) if item[1] == 0), None)
    if first is not None:
        scored.insert(0, scored.pop(first))
    chosen: list[tuple[int, int, str]] = []
    chosen_stems: list[set[str]] = []
    per_chunk: dict[int, int] = {}
    stems_of = {(rank, position): stems for rank, position, _, stems in candidates}
    for _, rank, position, sentence in scored:
        if len(chosen) >= max_sentences:
            break
        if per_chunk.get(rank, 0) >= 3:
            continue
        stems = stems_of[(rank, position)]
        if any(sentences_near_duplicate(stems, other) for other in chosen_stems):
            continue  # near-identical documents repeat sentences: say each thing once
        per_chunk[rank] = per_chunk.get(rank, 0) + 1
        chosen.append((rank, position, sentence))
        chosen_stems.append(stems)
    chosen.sort()
    parts, used_chunks = [], []
    for rank, _, sentence in chosen:
        chunk = chunks[rank]
        parts.append(f"{sentence} [{by_chunk[chunk.id].n}]")
        if chunk.id not in used_chunks:
            used_chunks.append(chunk.id)
    citations = _citations_used(by_chunk, used_chunks)
    return Draft(
        text=" ".join(parts),
        citations=citations,
        cited_chunk_ids=used_chunks,
        generator=Generator.EXTRACTIVE,
        model=EXTRACTIVE_MODEL,
    )


NEAR_DUPLICATE_JACCARD = 0.8


def sentences_near_duplicate(a: set[str], b: set[str], *, threshold: float = NEAR_DUPLICATE_JACCARD) -> bool:
    """Whether two sentences, as sets of stems, say the same thing: Jaccard |a∩b| / |a∪b| ≥
    ``threshold`` (in [0, 1]; 0.8 tolerates a changed name or article in a 10-word sentence,
    the way MedQuAD repeats one answer across the pages of related conditions). Two empty sets
    are duplicates."""
    if not a and not b:
        return True
    return len(a & b) / len(a | b) >= threshold


def _names_in(sentence: str, names: frozenset[str]) -> bool:

    padded = f" {text_normalise(sentence)} "
    return any(f" {name} " in padded for name in names)


def _citations_used(by_chunk: dict[int, Citation], chunk_ids: list[int]) -> list[Citation]:
    seen: dict[int, Citation] = {}
    for chunk_id in chunk_ids:
        citation = by_chunk[chunk_id]
        seen.setdefault(citation.n, citation)
    return [seen[n] for n in sorted(seen)]


SYSTEM_PROMPT = (
    "You answer questions of patients and visitors of a hospital using ONLY the numbered sources "
    "given. Answer in the language of the question ({language}), in at most five sentences, and put "
    "the source number in square brackets after each sentence, like [1]. If the sources do not "
    "answer the question, say so. Never give individual medical advice, diagnoses or medication "
    "doses; refer to a doctor instead."
)


def answer_llm(
    *, question: str, language: str, chunks: list[Chunk], model: str, texts: dict[int, str] | None = None
) -> Draft:
    """Compose with a chat model over numbered sources; raises ``LLMUnavailable`` on failure.

    Cited chunks are those whose document number appears as ``[n]`` in the reply; if the reply
    cites nothing, all given chunks count as its context.
    """

    by_chunk = citations_number(chunks)
    sources = "\n\n".join(
        f"[{by_chunk[c.id].n}] {c.document.title}\n{(texts or {}).get(c.id) or chunk_source_text(c)}" for c in chunks
    )
    asked = question_external(question, language=language)  # the model is external: no identifiers
    text = chat_llm_get(model).complete(
        [
            {"role": "system", "content": SYSTEM_PROMPT.format(language=language)},
            {"role": "user", "content": f"Sources:\n{sources}\n\nQuestion: {asked}"},
        ]
    )
    cited_numbers = {int(n) for n in re.findall(r"\[(\d+)\]", text)}
    used = [c.id for c in chunks if by_chunk[c.id].n in cited_numbers] or [c.id for c in chunks]
    return Draft(
        text=text,
        citations=_citations_used(by_chunk, used),
        cited_chunk_ids=used,
        generator=Generator.LLM,
        model=model,
    )
