"""Expected answer type: what kind of fact a practical question asks for, and whether a sentence
states one (the answer-type matching of factoid question answering: Moldovan et al., "The
structure and performance of an open-domain question answering system", ACL 2000; Prager et al.,
"Question-answering by predictive annotation", SIGIR 2000).

A question asking "hoelang", "tot hoe laat", "hoeveel kost", "hoeveel mensen" or for a phone
number wants a sentence with a duration, a clock time, a price, a count or a phone number. The
words a hospital page shares with such a question ("bezoek", "wachten", "tolk") are often in a
sentence about something else on the page, while the sentence that answers it states the fact
("Wij streven naar een wachttijd van maximaal vijftien minuten", "Elke dag tussen 14 en 20 u.").
The cues are Dutch (Belgian and Netherlands usage), English and French; a question matching
none has no expected type, and the answer's sentence choice is unchanged.
"""

from __future__ import annotations

import re

# Question cues per answer type (lower-cased question; Dutch, English, French).
_CUES: dict[str, re.Pattern[str]] = {
    "duration": re.compile(
        r"\bhoe ?lang\b|\bhoeveel (?:tijd|dagen|werkdagen|weken|uren|uur|minuten|maanden)\b"
        r"|\bhow long\b|\bhow many (?:days|weeks|hours|minutes|months)\b"
        r"|\bcombien de (?:temps|jours|semaines|minutes|heures)\b|\bdans combien de\b"
    ),
    "clock": re.compile(
        r"\bhoe laat\b|\b(?:bezoek|openings?|consultatie)uren\b|\bbezoektijden\b|\bopeningstijden\b"
        r"|\bwhat time\b|\b(?:visiting|opening) hours\b|\bheures? (?:de visite|d'ouverture)\b|\bà quelle heure\b"
    ),
    "cost": re.compile(
        r"\bkost(?:en|te)?\b|\bprijs\b|\btarie(?:f|ven)\b|\bbetalen\b|\bremgeld\b|\bhow much\b|\bcosts?\b"
        r"|\bprice\b|\bpay\b|\bpayer\b|\bprix\b|\bco[uû]te?\b"
    ),
    "count": re.compile(
        r"\bhoeveel (?:mensen|personen|bezoekers|kinderen|patiënten|patienten)\b|\bhow many (?:people|persons|visitors)\b"
        r"|\bcombien de (?:personnes|visiteurs)\b"
    ),
    "phone": re.compile(r"\b(?:telefoon)?nummer\b|\bbellen\b|\bphone\b|\bcall\b|\bnuméro\b|\btéléphone\b|\bappeler\b"),
}

_NUMBER = (
    r"(?:\d+(?:[.,]\d+)?|één|twee|drie|vier|vijf|zes|zeven|acht|negen|tien|elf|twaalf|vijftien|twintig|dertig"
    r"|veertig|vijftig|zestig|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|thirty|sixty"
    r"|deux|trois|quatre|cinq|six|sept|huit|neuf|dix|quinze|vingt|trente)"
)
# What a sentence stating each type contains (the sentence as written, case ignored).
_FORMS: dict[str, re.Pattern[str]] = {
    "duration": re.compile(
        rf"\b{_NUMBER}(?:\s*(?:à|-|–|tot|to|a)\s*{_NUMBER})?\s*(?:werk)?(?:minuten|minuut|min|uur|uren|dagen|dag|weken"
        r"|week|maanden|maand|jaar|jaren|minutes?|hours?|days?|weeks?|months?|years?|jours?|semaines?|heures?|mois)\b",
        re.IGNORECASE,
    ),
    "clock": re.compile(
        r"\b\d{1,2}(?:[.:]\d{2})?\s*(?:u\b|uur\b|h\b)|\b\d{1,2}[.:h]\d{2}\b|\b\d{1,2}\s*(?:am|pm)\b", re.IGNORECASE
    ),
    "cost": re.compile(r"€|\beuro\b|\beur\b|\bgratis\b|\bkosteloos\b|\bfree of charge\b|\bgratuit", re.IGNORECASE),
    "count": re.compile(rf"\b{_NUMBER}\b", re.IGNORECASE),
    "phone": re.compile(r"(?:\+\d{2}\s?(?:\(0\))?\s?|\b0)\d{1,3}[\s/.-]?\d{2,3}[\s.]?\d{2}[\s.]?\d{2,3}\b"),
}

ANSWER_TYPES: tuple[str, ...] = tuple(_CUES)


def answer_types(question: str) -> frozenset[str]:
    """The answer types (subset of :data:`ANSWER_TYPES`: ``duration``, ``clock``, ``cost``,
    ``count``, ``phone``) ``question`` asks for, by its cue words; empty when it asks for none
    of them. Never raises."""
    text = question.lower()
    return frozenset(kind for kind, cue in _CUES.items() if cue.search(text))


def sentence_states(sentence: str, types: frozenset[str]) -> bool:
    """Whether ``sentence`` states a fact of one of ``types`` (a number with a time unit, a
    clock time, a price or "gratis", a number, a phone number); False for empty ``types``.
    Unknown type names are ignored. Never raises."""
    return any(_FORMS[kind].search(sentence) for kind in types if kind in _FORMS)
