"""Text utilities every app shares: normalisation, sentence splitting and stemmed terms.

The sentence splitter is a regular expression with abbreviation protection instead of pysbd:
pysbd took 0.1 s for one 5.6 kB MedQuAD page here (≈ 4.5 minutes for the corpus) and split
the Dutch "Dr. Janssens" after "Dr.". Stemming uses the Snowball stemmers (snowballstemmer).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache

import snowballstemmer

# Abbreviations that end in a period but do not end a sentence (Dutch and English).
_ABBREVIATIONS = {
    "dr",
    "drs",
    "prof",
    "mr",
    "mrs",
    "ms",
    "st",
    "vs",
    "etc",
    "e.g",
    "i.e",
    "fig",
    "no",
    "nr",
    "bv",
    "b.v",
    "o.a",
    "a.u.b",
    "d.w.z",
    "m.a.w",
    "enz",
    "evt",
    "ca",
    "tel",
    "max",
    "min",
    "approx",
    "dept",
    "jr",
    "sr",
    "inc",
    "ltd",
    "co",
    "resp",
    "incl",
    "excl",
    "z.g.a",
    "p",
    "pp",
}
# The closing quotes and brackets after a full stop belong to the sentence before the boundary
# (group "close"); the boundary itself is the whitespace after them.
_BOUNDARY = re.compile(r"(?<=[.!?])(?P<close>[\"')\]]*)\s+(?=[\"'(\[]?[A-Z0-9À-Ý])|\n\s*\n|(?<=:)\s*\n")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Initials and dotted abbreviations of two or more letters without spaces ("J.B." of "J.B.
# Stessensstraat", "A.Z.", "U.S."): the period after their last letter ends no sentence. A lone
# capital ("hepatitis B. The …", "vitamine D.") still does: it ends medical sentences too often.
_DOTTED_LETTERS = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")

STOPWORDS = {
    "en": set(
        "a an and are as at be by can do does for from how i if in is it my of on or the to what "
        "when where which who why will with you your this that these those there their about".split()
    ),
    "nl": set(
        "de het een en van in is op te dat die voor met zijn er aan om wat hoe wie waar wanneer "
        "welke ik mijn je jij u uw we wij kan kunnen moet niet ook als bij naar of dan door".split()
    ),
}
# The Snowball project's stop word lists (snowballstem.org/algorithms/<language>/stop.txt), which
# are also ParadeDB's ``stopwords_language`` filters (tests/search/test_retrieval.py checks that
# pg_search's tokenizer removes exactly these words). Used to drop function words from a BM25
# query (zolsearch.search.selectors.chunks_lexical_search): the index holds mostly English
# MedQuAD text, so a Dutch or French function word is rare in it and its IDF is high.
BM25_STOPWORDS: dict[str, frozenset[str]] = {
    "nl": frozenset(
        "aan al alles als altijd andere ben bij daar dan dat de der deze die dit doch doen door dus een "
        "eens en er ge geen geweest haar had heb hebben heeft hem het hier hij hoe hun iemand iets ik in "
        "is ja je kan kon kunnen maar me meer men met mij mijn moet na naar niet niets nog nu of om omdat "
        "onder ons ook op over reeds te tegen toch toen tot u uit uw van veel voor want waren was wat werd "
        "wezen wie wil worden wordt zal ze zelf zich zij zijn zo zonder zou".split()
    ),
    "en": frozenset(
        "a an and are as at be but by for if in into is it no not of on or such that the their then "
        "there these they this to was will with".split()
    ),
    "fr": frozenset(
        "ai aie ait au auraient aurait auront aux avaient avais avait avec avons ayant ce ceci cela ces "
        "cet cette dans de des du elle en es et eu eux il ils je la le les leur leurs lui ma mais me mes "
        "moi mon même ne nos notre nous on ont ou par pas pour que quel quelle quelles quels qui sa sans "
        "se sera seraient serait seront ses soi soit sont suis sur ta te tes toi ton tu un une vos votre "
        "vous y à étaient étais était étant".split()
    ),
}
_SNOWBALL = {"nl": "dutch", "en": "english", "fr": "french", "de": "german", "tr": "turkish", "ro": "romanian"}


def abbreviation_ends(text: str) -> bool:
    """True when ``text`` ends with one of the abbreviations that end in a period without ending
    a sentence ("Is Dr.", "bv.", "o.a."; the same list :func:`sentences_split` keeps intact), or
    with dotted initials of two or more letters ("via J.B.")."""
    words = text.rstrip(".!?\"')] ").split()
    if not words or not text.rstrip().rstrip("\"')]").endswith("."):
        return False
    return words[-1].lower() in _ABBREVIATIONS or _DOTTED_LETTERS.fullmatch(words[-1]) is not None


def sentences_split(text: str) -> list[str]:
    """Split ``text`` into sentences, keeping abbreviations ("Dr.", "o.a.", "e.g.") intact.

    Returns stripped, non-empty sentences in order, whitespace runs made one space; their
    concatenation holds every non-whitespace character of the input, in order (closing quotes
    and brackets after a full stop stay with their sentence). Never raises. A boundary is ``.``/``!``/``?`` followed by whitespace and a capital or digit, a
    blank line, or a colon at a line end.
    """
    pieces: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        end = match.end("close") if match.group("close") is not None else match.start()
        candidate = text[start:end]
        if abbreviation_ends(candidate):
            continue
        pieces.append(candidate)
        start = match.end()
    pieces.append(text[start:])
    return [" ".join(piece.split()) for piece in pieces if piece.strip()]


@lru_cache(maxsize=16)
def _stemmer(language: str) -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer(_SNOWBALL.get(language, "english"))


_stem_lock = threading.Lock()


@lru_cache(maxsize=200_000)
def _stem(language: str, word: str) -> str:
    # Snowball in pure Python costs ~20 µs a word; answers reuse the same words all the time.
    # The stemmer object keeps state between calls (current, cursor, limit): one at a time.
    with _stem_lock:
        return _stemmer(language).stemWord(word)


def words_stem(words: list[str], *, language: str) -> list[str]:
    """Snowball stems of already lower-cased ``words`` in ``language`` (ISO 639-1), every word
    kept, order kept (through the shared per-word cache)."""
    return [_stem(language, word) for word in words]


def terms_stem(text: str, *, language: str) -> list[str]:
    """Lower-cased Snowball stems of the words of ``text``, stopwords removed, order kept."""
    return [_stem(language, word) for word in _content_words(text, language)]


def terms_stem_set(text: str, *, language: str) -> frozenset[str]:
    """The set of :func:`terms_stem` of ``text``, stemming each distinct word once (a chunk of
    300 words has about 150 distinct ones; the reranker's coverage features only need the set)."""
    return frozenset(_stem(language, word) for word in set(_content_words(text, language)))


# Stem sets of texts that recur across requests (candidate chunks' texts, titles and heads), by
# (text, language), least recently used evicted. A chunk text's set holds about 100 stems (a
# 100-element frozenset takes 8.4 KB; the stems themselves are shared with the per-word cache),
# titles and heads far fewer: at most about 35 MB for 4,096 sets, plus the texts held as keys.
# The reranker asks for three a candidate, about 60 a request: about 1 ms of CPU a request that
# a popular page no longer pays (docs/BENCHMARKS.md, "Stem sets held per process").
STEM_SET_CACHE_SIZE = 4096


@lru_cache(maxsize=STEM_SET_CACHE_SIZE)
def terms_stem_set_held(text: str, language: str) -> frozenset[str]:
    """:func:`terms_stem_set` of ``text`` in ``language`` (ISO 639-1), kept per process for texts
    that recur (a chunk's text, head and title): the last :data:`STEM_SET_CACHE_SIZE` distinct
    ``(text, language)`` pairs asked for, least recently used dropped first. The same (immutable)
    set object is returned to every caller and thread, equal to the computed one. Positional
    arguments: ``functools.lru_cache`` keys ``f(t, l)`` and ``f(t, language=l)`` apart, so one
    calling form keeps one entry a text. Use :func:`terms_stem_set` for one-off texts (a
    question, a draft), which would only evict. Never raises for a ``str``."""
    return terms_stem_set(text, language=language)


def _content_words(text: str, language: str) -> list[str]:
    """Lower-cased words of ``text`` of 2 or more characters that are not stop words of
    ``language`` (English ones for a language without a list), in order."""
    stop = STOPWORDS.get(language, STOPWORDS["en"])
    return [word for word in _WORD.findall(text.lower()) if word not in stop and len(word) > 1]


# --- normalisation (aliases, SNOMED terms, the resolver, entity recall) ---
_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)

# The same folding in SQL (PostgreSQL's translate(), since the embedded server has no unaccent):
# used by the RF2 importer so database and Python agree on every normalised term.
ACCENTED = "áàâäãåéèêëíìîïóòôöõúùûüýÿçñ"
PLAIN = "aaaaaaeeeeiiiiooooouuuuyycn"


def text_normalise(text: str) -> str:
    """Lower case, accents folded (é → e), every run of non-word characters → one space.

    ``"Hart-falen, acuut (Links)"`` → ``"hart falen acuut links"``. Idempotent.
    """
    folded = unicodedata.normalize("NFKD", text.lower())
    if not folded.isascii():
        # Only runs of non-ASCII characters can hold combining marks: a Python call per character
        # of those runs, not of the whole text (a MedQuAD chunk is ASCII, a Dutch page mostly).
        folded = _NON_ASCII.sub(_drop_combining, folded)
    return _NON_WORD.sub(" ", folded).replace("_", " ").strip()


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _drop_combining(match: re.Match[str]) -> str:
    """A run of non-ASCII characters without its combining marks (``unicodedata.combining``)."""
    return "".join(ch for ch in match.group() if not unicodedata.combining(ch))


def sql_normalise(column: str) -> str:
    """SQL expression equal to :func:`text_normalise` for the characters RF2 terms use."""
    return f"btrim(regexp_replace(translate(lower({column}), '{ACCENTED}', '{PLAIN}'), '[^[:alnum:]]+', ' ', 'g'))"


# --- token estimates (chunk budgets, the judge's context budget) ---
_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def tokens_estimate(text: str) -> int:
    """Estimated tokens of ``text`` (≥ 0): words plus punctuation marks, each counted once
    (``"Holmes-Adie syndrome."`` → 5). Needs no tokenizer file, so it works offline.

    Units are words, not sub-word tokens: measured on 500 MedQuAD answers of
    ``data/medquad-slice``, multilingual-e5's SentencePiece tokenizer gives 1.31 tokens per
    estimated token and ⌈characters / 4⌉ (OpenAI's rule of thumb) 1.40, so callers with a hard
    sub-word limit leave that margin.
    """
    return len(_TOKEN.findall(text))


def tokens_truncate(text: str, *, tokens: int) -> str:
    """The longest prefix of ``text`` with at most ``tokens`` estimated tokens
    (:func:`tokens_estimate`), cut after a whole word where possible, trailing space removed.
    ``""`` when ``tokens`` < 1."""
    if tokens < 1:
        return ""
    ends = [match.end() for _, match in zip(range(tokens + 1), _TOKEN.finditer(text), strict=False)]
    if len(ends) <= tokens:
        return text.rstrip()
    cut = text[: ends[tokens - 1]]
    if not text[ends[tokens - 1]].isspace():  # e.g. "Holmes-|Adie": back off to the last space
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip()
