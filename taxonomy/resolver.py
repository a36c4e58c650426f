"""Free text → hospital entities, through the cascade of design step 3, with provenance.

1. approved aliases and the entities' own names (normalised n-gram match);
2. SNOMED CT descriptions (active, in active concepts; longest matches win);
3. the matched concepts themselves, then their IS_A ancestors up to depth 3 (one recursive SQL
   query), mapped to taxonomy entities through ``Entity.snomed_concept_id``;
4. FINDING_SITE body structures of the matched concepts (or, when they have none, of their
   ancestors), and up to 3 IS_A levels above each site, → departments through the editors'
   ``BodySiteDepartment`` table.

Each resolved entity carries the trail of steps that reached it, so editors can see why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import connection, transaction
from django.db.models import CharField, F
from django.db.models.expressions import RawSQL

from core.held import MaxAgeHeld, held_max_age_s
from core.lookups import AnyOf
from core.text import sql_normalise, text_normalise
from taxonomy.models import FINDING_SITE, IS_A, Alias, BodySiteDepartment, Entity, ReviewState, SnomedDescription

MAX_NGRAM = 8
MAX_DEPTH = 3
MAX_CONCEPTS = 10


@dataclass
class ResolvedEntity:
    """An entity reached by the cascade; ``trail`` lists the steps, first step first."""

    entity: Entity
    trail: list[dict[str, object]] = field(default_factory=list)

    @property
    def via(self) -> str:
        """The kind of the step that reached the entity (``alias``, ``snomed``, ``is_a``, …)."""
        return str(self.trail[-1]["step"]) if self.trail else ""


@dataclass
class Resolution:
    """What ``text`` resolved to: entities (best evidence first) and the SNOMED concepts matched."""

    text: str
    language: str
    entities: list[ResolvedEntity]
    concepts: list[dict[str, object]]

    def of_type(self, *types: str) -> list[ResolvedEntity]:
        return [r for r in self.entities if r.entity.type in types]


def ngrams(normalised: str, max_n: int = MAX_NGRAM) -> list[str]:
    """All contiguous word n-grams (1 ≤ n ≤ ``max_n``) of an already normalised text."""
    words = normalised.split()
    return [" ".join(words[i : i + n]) for n in range(1, max_n + 1) for i in range(len(words) - n + 1)]


def _maximal(matches: set[str]) -> set[str]:
    """Drop matches contained (as whole words) in a longer match: 'heart failure' inside
    'acute left sided heart failure' routes no further than the longer, more specific term."""
    return {m for m in matches if not any(m != other and f" {m} " in f" {other} " for other in matches)}


def _ancestors(concept_ids: list[int]) -> list[tuple[int, int, int, list[int]]]:
    """``(concept, ancestor, depth, path)`` over active IS_A edges, depth ≤ 3, shortest path."""
    if not concept_ids:
        return []
    sql = f"""
        WITH RECURSIVE anc(concept_id, ancestor_id, depth, path) AS (
            SELECT source_id, destination_id, 1, ARRAY[source_id, destination_id]
            FROM taxonomy_snomedrelationship
            WHERE source_id = ANY(%s) AND type_id = {IS_A} AND active
          UNION ALL
            SELECT a.concept_id, r.destination_id, a.depth + 1, a.path || r.destination_id
            FROM anc a JOIN taxonomy_snomedrelationship r
              ON r.source_id = a.ancestor_id AND r.type_id = {IS_A} AND r.active
            WHERE a.depth < {MAX_DEPTH}
        )
        SELECT DISTINCT ON (concept_id, ancestor_id) concept_id, ancestor_id, depth, path
        FROM anc ORDER BY concept_id, ancestor_id, depth
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [concept_ids])
        return [(row[0], row[1], row[2], list(row[3])) for row in cursor.fetchall()]


def _finding_sites(concept_ids: list[int]) -> dict[int, list[int]]:
    if not concept_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT source_id, destination_id FROM taxonomy_snomedrelationship "
            f"WHERE source_id = ANY(%s) AND type_id = {FINDING_SITE} AND active ORDER BY source_id, destination_id",
            [concept_ids],
        )
        sites: dict[int, list[int]] = {}
        for source, destination in cursor.fetchall():
            sites.setdefault(source, []).append(destination)
    return sites


def _terms(concept_ids: set[int], language: str) -> dict[int, str]:
    """A readable term per concept: an active synonym in ``language`` (else English), else any."""
    terms: dict[int, str] = {}
    rows = SnomedDescription.objects.filter(concept_id__in=concept_ids, active=True).values_list(
        "concept_id", "language_code", "type_id", "term"
    )
    rank: dict[int, float] = {}
    for concept_id, code, type_id, term in rows:
        score = (code == language) * 2 + (code == "en") + (type_id != 900000000000003001) * 0.5
        if score > rank.get(concept_id, -1):
            rank[concept_id], terms[concept_id] = score, term
    return terms


@dataclass(frozen=True)
class LookupTerms:
    """What the resolver reads of the editors' taxonomy on every text, held per process
    (:func:`lookup_terms_live`): every text its first step can match, as the database
    normalises it (approved aliases' ``normalised`` per language, every entity's name through
    :func:`core.text.sql_normalise`), the body-site routing table (site concept id → its rows,
    with their department, in id order) and the entities linked to a SNOMED CT concept (concept
    id → entity). A text none of whose n-grams is an alias or a name needs neither query; a text
    that reaches SNOMED CT concepts needs no read of the routing table nor of the linked
    entities (:func:`text_resolve`)."""

    aliases: frozenset[tuple[str, str]]  # (language, normalised)
    names: frozenset[str]
    routes: dict[int, tuple[BodySiteDepartment, ...]]
    linked: dict[int, Entity]

    def alias_possible(self, grams: list[str], language: str) -> bool:
        """Whether an approved alias of ``language`` may match one of ``grams``."""
        return any((language, gram) in self.aliases for gram in grams)

    def name_possible(self, grams: list[str]) -> bool:
        """Whether an entity's name may match one of ``grams``."""
        return any(gram in self.names for gram in grams)


def _routes_read() -> dict[int, tuple[BodySiteDepartment, ...]]:
    """The routing table (small: editors keep tens of rows), by site concept id (one query)."""
    routes: dict[int, list[BodySiteDepartment]] = {}
    for route in BodySiteDepartment.objects.select_related("department").order_by("id"):
        routes.setdefault(route.body_site_concept_id, []).append(route)
    return {site: tuple(rows) for site, rows in routes.items()}


def _linked_read() -> dict[int, Entity]:
    """The entities linked to a SNOMED CT concept (a hospital's conditions and treatments: few),
    by concept id (one query)."""
    return {
        e.snomed_concept_id: e for e in Entity.objects.filter(snomed_concept_id__isnull=False) if e.snomed_concept_id
    }


def lookup_terms_read() -> LookupTerms:
    """:class:`LookupTerms` from the database (three queries; the tables are the editors'
    taxonomy: tens to a few thousand rows)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT language, normalised FROM taxonomy_alias WHERE review_state = %s "
            f"UNION ALL SELECT NULL, {sql_normalise('name')} FROM taxonomy_entity",
            [ReviewState.APPROVED],
        )
        rows = cursor.fetchall()
    return LookupTerms(
        aliases=frozenset((language, text) for language, text in rows if language is not None),
        names=frozenset(text for language, text in rows if language is None),
        routes=_routes_read(),
        linked=_linked_read(),
    )


_live_lookup_terms: MaxAgeHeld[LookupTerms] = MaxAgeHeld(lookup_terms_read)


def lookup_terms_live() -> LookupTerms | None:
    """The :class:`LookupTerms` the search pipeline's resolution checks before its alias and name
    queries, held per process (:class:`core.held.MaxAgeHeld`): read at most every
    ``settings.PIPELINE_CONFIG_MAX_AGE_S`` seconds (default 2), and at once after an alias, entity or body-site route saved or deleted in this
    process commits (:func:`lookup_terms_changed`). An editor's alias is seen by the other web workers within the
    maximum age. None (query every time) with a maximum age of 0 or inside a transaction (tests,
    a caller's atomic block), where rows the transaction wrote are visible only to it.

    Why: the two queries found nothing for 97 % of 2,000 questions of the load mix, and under
    8 concurrent clients each round trip costs several ms (docs/BENCHMARKS.md, "Fewer round
    trips"; the taxonomy stage's p50 was 18 ms under load against 4 ms alone)."""
    max_age_s = held_max_age_s()
    return None if max_age_s is None else _live_lookup_terms.get(max_age_s)


def lookup_terms_clear(**_signal: object) -> None:
    """Forget this process's :class:`LookupTerms` (no database access): the receiver of
    ``setting_changed``."""
    _live_lookup_terms.clear()


def lookup_terms_changed(**_signal: object) -> None:
    """Forget this process's :class:`LookupTerms` once the saving transaction commits: the
    ``post_save``/``post_delete`` receiver of :class:`~taxonomy.models.Alias`,
    :class:`~taxonomy.models.Entity` and :class:`~taxonomy.models.BodySiteDepartment`."""
    transaction.on_commit(_live_lookup_terms.clear)


def text_resolve(*, text: str, language: str = "nl", with_terms: bool = True) -> Resolution:
    """Resolve ``text`` to published entities with provenance. Never raises for odd input.

    Runs a fixed number of queries (aliases, names, descriptions, ancestors, sites, inherited
    sites, routing table, site ancestors, entities, terms), independent of the text's length.
    With a held :class:`LookupTerms` (:func:`lookup_terms_live`: outside transactions) the
    alias and name queries run only when one of the text's n-grams may match, and the routing
    table and the SNOMED CT-linked entities come from it instead of two queries.
    At most 10 concepts are followed (longest matching terms first). ``with_terms=False`` (the
    pipeline) skips the readable terms of the concepts, which only editors need.
    """
    normalised = text_normalise(text)
    grams = ngrams(normalised)
    found: dict[int, ResolvedEntity] = {}

    def add(entity: Entity, trail: list[dict[str, object]]) -> None:
        if entity.published and entity.id not in found:
            found[entity.id] = ResolvedEntity(entity=entity, trail=trail)

    if not grams:
        return Resolution(text=text, language=language, entities=[], concepts=[])

    held = lookup_terms_live()
    if held is None or held.alias_possible(grams, language):
        aliases = Alias.objects.filter(
            AnyOf(F("normalised"), grams), review_state=ReviewState.APPROVED, language=language
        ).select_related("entity")
        for alias in sorted(aliases, key=lambda a: -len(a.normalised)):
            add(
                alias.entity,
                [{"step": "alias", "text": alias.text, "language": alias.language, "origin": alias.origin}],
            )
    if held is None or held.name_possible(grams):
        named = Entity.objects.filter(
            AnyOf(RawSQL(sql_normalise('"taxonomy_entity"."name"'), [], output_field=CharField()), grams)
        )
        for entity in named:
            add(entity, [{"step": "name", "text": entity.name}])

    matches = SnomedDescription.objects.filter(AnyOf(F("term_normalised"), grams), active=True).values_list(
        "term_normalised", "concept_id", "id", "term"
    )
    by_term: dict[str, list[tuple[int, int, str]]] = {}
    for term_normalised, concept_id, description_id, term in matches:
        by_term.setdefault(term_normalised, []).append((concept_id, description_id, term))
    matched: dict[int, dict[str, object]] = {}
    # Longest terms first; a common word that names hundreds of concepts must not flood routing.
    for term_normalised in sorted(_maximal(set(by_term)), key=lambda t: (-len(t), t)):
        for concept_id, description_id, term in sorted(by_term[term_normalised]):
            if len(matched) >= MAX_CONCEPTS:
                break
            matched.setdefault(
                concept_id,
                {
                    "step": "snomed_description",
                    "term": term,
                    "description_id": description_id,
                    "concept_id": concept_id,
                },
            )
    concept_ids = sorted(matched)
    if not concept_ids:
        return Resolution(text=text, language=language, entities=list(found.values()), concepts=[])
    ancestors = _ancestors(concept_ids)
    # Finding sites of the concepts and of all their ancestors in one query; a concept without
    # a site of its own borrows its nearest ancestors' sites.
    inherited = _finding_sites(sorted(set(concept_ids) | {a for _, a, _, _ in ancestors}))
    sites = {c: inherited[c] for c in concept_ids if c in inherited}
    lacking = [c for c in concept_ids if c not in sites]
    if lacking:
        for concept_id in lacking:
            by_depth: dict[int, set[int]] = {}
            for c, ancestor, depth, _ in ancestors:
                if c == concept_id and ancestor in inherited:
                    by_depth.setdefault(depth, set()).update(inherited[ancestor])
            if by_depth:
                sites[concept_id] = sorted(by_depth[min(by_depth)])
    site_ids = sorted({s for values in sites.values() for s in values})
    # The routing table is small (editors keep tens of rows): read it whole, and walk IS_A
    # above a site only when the site itself is not in it.
    route_by_site = held.routes if held is not None else _routes_read()
    unmapped = [s for s in site_ids if s not in route_by_site] if route_by_site else []
    site_ancestors = _ancestors(unmapped)

    # Entities linked to SNOMED CT are few (a hospital's conditions and treatments): reading
    # them all is cheaper than an IN list of every concept and ancestor.
    reached = set(concept_ids) | {a for _, a, _, _ in ancestors}
    linked = {c: e for c, e in (held.linked if held is not None else _linked_read()).items() if c in reached}
    for concept_id in concept_ids:
        if concept_id in linked:
            add(linked[concept_id], [matched[concept_id], {"step": "snomed", "concept_id": concept_id}])
    for concept_id, ancestor_id, depth, path in sorted(ancestors, key=lambda r: r[2]):
        if ancestor_id in linked:
            add(linked[ancestor_id], [matched[concept_id], {"step": "is_a", "depth": depth, "path": path}])

    ancestors_of_site: dict[int, list[tuple[int, int, list[int]]]] = {}
    for site, ancestor, depth, path in site_ancestors:
        ancestors_of_site.setdefault(site, []).append((depth, ancestor, path))
    for concept_id in concept_ids:
        for site in sites.get(concept_id, []):
            candidates = [(0, site, [site])] + sorted(ancestors_of_site.get(site, []), key=lambda r: r[0])
            for depth, mapped_site, path in candidates:
                for route in route_by_site.get(mapped_site, []):
                    add(
                        route.department,
                        [
                            matched[concept_id],
                            {"step": "finding_site", "site_concept_id": site},
                            {
                                "step": "body_site",
                                "site_concept_id": mapped_site,
                                "depth": depth,
                                "path": path,
                                "label": route.label,
                            },
                        ],
                    )
                if mapped_site in route_by_site:
                    break

    if not with_terms:
        return Resolution(
            text=text,
            language=language,
            entities=list(found.values()),
            concepts=[{"concept_id": c, "matched_term": matched[c]["term"]} for c in concept_ids],
        )
    terms = _terms(set(concept_ids) | set(site_ids) | {a for _, a, _, _ in ancestors}, language)
    concepts = [
        {
            "concept_id": c,
            "matched_term": matched[c]["term"],
            "term": terms.get(c, ""),
            "ancestors": [
                {"concept_id": a, "term": terms.get(a, ""), "depth": d} for cc, a, d, _ in ancestors if cc == c
            ],
            "finding_sites": [{"concept_id": s, "term": terms.get(s, "")} for s in sites.get(c, [])],
        }
        for c in concept_ids
    ]
    return Resolution(text=text, language=language, entities=list(found.values()), concepts=concepts)
