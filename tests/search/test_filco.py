"""FILCO: the keep rule on hand-made scores, and the stage on the real corpus and model."""

from __future__ import annotations

import pytest

from core.text import sentences_split
from zolsearch.search.config import pipeline_config_default
from zolsearch.search.filco import filco_keep
from zolsearch.search.generation import chunk_source_text
from zolsearch.search.pipeline import SearchRequest, pipeline_run


@pytest.fixture
def embedded_passages(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the encoder embeds as a passage from now on (its LRU emptied first, so a text
    embedded before is embedded again and seen)."""
    from core.providers.embeddings import embedding_provider_get

    provider = embedding_provider_get()
    embedded: list[str] = []
    original = type(provider)._embed_passages

    def counting(self, texts):  # type: ignore[no-untyped-def]
        embedded.extend(texts)
        return original(self, texts)

    monkeypatch.setattr(type(provider), "_embed_passages", counting)
    provider._cache[0].clear()
    return embedded


def test_lowest_sentences_go_first_within_the_limits() -> None:
    scores = [0.9, 0.1, 0.2, 0.05, 0.8, 0.15]
    # below 0.3: indexes 3 (0.05), 1 (0.1), 5 (0.15), 2 (0.2); at most 50 % of 6 = 3 removed
    assert filco_keep(scores, threshold=0.3, max_removed=0.5, min_kept=2) == [True, False, True, False, True, False]
    # at least 5 kept: only the lowest goes
    assert filco_keep(scores, threshold=0.3, max_removed=0.5, min_kept=5) == [True, True, True, False, True, True]
    assert filco_keep(scores, threshold=0.0, max_removed=0.5, min_kept=2) == [True] * 6  # nothing below
    assert filco_keep([0.1, 0.1], threshold=0.5, max_removed=1.0, min_kept=2) == [True, True]
    with pytest.raises(ValueError):
        filco_keep(scores, threshold=0.3, max_removed=1.5, min_kept=2)


@pytest.mark.django_db
def test_the_stage_filters_answer_chunks_and_feeds_generation_and_the_gate() -> None:
    """GIVEN FILCO on with a threshold every sentence is under
    WHEN a question is answered THEN each answer chunk loses at most half its sentences (at
    least 2 kept), the answer quotes only kept sentences, and the gate scored that context.
    A question of 4 words is bypassed."""
    config = pipeline_config_default().with_overrides(filco_enabled=True, filco_threshold=1.0, crag_enabled=False)
    question = "Which signs and symptoms do people with ABCD syndrome have?"
    state = pipeline_run(request=SearchRequest(question=question, language="en"), config=config)
    assert state.filtered and state.trace.retrieval.filco_removed
    from core.text import sentences_split
    from zolsearch.search.generation import answer_plain, chunk_source_text

    for chunk_id, text in state.filtered.items():
        before = sentences_split(chunk_source_text(state.chunks[chunk_id]))
        after = sentences_split(text)
        assert len(after) >= min(2, len(before)) and len(after) >= len(before) - len(before) // 2
    kept = {s for text in state.filtered.values() for s in sentences_split(text)}
    removed = {s for i in state.filtered for s in sentences_split(chunk_source_text(state.chunks[i]))} - kept
    answer = answer_plain(state.documents_text or (state.draft.text if state.draft else ""))
    assert removed and not any(s in answer for s in removed if len(s) > 20)
    assert state.gate is not None
    short = pipeline_run(request=SearchRequest(question="ABCD syndrome symptoms", language="en"), config=config)
    assert not short.filtered and short.trace.retrieval.filco_removed is None


@pytest.mark.django_db
def test_the_stage_scores_stored_sentence_vectors_as_the_encoder_would(embedded_passages: list[str]) -> None:
    """GIVEN the ingested corpus (sentence vectors stored at ingestion)
    WHEN FILCO filters the answer chunks of a question THEN it embeds none of their sentences
    and keeps the same sentences as when the vectors are embedded per request (rows deleted),
    and a stored row whose digest no longer matches the chunk's sentences is not used."""
    from core.providers.embeddings import embedding_provider_get
    from ingestion.models import ChunkSentenceVectors

    config = pipeline_config_default().with_overrides(filco_enabled=True, crag_enabled=False)
    question = "What are the treatments for Aicardi-Goutieres syndrome and how is it diagnosed?"
    provider = embedding_provider_get()
    embedded = embedded_passages
    stored = pipeline_run(request=SearchRequest(question=question, language="en"), config=config)
    assert stored.filtered
    sentences = {s for i in stored.filtered for s in sentences_split(chunk_source_text(stored.chunks[i]))}
    assert not sentences & set(embedded)  # the draft is embedded for the gate, no sentence

    rows = ChunkSentenceVectors.objects.filter(chunk_id__in=list(stored.filtered))
    assert rows.count() == len(stored.filtered)
    rows.update(digest="0" * 64)  # as if the splitter had changed since ingestion
    embedded.clear()
    provider._cache[0].clear()  # the encoder's LRU would hide the calls
    fresh = pipeline_run(request=SearchRequest(question=question, language="en"), config=config)
    assert sentences <= set(embedded)
    assert fresh.filtered == stored.filtered
    assert fresh.trace.retrieval.filco_removed == stored.trace.retrieval.filco_removed


def test_a_filtered_chunk_is_the_unit_mean_of_its_kept_sentences() -> None:
    import numpy as np

    from zolsearch.search.filco import kept_vector

    vectors = np.array([[3.0, 0.0], [0.0, 4.0], [5.0, 5.0]], dtype=np.float16)
    np.testing.assert_allclose(kept_vector(vectors, [True, True, False]), [0.6, 0.8], atol=1e-6)
    np.testing.assert_allclose(kept_vector(vectors, [False, False, True]), [2**-0.5, 2**-0.5], atol=1e-6)
    assert kept_vector(vectors, [False] * 3).dtype == np.float32  # nothing kept: every sentence counts
    np.testing.assert_allclose(kept_vector(vectors, [False] * 3), kept_vector(vectors, [True] * 3))
    assert kept_vector(np.zeros((0, 2)), []).tolist() == [0.0, 0.0]
    with pytest.raises(ValueError):
        kept_vector(vectors, [True])


@pytest.mark.django_db
def test_the_gate_embeds_the_answer_only_and_scores_the_kept_sentences(embedded_passages: list[str]) -> None:
    """GIVEN FILCO filtering the answer chunks (a threshold every sentence is under)
    WHEN the gate scores the draft THEN the encoder sees the answer and no filtered passage, and
    the gate's context alignment is the answer's cosine with the mean of FILCO's kept-sentence
    vectors of the cited filtered chunks and the stored vectors of the other cited chunks."""
    import numpy as np

    from core.providers.embeddings import embedding_provider_get
    from zolsearch.search import selectors
    from zolsearch.search.generation import answer_plain

    config = pipeline_config_default().with_overrides(filco_enabled=True, filco_threshold=1.0, crag_enabled=False)
    provider = embedding_provider_get()
    state = pipeline_run(
        request=SearchRequest(question="Which signs and symptoms do people with ABCD syndrome have?", language="en"),
        config=config,
    )
    embedded = list(embedded_passages)
    assert state.draft is not None and state.gate is not None
    cited = state.draft.cited_chunk_ids
    assert set(cited) & set(state.filtered_vectors)  # a cited chunk was filtered
    answer = answer_plain(state.documents_text or state.draft.text)
    assert answer in embedded and not set(state.filtered.values()) & set(embedded)
    parts = [state.filtered_vectors[i] for i in cited if i in state.filtered_vectors]
    others = [i for i in cited if i not in state.filtered_vectors]
    if others:
        parts.extend(selectors.chunk_vectors(ids=others, model_key=provider.key))
    context = np.mean(parts, axis=0)
    a = provider.embed_passages([answer])[0]
    expected = float(a @ context) / float(np.linalg.norm(a) * np.linalg.norm(context))
    assert state.gate.context_alignment == pytest.approx(expected, abs=1e-5)
