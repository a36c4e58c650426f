"""Personal identifiers in patients' questions: find them and replace them by placeholders.

``identifiers_strip`` is what runs before a question is stored, logged or sent to an external
model (issue 13, item 4); ``identifiers_find`` gives the spans. Kinds (``KINDS``): ``PERSON``,
``INSZ`` (Belgian national register number), ``PHONE``, ``EMAIL``, ``ADDRESS``,
``DATE_OF_BIRTH`` and ``IBAN``.

Library: Microsoft Presidio (``presidio-analyzer`` runs the recognisers and merges their results,
``presidio-anonymizer`` writes the placeholders). Presidio's own recognisers do e-mail (its
regular expression, with the domain checked against tldextract's bundled public-suffix snapshot,
never fetched), IBAN (its country patterns and mod-97 check) and phone numbers (Google's
libphonenumber through ``phonenumbers``, Belgian and Dutch national formats, any ``+``/``00``
international one). Presidio's NER needs a spaCy model, and spaCy models are not on PyPI, so
none is loaded: the NLP engine is ``spacy.blank("xx")`` (a tokenizer only, nothing
downloaded), and the kinds a model would find are recognisers written here for Belgium and the
Netherlands, plain functions over the text that Presidio calls:

- ``INSZ``: 11 digits, ``YY.MM.DD-XXX.CC`` with any of ``.``, ``-``, space or nothing between the
  groups, kept only if the mod-97 check holds (``insz_is_valid``) or a context word
  ("rijksregisternummer", "INSZ", "NISS", "national number", ...) stands just before it: a
  mistyped number of one's own is still personal data.
- ``DATE_OF_BIRTH``: a date (``12/03/1956``, ``5-11-87``, ``1938-05-09``, "12 maart 1956",
  "March 3, 1950") with birth context before it ("geboren", "geboortedatum", "°", "née",
  "born", ...), or with a year right after a name and "(". Other dates are not identifiers
  ("sinds 3 maart", an appointment on 15/01/2026) and are kept.
- ``ADDRESS``: a street and house number ("Kerkstraat 12 bus 2", "Schiepse Bos 6", "rue de la
  Station 12"), a Belgian or Dutch postcode and town ("3600 Genk", "6221 AB Maastricht"), and
  the two together as one span.
- ``PERSON``: a name after a title (mevrouw, meneer, mevr., dhr., madame, monsieur, Mr, Mrs),
  after "ik ben" / "mijn naam is" / "je m'appelle" / "my name is", after or before a relative
  ("mijn dochter Lotte", "Chloë, mijn zoon"), before a bracketed birth date, in a sign-off
  ("Groeten, Peter") or as the last sentence ("...? Omer Simoens"), a first name from
  ``core/data/first_names.txt`` followed by a surname (lower-case surnames from
  ``core/data/surnames.txt``), or such a first name alone; every other occurrence of a found
  name is found too. Eponyms ("Cornelia de Lange syndrome") are not names.

Decisions (documented in ``data/privacy/README.md`` as well):

- A name after a doctor's title (dokter, dr., prof., docteur, doctor) is kept: a patient asking
  "waar werkt dokter Janssens" needs that name for the doctor lookup, and a doctor's professional
  name is public. The same holds for names that are part of a hospital or campus name
  ("campus André Dumont", "AZ Maria Middelares", "Sint-Jan").
- Public phone numbers that are no one's personal data are kept (``PUBLIC_PHONE_NUMBERS``: the
  hospital switchboard and the national help lines the answers themselves give); every other
  phone number is stripped, a hospital department's included, since it can't be told from a
  patient's own. Short numbers (112, 1733, 1813, 106) are not phone numbers to libphonenumber.
- Every street address is stripped, the hospital's own included ("Schiepse Bos 6"): a street and
  number can't be told from a neighbour's home; campus names keep what a route question needs.
- A year alone ("geboren in 1960") and a town alone ("ik woon in Zwartberg") are kept.

Versions: presidio-analyzer/-anonymizer 2.2.362, the last release without a ``numpy<2.5`` cap
(2.2.363 on add it; the project pins numpy 2.5.5). Cost: the first call builds the engine (importing spaCy and Presidio, a few seconds on the
2-core machine); after that a message takes about a millisecond (``benchmarks/privacy.py``).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

KINDS = ("PERSON", "INSZ", "PHONE", "EMAIL", "ADDRESS", "DATE_OF_BIRTH", "IBAN")
LANGUAGES = ("nl", "fr", "en")
DATA_DIR = Path(__file__).resolve().parent / "data"

# National significant numbers (no trunk 0) that are kept: ZOL's switchboard (the project's
# SEARCH_FALLBACK_PHONE default) and the Antigifcentrum (data/safety/README.md).
PUBLIC_PHONE_NUMBERS = frozenset({"89325050", "70245245"})


@dataclass(frozen=True)
class Finding:
    """One identifier in a text: ``text == source[start:end]``, ``kind`` one of ``KINDS``.

    ``start``/``end`` are character offsets into the source string (0 ≤ start < end ≤ len).
    """

    kind: str
    start: int
    end: int
    text: str


# A detector returns (start, end, score) triples; score in (0, 1] orders overlapping findings.
_Span = tuple[int, int, float]


# --------------------------------------------------------------------------------------------
# INSZ (rijksregisternummer / numéro de registre national)


def insz_is_valid(number: str) -> bool:
    """True if ``number`` (any separators) is a well-formed Belgian national register number.

    11 digits YYMMDDXXXCC: CC = 97 - (YYMMDDXXX mod 97) for people born before 2000, and
    CC = 97 - (2YYMMDDXXX mod 97) (a 2 put in front) for people born from 2000 on; either rule
    passing is accepted. MM is 0-12, or 20-32 / 40-52 for BIS numbers (people not in the register,
    month + 20 or + 40); DD is 0-31 (00 when the birth date was unknown). Sources: IBZ,
    "IT000 Rijksregisternummer" (instructions of the Rijksregister); nl.wikipedia.org
    "Rijksregisternummer"; the same rule as python-stdnum's ``stdnum.be.nn`` and ``stdnum.be.bis``.
    """
    digits = re.sub(r"[\s.\-/]", "", number)
    if len(digits) != 11 or not digits.isdigit():
        return False
    month, day = int(digits[2:4]), int(digits[4:6])
    if not (month <= 12 or 20 <= month <= 32 or 40 <= month <= 52) or day > 31:
        return False
    check = int(digits[9:])
    return 97 - int(digits[:9]) % 97 == check or 97 - int("2" + digits[:9]) % 97 == check


_INSZ = re.compile(r"(?<![\w.,/-])\d{2}([. ]?)\d{2}\1\d{2}[ ]?[-. ]?[ ]?\d{3}[ ]?[-. ]?[ ]?\d{2}(?![\w/]|[.,]\d)")
_INSZ_CONTEXT = re.compile(
    r"(rijksregister|\brrn\b|\binsz\b|\bniss\b|\bbis\b|registre national|national (register |registration )?number"
    r"|identificatienummer|nationaal nummer)[^.?!\n]{0,25}$",
    re.IGNORECASE,
)


def _insz_spans(text: str) -> list[_Span]:
    spans: list[_Span] = []
    for match in _INSZ.finditer(text):
        if insz_is_valid(match.group()):
            spans.append((match.start(), match.end(), 1.0))
        elif _INSZ_CONTEXT.search(text[max(0, match.start() - 60) : match.start()]):
            spans.append((match.start(), match.end(), 0.6))
    return spans


# --------------------------------------------------------------------------------------------
# Dates of birth

_MONTHS = {
    # nl
    "januari": 1, "jan": 1, "februari": 2, "feb": 2, "febr": 2, "maart": 3, "mrt": 3, "april": 4,
    "apr": 4, "mei": 5, "juni": 6, "jun": 6, "juli": 7, "jul": 7, "augustus": 8, "aug": 8,
    "september": 9, "sep": 9, "sept": 9, "oktober": 10, "okt": 10, "november": 11, "nov": 11,
    "december": 12, "dec": 12,
    # fr
    "janvier": 1, "février": 2, "fevrier": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6,
    "juillet": 7, "août": 8, "aout": 8, "septembre": 9, "octobre": 10, "novembre": 11,
    "décembre": 12, "decembre": 12,
    # en
    "january": 1, "february": 2, "march": 3, "may": 5, "june": 6, "july": 7, "august": 8,
    "october": 10, "oct": 10,
}  # fmt: skip
_MONTH = "|".join(sorted((re.escape(m) for m in _MONTHS), key=len, reverse=True))
_DATE_PATTERNS = (
    # 12/03/1956, 5-11-87, 23.08.1979 (same separator twice)
    re.compile(r"(?<![\w/.,-])(?P<d>\d{1,2})(?P<s>[/.-])(?P<m>\d{1,2})(?P=s)(?P<y>\d{4}|\d{2})(?![\w/-]|[.,]\d)"),
    # 1938-05-09
    re.compile(r"(?<![\w/.-])(?P<y>(?:19|20)\d{2})-(?P<m>\d{2})-(?P<d>\d{2})(?![\w/-])"),
    # 12 maart 1956, 1er mars 1942, 7 August 1994, "4 juli" (year optional)
    re.compile(
        rf"(?<![\w/.-])(?P<d>\d{{1,2}})(?:e|er|ste|de|st|nd|rd|th)?\s+(?P<mn>{_MONTH})\.?(?:\s+(?P<y>\d{{4}}|'\d{{2}}))?(?!\w)",
        re.IGNORECASE,
    ),
    # March 3, 1950
    re.compile(
        rf"(?<!\w)(?P<mn>{_MONTH})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>\d{{4}})(?!\w)", re.IGNORECASE
    ),
    # 12/03 (only with birth context)
    re.compile(r"(?<![\w/.,-])(?P<d>\d{1,2})(?P<s>[/.])(?P<m>\d{1,2})(?![\w/.-]|,\d)"),
)
_BIRTH_CONTEXT = re.compile(
    r"(geboren|\bgeb\.|geboorte\s*datum|geboortedag|°|\bnée?s?\b|naissance|\bborn\b|birth|\bd\.?o\.?b\b)"
    r"[^.?!\n]{0,30}$",
    re.IGNORECASE,
)
_AFTER_NAME = re.compile(r"[A-ZÀ-Ý][\w'’-]+\s*\(\s*$")


def _dob_spans(text: str) -> list[_Span]:
    spans: list[_Span] = []
    this_year = date.today().year
    taken: list[tuple[int, int]] = []
    for pattern in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(s < end and start < e for s, e in taken):
                continue
            groups = match.groupdict()
            day = int(groups["d"])
            month = _MONTHS[groups["mn"].lower()] if groups.get("mn") else int(groups["m"])
            year_text = (groups.get("y") or "").lstrip("'")
            if not (1 <= day <= 31 and 1 <= month <= 12):
                continue
            if len(year_text) == 4 and not 1900 <= int(year_text) <= this_year:
                continue
            before = text[max(0, start - 60) : start]
            if _BIRTH_CONTEXT.search(before) or (year_text and _AFTER_NAME.search(before)):
                spans.append((start, end, 0.85))
                taken.append((start, end))
            elif year_text:
                # A full date that is not a birth date still blocks the shorter patterns.
                taken.append((start, end))
    return spans


# --------------------------------------------------------------------------------------------
# Postal addresses

_NUMBER = r"\s+\d{1,4}(?:\s?[a-zA-Z](?![\w]))?(?:\s*(?:bus|bte|boîte|b\.|/)\s*\d{1,4}[a-zA-Z]?)?(?![\w,.]\d|\w)"
# Street words written as one compound ("Kerkstraat", "Sint-Truidersteenweg"), any case.
_STREET_COMPOUND = re.compile(
    r"(?<![\w-])[^\W\d_][\w'’-]{2,}(?:straat|straatje|laan|steenweg|weg|baan|plein|dreef|lei|kaai|dijk|singel"
    r"|gracht|markt|kade|veld|berg|hof|park|pad|vest|wal|kouter|dam|heide|akker|meers|beemd|weide|steeg)" + _NUMBER,
    re.IGNORECASE,
)
# "-ring" only capitalised: "Stefaniering 12", not "verandering 3 weken".
_STREET_RING = re.compile(r"(?<![\w-])[A-ZÀ-Ý][\w'’-]{2,}(?:ring|wijk|poort)" + _NUMBER)
# Street words standing alone after a capitalised word ("Schiepse Bos 6", "Grote Markt 3").
_STREET_SPLIT = re.compile(
    r"(?<![\w-])(?:[A-ZÀ-Ý][\w'’-]*\s+){1,3}(?:Bos|Markt|Baan|Plein|Dreef|Lei|Kaai|Dijk|Singel|Gracht|Kade|Ring"
    r"|Hof|Park|Veld|Berg|Heide|Wijk|Poort|Laan|Weg|Straat|Steenweg|Vest|Boulevard|Meers|Beemd|Weide)" + _NUMBER
)
# French streets: "rue de la Station 12", "avenue Louise 54" (the word before the number capitalised).
_STREET_FR = re.compile(
    r"(?<!\w)(?:rue|avenue|av\.|chaussée|chaussee|boulevard|bd|place|chemin|allée|allee|quai|square|route|impasse"
    r"|drève|clos)\s+(?:[\w'’-]+\s+){0,3}?[A-ZÀ-Ý][\w'’-]*" + _NUMBER,
    re.IGNORECASE,
)
_TOWN = r"[A-ZÀ-Ý][a-zà-ÿ'’]+(?:-[A-Za-zÀ-ÿ'’]+)*"
_POSTCODE_BE = re.compile(rf"(?<![\w/.,+-])[1-9]\d{{3}}\s+{_TOWN}(?![\w-])")
_POSTCODE_NL = re.compile(rf"(?<![\w/.,+-])[1-9]\d{{3}}\s?[A-Z]{{2}}\s+{_TOWN}(?![\w-])")
# A year before a capitalised word is not a postcode ("sinds 2019 Metformine").
_NOT_POSTCODE_BEFORE = re.compile(
    rf"(?:\b(?:sinds|vanaf|tot|since|depuis|jaar|year|année|tussen|en|of|kamer|room|chambre|nr|nummer|factuur"
    rf"|{_MONTH})\.?\s*)$",
    re.IGNORECASE,
)
_NOT_TOWN = frozenset(
    "euro eur mg ml kg gram ik je jij hij zij we wij u mijn het de een dit dat is en of maar ook wat hoe waar "
    "wanneer waarom welke kan mag moet heb ben was kamer campus uur keer dagen weken jaar patiënten".split()
)


def _address_spans(text: str) -> list[_Span]:
    spans: list[_Span] = []
    for pattern in (_STREET_COMPOUND, _STREET_RING, _STREET_SPLIT, _STREET_FR):
        spans.extend((m.start(), m.end(), 0.8) for m in pattern.finditer(text))
    for pattern in (_POSTCODE_NL, _POSTCODE_BE):
        for match in pattern.finditer(text):
            town = match.group().split()[-1]
            number = int(match.group()[:4])
            if town.lower() in _NOT_TOWN or town.lower() in _MONTHS:
                continue
            if 1900 <= number <= 2099 and _NOT_POSTCODE_BEFORE.search(text[max(0, match.start() - 20) : match.start()]):
                continue
            spans.append((match.start(), match.end(), 0.75))
    return spans


# --------------------------------------------------------------------------------------------
# Person names


def _fold(word: str) -> str:
    """Lower case without diacritics: "Chloë" and "chloe" are the same name here."""
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@cache
def _name_list(name: str) -> frozenset[str]:
    lines = (DATA_DIR / name).read_text(encoding="utf-8").splitlines()
    return frozenset(_fold(line.strip()) for line in lines if line.strip() and not line.startswith("#"))


def _first_names() -> frozenset[str]:
    """The first names of ``core/data/first_names.txt``, lower-cased without diacritics (source
    and licence in the file)."""
    return _name_list("first_names.txt")


def _surnames() -> frozenset[str]:
    return _name_list("surnames.txt")


_TOKEN = re.compile(r"[^\W\d_](?:[\w'’-]*[^\W_])?|\d+|[^\w\s]")
_PARTICLES = frozenset("van de der den vande vander vanden ten ter le la du des el von 't d' di da dos het".split())
_PERSON_TITLES = frozenset(
    "mevrouw mevr mw meneer mijnheer mnr dhr madame mme monsieur mademoiselle mlle mr mrs ms miss mister "
    "juffrouw".split()
)
_DOCTOR_TITLES = frozenset("dokter dr dra docter doctor docteur doc prof professor professeur".split())
_KIN = frozenset(
    "dochter zoon man vrouw echtgenote echtgenoot partner vriend vriendin moeder vader mama papa moeke vake "
    "oma opa bomma bompa broer zus zusje broertje zoontje dochtertje kleinzoon kleindochter schoonmoeder "
    "schoonvader schoonzoon schoondochter tante nonkel oom nicht neef buurman buurvrouw collega bewoner "
    "fils fille mari femme mère père frère sœur soeur ami amie copain copine "
    "son daughter wife husband mother father mum mom dad brother sister grandmother grandfather grandma "
    "grandpa friend colleague neighbour neighbor".split()
)
_EPONYM_AFTER = frozenset(
    "syndrome syndroom syndrom disease disorder ziekte maladie sign teken test procedure procedure techniek".split()
)
_POSSESSIVES = frozenset("mijn m'n onze my our mon ma notre".split())
_SIGN_OFFS = frozenset(
    "groeten groetjes groet mvg vg cordialement salutations regards sincerely thanks merci bedankt dank".split()
)
# Words after which capitalised tokens are an institution's name, not a person's.
_INSTITUTION_BEFORE = frozenset(
    "az uz zna gza zol campus ziekenhuis kliniek centrum sint st heilig koningin koning prinses prins "
    "olv hôpital hopital clinique hospital saint sainte jessa".split()
)
_INSTITUTION_WORDS = frozenset(
    "ziekenhuis kliniek hospital middelares campus centrum ziekenhuizen clinique hôpital".split()
)
_KEEP_PHRASES = re.compile(
    r"André Dumont|Maria Middelares|Jan Yperman|Jan Palfijn|Jan Portaels|Maas en Kempen|Sint-[A-Z][\w-]*"
    r"|Kind en Gezin",
    re.IGNORECASE,
)
# Capitalised words that start sentences or name things, never a person's name.
_NOT_NAMES = frozenset(
    "ik je jij u uw hij zij ze we wij het de een dit dat die deze er is kan mag moet wil zal heb heeft ben "
    "was waar wat wie hoe wanneer welke waarom en of maar ook nog al niet geen graag dank bedankt hallo dag "
    "goedendag goeiedag beste hoi hey bonjour hello hi dear the a an my your his her our mon ma mes le la les "
    "un une est et je il elle nous vous mijn zijn haar ons onze hun kamer campus dienst spoed afspraak "
    "maandag dinsdag woensdag donderdag vrijdag zaterdag zondag monday tuesday wednesday thursday friday "
    "saturday sunday lundi mardi mercredi jeudi vendredi samedi dimanche ziekenhuis kliniek dokter "
    "verpleegkundige is are am was op in aan met voor naar van bij om tot uit over".split()
)
_STRONG_INTROS = (
    ("mijn", "naam", "is"), ("naam", ":"), ("ik", "heet"), ("zij", "heet"), ("hij", "heet"), ("ze", "heet"),
    ("je", "m'appelle"), ("il", "s'appelle"), ("elle", "s'appelle"), ("mon", "nom", "est"),
    ("my", "name", "is"), ("her", "name", "is"), ("his", "name", "is"), ("nom", ":"), ("name", ":"),
)  # fmt: skip
_WEAK_INTROS = (
    ("ik", "ben"), ("dit", "is"), ("hier", "is"), ("je", "suis"), ("i", "am"), ("i'm",), ("this", "is"),
    ("c'est",),
)  # fmt: skip


def _is_cap(word: str) -> bool:
    # A title is never a name itself: "dochter Mevrouw [PERSON]" (a stripped text) kept "Mevrouw"
    # as the daughter's name, so stripping twice changed the text (tests/proof).
    lowered = word.lower()
    return (
        word[0].isupper()
        and any(c.islower() for c in word)
        and lowered not in _NOT_NAMES
        and lowered not in _PERSON_TITLES
        and lowered not in _DOCTOR_TITLES
    )


_PLACEHOLDER_END = re.compile(r"\[(?:" + "|".join(KINDS) + r")\]$")


def _ends_capitalised(text: str, tokens: _Tokens, i: int) -> bool:
    """Token ``i`` is a capitalised word, or the end of a placeholder ("[ADDRESS]") standing
    where one was: a stripped text must read like the text it came from, or a second pass would
    find what the first left ("3600 Kerkstraat Lotte" → "[ADDRESS] Lotte")."""
    if tokens.words[i] == "]":
        return bool(_PLACEHOLDER_END.search(text, 0, tokens.spans[i][1]))
    return _is_cap(tokens.words[i])


def _is_first_name(word: str) -> bool:
    lowered = _fold(word)
    names = _first_names()
    return lowered in names or ("-" in lowered and all(part in names for part in lowered.split("-")))


class _Tokens:
    """Word and punctuation tokens of a text, with lower-cased forms."""

    def __init__(self, text: str) -> None:
        self.spans = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
        self.words = [text[s:e] for s, e in self.spans]
        self.lower = [w.lower() for w in self.words]

    def __len__(self) -> int:
        return len(self.words)

    def is_word(self, i: int) -> bool:
        return 0 <= i < len(self.words) and self.words[i][0].isalpha()

    def skip_dot(self, i: int) -> int:
        return i + 1 if i < len(self.words) and self.words[i] == "." else i

    def name_run(
        self, i: int, *, lower_ok: Callable[[str], bool], max_words: int = 4, particle_start: bool = False
    ) -> int | None:
        """End token index (exclusive) of a name starting at ``i``, or None.

        A name is initials ("K."), name words (capitalised, or lower-case ones ``lower_ok``
        accepts) and particles between them ("Van den Bossche", "Wim de Coninck"); a particle
        opens a name only when capitalised ("De Smet", not "van Noor") unless ``particle_start``
        (after a title: "meneer van Dongen").
        """
        j, words, end = i, 0, None
        while j < len(self.words) and words < max_words and self.is_word(j):
            word, lowered = self.words[j], self.lower[j]
            if len(word) == 1 and word.isupper() and j + 1 < len(self.words) and self.words[j + 1] == ".":
                j += 2  # initial
                continue
            if lowered in _PARTICLES and (word[0].isupper() or end is not None or particle_start):
                k = j
                while k < len(self.words) and self.lower[k] in _PARTICLES:
                    k += 1
                if k < len(self.words) and self.is_word(k) and (_is_cap(self.words[k]) or lower_ok(self.lower[k])):
                    j = k
                    continue
                break
            if _is_cap(word) or (word.islower() and lower_ok(lowered)):
                if lowered in _INSTITUTION_WORDS:
                    break
                words += 1
                j += 1
                end = j
                continue
            break
        return end


def _known_name(word: str) -> bool:
    folded = _fold(word)
    return folded in _first_names() or folded in _surnames()


def _protected(text: str, tokens: _Tokens) -> list[tuple[int, int]]:
    """Spans that are a doctor's name with its title, or part of an institution's name."""
    spans = [m.span() for m in _KEEP_PHRASES.finditer(text)]
    for i, lowered in enumerate(tokens.lower):
        if lowered in _DOCTOR_TITLES or lowered in _INSTITUTION_BEFORE:
            j = tokens.skip_dot(i + 1)
            while j < len(tokens) and tokens.lower[j] in _DOCTOR_TITLES:
                j = tokens.skip_dot(j + 1)
            end = tokens.name_run(j, lower_ok=_known_name if lowered in _DOCTOR_TITLES else (lambda _w: False))
            if end is not None:
                spans.append((tokens.spans[i][0], tokens.spans[end - 1][1]))
    return spans


def _person_spans(text: str) -> list[_Span]:
    tokens = _Tokens(text)
    found: list[_Span] = []

    def add(i: int, end: int | None, score: float) -> None:
        if end is not None and end > i:
            found.append((tokens.spans[i][0], tokens.spans[end - 1][1], score))

    n = len(tokens)
    for i in range(n):
        lowered = tokens.lower[i]
        # mevrouw Janssens, dhr. K. Lenaerts, Mrs Thompson (not "mevrouw dokter Janssens")
        if lowered in _PERSON_TITLES or (lowered == "heer" and i > 0 and tokens.lower[i - 1] == "de"):
            j = tokens.skip_dot(i + 1)
            if j < n and tokens.lower[j] not in _DOCTOR_TITLES:
                add(j, tokens.name_run(j, lower_ok=_known_name, particle_start=True), 0.85)
        # mijn dochter Lotte, ma fille Emma, my wife Laura
        if lowered in _KIN:
            j = i + 2 if i + 1 < n and tokens.words[i + 1] == "," else i + 1
            named = j < n and tokens.is_word(j) and (_is_cap(tokens.words[j]) or _is_first_name(tokens.words[j]))
            if named and tokens.lower[j] not in _PARTICLES:  # "de mama van Noor": "van" is no name
                add(j, tokens.name_run(j, lower_ok=_known_name, max_words=3), 0.8)
        # Groeten, Peter / Cordialement, Nicole Renard
        if lowered in _SIGN_OFFS:
            j = i + 1
            while j < n and tokens.words[j] in {",", ".", "!", ":"}:
                j += 1
            if j < n and tokens.is_word(j) and _is_cap(tokens.words[j]):
                add(j, tokens.name_run(j, lower_ok=lambda _w: False, max_words=3), 0.8)
        # Jan Peeters, jana peeters; a first name alone
        if tokens.is_word(i) and _is_first_name(tokens.words[i]):
            blocked = i > 0 and tokens.lower[i - 1] in _INSTITUTION_BEFORE
            capitalised = tokens.words[i][0].isupper()
            if not blocked and capitalised:
                end = tokens.name_run(i, lower_ok=lambda w: _fold(w) in _surnames(), max_words=4)
                if end is not None and end > i + 1:
                    add(i, end, 0.75)
                elif i > 0 and _fold(tokens.words[i - 1]) in _surnames() and _is_cap(tokens.words[i - 1]):
                    # surname first, as forms write it ("Peeters Lotte"): missed before, and
                    # "3600 Peeters Lotte" → "[ADDRESS] Lotte" then lost "Lotte" on a second pass
                    add(i - 1, end, 0.75)
                elif i == 0 or not _ends_capitalised(text, tokens, i - 1) or _is_first_name(tokens.words[i - 1]):
                    # alone, unless it ends a capitalised phrase ("Polycythemia Vera")
                    add(i, end, 0.55)
            elif not blocked and i + 1 < n and _fold(tokens.lower[i + 1]) in _surnames():
                add(i, i + 2, 0.7)
            elif not blocked and i + 1 < n and tokens.lower[i + 1] in _PARTICLES:
                # noor van der pol
                add(i, tokens.name_run(i, lower_ok=lambda w: w not in _NOT_NAMES, max_words=2), 0.7)
            elif not blocked and i + 1 < n and "hier" in tokens.lower[i + 1 : i + 3]:
                # "ann verheyen hier" ("this is Ann Verheyen"), typed without capitals
                add(i, i + tokens.lower[i + 1 : i + 3].index("hier") + 1, 0.7)
        if _is_cap(tokens.words[i]) and (i == 0 or not tokens.words[i - 1][0].isupper()):
            end = tokens.name_run(i, lower_ok=lambda _w: False, max_words=4)
            if end is not None:
                after = tokens.lower[end : end + 3]
                # "Vanessa Van Belle (10-12-98)", "Chloë, mijn zoon"
                before_birth_date = after[:1] == ["("] and len(after) > 1 and (after[1] == "°" or after[1].isdigit())
                before_relation = len(after) == 3 and after[0] == "," and after[1] in _POSSESSIVES and after[2] in _KIN
                if before_birth_date or before_relation:
                    add(i, end, 0.8)
                # A signature: the last sentence is nothing but a name ("...? Omer Simoens")
                elif i > 0 and all(not tokens.is_word(k) for k in range(end, n)):
                    gap = text[tokens.spans[i - 1][1] : tokens.spans[i][0]]
                    sentence_start = tokens.words[i - 1] in {".", "?", "!"} or "\n" in gap
                    if sentence_start and (end > i + 1 or _is_first_name(tokens.words[i])):
                        add(i, end, 0.75)
    # Introductions: "ik ben Yasmine", "mijn naam is wim de coninck", "I'm Olivia Clarke"
    for intros, strong in ((_STRONG_INTROS, True), (_WEAK_INTROS, False)):
        for intro in intros:
            size = len(intro)
            for i in range(n - size):
                if tuple(tokens.lower[i : i + size]) != intro:
                    continue
                j = i + size
                if not tokens.is_word(j):
                    continue
                first = tokens.words[j]
                if strong:
                    end = tokens.name_run(j, lower_ok=lambda w: w not in _NOT_NAMES, max_words=3)
                elif _is_first_name(first):
                    end = tokens.name_run(j, lower_ok=_known_name, max_words=4) or j + 1
                elif _is_cap(first):
                    end = tokens.name_run(j, lower_ok=_known_name, max_words=4)
                    end = end if end is not None and end > j + 1 else None
                else:
                    end = None
                add(j, end, 0.85)
    protected = _protected(text, tokens)
    # Eponyms: "Cornelia de Lange syndrome", "ziekte van Parkinson" needs no rule (no first name).
    for i, lowered in enumerate(tokens.lower):
        if lowered in _EPONYM_AFTER and i > 0:
            protected.append((tokens.spans[i - 1][0], tokens.spans[i][1]))
    return [span for span in found if not any(s < span[1] and span[0] < e for s, e in protected)]


# --------------------------------------------------------------------------------------------
# Presidio engine


@dataclass(frozen=True)
class _Engines:
    analyzer: Any
    anonymizer: Any
    operators: dict[str, Any]
    result_type: Any


_DETECTORS: dict[str, Callable[[str], list[_Span]]] = {
    "INSZ": _insz_spans,
    "DATE_OF_BIRTH": _dob_spans,
    "ADDRESS": _address_spans,
    "PERSON": _person_spans,
}
_PRESIDIO_KINDS = {"PHONE_NUMBER": "PHONE", "EMAIL_ADDRESS": "EMAIL", "IBAN_CODE": "IBAN"}
_engines_lock = threading.Lock()


@cache
def _engines() -> _Engines:
    import spacy
    import tldextract
    from presidio_analyzer import AnalyzerEngine, LocalRecognizer, RecognizerRegistry, RecognizerResult
    from presidio_analyzer.nlp_engine import SpacyNlpEngine
    from presidio_analyzer.predefined_recognizers import EmailRecognizer, IbanRecognizer, PhoneRecognizer
    from presidio_anonymizer import AnonymizerEngine
    from presidio_anonymizer.entities import OperatorConfig

    class BlankSpacyEngine(SpacyNlpEngine):
        """spaCy's rule-based multi-language tokenizer ("xx") for every language: no statistical
        model, nothing downloaded. The recognisers read the text, not the tokens, so one
        tokenizer serves all; ``spacy.blank("fr")`` alone took 10 s to build here, "xx" 0.3 s."""

        def load(self) -> None:
            tokenizer = spacy.blank("xx")
            # SpacyNlpEngine declares ``self.nlp = None`` until loaded: mypy sees None as its type.
            self.nlp = {model["lang_code"]: tokenizer for model in self.models}  # type: ignore[assignment]

    # The public-suffix list bundled with tldextract: the default would fetch it over the network.
    offline_suffixes = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)

    class OfflineEmailRecognizer(EmailRecognizer):
        def validate_result(self, pattern_text: str) -> bool:
            return bool(offline_suffixes(pattern_text.rsplit("@", 1)[-1]).suffix)

    class SpanRecognizer(LocalRecognizer):
        """A detector of this module as a Presidio recogniser."""

        def __init__(self, kind: str, detector: Callable[[str], list[_Span]], language: str) -> None:
            self.detector = detector
            super().__init__(supported_entities=[kind], supported_language=language, name=f"zol_{kind.lower()}")

        def load(self) -> None:
            pass

        def analyze(self, text: str, entities: list[str], nlp_artifacts: object = None) -> list[Any]:
            kind = self.supported_entities[0]
            return [RecognizerResult(kind, start, end, score) for start, end, score in self.detector(text)]

    registry = RecognizerRegistry(supported_languages=list(LANGUAGES))
    for language in LANGUAGES:
        registry.add_recognizer(PhoneRecognizer(supported_language=language, supported_regions=("BE", "NL")))
        registry.add_recognizer(OfflineEmailRecognizer(supported_language=language))
        registry.add_recognizer(IbanRecognizer(supported_language=language))
        for kind, detector in _DETECTORS.items():
            registry.add_recognizer(SpanRecognizer(kind, detector, language))
    nlp_engine = BlankSpacyEngine(models=[{"lang_code": lang, "model_name": "blank:xx"} for lang in LANGUAGES])
    nlp_engine.load()
    analyzer = AnalyzerEngine(registry=registry, nlp_engine=nlp_engine, supported_languages=list(LANGUAGES))
    operators = {kind: OperatorConfig("replace", {"new_value": f"[{kind}]"}) for kind in KINDS}
    return _Engines(analyzer, AnonymizerEngine(), operators, RecognizerResult)


def _engines_get() -> _Engines:
    with _engines_lock:  # one build even when the first requests arrive together
        return _engines()


def _phone_is_public(number: str) -> bool:
    import phonenumbers

    try:
        parsed = phonenumbers.parse(number, "BE")
    except phonenumbers.NumberParseException:
        return False
    return str(parsed.national_number) in PUBLIC_PHONE_NUMBERS


def _resolve(spans: Iterable[tuple[str, int, int, float]]) -> list[tuple[str, int, int]]:
    """Non-overlapping spans: higher score first, then the longer one."""
    kept: list[tuple[str, int, int]] = []
    for kind, start, end, _score in sorted(spans, key=lambda s: (-s[3], -(s[2] - s[1]), s[1])):
        if not any(s < end and start < e for _k, s, e in kept):
            kept.append((kind, start, end))
    return sorted(kept, key=lambda s: s[1])


def identifiers_find(text: str, *, language: str = "nl") -> list[Finding]:
    """Personal identifiers in ``text``, in text order, never overlapping.

    ``language``: "nl", "fr" or "en" picks the tokenizer; the recognisers themselves read all
    three languages, and any other value is treated as "nl" (a question in Turkish or Arabic
    still gets its numbers, addresses and e-mail addresses found). Adjacent address parts
    ("Kerkstraat 12, 3600 Genk") come back as one ``ADDRESS``; every further occurrence of a
    found name is a ``PERSON`` too. Raises nothing for any string; "" gives [].
    """
    if not text.strip():
        return []
    engines = _engines_get()
    language = language if language in LANGUAGES else "nl"
    results = engines.analyzer.analyze(text=text, language=language, score_threshold=0.3)
    spans = []
    for result in results:
        kind = _PRESIDIO_KINDS.get(result.entity_type, result.entity_type)
        if kind == "PHONE" and _phone_is_public(text[result.start : result.end]):
            continue
        spans.append((kind, result.start, result.end, float(result.score)))
    resolved = _resolve(spans)
    merged: list[tuple[str, int, int]] = []
    for kind, start, end in resolved:
        if merged and kind == "ADDRESS" == merged[-1][0] and re.fullmatch(r"[\s,]*", text[merged[-1][2] : start]):
            merged[-1] = (kind, merged[-1][1], end)
        else:
            merged.append((kind, start, end))
    names = {text[s:e] for kind, s, e in merged if kind == "PERSON" and e - s >= 3}
    if names:
        pattern = re.compile(
            r"(?<!\w)(?:" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")(?!\w)"
        )
        protected = _protected(text, _Tokens(text))
        for match in pattern.finditer(text):
            start, end = match.span()
            overlaps = any(s < end and start < e for _k, s, e in merged)
            if not overlaps and not any(s < end and start < e for s, e in protected):
                merged.append(("PERSON", start, end))
        merged.sort(key=lambda s: s[1])
    return [Finding(kind, start, end, text[start:end]) for kind, start, end in merged]


def identifiers_strip(text: str, *, language: str = "nl") -> tuple[str, list[str]]:
    """``text`` with every identifier replaced by ``[KIND]`` (e.g. "[PHONE]"), and the kinds.

    The kinds come one per replaced identifier in text order (["PERSON", "PHONE"]), never the
    values, so a caller can count or log them. Text outside the identifiers is unchanged. See
    ``identifiers_find`` for ``language`` and what is found; raises nothing for any string.
    """
    findings = identifiers_find(text, language=language)
    if not findings:
        return text, []
    engines = _engines_get()
    results = [engines.result_type(f.kind, f.start, f.end, 1.0) for f in findings]
    stripped = engines.anonymizer.anonymize(text=text, analyzer_results=results, operators=engines.operators)
    return str(stripped.text), [f.kind for f in findings]
