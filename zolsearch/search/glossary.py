"""Dictionary-based query translation of the hospital's practical vocabulary (cross-language
information retrieval with a bilingual dictionary: Ballesteros & Croft, SIGIR 1997).

The hospital's own pages are Dutch; a patient may ask in English or French ("can I get an
interpreter", "heures de visite"). Dense retrieval is cross-lingual, BM25 and the reranker's
term features are not: an English question shares no word with a Dutch page about *tolken*.
``data/understanding/glossary.jsonl`` lists the practical topics of a hospital's patient pages
(visiting, parking, interpreters, complaints, invoices, medical records, admission, …), each
with the Dutch words its pages use and the English and French words a patient would type. A
question in one of the glossary's languages other than Dutch that names a topic is also
searched with the topic's Dutch words (:class:`zolsearch.search.stages.understand.QueryUnderstandingStage`,
flag ``glossary_enabled``, only when the question wants the hospital's own pages: its source
authority share ≥ ``glossary_min_authority``). Medical terms are not in it: MedQuAD is English,
and Dutch names of conditions go through focus linking.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from django.conf import settings

from core.text import STOPWORDS, text_normalise

GLOSSARY_FILE = Path("understanding") / "glossary.jsonl"
TARGET_LANGUAGE = "nl"  # the language of the hospital's own pages


@dataclass(frozen=True)
class GlossaryTopic:
    """One practical topic: ``dutch`` words its pages use (searched as written) and, per source
    language, the normalised phrases (:func:`core.text.text_normalise`) that name it."""

    topic: str
    dutch: tuple[str, ...]
    phrases: dict[str, tuple[str, ...]]


@lru_cache(maxsize=1)
def glossary_topics() -> tuple[GlossaryTopic, ...]:
    """The glossary (``data/understanding/glossary.jsonl``), in file order, read once per process.

    Raises ``FileNotFoundError`` when it is missing and ``ValueError`` for a row without Dutch
    words or without any phrase."""
    path = Path(settings.BASE_DIR) / "data" / GLOSSARY_FILE
    topics = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        dutch = tuple(row.get(TARGET_LANGUAGE) or ())
        phrases = {
            language: tuple(p for p in (text_normalise(t) for t in terms) if p)
            for language, terms in row.items()
            if language not in {"topic", TARGET_LANGUAGE}
        }
        if not dutch or not any(phrases.values()):
            raise ValueError(f"{path}:{number}: a topic needs Dutch words and at least one phrase")
        topics.append(GlossaryTopic(topic=row.get("topic", ""), dutch=dutch, phrases=phrases))
    return tuple(topics)


def glossary_translate(question: str, *, language: str, limit: int = 12) -> list[str]:
    """The Dutch words of every glossary topic ``question`` names in ``language`` (whole words
    after :func:`core.text.text_normalise`: "visit" is not in "visitation"), topics in file
    order, each word once, at most ``limit``, without words the question already has. ``[]``
    for Dutch or a language the glossary does not list."""
    if language == TARGET_LANGUAGE:
        return []
    said = f" {text_normalise(question)} "
    words: list[str] = []
    seen: set[str] = set()
    for topic in glossary_topics():
        if not any(f" {phrase} " in said for phrase in topic.phrases.get(language, ())):
            continue
        for word in topic.dutch:
            key = text_normalise(word)
            if key not in seen and f" {key} " not in said:
                seen.add(key)
                words.append(word)
    return words[:limit]


# --- Dutch medical words in English -------------------------------------------------------------

MEDICAL_FILE = Path("understanding") / "medical-nl-en.jsonl"
COGNATE_MIN_CHARS = 7  # shorter Dutch words are too often ordinary words that merely end alike
# Dutch → English spelling of medical (Greek/Latin) words, ordered: the first suffix that fits
# is rewritten ("kardiomyopathie" → "cardiomyopathy", "rabdomyosarcoom" → "rabdomyosarcoma",
# "fibrose" → "fibrosis"). Standard correspondences of the two languages' medical vocabularies.
_COGNATE_SUFFIXES = (
    ("oom", "oma"),
    ("oide", "oid"),
    ("psie", "psy"),
    ("pathie", "pathy"),
    ("trofie", "trophy"),
    ("logie", "logy"),
    ("scopie", "scopy"),
    ("skopie", "scopy"),
    ("tomie", "tomy"),
    ("plastie", "plasty"),
    ("fie", "phy"),
    ("emie", "emia"),
    ("urie", "uria"),
    ("tie", "tion"),
    ("ie", "ia"),
    ("ose", "osis"),
    ("isch", "ic"),
    ("ische", "ic"),
    ("euze", "ous"),
    ("eus", "ous"),
    ("iteit", "ity"),
)
_K_BEFORE = re.compile(r"k(?=[aoulr])")
_VAN = re.compile(r"\b(ziekte|syndroom) van (\w+)")


@lru_cache(maxsize=1)
def medical_dictionary() -> tuple[dict[str, tuple[str, ...]], int]:
    """``(normalised Dutch word or phrase → its English renderings, most usual first; longest
    Dutch phrase in words)`` from ``data/understanding/medical-nl-en.jsonl`` (rows
    ``{"nl": "erfelijk", "en": ["inherited", "hereditary", "genetic"]}``), read once per process.
    Raises ``FileNotFoundError`` when it is missing and ``ValueError`` for a row without both
    sides."""
    path = Path(settings.BASE_DIR) / "data" / MEDICAL_FILE
    entries: dict[str, tuple[str, ...]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        dutch = text_normalise(row.get("nl", ""))
        english = tuple(str(e).strip() for e in row.get("en") or () if str(e).strip())
        if not dutch or not english:
            raise ValueError(f"{path}:{number}: a row needs 'nl' and a list 'en'")
        entries[dutch] = english
    return entries, max((len(k.split()) for k in entries), default=1)


def _compound(word: str, entries: dict[str, tuple[str, ...]], depth: int = 0) -> str | None:
    """English of a Dutch compound whose parts are all in ``entries`` ("galwegkanker" → "bile duct
    cancer"; a linking "s" or "e" between parts is allowed), longest first part first; None
    when it does not split."""
    if word in entries:
        return entries[word][0]
    if depth >= 2:
        return None
    for cut in range(len(word) - 3, 2, -1):
        head, rest = word[:cut], word[cut:]
        if head not in entries:
            continue
        for tail in (rest, rest[1:] if rest[:1] in {"s", "e"} else None):
            if tail and len(tail) >= 3:
                english = _compound(tail, entries, depth + 1)
                if english:
                    return f"{entries[head][0]} {english}"
    return None


def _cognate(word: str) -> str | None:
    """English spelling of a long Dutch medical word by its suffix (:data:`_COGNATE_SUFFIXES`)
    and c for k before a, o, u, l, r; None when no suffix fits."""
    if len(word) < COGNATE_MIN_CHARS:
        return None
    for dutch, english in _COGNATE_SUFFIXES:
        if word.endswith(dutch):
            return _K_BEFORE.sub("c", word[: len(word) - len(dutch)] + english)
    return None


def medical_english(question: str) -> list[str]:
    """The English of the Dutch medical words of ``question``, in order, each once: dictionary
    phrases (longest first, up to its longest phrase), "ziekte/syndroom van X" → "X disease/
    syndrome", compounds of dictionary words, and long words by their cognate spelling (see
    :func:`_cognate`). Words it cannot translate are left out (a word the dictionary has in both
    languages, "diabetes", is kept). ``[]`` when nothing translates.

    A word's renderings come as one string ("inherited hereditary genetic"), a compound's as the
    first rendering of each part ("galwegkanker" → "bile duct cancer").
    ``"harige cel leukemie, is dat erfelijk?"`` → ``["hairy", "cell", "leukemia", "inherited
    hereditary genetic"]``."""
    entries, longest = medical_dictionary()
    text = text_normalise(question)
    names = {m.group(2) for m in _VAN.finditer(text)}
    text = _VAN.sub(lambda m: f"{m.group(2)} {'disease' if m.group(1) == 'ziekte' else 'syndrome'}", text)
    words = text.split()
    out: list[str] = []
    n = 0
    while n < len(words):
        for size in range(min(longest, len(words) - n), 0, -1):
            phrase = " ".join(words[n : n + size])
            if size > 1 and phrase in entries:
                english = " ".join(entries[phrase])
                break
        else:
            size, word = 1, words[n]
            if word in names or word in {"disease", "syndrome"} or (len(word) <= 2 and word not in STOPWORDS["nl"]):
                english = word  # a name, "x" of "fragiel x", "2" of "type 2"
            elif word in STOPWORDS["nl"]:
                english = None
            elif word in entries:
                english = " ".join(entries[word])
            else:
                english = _compound(word, entries) or _cognate(word)
        n += size
        if english and english not in out:
            out.append(english)
    return out
