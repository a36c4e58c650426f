"""Admin for content editors: entities with relations and aliases inline, the alias review
queue (pending first, bulk approve/reject, conflicts highlighted), the body-site routing table,
and SNOMED CT imports (read-only, with progress and "run again"). Changes made here are
recorded in Django's admin log (who, when, what) and shown under each object's "History"."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db import IntegrityError, transaction
from django.db.models import Case, Count, Exists, IntegerField, OuterRef, Q, QuerySet, Value, When
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from core.admin_runs import AuditAdmin, BackgroundRunAdminMixin, ReadOnlyAdmin
from core.text import text_normalise
from taxonomy.models import (
    ALLOWED_RELATIONS,
    FSN,
    SYNONYM,
    Alias,
    BodySiteDepartment,
    Entity,
    EntityType,
    Predicate,
    Relation,
    ReviewState,
    SnomedDescription,
    SnomedImport,
)
from taxonomy.services import snomed_aliases_propose
from taxonomy.snomed import SnomedImportError, snomed_import_relaunch


class RelationFormSet(BaseInlineFormSet):
    """Checks each relation against the allowed type combinations before the database does,
    so the editor sees the reason next to the row instead of a failed save."""

    def clean(self) -> None:
        super().clean()
        subject = self.instance
        for form in self.forms:
            data = getattr(form, "cleaned_data", None) or {}
            if not data or data.get("DELETE") or not data.get("object") or not data.get("predicate"):
                continue
            combination = (data["predicate"], subject.type, data["object"].type)
            if combination not in ALLOWED_RELATIONS:
                form.add_error(
                    "object",
                    _(
                        "This relation does not fit these entity types: %(subject_type)s %(predicate)s "
                        "%(object_type)s (for example, a doctor cannot WORK_IN a condition)."
                    )
                    % {
                        "subject_type": str(EntityType(subject.type).label).lower(),
                        "predicate": Predicate(data["predicate"]).label,
                        "object_type": str(EntityType(data["object"].type).label).lower(),
                    },
                )


class RelationInline(admin.TabularInline):
    model = Relation
    formset = RelationFormSet
    fk_name = "subject"
    fields = ("predicate", "object", "provenance")
    autocomplete_fields = ("object",)
    extra = 0
    verbose_name = _("relation (this entity → …)")


class AliasInline(admin.TabularInline):
    model = Alias
    fields = ("text", "language", "origin", "review_state", "ambiguous")
    extra = 0


@admin.register(Entity)
class EntityAdmin(admin.ModelAdmin):
    list_display = ("name", "type", "sample_badge", "phone", "published", "snomed_concept_id", "alias_total")
    list_filter = ("type", "published", "is_sample")
    search_fields = ("name", "slug", "aliases__text")
    prepopulated_fields = {"slug": ("name",)}
    inlines = [RelationInline, AliasInline]
    actions = ["propose_snomed_aliases"]

    @admin.action(description=_("Propose SNOMED CT synonyms as aliases (pending review)"), permissions=["change"])
    def propose_snomed_aliases(self, request: HttpRequest, queryset: QuerySet[Entity]) -> None:

        count = snomed_aliases_propose(entity_ids=list(queryset.values_list("id", flat=True)))
        self.message_user(
            request,
            ngettext(
                "%(count)d SNOMED CT synonym proposed; review it under Aliases (pending first).",
                "%(count)d SNOMED CT synonyms proposed; review them under Aliases (pending first).",
                count,
            )
            % {"count": count},
        )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Entity]:
        return super().get_queryset(request).annotate(alias_total=Count("aliases", distinct=True))

    @admin.display(description=_("aliases"), ordering="alias_total")
    def alias_total(self, obj: Entity) -> int:
        return obj.alias_total  # type: ignore[attr-defined]

    @admin.display(description=_("sample data"), boolean=False)
    def sample_badge(self, obj: Entity) -> str:
        return format_html('<strong style="color:#b45309">{}</strong>', _("SAMPLE")) if obj.is_sample else ""

    def save_formset(self, request: HttpRequest, form: object, formset: object, change: bool) -> None:
        """A relation the database refuses (e.g. a doctor WORKS_IN a condition) becomes a
        message instead of a server error."""
        try:
            with transaction.atomic():
                super().save_formset(request, form, formset, change)
        except IntegrityError as exc:
            self.message_user(
                request,
                _("Not saved: this relation or alias is not allowed (%(error)s).") % {"error": exc.__cause__ or exc},
                messages.ERROR,
            )


@admin.register(Alias)
class AliasAdmin(admin.ModelAdmin):
    """The review queue: pending aliases first; aliases whose text also names another entity
    are marked as conflicts."""

    list_display = ("text", "entity", "language", "origin", "review_state", "conflict", "ambiguous", "created_at")
    list_filter = ("review_state", "origin", "language", "ambiguous")
    search_fields = ("text", "entity__name")
    list_select_related = ("entity",)
    autocomplete_fields = ("entity",)
    actions = ["approve", "reject", "mark_ambiguous"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Alias]:
        others = (
            Alias.objects.filter(normalised=OuterRef("normalised"), language=OuterRef("language"))
            .exclude(entity=OuterRef("entity"))
            .exclude(review_state=ReviewState.REJECTED)
        )

        return (
            super()
            .get_queryset(request)
            .annotate(has_conflict=Exists(others))
            .annotate(
                pending_first=Case(
                    When(review_state=ReviewState.PENDING, then=Value(0)), default=Value(1), output_field=IntegerField()
                )
            )
            .order_by("pending_first", "-created_at")
        )

    @admin.display(description=_("conflict"), boolean=True, ordering="has_conflict")
    def conflict(self, obj: Alias) -> bool:
        return bool(obj.has_conflict)  # type: ignore[attr-defined]

    def _review(self, request: HttpRequest, queryset: QuerySet[Alias], state: str) -> None:
        done, refused = 0, []
        for alias in queryset.select_related("entity"):
            try:
                with transaction.atomic():
                    alias.review_state, alias.reviewed_at = state, timezone.now()
                    alias.save(update_fields=["review_state", "reviewed_at", "normalised"])
                done += 1
            except IntegrityError:
                refused.append(f"'{alias.text}' → {alias.entity.name}")
        self.message_user(
            request,
            ngettext("%(count)d alias marked %(state)s.", "%(count)d aliases marked %(state)s.", done)
            % {"count": done, "state": ReviewState(state).label.lower()},
        )
        if refused:
            self.message_user(
                request,
                _(
                    "Not approved because the same text is already approved for another entity "
                    "(mark them ambiguous first): %(aliases)s"
                )
                % {"aliases": ", ".join(refused)},
                messages.WARNING,
            )

    @admin.action(description=_("Approve selected aliases"), permissions=["change"])
    def approve(self, request: HttpRequest, queryset: QuerySet[Alias]) -> None:
        self._review(request, queryset, ReviewState.APPROVED)

    @admin.action(description=_("Reject selected aliases"), permissions=["change"])
    def reject(self, request: HttpRequest, queryset: QuerySet[Alias]) -> None:
        self._review(request, queryset, ReviewState.REJECTED)

    @admin.action(
        description=_("Mark selected aliases as ambiguous (may name several entities)"), permissions=["change"]
    )
    def mark_ambiguous(self, request: HttpRequest, queryset: QuerySet[Alias]) -> None:
        updated = queryset.update(ambiguous=True)
        self.message_user(
            request,
            ngettext("%(count)d alias marked ambiguous.", "%(count)d aliases marked ambiguous.", updated)
            % {"count": updated},
        )


@admin.register(BodySiteDepartment)
class BodySiteDepartmentAdmin(admin.ModelAdmin):
    list_display = ("label", "body_site_concept_id", "department")
    list_select_related = ("department",)
    search_fields = ("label", "department__name")
    autocomplete_fields = ("department",)


@admin.register(SnomedDescription)
class SnomedDescriptionAdmin(AuditAdmin):
    """Read-only term search for editors (for example to find the concept id of a condition).

    Searches the normalised terms with PostgreSQL full text ('simple' configuration, accents
    folded, every word must occur), using the GIN index of migration 0002; a number searches
    concept and description ids.
    """

    list_display = ("term", "concept_id", "language_code", "type_label", "active")
    list_filter = ("active", "language_code")
    search_fields = ("term",)
    show_full_result_count = False
    readonly_fields = [f.name for f in SnomedDescription._meta.fields]

    @admin.display(description=_("type"))
    def type_label(self, obj: SnomedDescription) -> str:
        return {FSN: "FSN", SYNONYM: str(_("synonym"))}.get(obj.type_id, str(obj.type_id))

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, search_term: str):
        term = search_term.strip()
        if not term:
            return queryset, False
        if term.isdigit():
            return queryset.filter(Q(concept_id=int(term)) | Q(id=int(term))), False
        words = text_normalise(term).split()
        if not words:
            return queryset.none(), False
        query = " & ".join(words)
        return queryset.extra(
            where=["to_tsvector('simple', term_normalised) @@ to_tsquery('simple', %s)"], params=[query]
        ), False


@admin.register(SnomedImport)
class SnomedImportAdmin(BackgroundRunAdminMixin, ReadOnlyAdmin):
    """SNOMED CT RF2 imports (``manage.py snomed_import``), read-only: status, progress in
    files, files, row counts, timings, the error. Users with the right to add imports may run
    one again (the same folder, queued for the worker)."""

    list_display = ("created_at", "path", "release_type", "status", "progress", "counts")
    list_filter = ("status",)
    readonly_fields = [f.name for f in SnomedImport._meta.fields]
    actions = ["run_again"]
    run_again_description = _("Import the same release folder again")
    run_again_errors = (SnomedImportError,)

    def runs_relaunch(self, request: HttpRequest, *, run_ids: list[int]) -> list[SnomedImport]:
        return snomed_import_relaunch(run_ids=run_ids)
