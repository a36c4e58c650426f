"""Extractive composition: near-identical sentences of near-identical documents are said once."""

from __future__ import annotations

import pytest

from core.text import sentences_split, terms_stem
from ingestion.models import Chunk, Document, Source
from zolsearch.search.generation import answer_extractive, answer_plain, sentences_near_duplicate

pytestmark = pytest.mark.django_db

SHARED = (
    "This condition is inherited in an autosomal recessive pattern, which means both copies of the gene "
    "in each cell have mutations."
)


def _chunk(source: Source, n: int, title: str, text: str) -> Chunk:
    document = Document.objects.create(
        source=source,
        external_id=f"test:dup:{n}",
        url=f"https://example.org/dup/{n}",
        title=title,
        language="en",
        content_hash=str(n),
    )
    return Chunk.objects.create(
        document=document, position=0, text=text, embedded_text=text, token_count=40, language="en"
    )


def test_a_sentence_repeated_across_documents_is_written_once() -> None:
    """GIVEN two related pages that repeat the same inheritance sentence (as MedQuAD's GARD pages
    of related syndromes do, with a changed name)
    WHEN an inheritance question is answered from both
    THEN the answer states the inheritance once, and cites the first page for it."""
    source = Source.objects.create(key="test-dup", name="dup", connector="jsonl")
    first = _chunk(source, 1, "Aicardi syndrome", f"Aicardi syndrome is a rare disorder. {SHARED}")
    second = _chunk(
        source,
        2,
        "Aicardi-Goutieres syndrome",
        "Aicardi-Goutieres syndrome is a disorder of the brain. " + SHARED.replace("This condition", "This disorder"),
    )
    draft = answer_extractive(
        question="Is this condition inherited in an autosomal recessive pattern?",
        language="en",
        chunks=[first, second],
        max_sentences=4,
    )
    sentences = sentences_split(answer_plain(draft.text))
    inherited = [s for s in sentences if "autosomal recessive" in s]
    assert len(inherited) == 1, draft.text
    after = draft.text.split(inherited[0], 1)[1]
    assert after.lstrip().startswith("[1]"), draft.text
    stems = [set(terms_stem(s, language="en")) for s in sentences]
    for i, a in enumerate(stems):
        for b in stems[i + 1 :]:
            assert not sentences_near_duplicate(a, b)


def test_near_duplicate_threshold() -> None:
    a = set(terms_stem(SHARED, language="en"))
    b = set(terms_stem(SHARED.replace("This condition", "This disorder"), language="en"))
    c = set(terms_stem("Treatment is supportive and based on the symptoms.", language="en"))
    assert sentences_near_duplicate(a, b)
    assert not sentences_near_duplicate(a, c)
    assert sentences_near_duplicate(set(), set())
