"""Reads of ingested content that other layers need (the pipeline freezes them per request)."""

from __future__ import annotations

import re
import threading
import time
import unicodedata
from collections.abc import Callable

from django.db import connection
from django.db.models import CharField, F, Func, Value
from django.db.models.fields.json import KeyTextTransform, KeyTransform

from ingestion.models import Chunk, Document, Source


def source_priorities() -> dict[str, int]:
    """``{source key: priority}`` (0–10) of every source with a priority above 0 (one query)."""
    return dict(Source.objects.filter(priority__gt=0).values_list("key", "priority"))


# The index version as SQL (one text column), for a caller that reads it inside a larger statement
# (the semantic cache's look-up, zolsearch.search.selectors.cache_lookup).
INDEX_VERSION_SQL = f"SELECT COALESCE(MAX(id), 0)::text AS version FROM {Chunk._meta.db_table}"


def index_version() -> str:
    """A value that changes whenever the indexed content changes: the highest chunk id as text
    (chunks are only ever replaced, never edited, so every ingestion that changes a document
    creates new ids). One index-only query (:data:`INDEX_VERSION_SQL`). ``"0"`` for an empty
    index."""
    with connection.cursor() as cursor:
        cursor.execute(INDEX_VERSION_SQL)
        return str(cursor.fetchone()[0])


class IndexVersionedCache[T]:
    """A value derived from the indexed content, held per process: ``read()`` again when
    :func:`index_version` changed, which is looked up at most every ``check_s`` seconds (a new
    ingestion is seen within that time). ``empty``: the value before the first read and after
    :meth:`clear`. Thread-safe (gunicorn threads share it); ``read`` runs under the lock, once.
    Used by focus linking's MedQuAD lexicon and the reranker's site labels."""

    def __init__(self, read: Callable[[], T], *, empty: T, check_s: float) -> None:
        self._read, self._empty, self._check_s = read, empty, check_s
        self._lock = threading.Lock()
        self._value: T = empty
        self._version = ""
        self._checked = float("-inf")

    def get(self) -> T:
        """The value for the current index (one query for the index version every ``check_s``
        seconds, plus ``read``'s when it changed)."""
        now = time.monotonic()
        with self._lock:
            if now - self._checked < self._check_s:
                return self._value
            self._checked = now
            version = index_version()
            if version != self._version:
                self._value, self._version = self._read(), version
            return self._value

    def clear(self) -> None:
        """Forget the value: the next :meth:`get` reads it again."""
        with self._lock:
            self._value, self._version, self._checked = self._empty, "", float("-inf")


# A chunk's text cut at white space in PostgreSQL (the one split that does not depend on the
# database's character classes: under LC_CTYPE=C, [:alpha:] is ASCII and would cut "patiënten"),
# the tokens counted there; each token is cut into words in Python (Unicode letters).
_CHUNK_TOKENS_SQL = (
    f"SELECT token, count(*) FROM {Chunk._meta.db_table}, regexp_split_to_table(text, '\\s+') AS token "
    "WHERE language = %s AND token <> '' GROUP BY token"
)
_LETTERS = re.compile(r"[^\W\d_]+")


def chunk_word_counts(language: str, *, min_chars: int) -> dict[str, int]:
    """Word → occurrences in the text of the chunks in ``language``, for the words (runs of
    Unicode letters, lower-cased, in Unicode NFC, as written: accents kept, "röntgenfoto") of at least
    ``min_chars`` letters. One query, the text cut at white space and counted in PostgreSQL
    (0.1 s for the 100 hospital-nl pages and the SAMPLE hospital's, 2026-11-29); ``{}`` when no
    chunk is in ``language``. Raises Django's ``DatabaseError`` when the query fails."""
    counts: dict[str, int] = {}
    with connection.cursor() as cursor:
        cursor.execute(_CHUNK_TOKENS_SQL, [language])
        for token, n in cursor.fetchall():
            for word in _words(token, min_chars=min_chars):
                counts[word] = counts.get(word, 0) + int(n)
    return counts


def _words(text: str, *, min_chars: int) -> list[str]:
    """The runs of Unicode letters of ``text`` in Unicode NFC, lower-cased, of at least
    ``min_chars`` letters, in order."""
    return [w for w in _LETTERS.findall(unicodedata.normalize("NFC", text).lower()) if len(w) >= min_chars]


def heading_words(language: str, *, min_chars: int) -> frozenset[str]:
    """The words of the titles of the documents in ``language`` and of the headings of their
    chunks in it (runs of Unicode letters, lower-cased, in Unicode NFC, as
    :func:`chunk_word_counts` reads them) of at least ``min_chars`` letters: what the pages are
    about, not what they mention in passing. Two queries of distinct strings (the 100
    hospital-nl pages: 92 titles, no headings, 152 words of four letters or more); empty when nothing is in ``language``. Raises
    Django's ``DatabaseError`` when a query fails."""
    titles = Document.objects.filter(language=language).order_by().values_list("title", flat=True).distinct()
    headings = Chunk.objects.filter(language=language).order_by().values_list("heading", flat=True).distinct()
    return frozenset(word for text in (*titles, *headings) for word in _words(text or "", min_chars=min_chars))


def document_host_names() -> list[tuple[str, str]]:
    """The distinct ``(host, hospital name)`` pairs of the documents with a web address, sorted:
    the host is the third ``/``-separated part of ``scheme://host/...``, the name
    ``metadata["hospital"]`` ("" without one or when it is not a JSON string). One query."""
    host = Func(F("url"), Value("/"), Value(3), function="split_part", output_field=CharField())
    name = KeyTextTransform("hospital", "metadata")
    kind = Func(KeyTransform("hospital", "metadata"), function="jsonb_typeof", output_field=CharField())
    rows = Document.objects.filter(url__contains="//").annotate(host=host, hospital=name, kind=kind)
    pairs = rows.values_list("host", "hospital", "kind").distinct()
    return sorted({(h, n if k == "string" else "") for h, n, k in pairs if h})
