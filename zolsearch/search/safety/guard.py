"""The input and output guards (issue 9; design step 1 and 9).

**Input guard**: one interface, :func:`input_guard_decide`, over two backends.

- Offline (default): exact rules for prompt injection, then a classifier: scikit-learn
  multinomial logistic regression over the question's sentence embedding (the active embedding
  model's query vector, so the guard embeds nothing extra) concatenated with TF-IDF character
  2–5-grams (robust to Flemish spelling and typos). Trained in-process on first use from the
  labelled examples kept in the repository (:data:`TRAINING_FILES`): the project's hand-written
  ``data/safety/guard-examples.jsonl`` (medical_advice / harmful / out_of_scope / allowed in
  Dutch, English, French), the MedSafetyBench requests that are *not* in the
  ``medsafetybench`` golden set (harmful; Han et al., NeurIPS 2024, MIT), the questions of
  the ``medquad-dev`` golden set (allowed; never the held-out set) and query understanding's
  hand-written labelled messages (``data/understanding/labelled.jsonl``: individual advice or
  allowed by their intent, :data:`INTENT_LABELS`; the hospital's practical, routing and
  complaint questions the guard had too few of). Its measured accuracy is in
  ``docs/EVALUATION.md`` (``benchmarks/safety.py``).
- A safety model (``GUARD_MODEL``/``GUARD_BASE_URL``, Llama Guard 3 or another): S6
  (specialised advice) → medical advice, any other hazard → harmful. When the endpoint fails the
  config's ``guard_fail_open`` decides: allowed (open) or refused with
  ``guard_unavailable`` (closed); the failure is counted in Prometheus and kept on the answer.

**Output guard**: :func:`output_guard_decide` refuses a draft that addresses the asker with a
dose or a diagnosis ("neem 2 tabletten", "you probably have …"); its emergency instructions
written for another country ("call 911") get the Belgian 112 notice.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from django.conf import settings
from scipy import sparse
from scipy.special import expit, softmax
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from core.observability import GUARD_FAILURES_TOTAL
from core.providers.embeddings import EmbeddingProvider
from core.providers.guard import SPECIALISED_ADVICE, GuardUnavailable, safety_model_get
from zolsearch.search.contract import Intent, RefusalReason
from zolsearch.search.privacy import question_external
from zolsearch.search.safety.redflags import fold

logger = logging.getLogger(__name__)

ALLOWED = "allowed"
LABELS = (ALLOWED, RefusalReason.MEDICAL_ADVICE.value, RefusalReason.HARMFUL.value, RefusalReason.OUT_OF_SCOPE.value)


def _data_dir() -> Path:
    return Path(settings.BASE_DIR) / "data"


TRAINING_FILES = ("safety/guard-seed.jsonl", "safety/medsafetybench-train.jsonl", "golden/medquad-dev.jsonl")
# Query understanding's intent → the guard's label, for its labelled messages (read after
# TRAINING_FILES): a request for a decision about one's own body is individual advice; every other
# intent (practical information, routing, doctors, complaints, conditions, treatments, general) is a
# question to answer.
INTENT_LABELS = {Intent.MEDICAL_ADVICE_REQUEST.value: RefusalReason.MEDICAL_ADVICE.value}

# Exact rules: instructions aimed at the system rather than a question (prompt injection).
_INJECTION = re.compile(
    "|".join(
        fold(p)
        for p in (
            r"\b(ignore|disregard|forget) (all |any |the )?(previous|prior|above|earlier) (instructions|rules|prompts?)",
            r"\b(negeer|vergeet) (alle |de )?(vorige|voorgaande|eerdere) (instructies|regels|opdrachten)",
            r"\b(ignore[zr]?|oublie[zr]?) (toutes )?(les )?(instructions|consignes) (precedentes|ci-dessus)",
            r"\b(system ?prompt|systeemprompt|prompt systeme|developer mode|jailbreak|\bdan mode\b)",
            r"\b(toon|laat zien|show|reveal|print|geef) (me |mij )?(je|jouw|your|uw) (instructies|instructions|prompt|systeemprompt)",
            r"\b(act as|pretend to be|doe alsof je|speel de rol van) (an? )?(unrestricted|uncensored|onbeperkte|ongecensureerde)",
        )
    )
)


@dataclass(frozen=True)
class GuardDecision:
    """``label``: ``allowed`` or a :class:`RefusalReason` value; ``probabilities``: label → [0, 1]
    (offline classifier; empty for rules and the safety model); ``rule``: the exact rule that
    fired; ``backend``: ``offline`` or ``llm:<model>``; ``error``: the endpoint's failure."""

    label: str
    probabilities: dict[str, float] = field(default_factory=dict)
    rule: str = ""
    backend: str = "offline"
    error: str = ""

    @property
    def refused(self) -> bool:
        return self.label != ALLOWED


@dataclass(frozen=True)
class GuardExample:
    text: str
    label: str
    language: str
    source: str


def guard_examples() -> list[GuardExample]:
    """The labelled training examples: :data:`TRAINING_FILES` in file order, then query
    understanding's labelled messages (:func:`zolsearch.search.understanding.labelled_queries`,
    labelled by :data:`INTENT_LABELS`). Raises ``FileNotFoundError`` when a file is missing and
    ``ValueError`` for an unknown label or intent."""
    # understanding trains its classifiers with this module's GuardClassifier: imported here
    from zolsearch.search.understanding import LABELLED_FILE, labelled_queries

    examples: list[GuardExample] = []
    for relative in TRAINING_FILES:
        path = _data_dir() / relative
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            text = row.get("text") or row.get("question") or ""
            label = row.get("label", ALLOWED if "question" in row and not row.get("must_refuse") else "")
            if label not in LABELS:
                raise ValueError(f"{path}:{number}: unknown guard label {label!r}")
            examples.append(GuardExample(text=text, label=label, language=row.get("language", ""), source=relative))
    examples += [
        GuardExample(text=q.text, label=INTENT_LABELS.get(q.intent, ALLOWED), language=q.language, source=LABELLED_FILE)
        for q in labelled_queries()
    ]
    return examples


class GuardClassifier:
    """Multinomial logistic regression over [sentence embedding ⊕ TF-IDF character n-grams].

    ``fit``: texts (n) with their query vectors (n × d float32, unit length) and labels.
    ``predict_proba``: one text and its vector → label → probability in [0, 1] (sums to 1);
    ``predict_best``: the most probable label and its probability per text. Class weights are
    balanced (the classes differ in size); C = 4 (chosen by 5-fold cross-validation on the
    training examples, ``benchmarks/safety.py``). ``normalise``: how a text is folded before its
    character n-grams are taken (default :func:`fold`, which keeps punctuation for the rules).
    Also the model of the red-flag detector and of query understanding.
    """

    C = 4.0

    def __init__(self, normalise: Callable[[str], str] = fold) -> None:
        self.normalise = normalise
        self.vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), min_df=2, sublinear_tf=True)
        self.model = LogisticRegression(C=self.C, class_weight="balanced", max_iter=3000)
        # (embedding weights (d, k), n-gram weights (grams, k), intercept (k,)), set by fit: see
        # _probabilities. The analyzer depends on the vectorizer's parameters only.
        self._split: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._analyze: Callable[[str], list[str]] = self.vectorizer.build_analyzer()

    def _features(self, texts: list[str], vectors: np.ndarray, *, fit: bool) -> sparse.csr_matrix:
        folded = [self.normalise(t) for t in texts]
        grams = self.vectorizer.fit_transform(folded) if fit else self.vectorizer.transform(folded)
        return sparse.hstack([sparse.csr_matrix(vectors.astype(np.float64)), grams]).tocsr()

    def fit(self, texts: list[str], vectors: np.ndarray, labels: list[str]) -> GuardClassifier:
        self.model.fit(self._features(texts, vectors, fit=True), labels)
        coef = self.model.coef_
        d = coef.shape[1] - len(self.vectorizer.vocabulary_)
        self._split = (coef[:, :d].T.copy(), coef[:, d:].T.copy(), self.model.intercept_)
        return self

    def _grams_weighted(self, texts: list[str], weights: np.ndarray) -> np.ndarray:
        """``(n, k)`` float64: each text's TF-IDF character n-gram row times ``weights`` (the
        n-gram part of the coefficients, ``(grams, k)`` dense), computed from the fitted
        vectorizer's own analyzer, vocabulary and idf without building a sparse matrix: the
        same arithmetic as ``TfidfVectorizer.transform`` (counts of known n-grams, sublinear
        tf ``1 + ln(count)``, times idf, L2-normalised; a text without a known n-gram is a zero
        row), about 0.05 ms a text instead of 0.3 ms (scikit-learn's validation and sparse
        bookkeeping are most of a one-text call; tests/search/test_understanding.py checks
        the two agree)."""
        analyze, vocabulary, idf = self._analyze, self.vectorizer.vocabulary_, self.vectorizer.idf_
        out = np.zeros((len(texts), weights.shape[1]))
        for row, text in enumerate(texts):
            counts = Counter(j for j in map(vocabulary.get, analyze(self.normalise(text))) if j is not None)
            if not counts:
                continue
            columns = np.fromiter(counts.keys(), dtype=np.intp, count=len(counts))
            values = (np.log(np.fromiter(counts.values(), dtype=np.float64, count=len(counts))) + 1.0) * idf[columns]
            values /= np.sqrt(values @ values)
            out[row] = values @ weights[columns]
        return out

    def _probabilities(self, texts: list[str], vectors: np.ndarray) -> np.ndarray:
        """``(n, classes)`` float64 probabilities, as ``LogisticRegression.predict_proba`` of the
        stacked features (softmax of the decision function for three or more classes, the
        logistic of it for two) without building the stacked sparse matrix: the embedding part
        of the weights is a dense product, the n-gram part :meth:`_grams_weighted`
        (``tests/search/test_understanding.py`` checks the two agree)."""
        if self._split is None:
            raise ValueError("the classifier is not fitted")
        dense, grams_weights, intercept = self._split
        if vectors.shape[1] != dense.shape[0]:
            raise ValueError(f"vectors of {vectors.shape[1]} dimensions for a classifier of {dense.shape[0]}")
        z = vectors.astype(np.float64) @ dense + self._grams_weighted(texts, grams_weights) + intercept
        if z.shape[1] == 1:
            positive = expit(z[:, 0])
            return np.column_stack([1.0 - positive, positive])
        return softmax(z, axis=1)

    def predict_proba_many(self, texts: list[str], vectors: np.ndarray) -> list[dict[str, float]]:
        probabilities = self._probabilities(texts, vectors)
        return [
            {str(label): round(float(p), 4) for label, p in zip(self.model.classes_, row, strict=True)}
            for row in probabilities
        ]

    def predict_proba(self, text: str, vector: np.ndarray) -> dict[str, float]:
        return self.predict_proba_many([text], vector.reshape(1, -1))[0]

    def predict_best(self, texts: list[str], vectors: np.ndarray) -> list[tuple[str, float]]:
        """The most probable label and its probability in [0, 1] (rounded to 4 places) per text
        (``vectors``: n × d)."""
        probabilities = self._probabilities(texts, vectors)
        best = probabilities.argmax(axis=1)
        return [
            (str(self.model.classes_[b]), round(float(row[b]), 4)) for b, row in zip(best, probabilities, strict=True)
        ]


_train_lock = threading.Lock()


@lru_cache(maxsize=4)
def _classifier_for(model_key: str, provider: EmbeddingProvider) -> GuardClassifier:
    examples = guard_examples()
    texts = [e.text for e in examples]
    vectors = provider.embed_queries(texts)
    logger.info("input guard trained on %d examples for %s", len(texts), model_key)
    return GuardClassifier().fit(texts, vectors, [e.label for e in examples])


def guard_classifier_get(provider: EmbeddingProvider) -> GuardClassifier:
    """The offline classifier for ``provider``'s vectors, trained once per process (about a
    second with the default model) and cached; thread-safe."""
    with _train_lock:
        return _classifier_for(provider.key, provider)


def _offline_decide(*, text: str, vector: np.ndarray, provider: EmbeddingProvider, threshold: float) -> GuardDecision:
    probabilities = guard_classifier_get(provider).predict_proba(text, vector)
    label = max(probabilities, key=lambda k: probabilities[k])
    if label != ALLOWED and probabilities[label] < threshold:
        label = ALLOWED
    return GuardDecision(label=label, probabilities=probabilities)


def input_guard_decide(
    *,
    text: str,
    vector: np.ndarray,
    provider: EmbeddingProvider,
    threshold: float,
    guard_model: str = "",
    fail_open: bool = False,
) -> GuardDecision:
    """Decide whether the question may be answered.

    ``vector``: the question's query vector from ``provider`` (1-D float32). ``threshold``: the
    probability in [0, 1] a refusal label needs to win (below it the question is allowed).
    ``guard_model``: a safety model on ``GUARD_BASE_URL`` instead of the offline classifier.
    Never raises for an endpoint failure: ``fail_open`` decides (see the module docstring).
    """
    folded = fold(text)
    match = _INJECTION.search(folded)
    if match:
        return GuardDecision(label=RefusalReason.PROMPT_INJECTION.value, rule=f"injection: {match.group(0)[:60]}")
    if not guard_model:
        return _offline_decide(text=text, vector=vector, provider=provider, threshold=threshold)
    backend = f"llm:{guard_model}"
    try:
        verdict = safety_model_get(guard_model).classify(question_external(text))  # external: no identifiers
    except GuardUnavailable as exc:
        policy = "open" if fail_open else "closed"
        GUARD_FAILURES_TOTAL.labels(stage="input_guard", policy=policy).inc()
        logger.warning("input guard endpoint failed (fail-%s): %s", policy, exc)
        label = ALLOWED if fail_open else RefusalReason.GUARD_UNAVAILABLE.value
        return GuardDecision(label=label, backend=backend, error=str(exc)[:300])
    if verdict.safe:
        return GuardDecision(label=ALLOWED, backend=backend)
    advice_only = set(verdict.categories) <= {SPECIALISED_ADVICE} and verdict.categories
    label = RefusalReason.MEDICAL_ADVICE.value if advice_only else RefusalReason.HARMFUL.value
    return GuardDecision(label=label, backend=backend, rule=",".join(verdict.categories))


# --- output guard -----------------------------------------------------------------------------
_DOSE_UNITS = r"(mg|milligram|g|gram|ml|milliliter|tablet\w*|tabletten|pil\w*|capsule\w*|druppels|drops|comprimes?|gelules?|puffs?|sachets?|zakjes?)"
_ADDRESSED_DOSE = re.compile(
    "|".join(
        fold(p)
        for p in (
            rf"\b(neem|neemt u|u neemt|u mag|u moet|je mag|je moet|geef (hem|haar|uw kind|je kind))\b.{{0,30}}\b\d+([.,]\d+)?\s?{_DOSE_UNITS}\b",
            rf"\b(take|you (can|should|may|must) take|give (him|her|your child))\b.{{0,30}}\b\d+([.,]\d+)?\s?{_DOSE_UNITS}\b",
            rf"\b(prenez|vous (pouvez|devez) prendre|donnez)\b.{{0,30}}\b\d+([.,]\d+)?\s?{_DOSE_UNITS}\b",
            r"\b(uw|jouw|je) dosis (is|moet|mag)\b|\byour dose (is|should)\b|\bvotre dose (est|doit)\b",
        )
    )
)
_ADDRESSED_DIAGNOSIS = re.compile(
    "|".join(
        fold(p)
        for p in (
            r"\b(u heeft|je hebt|jij hebt|u lijdt aan) (waarschijnlijk|zeker|vermoedelijk|wellicht|duidelijk)\b",
            r"\byou (probably|likely|definitely|most likely|clearly) (have|suffer from)\b",
            r"\bvous (avez|souffrez) (probablement|sans doute|certainement|clairement)\b",
            r"\b(uw|jouw|je) (diagnose|diagnosis) is\b|\byour diagnosis is\b|\bvotre diagnostic est\b",
        )
    )
)
_FOREIGN_EMERGENCY = re.compile(r"\b(911|999|call (an )?ambulance|emergency room|go to the er)\b", re.IGNORECASE)


@dataclass(frozen=True)
class OutputDecision:
    """``refused``: the draft addresses the asker with a dose or diagnosis (``rule`` says which);
    ``emergency_notice``: the draft gives emergency instructions, so the 112 notice leads it."""

    refused: bool
    rule: str = ""
    emergency_notice: bool = False


def output_guard_decide(*, draft: str) -> OutputDecision:
    """Check a drafted answer (text with citation marks). Pure; never raises."""
    folded = fold(draft)
    for name, pattern in (("addressed-dose", _ADDRESSED_DOSE), ("addressed-diagnosis", _ADDRESSED_DIAGNOSIS)):
        match = pattern.search(folded)
        if match:
            return OutputDecision(refused=True, rule=f"{name}: {match.group(0)[:60]}")
    return OutputDecision(refused=False, emergency_notice=bool(_FOREIGN_EMERGENCY.search(draft)))
