"""Normalisation shared by aliases, SNOMED terms and the resolver's queries."""

from __future__ import annotations

import re
import unicodedata

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
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return _NON_WORD.sub(" ", folded).replace("_", " ").strip()


def sql_normalise(column: str) -> str:
    """SQL expression equal to :func:`text_normalise` for the characters RF2 terms use."""
    return f"btrim(regexp_replace(translate(lower({column}), '{ACCENTED}', '{PLAIN}'), '[^[:alnum:]]+', ' ', 'g'))"
