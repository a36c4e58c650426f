"""Query understanding by a chat model, when the operator configures one
(``UNDERSTANDING_LLM_MODEL`` on the ``LLM_BASE_URL`` endpoint): the same output schema as the
offline classifiers (:class:`~zolsearch.search.understanding.Understanding`: intent with its
probabilities, MedQuAD question type with its confidence, the reduced query of a long message),
so every stage after understanding reads one shape whichever backend produced it.

The model reads the de-identified message (:func:`zolsearch.search.privacy.question_external`:
the identifiers the privacy module finds, such as patients' names, national register and phone
numbers, are replaced by placeholders; the hospital's doctors' names are kept) and answers with
one JSON object, validated here (:func:`understanding_parse`): every intent named must be one of
the eight :class:`~zolsearch.search.contract.Intent` values, the question type one of
:data:`~zolsearch.search.understanding.QTYPES`, every number finite; probabilities are
renormalised to sum to 1. Anything else, and any failure of the endpoint, the client or the
de-identification, raises :class:`UnderstandingUnavailable`, and the stage keeps the offline
understanding (``QueryUnderstandingStage``; the trace says which backend was used and why not).
The focus is linked as before, from the question, by the taxonomy, SNOMED CT and MedQuAD
(:mod:`zolsearch.search.focus`): a model's free-text focus would not be a linked entity.
"""

from __future__ import annotations

import json
import math
import re

from django.conf import settings

from core.providers.llm import LLMUnavailable, chat_llm_get
from zolsearch.search.contract import Intent
from zolsearch.search.privacy import question_external
from zolsearch.search.understanding import QTYPES, REDUCE_MIN_WORDS, Understanding, message_words


class UnderstandingUnavailable(Exception):
    """The chat model failed or answered with something that is not the schema."""


# One line per intent, as data/understanding/README.md defines them for the labelled set.
_INTENTS = {
    Intent.DOCTOR_LOOKUP.value: "the answer is a person: a named doctor, or the doctors of a specialism",
    Intent.DEPARTMENT_SEARCH.value: "the answer is a service or department: where it is, how to reach it, which one treats something",
    Intent.CONDITION_OR_SYMPTOM.value: "general information about a condition or symptom (what it is, symptoms, causes, inheritance, outlook, risk, prevention, diagnosis, research)",
    Intent.TREATMENT.value: "general information about how a condition is treated, a procedure, or a drug",
    Intent.PRACTICAL_INFO.value: "logistics: visiting hours, parking, admission, appointments, invoices, insurance, certificates, records, results",
    Intent.COMPLAINT.value: "dissatisfaction that looks for redress or a place to report it",
    Intent.GENERAL.value: "about the hospital in general, or none of the others",
    Intent.MEDICAL_ADVICE_REQUEST.value: "individual advice for this person: a diagnosis, a dose, what to do about their own symptoms or results",
}  # fmt: skip

SYSTEM_PROMPT = """You classify messages typed into a Belgian hospital's search box (mostly Dutch, also \
English, French and other languages). You never answer the message.

Intents:
{intents}

MedQuAD question types: {qtypes} ("none": not a medical question).

Reply with one JSON object and nothing else:
{{"intent_probabilities": {{"<intent>": <probability 0-1>, ...}}, "qtype": "<question type>", \
"qtype_confidence": <0-1>, "reduced": "<search query>"}}
"intent_probabilities" gives every intent you consider possible (they are renormalised). "reduced": \
for a message of {min_words} words or more, the short query a librarian would type (the condition, \
drug, procedure or service asked about, the question-type words, the content words that matter; \
greetings, story and feelings dropped), in the message's language; "" for a shorter message."""


def system_prompt() -> str:
    """The system message: the eight intents with their definitions, MedQuAD's question types
    and the JSON reply schema."""
    return SYSTEM_PROMPT.format(
        intents="\n".join(f"- {name}: {meaning}" for name, meaning in _INTENTS.items()),
        qtypes=", ".join(QTYPES),
        min_words=REDUCE_MIN_WORDS,
    )


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_PLACEHOLDER = re.compile(r"\[[A-Z_]+\]")  # what de-identification put in the model's input


def _no_constant(name: str) -> float:
    raise UnderstandingUnavailable(f"the reply holds {name}, not a number")


def _finite(value: object) -> bool:
    return isinstance(value, float) and math.isfinite(value)


def understanding_parse(text: str, *, message: str) -> Understanding:
    """The :class:`Understanding` in a model's reply ``text`` for ``message`` (the question as
    asked; its word count decides whether a reduced query is kept).

    The reply's first ``{`` to its last ``}`` is read as JSON (a code fence around it is
    tolerated; integers are read as floats; NaN and Infinity are refused).
    ``intent_probabilities``: an object of intent → finite number ≥ 0 over the eight
    :class:`~zolsearch.search.contract.Intent` values, at least one > 0, renormalised to sum to
    1 (4 decimals); the intent is the most probable (ties: the first in :class:`Intent` order),
    its confidence that probability. ``qtype``: one of
    :data:`~zolsearch.search.understanding.QTYPES`; ``qtype_confidence`` clamped to [0, 1] (1.0
    when missing). ``reduced``: kept for a message of at least
    :data:`~zolsearch.search.understanding.REDUCE_MIN_WORDS` words, else ""; de-identification
    placeholders ("[PHONE]") dropped and cut to the message's number of words (a reduction is
    never longer than the message).

    Raises :class:`UnderstandingUnavailable` naming what is wrong: no JSON object, an unknown
    intent or question type, a probability that is not a finite number ≥ 0, all probabilities 0
    (or a sum that is not finite), a ``qtype_confidence`` that is not a finite number."""
    found = _JSON_OBJECT.search(text)
    if found is None:
        raise UnderstandingUnavailable("the reply holds no JSON object")
    try:
        reply = json.loads(found.group(0), parse_int=float, parse_constant=_no_constant)
    except (json.JSONDecodeError, OverflowError, ValueError) as exc:
        raise UnderstandingUnavailable(f"the reply is not valid JSON: {exc}") from exc
    if not isinstance(reply, dict):
        raise UnderstandingUnavailable("the reply is not a JSON object")
    raw = reply.get("intent_probabilities")
    if not isinstance(raw, dict) or not raw:
        raise UnderstandingUnavailable("intent_probabilities is missing or not an object")
    unknown = sorted(set(raw) - set(_INTENTS))
    if unknown:
        raise UnderstandingUnavailable(f"unknown intents {unknown}")
    if not all(_finite(p) and p >= 0 for p in raw.values()):
        raise UnderstandingUnavailable("an intent probability is not a finite number >= 0")
    total = float(sum(raw.values()))
    if not math.isfinite(total) or total <= 0:
        raise UnderstandingUnavailable("every intent probability is 0, or their sum is not finite")
    probabilities = {name: round(float(raw[name]) / total, 4) for name in _INTENTS if name in raw}
    intent = max(probabilities, key=probabilities.__getitem__)  # ties: the first in Intent order (dict order)
    qtype = reply.get("qtype")
    if qtype not in QTYPES:
        raise UnderstandingUnavailable(f"unknown question type {qtype!r}")
    confidence = reply.get("qtype_confidence", 1.0)
    if not _finite(confidence):
        raise UnderstandingUnavailable("qtype_confidence is not a finite number")
    reduced = reply.get("reduced", "")
    if not isinstance(reduced, str):
        raise UnderstandingUnavailable("reduced is not a string")
    words = message_words(message)
    return Understanding(
        intent=intent,
        intent_confidence=probabilities[intent],
        qtype=str(qtype),
        qtype_confidence=min(max(float(confidence), 0.0), 1.0),
        reduced=" ".join(_PLACEHOLDER.sub(" ", reduced).split()[:words]) if words >= REDUCE_MIN_WORDS else "",
        intent_probabilities=probabilities,
    )


def understanding_llm(*, question: str, language: str, model: str) -> Understanding:
    """The chat model ``model``'s understanding of ``question`` (in ``language``), validated by
    :func:`understanding_parse`. One call at temperature 0 with the client timeout
    ``UNDERSTANDING_LLM_TIMEOUT_S`` (s, for the connection and for the reply; shorter than the
    generator's: it runs before retrieval on every request) and
    ``UNDERSTANDING_LLM_MAX_RETRIES`` retries of transient errors (0 by default: the offline
    classifiers answer at once instead). Raises :class:`UnderstandingUnavailable` for every
    failure: the endpoint's, the client's construction (a missing key), the de-identification's,
    a reply that is not the schema."""
    try:
        client = chat_llm_get(
            model, timeout_s=settings.UNDERSTANDING_LLM_TIMEOUT_S, max_retries=settings.UNDERSTANDING_LLM_MAX_RETRIES
        )
        asked = question_external(question, language=language)  # the model is external: no identifiers
        text = client.complete(
            [
                {"role": "system", "content": system_prompt()},
                {"role": "user", "content": f"Language: {language}\nMessage: {asked}"},
            ],
            max_tokens=300,
        )
        return understanding_parse(text, message=question)
    except UnderstandingUnavailable:
        raise
    except LLMUnavailable as exc:
        raise UnderstandingUnavailable(str(exc)) from exc
    except Exception as exc:  # noqa: BLE001 — an optional backend on every request: never the request's failure
        raise UnderstandingUnavailable(f"{type(exc).__name__}: {exc}") from exc
