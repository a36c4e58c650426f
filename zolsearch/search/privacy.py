"""Patients' questions without personal identifiers: what is stored, logged or sent to an
external model (issue 13, item 4).

:func:`question_deidentify` runs :func:`core.privacy.identifiers_find` (Presidio with the Dutch
and Belgian recognisers) and keeps the names of the hospital's own doctors: a patient asking
"waar werkt Anna Demo?" looks for a doctor, and a doctor's professional name is public. The
stripper already keeps any name after a doctor's title ("dokter Janssens", "dr. Peeters"); here a
``PERSON`` finding is also kept when every word of it is a word of the name (or an approved
alias) of one published doctor in the taxonomy. A patient who shares a doctor's full name is
kept too: the only way to tell them apart would be to break the doctor lookup.

Retrieval itself searches the question as typed, in memory: the taxonomy stage, the retrievers
and the embedding model (which runs in process by default; an ``openai:`` embedding endpoint or
an ``http:`` reranker should be one the hospital runs). The LLM generator and the safety model
receive the de-identified question (:func:`question_external`).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass

from django.db.models import Q

from core.privacy import Finding, identifiers_find
from core.text import text_normalise
from taxonomy.models import Entity, EntityType, ReviewState


@dataclass(frozen=True)
class Deidentified:
    """``text`` with each identifier replaced by ``[KIND]``; ``kinds`` one per replacement in
    text order (never the values); ``values``: the replaced substrings of the original (kept in
    memory only, to scrub copies of them elsewhere, e.g. the trace); ``kept_doctors``: names
    kept because they name a doctor of the hospital."""

    text: str
    kinds: tuple[str, ...]
    values: tuple[str, ...]
    kept_doctors: tuple[str, ...] = ()


def _doctor_named(words: list[str]) -> bool:
    """True if one published doctor's name or approved alias contains every word of ``words``
    (normalised, at least one). One query, narrowed by the longest word."""
    if not words:
        return False
    longest = max(words, key=len)
    rows = (
        Entity.objects.filter(type=EntityType.DOCTOR, published=True)
        .filter(Q(name__icontains=longest) | Q(aliases__normalised__contains=longest))
        .values_list("name", "aliases__text", "aliases__review_state")
    )
    wanted = set(words)
    for name, alias, state in rows:
        if wanted <= set(text_normalise(name).split()):
            return True
        if alias and state == ReviewState.APPROVED and wanted <= set(text_normalise(alias).split()):
            return True
    return False


def _deidentify(text: str, language: str) -> Deidentified:
    findings: list[Finding] = []
    kept: list[str] = []
    for finding in identifiers_find(text, language=language):
        if finding.kind == "PERSON" and _doctor_named(text_normalise(finding.text).split()):
            kept.append(finding.text)
        else:
            findings.append(finding)
    parts: list[str] = []
    position = 0
    for finding in findings:
        parts.extend((text[position : finding.start], f"[{finding.kind}]"))
        position = finding.end
    parts.append(text[position:])
    return Deidentified(
        text="".join(parts),
        kinds=tuple(f.kind for f in findings),
        values=tuple(f.text for f in findings),
        kept_doctors=tuple(kept),
    )


# The last few results, so that the stages that send the question out and the record of the
# answer strip it once per request. Small on purpose: raw questions stay in memory no longer
# than a few requests.
_RECENT: OrderedDict[tuple[str, str], Deidentified] = OrderedDict()
_RECENT_SIZE = 32
_recent_lock = threading.Lock()


def question_deidentify(text: str, *, language: str = "nl") -> Deidentified:
    """``text`` without personal identifiers, keeping the names of the hospital's doctors (see
    the module docstring). ``language``: "nl", "fr" or "en" (others are read as "nl"). Reads
    the taxonomy only when a name was found (one or two queries per name). Raises nothing for
    any string; "" gives "". Cost: about a millisecond a question once the recognisers are
    loaded (a few seconds, on the first call of a process)."""
    key = (text, language)
    with _recent_lock:
        hit = _RECENT.get(key)
        if hit is not None:
            _RECENT.move_to_end(key)
            return hit
    result = _deidentify(text, language)
    with _recent_lock:
        _RECENT[key] = result
        while len(_RECENT) > _RECENT_SIZE:
            _RECENT.popitem(last=False)
    return result


def question_external(text: str, *, language: str = "nl") -> str:
    """What an external model (LLM generator, safety model) may read of a question: its
    de-identified text."""
    return question_deidentify(text, language=language).text


def values_scrub(obj: object, *, values: tuple[str, ...], kinds: tuple[str, ...]) -> object:
    """A copy of the JSON-like ``obj`` (dicts, lists, strings, numbers) in which every
    occurrence of ``values[i]`` inside a string (as a whole word or number) is replaced by
    ``[kinds[i]]``. Longer values first, so "Lotte Peeters" goes before "Lotte"."""
    if not values:
        return obj
    order = sorted(range(len(values)), key=lambda i: -len(values[i]))
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(values[i]) for i in order) + r")(?!\w)")
    kind_of = {values[i]: kinds[i] for i in order}

    def scrub(value: object) -> object:
        if isinstance(value, str):
            return pattern.sub(lambda m: f"[{kind_of[m.group()]}]", value)
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [scrub(v) for v in value]
        return value

    return scrub(obj)
