"""Language detection of short texts (questions, pages) with lingua, offline."""

from __future__ import annotations

from functools import lru_cache

from lingua import Language, LanguageDetector, LanguageDetectorBuilder

# The languages of the hospital's region and its patients.
LANGUAGES = (
    Language.DUTCH,
    Language.ENGLISH,
    Language.FRENCH,
    Language.GERMAN,
    Language.TURKISH,
    Language.ROMANIAN,
    Language.ARABIC,
    Language.SPANISH,
    Language.POLISH,
    Language.ITALIAN,
)


@lru_cache(maxsize=1)
def _language_detector() -> LanguageDetector:
    return LanguageDetectorBuilder.from_languages(*LANGUAGES).with_preloaded_language_models().build()


def language_detect(text: str, *, default: str) -> str:
    """ISO 639-1 code (lower case, e.g. ``"nl"``) of ``text`` by lingua among :data:`LANGUAGES`,
    else ``default`` when lingua cannot decide (empty or ambiguous text)."""
    detected = _language_detector().detect_language_of(text)
    return detected.iso_code_639_1.name.lower() if detected else default
