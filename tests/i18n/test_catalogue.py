"""The Dutch catalogue of the admin (``locale/nl/LC_MESSAGES``): complete, not fuzzy, compiled,
and covering every label of the models, fields, choices and admin actions of the project's apps.

Regenerate after changing a label (from the project root)::

    manage.py makemessages -l nl --no-location --no-obsolete --ignore "zolsearch/web/*" \
        --ignore "tests/*" --ignore "benchmarks/*" --ignore "staticfiles/*" --ignore "data/*" \
        --ignore "deploy/*" --ignore "docs/*" --ignore "locale/*"
    msgfmt --check -o locale/nl/LC_MESSAGES/django.mo locale/nl/LC_MESSAGES/django.po
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polib  # type: ignore[import-untyped]
import pytest
from django.apps import apps
from django.contrib import admin
from django.utils import translation

BASE_DIR = Path(__file__).resolve().parent.parent.parent
PO = BASE_DIR / "locale" / "nl" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")
# The apps whose admin is translated here (the patient page, zolsearch.web, has its own catalogue).
APP_LABELS = ("ingestion", "taxonomy", "evaluation", "review", "monitoring", "search", "access")


@pytest.fixture(scope="module")
def catalogue() -> polib.POFile:
    return polib.pofile(str(PO))


def test_every_message_is_translated_and_none_is_fuzzy(catalogue: polib.POFile) -> None:
    assert len(catalogue) > 700
    assert [e.msgid for e in catalogue.untranslated_entries()] == []
    assert [e.msgid for e in catalogue.fuzzy_entries()] == []
    assert [e.msgid for e in catalogue.obsolete_entries()] == []
    assert not catalogue.metadata_is_fuzzy


def test_placeholders_survive_translation(catalogue: polib.POFile) -> None:
    """GIVEN every python-format message WHEN its translation is read THEN it names the same
    %(name)s placeholders (a missing one would raise KeyError in the admin at run time)."""
    import re

    names = re.compile(r"%\((\w+)\)")
    for entry in catalogue.translated_entries():
        if "python-format" not in entry.flags:
            continue
        if entry.msgid_plural:
            pairs = [(entry.msgid, entry.msgstr_plural[0]), (entry.msgid_plural, entry.msgstr_plural[1])]
        else:
            pairs = [(entry.msgid, entry.msgstr)]
        for source, translated in pairs:
            assert set(names.findall(source)) == set(names.findall(translated)), source


def test_the_compiled_catalogue_matches_the_po_file(catalogue: polib.POFile) -> None:
    """The committed .mo (what Django reads; nothing compiles at run time) holds exactly the
    translations of the .po."""
    compiled = {(e.msgctxt, e.msgid): (e.msgstr, e.msgstr_plural) for e in polib.mofile(str(MO)) if e.msgid}
    source = {(e.msgctxt, e.msgid): (e.msgstr, e.msgstr_plural) for e in catalogue.translated_entries()}
    assert compiled == source


def _labels() -> Iterator[tuple[str, Any]]:
    """(where, lazy label) for every model, field, help text and choice of APP_LABELS, and every
    action, display column and list filter title of their ModelAdmins."""
    for label in APP_LABELS:
        config = apps.get_app_config(label)
        yield f"{label} app", config.verbose_name
        for model in config.get_models():
            name = model._meta.label
            yield name, model._meta.verbose_name
            yield name, model._meta.verbose_name_plural
            fields: list[Any] = list(model._meta.get_fields(include_hidden=False))
            for field in fields:
                if not hasattr(field, "verbose_name") or field.auto_created:
                    continue
                yield f"{name}.{field.name}", field.verbose_name
                if field.help_text:
                    yield f"{name}.{field.name} help", field.help_text
                for _value, choice in getattr(field, "flatchoices", None) or []:
                    yield f"{name}.{field.name} choice", choice
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label not in APP_LABELS:
            continue
        name = type(model_admin).__name__
        for action_name in model_admin.actions or ():
            func = getattr(model_admin, str(action_name))
            yield f"{name} action {action_name}", getattr(func, "short_description", action_name)
        for column in model_admin.list_display:
            func = getattr(model_admin, column, None) if isinstance(column, str) else column
            if func is not None and hasattr(func, "short_description"):
                yield f"{name} column {column}", func.short_description
        for list_filter in model_admin.list_filter:
            if isinstance(list_filter, type) and hasattr(list_filter, "title"):
                yield f"{name} filter {list_filter.__name__}", list_filter.title


def test_every_admin_label_is_in_the_catalogue(catalogue: polib.POFile) -> None:
    """GIVEN every label the admin shows for the project's models (apps, models, fields, help
    texts, choices, actions, columns, filters) WHEN read in English (the msgids) THEN each one
    has a Dutch translation: none was left unmarked or untranslated."""
    translated = {e.msgid for e in catalogue.translated_entries()}
    technical = {"NDCG@5", "MRR", "P@5", "R@5", "id"}  # the same in Dutch
    with translation.override("en"):
        missing = sorted({f"{where}: {text!s}" for where, text in _labels() if str(text) not in translated | technical})
    assert missing == []


def test_dutch_labels_come_from_the_catalogue() -> None:
    """Belgian Dutch falls back to the nl catalogue; English stays the msgid."""
    from evaluation.models import GoldenSet

    with translation.override("nl-be"):
        assert str(GoldenSet._meta.verbose_name_plural) == "referentiesets"
        assert str(GoldenSet._meta.get_field("frozen").help_text) == (
            "Gebruikt door een run: wijzigingen maken een nieuwe versie."
        )
    with translation.override("en"):
        assert str(GoldenSet._meta.verbose_name_plural) == "golden sets"
