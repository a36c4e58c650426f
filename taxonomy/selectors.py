"""Reads of the taxonomy: routing facts for the pipeline's pinned context.

The graph is the authority for routing: which department treats a condition, where a doctor
works. Facts are phrased as one line each, in Dutch or English, ready to be placed first in an
answer with a citation that says it comes from the hospital's own data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

from core.text import text_normalise
from taxonomy.models import Entity, EntityType, Predicate, Relation
from taxonomy.resolver import Resolution

_TEMPLATES = {
    "nl": {
        "condition": "Voor {topic} kan u terecht bij: {places}.",
        "department": "{places}.",
        "doctor": "{doctor} werkt bij {places}.",
        "doctors": "artsen: {names}",
        "phone": "tel. {phone}",
        "source": "Gegevens van het ziekenhuis (taxonomie)",
    },
    "en": {
        "condition": "For {topic} you can go to: {places}.",
        "department": "{places}.",
        "doctor": "{doctor} works at {places}.",
        "doctors": "doctors: {names}",
        "phone": "tel. {phone}",
        "source": "Hospital data (taxonomy)",
    },
}


@dataclass(frozen=True)
class RoutingFact:
    """One pinned line: ``text`` with the entity it is about (for the citation)."""

    text: str
    title: str
    url: str
    source_label: str
    entity_ids: tuple[int, ...] = field(default_factory=tuple)


def _department_line(department: Entity, relations: dict[tuple[int, str], list[Entity]], language: str) -> str:
    """'Cardiologie, Campus Noord, tel. …; artsen: …' for one department."""
    t = _TEMPLATES[language]
    parts = [department.name_in(language)]
    parts += [campus.name_in(language) for campus in relations.get((department.id, "campus"), [])]
    if department.phone:
        parts.append(t["phone"].format(phone=department.phone))
    line = ", ".join(parts)
    doctors = relations.get((department.id, "doctors"), [])
    if doctors:
        line += "; " + t["doctors"].format(names=", ".join(d.name for d in doctors))
    return line


def routing_facts(*, resolution: Resolution, language: str) -> tuple[str, list[RoutingFact]]:
    """``(intent, facts)`` for a resolution: ``doctor_lookup`` (WORKS_IN), ``condition`` or
    ``treatment`` (TREATS/OFFERS and body-site routing), ``department_search``, or ``general``
    with no facts. At most three queries, whatever was resolved."""
    language = language if language in _TEMPLATES else "nl"
    t = _TEMPLATES[language]
    doctors = resolution.of_type(EntityType.DOCTOR)
    conditions = resolution.of_type(EntityType.CONDITION, EntityType.TREATMENT)
    departments = resolution.of_type(EntityType.DEPARTMENT)
    if not (doctors or conditions or departments):
        return "general", []
    ids = {r.entity.id for r in resolution.entities}
    links = list(
        Relation.objects.filter(Q(subject_id__in=ids) | Q(object_id__in=ids))
        .filter(subject__published=True, object__published=True)
        .values_list("subject_id", "predicate", "object_id")
    )
    department_ids = {r.entity.id for r in departments}
    treating: dict[int, list[int]] = {}
    for subject_id, predicate, object_id in links:
        if predicate in (Predicate.TREATS, Predicate.OFFERS) and object_id in ids:
            treating.setdefault(object_id, []).append(subject_id)
            department_ids.add(subject_id)
        if predicate == Predicate.WORKS_IN and subject_id in ids:
            department_ids.add(object_id)
    # Departments reached through body-site routing count for every resolved condition.
    routed = [r.entity.id for r in departments if r.via == "body_site"]
    people = {r.entity.id for r in doctors}
    neighbourhood = Relation.objects.filter(
        Q(predicate__in=[Predicate.WORKS_IN, Predicate.LOCATED_AT], subject_id__in=department_ids | people)
        | Q(predicate=Predicate.WORKS_IN, object_id__in=department_ids),
        subject__published=True,
        object__published=True,
    )
    relations: dict[tuple[int, str], list[Entity]] = {}
    entities: dict[int, Entity] = {}
    for relation in neighbourhood.select_related("subject", "object").order_by("subject__name", "object__name"):
        entities[relation.subject_id], entities[relation.object_id] = relation.subject, relation.object
        if relation.predicate == Predicate.LOCATED_AT and relation.object.type == EntityType.CAMPUS:
            relations.setdefault((relation.subject_id, "campus"), []).append(relation.object)
        elif relation.predicate == Predicate.WORKS_IN and relation.object.type == EntityType.DEPARTMENT:
            relations.setdefault((relation.object_id, "doctors"), []).append(relation.subject)
            relations.setdefault((relation.subject_id, "departments"), []).append(relation.object)
        elif relation.predicate == Predicate.WORKS_IN and relation.object.type == EntityType.CAMPUS:
            relations.setdefault((relation.subject_id, "campus"), []).append(relation.object)
    for resolved in departments:
        entities.setdefault(resolved.entity.id, resolved.entity)
    missing = department_ids - set(entities)
    entities.update({e.id: e for e in Entity.objects.filter(id__in=missing, published=True)})

    facts: list[RoutingFact] = []
    if doctors:
        for resolved in doctors:
            doctor = resolved.entity
            worksin = relations.get((doctor.id, "departments"), [])
            parts = [", ".join(d.name_in(language) for d in worksin) or "—"]
            parts += [c.name_in(language) for c in relations.get((doctor.id, "campus"), [])]
            parts += [t["phone"].format(phone=d.phone) for d in worksin[:1] if d.phone]
            text = t["doctor"].format(doctor=doctor.name, places=", ".join(parts))
            url = worksin[0].url if worksin else doctor.url
            facts.append(
                RoutingFact(text=text, title=doctor.name, url=url, source_label=t["source"], entity_ids=(doctor.id,))
            )
        return "doctor_lookup", facts
    if conditions:
        for resolved in conditions:
            condition = resolved.entity
            where = [entities[i] for i in dict.fromkeys(treating.get(condition.id, []) + routed) if i in entities]
            if not where:
                continue
            places = "; ".join(_department_line(d, relations, language) for d in where)
            text = t["condition"].format(topic=condition.name_in(language).lower(), places=places)
            facts.append(
                RoutingFact(
                    text=text,
                    title=where[0].name_in(language),
                    url=where[0].url,
                    source_label=t["source"],
                    entity_ids=(condition.id, *[d.id for d in where]),
                )
            )
        intent = "treatment" if all(r.entity.type == EntityType.TREATMENT for r in conditions) else "condition"
        if facts:
            return intent, facts
    for resolved in departments:
        department = resolved.entity
        text = t["department"].format(places=_department_line(department, relations, language))
        facts.append(
            RoutingFact(
                text=text,
                title=department.name_in(language),
                url=department.url,
                source_label=t["source"],
                entity_ids=(department.id,),
            )
        )
    return ("department_search" if facts else "general"), facts


def department_names_except(*, entity_ids: set[int]) -> frozenset[str]:
    """Normalised Dutch and other-language names of published departments not in ``entity_ids``."""

    names: set[str] = set()
    for name, others in (
        Entity.objects.filter(type=EntityType.DEPARTMENT, published=True)
        .exclude(id__in=entity_ids)
        .values_list("name", "names")
    ):
        names.add(text_normalise(name))
        names.update(text_normalise(str(value)) for value in (others or {}).values())
    return frozenset(n for n in names if n)
