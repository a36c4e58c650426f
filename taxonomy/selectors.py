"""Reads of the taxonomy: routing facts for the pipeline's pinned context.

The graph is the authority for routing: which department treats a condition, where a doctor
works. Facts are structured (entity, relation, department, campus, phone, url); the search
pipeline's generation phrases them in the answer's language.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db.models import Q

from core.text import text_normalise
from taxonomy.models import FSN, Entity, EntityType, Predicate, Relation, SnomedDescription
from taxonomy.resolver import Resolution


@dataclass(frozen=True)
class DepartmentFact:
    """A department the graph routes to: names in the asked language, its campuses, phone, url
    and the doctors who work there (by name, ordered)."""

    entity_id: int
    name: str
    url: str
    phone: str = ""
    campuses: tuple[str, ...] = ()
    doctors: tuple[str, ...] = ()


@dataclass(frozen=True)
class RoutingFact:
    """One structured graph fact to pin first in an answer; generation phrases it.

    ``kind``: ``doctor`` (WORKS_IN: ``subject`` works at ``departments``, on ``campuses``),
    ``condition`` / ``treatment`` (TREATS/OFFERS and body-site routing: ``subject`` is treated
    at ``departments``) or ``department`` (``departments`` holds the one department).
    ``subject``: the doctor's or condition's name in the asked language ("" for a department).
    ``title``/``url``: what the citation shows. ``entity_ids``: every entity the fact is about.
    """

    kind: str
    subject: str
    departments: tuple[DepartmentFact, ...]
    title: str
    url: str
    entity_ids: tuple[int, ...] = field(default_factory=tuple)
    campuses: tuple[str, ...] = ()


def _department_fact(
    department: Entity, relations: dict[tuple[int, str], list[Entity]], language: str
) -> DepartmentFact:
    return DepartmentFact(
        entity_id=department.id,
        name=department.name_in(language),
        url=department.url,
        phone=department.phone or "",
        campuses=tuple(c.name_in(language) for c in relations.get((department.id, "campus"), [])),
        doctors=tuple(d.name for d in relations.get((department.id, "doctors"), [])),
    )


def routing_facts(*, resolution: Resolution, language: str) -> list[RoutingFact]:
    """The graph's facts for a resolution, names in ``language`` where the graph has them: the
    doctors' WORKS_IN facts when a doctor was resolved; else the TREATS/OFFERS (and body-site)
    facts of resolved conditions and treatments; else the resolved departments; else none.
    At most three queries, whatever was resolved."""
    doctors = resolution.of_type(EntityType.DOCTOR)
    conditions = resolution.of_type(EntityType.CONDITION, EntityType.TREATMENT)
    departments = resolution.of_type(EntityType.DEPARTMENT)
    if not (doctors or conditions or departments):
        return []
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
            url = worksin[0].url if worksin else doctor.url
            facts.append(
                RoutingFact(
                    kind="doctor",
                    subject=doctor.name,
                    departments=tuple(_department_fact(d, relations, language) for d in worksin),
                    campuses=tuple(c.name_in(language) for c in relations.get((doctor.id, "campus"), [])),
                    title=doctor.name,
                    url=url,
                    entity_ids=(doctor.id,),
                )
            )
        return facts
    if conditions:
        for resolved in conditions:
            condition = resolved.entity
            where = [entities[i] for i in dict.fromkeys(treating.get(condition.id, []) + routed) if i in entities]
            if not where:
                continue
            facts.append(
                RoutingFact(
                    kind=condition.type,
                    subject=condition.name_in(language),
                    departments=tuple(_department_fact(d, relations, language) for d in where),
                    title=where[0].name_in(language),
                    url=where[0].url,
                    entity_ids=(condition.id, *[d.id for d in where]),
                )
            )
        if facts:
            return facts
    for resolved in departments:
        department = resolved.entity
        facts.append(
            RoutingFact(
                kind="department",
                subject="",
                departments=(_department_fact(department, relations, language),),
                title=department.name_in(language),
                url=department.url,
                entity_ids=(department.id,),
            )
        )
    return facts


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


_SEMANTIC_TAG = re.compile(r"\s*\([^()]+\)\s*$")


def concept_synonyms(
    *, concept_id: int, languages: Sequence[str], exclude: Sequence[str] = (), limit: int = 3
) -> list[str]:
    """Up to ``limit`` names of a SNOMED CT concept for query expansion (seed 003 §8): its fully
    specified name without the semantic tag ("Heart failure (disorder)" → "Heart failure")
    first, then its active synonyms, shortest first; only descriptions in ``languages`` (ISO
    639-1), none whose normalised form (:func:`core.text.text_normalise`) is in ``exclude`` or
    repeats one already chosen. One query; ``[]`` for an unknown concept."""
    rows = SnomedDescription.objects.filter(concept_id=concept_id, active=True, language_code__in=list(languages))
    ranked = sorted(rows.values_list("type_id", "term"), key=lambda row: (row[0] != FSN, len(row[1]), row[1]))
    seen = {text_normalise(e) for e in exclude}
    names: list[str] = []
    for type_id, term in ranked:
        name = _SEMANTIC_TAG.sub("", term) if type_id == FSN else term
        key = text_normalise(name)
        if key and key not in seen:
            seen.add(key)
            names.append(name)
        if len(names) >= limit:
            break
    return names
