"""Staff-only taxonomy routes (mounted under ``/api/v1/taxonomy``)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Query, Router, Schema
from ninja.errors import HttpError
from ninja.security import django_auth
from pydantic import Field

from taxonomy.resolver import text_resolve

router = Router(tags=["taxonomy"], auth=django_auth)


class ResolveQuery(Schema):
    q: str = Field(min_length=1, max_length=1000, description="Free text to resolve.")
    language: str = Field(default="nl", pattern="^(nl|en)$")


class ResolvedOut(Schema):
    id: int
    type: str
    name: str
    slug: str
    via: str
    trail: list[dict]


class ResolveOut(Schema):
    text: str
    language: str
    entities: list[ResolvedOut]
    concepts: list[dict]


@router.get(
    "/resolve", response={200: ResolveOut, 401: dict, 403: dict, 422: dict}, summary="Resolve text to entities (staff)"
)
def resolve(request: HttpRequest, params: Query[ResolveQuery]) -> ResolveOut:
    """The entities ``q`` resolves to, each with the provenance trail of the cascade."""
    if not request.user.is_staff:
        raise HttpError(403, "staff only")
    resolution = text_resolve(text=params.q, language=params.language)
    return ResolveOut(
        text=resolution.text,
        language=resolution.language,
        entities=[
            ResolvedOut(
                id=r.entity.id, type=r.entity.type, name=r.entity.name, slug=r.entity.slug, via=r.via, trail=r.trail
            )
            for r in resolution.entities
        ],
        concepts=resolution.concepts,
    )
