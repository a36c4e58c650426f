"""Writes of the taxonomy app."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from core.text import text_normalise
from taxonomy import sample
from taxonomy.models import (
    SYNONYM,
    Alias,
    AliasOrigin,
    BodySiteDepartment,
    Entity,
    EntityType,
    Predicate,
    Provenance,
    Relation,
    ReviewState,
    SnomedDescription,
)


def _entity(slug: str, **fields: object) -> Entity:
    entity, _ = Entity.objects.update_or_create(slug=slug, defaults={**fields, "is_sample": True})
    return entity


def _relate(subject: Entity, predicate: str, obj: Entity) -> None:
    relation = Relation(subject=subject, predicate=predicate, object=obj, provenance=Provenance.IMPORT)
    if not Relation.objects.filter(subject=subject, predicate=predicate, object=obj).exists():
        relation.full_clean()
        relation.save()


@transaction.atomic
def sample_hospital_load() -> dict[str, int]:
    """Load (or refresh) the invented SAMPLE hospital; idempotent. Returns counts per kind."""
    entities: dict[str, Entity] = {}
    for slug, name, name_en, address in sample.CAMPUSES:
        entities[slug] = _entity(slug, type=EntityType.CAMPUS, name=name, names={"en": name_en}, description=address)
    for slug, name, name_en, phone, description in sample.DEPARTMENTS:
        entities[slug] = _entity(
            slug,
            type=EntityType.DEPARTMENT,
            name=name,
            names={"en": name_en},
            phone=phone,
            description=description,
            url=sample.department_url(slug),
        )
    for slug, *_rest in sample.DEPARTMENTS:
        _relate(entities[slug], Predicate.LOCATED_AT, entities[sample.department_campus(slug)])
    for slug, name, departments, campus in sample.DOCTORS:
        entities[slug] = _entity(slug, type=EntityType.DOCTOR, name=name)
        for department in departments:
            _relate(entities[slug], Predicate.WORKS_IN, entities[department])
        _relate(entities[slug], Predicate.WORKS_IN, entities[campus])
    for slug, name, name_en, concept, departments in sample.CONDITIONS:
        entities[slug] = _entity(
            slug, type=EntityType.CONDITION, name=name, names={"en": name_en}, snomed_concept_id=concept
        )
        for department in departments:
            _relate(entities[department], Predicate.TREATS, entities[slug])
    for slug, name, name_en, treatment_concept, department in sample.TREATMENTS:
        entities[slug] = _entity(
            slug, type=EntityType.TREATMENT, name=name, names={"en": name_en}, snomed_concept_id=treatment_concept
        )
        _relate(entities[department], Predicate.OFFERS, entities[slug])
    for text, slug, language in sample.ALIASES:
        Alias.objects.get_or_create(
            entity=entities[slug],
            text=text,
            language=language,
            defaults={
                "origin": AliasOrigin.IMPORT,
                "review_state": ReviewState.APPROVED,
                "reviewed_at": timezone.now(),
            },
        )
    for concept, label, department in sample.BODY_SITES:
        BodySiteDepartment.objects.get_or_create(
            body_site_concept_id=concept, department=entities[department], defaults={"label": label}
        )
    return {
        "entities": Entity.objects.filter(is_sample=True).count(),
        "relations": Relation.objects.count(),
        "aliases": Alias.objects.count(),
        "body_sites": BodySiteDepartment.objects.count(),
    }


@transaction.atomic
def snomed_aliases_propose(*, entity_ids: list[int], languages: tuple[str, ...] = ("nl", "en")) -> int:
    """Propose the active SNOMED CT synonyms of each entity's concept as PENDING aliases.

    Only entities with a ``snomed_concept_id``; descriptions in ``languages`` (FSNs skipped:
    they carry a semantic tag such as "(disorder)"). Existing aliases with the same normalised
    text are left alone; nothing is approved automatically. Returns the number proposed.
    """

    entities = {
        e.snomed_concept_id: e for e in Entity.objects.filter(id__in=entity_ids, snomed_concept_id__isnull=False)
    }
    existing = set(
        Alias.objects.filter(entity__in=entities.values()).values_list("entity_id", "normalised", "language")
    )
    proposed = 0
    rows = SnomedDescription.objects.filter(
        concept_id__in=entities, active=True, type_id=SYNONYM, language_code__in=languages
    )
    for concept_id, description_id, term, language in rows.values_list("concept_id", "id", "term", "language_code"):
        entity = entities[concept_id]
        key = (entity.id, text_normalise(term), language)
        if key in existing or text_normalise(term) == text_normalise(entity.name_in(language)):
            continue
        Alias.objects.create(
            entity=entity,
            text=term[:300],
            language=language,
            origin=AliasOrigin.SNOMED,
            review_state=ReviewState.PENDING,
            snomed_description_id=description_id,
        )
        existing.add(key)
        proposed += 1
    return proposed
