"""Site names (issue 10 item 3, metadata boosting): does the question name the hospital whose
page a candidate is?

Patients name the hospital, campus or town they mean ("parkeerticket kwijt uz gent", "tolk in
jan portaels vilvoorde", "spoed ziekenhuis geel"), and a search over the pages of several
hospitals (a hospital network, a regional portal, the 65 hospitals of ``shared/data/hospital-nl``)
should prefer that hospital's page over the same topic at another. The name is in the page's web
address: ``www.uzgent.be`` → ``uzgent``, ``www.azjanportaels.be`` → ``azjanportaels``,
``www.hartcentrumbrugge-oostende.be`` → ``hartcentrumbrugge``, ``oostende``.

A question **names** a site label when, after :func:`core.text.text_normalise`:

- a question word of at least :data:`MIN_WORD_CHARS` letters, or two or three adjacent words
  written together ("uz gent" → ``uzgent``, "st jansdal" → ``stjansdal``), equals the label; or
- such a word or joined run of at least :data:`MIN_PART_CHARS` letters begins or ends the
  label ("brugge" ends ``hartcentrumbrugge``, "janportaels" ends ``azjanportaels``, "bravis"
  begins ``bravismoederenkindcentrum``; "moeder", in its middle, does not);

and the word is not **generic**: part of a label of :data:`GENERIC_SITES` or more sites of the
index ("ziekenhuis" is part of ``antoniusziekenhuis``, ``ziekenhuisgeel``,
``mariaziekenhuis``, …; "sint" of ``sint-trudo``, ``sintmaria``, ``azsintjan``, …).

Stop words never match on their own, nor runs of stop words only. Labels are the host's dot- and hyphen-separated parts
without a leading ``www``/``www2``…, the top-level domain and parts shorter than
:data:`MIN_WORD_CHARS`. The index's labels (for the generic words) are read once per index
version (one query for the distinct hosts and hospital names), checked at most every :data:`SITES_CHECK_S` seconds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from core.text import STOPWORDS, text_normalise
from ingestion.selectors import IndexVersionedCache

if TYPE_CHECKING:
    from ingestion.models import Chunk

MIN_WORD_CHARS = 3  # "uza", "lumc", "dz" is too short to tell from an ordinary word
MIN_PART_CHARS = 6  # shorter words end labels by chance ("recht" ends "umcutrecht", "noord" starts "noorderhart")
GENERIC_SITES = 3  # a part of this many sites' labels names none of them
SITES_CHECK_S = 60.0
_WWW = re.compile(r"^www\d*$")
_WORD = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=4096)
def site_labels(url: str) -> tuple[str, ...]:
    """The name parts of ``url``'s host, normalised (lowercase, accents folded), in host order:
    ``"https://www.hartcentrumbrugge-oostende.be/x"`` → ``("hartcentrumbrugge", "oostende")``;
    ``()`` for a URL without a host (a file, an internal id) or one that does not parse (the
    ``url`` field accepts any text)."""
    try:
        host = (urlsplit(url).hostname or "") if "//" in url else ""
    except ValueError:  # "https://[::1/x": an unclosed IPv6 bracket
        return ()
    parts = host.split(".")[:-1]  # the top-level domain names no hospital
    labels: list[str] = []
    for part in parts:
        if _WWW.match(part):
            continue
        labels += [text_normalise(p) for p in part.split("-") if len(p) >= MIN_WORD_CHARS]
    return tuple(labels)


# Words of hospital names that say what the institution is, not which one: never labels on their
# own ("Zuyderland Medisch Centrum" is not named by "mijn medisch dossier").
INSTITUTION_WORDS = frozenset(
    "ziekenhuis ziekenhuizen medisch medische centrum center kliniek klinieken universitair universitaire "
    "algemeen algemene hospital hospitals hopital clinique clinic umc zorg zorggroep revalidatie "
    "kinderziekenhuis gasthuis".split()
)


@lru_cache(maxsize=4096)
def name_labels(name: str) -> tuple[str, ...]:
    """Labels of a hospital's name (``metadata["hospital"]`` of its pages, as the ``jsonl``
    connector stores it): its words of ≥ :data:`MIN_WORD_CHARS` letters that are not
    :data:`INSTITUTION_WORDS` and, when several words before any parenthesis are not, those
    written together, normalised: ``"Deventer Ziekenhuis"`` → ``("deventer",)``, ``"AZ
    Sint-Jan Brugge"`` → ``("sint", "jan", "brugge", "azsintjanbrugge")``. A page's address
    does not always carry the name patients use (``dz.nl``; Ziekenhuis Rivierenland Tiel's
    address has no "tiel"); words many hospitals share ("ziekenhuis") are generic and name
    none (:meth:`SiteMatcher.generic`). ``()`` for an empty name."""
    words = [w for w in _WORD.findall(text_normalise(name)) if len(w) >= MIN_WORD_CHARS and w not in INSTITUTION_WORDS]
    head = [w for w in _WORD.findall(text_normalise(name.split("(")[0])) if w not in INSTITUTION_WORDS]
    joined = ["".join(head)] if len(head) > 1 else []
    return tuple(dict.fromkeys(words + joined))


def own_page_site(chunk: Chunk, priorities: Mapping[str, int]) -> tuple[str, ...] | None:
    """The hospital of ``chunk`` when it is one of a hospital's own pages: its source has a
    priority above 0 in ``priorities`` (source key → priority, the frozen configuration's
    ``source_priorities``), and the hospital is the :func:`site_labels` of its address (``()``
    when the address gives none, "dz" of dz.nl). None for any other page: general medical sites'
    host names are English words questions use ("cancer", "rarediseases"). What the reranker's
    named-hospital order, the answer's same-site passages and the gate's site agreement read."""
    if priorities.get(chunk.document.source.key, 0) <= 0:
        return None
    return site_labels(chunk.document.url)


def page_labels(url: str, metadata: dict[str, object] | None = None) -> tuple[str, ...]:
    """A page's site labels: :func:`site_labels` of its address, then :func:`name_labels` of
    its hospital's name (``metadata["hospital"]``, when a string), without repeats."""
    labels = site_labels(url)
    name = (metadata or {}).get("hospital")
    if isinstance(name, str) and name.strip():
        labels = tuple(dict.fromkeys(labels + name_labels(name.strip())))
    return labels


# Belgian and Dutch towns with hospitals, as English, French and German speakers write them →
# the Dutch name the hospitals' web addresses use ("UZ Ghent" is www.uzgent.be, "Bruges" the
# "brugge" of www.hartcentrumbrugge-oostende.be). The established exonyms of the Dutch-speaking
# towns (the Belgian municipalities' official French names; the English and German forms in
# common use), written down by hand from general knowledge; one word each, normalised; none that
# is also an everyday English or French word ("Flushing" for Vlissingen is "flushing"). Towns
# whose hospitals' addresses are French (Liège, Namur, Mons) are left out: there the French
# name is the address's.
EXONYMS: dict[str, str] = {
    "ghent": "gent",
    "gand": "gent",
    "bruges": "brugge",
    "antwerp": "antwerpen",
    "anvers": "antwerpen",
    "louvain": "leuven",
    "lowen": "leuven",
    "malines": "mechelen",
    "mecheln": "mechelen",
    "courtrai": "kortrijk",
    "ypres": "ieper",
    "ostend": "oostende",
    "ostende": "oostende",
    "brussels": "brussel",
    "bruxelles": "brussel",
    "alost": "aalst",
    "termonde": "dendermonde",
    "audenarde": "oudenaarde",
    "tirlemont": "tienen",
    "tongres": "tongeren",
    "furnes": "veurne",
    "renaix": "ronse",
    "roulers": "roeselare",
    "menin": "menen",
    "vilvorde": "vilvoorde",
    "lierre": "lier",
    "nimwegen": "nijmegen",
    "nimegue": "nijmegen",
    "leyden": "leiden",
}


def question_names(question: str, language: str) -> tuple[frozenset[str], frozenset[str]]:
    """``(whole, parts)`` of ``question``: ``whole`` are the words of ≥ :data:`MIN_WORD_CHARS`
    letters and every run of two or three adjacent words written together, which match a label
    only when equal to it; ``parts`` are the members of ``whole`` of ≥ :data:`MIN_PART_CHARS`
    letters, which match when part of a label. A town's English, French or German name is read
    as its Dutch name (:data:`EXONYMS`: "UZ Ghent" → ``uzgent``). Lone stop words (of
    ``language`` and English) are in neither."""
    words = [EXONYMS.get(word, word) for word in _WORD.findall(text_normalise(question))]
    stop = STOPWORDS.get(language, set()) | STOPWORDS["en"]
    whole: set[str] = {w for w in words if len(w) >= MIN_WORD_CHARS and w not in stop}
    for n in (2, 3):
        for i in range(len(words) - n + 1):
            run = words[i : i + n]
            if any(w not in stop for w in run):  # "naar de" is not "…naarde"
                whole.add("".join(run))
    parts = {w for w in whole if len(w) >= MIN_PART_CHARS}
    return frozenset(whole), frozenset(parts)


class SiteMatcher:
    """Which candidate pages' sites one question names (:func:`question_names` of ``question``
    in ``language``; ``sites``: every site's labels in the index, :func:`index_site_labels`, for
    the generic words, looked at only for a word that is part of a candidate's label)."""

    def __init__(self, question: str, language: str, sites: tuple[tuple[str, ...], ...]) -> None:
        self.whole, self.parts = question_names(question, language)
        self.sites = sites
        self._generic: dict[str, bool] = {}

    def generic(self, part: str) -> bool:
        """True when ``part`` is part of a label of :data:`GENERIC_SITES` or more sites."""
        if part not in self._generic:
            count = sum(any(part in label for label in site) for site in self.sites)
            self._generic[part] = count >= GENERIC_SITES
        return self._generic[part]

    def names(self, labels: tuple[str, ...]) -> bool:
        """True when the question names one of ``labels`` (:func:`site_labels` or
        :func:`page_labels` of a page)."""
        for label in labels:
            if label in self.whole and not self.generic(label):
                return True
            for part in self.parts:
                ends = label.startswith(part) or label.endswith(part)
                if ends and len(part) < len(label) and not self.generic(part):
                    return True
        return False


def _index_site_labels_read() -> tuple[tuple[str, ...], ...]:
    """One label tuple per hospital: hosts and names that occur together on a page are one
    hospital (connected components), so a hospital with three hosts (Maastricht UMC+) or two
    names counts once when :meth:`SiteMatcher.generic` counts sites."""
    from ingestion.selectors import document_host_names

    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    pairs = document_host_names()
    for host, name in pairs:
        if name:
            parent[find("h:" + host)] = find("n:" + name)
        else:
            find("h:" + host)
    groups: dict[str, list[str]] = {}
    for host, name in pairs:
        labels = groups.setdefault(find("h:" + host), [])
        labels += page_labels(f"https://{host}/", {"hospital": name})
    return tuple(sorted({tuple(dict.fromkeys(labels)) for labels in groups.values()} - {()}))


_SITES: IndexVersionedCache[tuple[tuple[str, ...], ...]] = IndexVersionedCache(
    _index_site_labels_read, empty=(), check_s=SITES_CHECK_S
)


def index_site_labels() -> tuple[tuple[str, ...], ...]:
    """Each distinct host and hospital name's :func:`page_labels` in the index (one query for the index version
    every :data:`SITES_CHECK_S` s, one for the hosts when it changed)."""
    return _SITES.get()


def index_sites_clear() -> None:
    """Forget the index's site labels (read again on next use)."""
    _SITES.clear()
