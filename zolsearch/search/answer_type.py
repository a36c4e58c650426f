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
none has no expected type, and the answer's sentence choice is unchanged. The forms are narrow on
purpose (a review found the first ones too wide): a count is a number of people or a share, not
any number ("type 2"); a clock time has minutes or follows "om", "tot", "tussen" ("24 uur op
voorhand" is a duration); a phone number is not a date; "bellen" / "call" alone asks when to
call, not which number.
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
        r"|\bwhat time\b|\b(?:visiting|opening) hours\b|\bheures? (?:de visite|d['’]ouverture)\b|\bà quelle heure\b"
    ),
    # "hoeveel tijd kost …" asks how long, not what it costs
    "cost": re.compile(
        r"(?<!tijd )\bkost(?:en|te)?\b|\bprijs\b|\btarie(?:f|ven)\b|\bbetalen\b|\bremgeld\b|\bhow much (?:is|does|do|will|would)\b"
        r"|\bcosts?\b|\bprice\b|\bpay\b|\bpayer\b|\bprix\b|\bco[uû]te?\b"
    ),
    "count": re.compile(
        r"\bhoeveel (?:mensen|personen|bezoekers|kinderen|patiënten|patienten)\b|\bhow many (?:people|persons|visitors)\b"
        r"|\bcombien de (?:personnes|visiteurs)\b"
    ),
    # a number asked for, not "when should I call the doctor": "bellen" alone is not a cue
    "phone": re.compile(r"\b(?:telefoon)?nummer\b|\bphone number\b|\bnuméro\b|\btéléphone\b"),
}

_NUMBER = (
    r"(?:\d+(?:[.,]\d+)?|één|twee|drie|vier|vijf|zes|zeven|acht|negen|tien|elf|twaalf|vijftien|twintig|dertig"
    r"|veertig|vijftig|zestig|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|thirty|sixty"
    r"|deux|trois|quatre|cinq|sept|huit|neuf|dix|quinze|vingt|trente)"
)
_PEOPLE = (
    r"(?:mensen|personen|persoon|bezoekers?|begeleiders?|kinderen|patiënten|people|persons?|visitors?|individuals"
    r"|adults|children|newborns|infants|americans|cases|personnes|visiteurs)"
)
# What a sentence stating each type contains (the sentence as written, case ignored).
_FORMS: dict[str, re.Pattern[str]] = {
    "duration": re.compile(
        rf"\b{_NUMBER}(?:\s*(?:à|-|–|tot|to|a)\s*{_NUMBER})?\s*(?:werk)?(?:minuten|minuut|min|uur|uren|dagen|dag|weken"
        r"|week|maanden|maand|jaar|jaren|minutes?|hours?|days?|weeks?|months?|years?|jours?|semaines?|heures?|mois)\b",
        re.IGNORECASE,
    ),
    # hh.mm / hh:mm / 14h30, or a bare hour after "om", "tot", "vanaf", "tussen", "en", a dash
    # ("tussen 14 en 20 u.", "om 8 uur"), or am/pm; not "24 uur op voorhand" (a duration)
    "clock": re.compile(
        r"\b(?:[01]?\d|2[0-3])[.:h][0-5]\d\b"
        r"|\b(?:om|tot|vanaf|tussen|en|van|à|at|from|until|to|-|–)\s*(?:[01]?\d|2[0-3])\s*(?:u\b|uur\b|h\b|u\.)"
        r"|\b(?:1[0-2]|0?\d)\s*(?:am|pm)\b",
        re.IGNORECASE,
    ),
    "cost": re.compile(r"€|\beuro\b|\beur\b|\bgratis\b|\bkosteloos\b|\bfree of charge\b|\bgratuit", re.IGNORECASE),
    # a number of people ("maximaal 2 bezoekers", "4 personen"), a share ("15 percent", "1 in
    # 50,000"), not any number ("type 2", "chromosome 7")
    "count": re.compile(
        rf"\b{_NUMBER}\s+(?:\S+\s+){{0,2}}{_PEOPLE}\b|\b\d+\s*(?:%|percent|procent)|\b1 (?:in|op) \d[\d,.]*",
        re.IGNORECASE,
    ),
    # a phone number (+32 (0)50 45 26 70, 02/254.64.00, 088 - 459 76 00, (010) 291 19 11) or a
    # short service number after "bel", "call", "via", "op" (112, 1733); not a date (01.02.2024)
    "phone": re.compile(
        r"(?!\b\d{1,2}[./-]\d{1,2}[./-](?:\d{4}|\d{2})\b)(?:\+\d{2}\s?(?:\(0\))?\s?|\(0\d{1,3}\)\s?|\b0)\d{1,3}(?:\s?[/-]\s?|[\s.])?\d{2,3}[\s.]?\d{2}[\s.]?\d{2,3}\b(?![.]\d)"
        r"|\b(?:bel|belt|call|via|op|dial)\s+(?:het\s+(?:nummer\s+)?)?\d{3,4}\b",
        re.IGNORECASE,
    ),
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
