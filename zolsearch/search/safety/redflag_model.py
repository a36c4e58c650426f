"""A second red-flag detector: a classifier for the phrasings the rules have not seen.

Measured on a set written after the rules (``data/safety/red-flags-holdout2.jsonl``), the rules
alone routed 10 of 20 emergencies; with this model as a second detector, 20 of 20, with no
false routing there (``docs/EVALUATION.md``). It runs only when the rules found nothing and did
not mark the question informational, past or hypothetical.

Model: :class:`~zolsearch.search.safety.guard.GuardClassifier` (logistic regression over the
query vector ⊕ TF-IDF character n-grams) with labels emergency / urgent / poison / suicide /
none, trained in-process on first use from the red-flag development sets and, as negatives,
the guard's allowed examples, the ``medquad-dev`` questions and query understanding's labelled
messages other than advice requests (:data:`TRAINING`). A label
routes when its probability is at least the config's ``red_flag_model_threshold``.
"""

from __future__ import annotations

import json
import logging
import threading
from functools import lru_cache
from pathlib import Path

import numpy as np
from django.conf import settings

from core.providers.embeddings import EmbeddingProvider
from zolsearch.search.contract import RED_FLAG_NUMBERS, Intent, RedFlagCategory
from zolsearch.search.safety.guard import GuardClassifier
from zolsearch.search.safety.redflags import RedFlagHit
from zolsearch.search.understanding import labelled_queries

logger = logging.getLogger(__name__)

NONE = "none"
# (file under data/, how to read a row's label): red-flag sets keep their label; the others
# are ordinary questions (negatives). Query understanding's labelled messages follow them.
TRAINING = (
    ("safety/red-flags.jsonl", "label"),
    ("safety/red-flags-holdout.jsonl", "label"),
    ("safety/guard-seed.jsonl", "allowed-only"),
    ("golden/medquad-dev.jsonl", "question"),
)


def red_flag_examples() -> tuple[list[str], list[str]]:
    """``(texts, labels)`` of :data:`TRAINING`, then of query understanding's labelled messages
    that do not ask advice (:func:`zolsearch.search.understanding.labelled_queries`; an advice
    request may be a red flag, so it is no negative); labels in emergency, urgent, poison,
    suicide, none. Raises ``FileNotFoundError`` for a missing file and ``ValueError`` for a
    labelled message with an unknown intent."""
    texts: list[str] = []
    labels: list[str] = []
    for relative, kind in TRAINING:
        for line in (Path(settings.BASE_DIR) / "data" / relative).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            if kind == "label":
                texts.append(row["text"])
                labels.append(row["label"])
            elif kind == "allowed-only" and row["label"] == "allowed":
                texts.append(row["text"])
                labels.append(NONE)
            elif kind == "question":
                texts.append(row["question"])
                labels.append(NONE)
    for query in labelled_queries():
        if query.intent != Intent.MEDICAL_ADVICE_REQUEST:
            texts.append(query.text)
            labels.append(NONE)
    return texts, labels


_lock = threading.Lock()


@lru_cache(maxsize=4)
def _model_for(model_key: str, provider: EmbeddingProvider) -> GuardClassifier:
    texts, labels = red_flag_examples()
    logger.info("red-flag model trained on %d examples for %s", len(texts), model_key)
    return GuardClassifier().fit(texts, provider.embed_queries(texts), labels)


def red_flag_model_get(provider: EmbeddingProvider) -> GuardClassifier:
    """The classifier for ``provider``'s vectors, trained once per process; thread-safe."""
    with _lock:
        return _model_for(provider.key, provider)


def red_flag_classify(
    *, text: str, vector: np.ndarray, provider: EmbeddingProvider, threshold: float
) -> tuple[RedFlagHit | None, dict[str, float]]:
    """``(hit, probabilities)``: a hit when the most probable label is a red-flag category with
    probability ≥ ``threshold`` (in [0, 1]); ``vector``: the question's query vector (1-D)."""
    probabilities = red_flag_model_get(provider).predict_proba(text, vector)
    label = max(probabilities, key=lambda k: probabilities[k])
    if label == NONE or probabilities[label] < threshold:
        return None, probabilities
    category = RedFlagCategory(label)
    return RedFlagHit(
        category=category, number=RED_FLAG_NUMBERS[category], rule=f"model p={probabilities[label]:.2f}"
    ), probabilities
