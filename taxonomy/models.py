"""Curated hospital knowledge (entities, relations, aliases) and SNOMED CT terminology tables.

Entities and relations are the graph the pipeline treats as the authority for routing ("which
department treats X", "where does Dr. Y work"). SNOMED CT rows keep the RF2 64-bit ids as
primary keys; they are written only by the RF2 importer (``taxonomy.snomed``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from core.runs import BackgroundRun
from core.text import text_normalise

# SNOMED CT ids used by the resolver (SNOMED CT Editorial Guide; ../shared/data/README.md).
IS_A = 116680003
FINDING_SITE = 363698007
FSN = 900000000000003001
SYNONYM = 900000000000013009
PREFERRED = 900000000000548007
ACCEPTABLE = 900000000000549004


class EntityType(models.TextChoices):
    DOCTOR = "doctor", _("Doctor")
    DEPARTMENT = "department", _("Department")
    CONDITION = "condition", _("Condition")
    TREATMENT = "treatment", _("Treatment")
    CAMPUS = "campus", _("Campus")
    SERVICE = "service", _("Service")


class Entity(models.Model):
    """A doctor, department, condition, treatment, campus or service of the hospital.

    ``name`` is the Dutch display name; ``names`` holds other languages (``{"en": "…"}``).
    ``snomed_concept_id`` links a condition or treatment to SNOMED CT (the resolver's bridge).
    ``is_sample`` marks invented demo data, shown as such in the admin.
    """

    type = models.CharField(max_length=16, choices=EntityType.choices, db_index=True, verbose_name=_("type"))
    slug = models.SlugField(max_length=120, unique=True, verbose_name=_("slug"))
    name = models.CharField(max_length=200, verbose_name=_("name"))
    names = models.JSONField(
        default=dict, blank=True, help_text=_('Other languages, e.g. {"en": "Cardiology"}.'), verbose_name=_("names")
    )
    url = models.CharField(max_length=500, blank=True, verbose_name=_("URL"))
    phone = models.CharField(max_length=40, blank=True, verbose_name=_("phone"))
    description = models.TextField(blank=True, verbose_name=_("description"))
    published = models.BooleanField(default=True, verbose_name=_("published"))
    is_sample = models.BooleanField(
        default=False, help_text=_("Invented demonstration data, not a real hospital."), verbose_name=_("sample data")
    )
    snomed_concept_id = models.BigIntegerField(
        null=True, blank=True, db_index=True, verbose_name=_("SNOMED CT concept id")
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

    class Meta:
        verbose_name = _("entity")
        verbose_name_plural = _("entities")
        ordering = ["type", "name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_type_display()})"

    def name_in(self, language: str) -> str:
        """The name in ``language``, else the Dutch name."""
        return str(self.names.get(language) or self.name)


class Predicate(models.TextChoices):
    WORKS_IN = "WORKS_IN", _("works in")
    TREATS = "TREATS", _("treats")
    OFFERS = "OFFERS", _("offers")
    LOCATED_AT = "LOCATED_AT", _("located at")
    PART_OF = "PART_OF", _("part of")


class Provenance(models.TextChoices):
    EDITOR = "editor", _("Editor")
    IMPORT = "import", _("Import")
    SNOMED = "snomed", _("SNOMED CT")


# (predicate, subject type, object type) combinations that make sense; enforced in the database.
ALLOWED_RELATIONS = [
    ("WORKS_IN", "doctor", "department"),
    ("WORKS_IN", "doctor", "campus"),
    ("TREATS", "department", "condition"),
    ("TREATS", "doctor", "condition"),
    ("OFFERS", "department", "treatment"),
    ("OFFERS", "department", "service"),
    ("OFFERS", "campus", "service"),
    ("LOCATED_AT", "department", "campus"),
    ("LOCATED_AT", "service", "campus"),
    ("PART_OF", "department", "department"),
    ("PART_OF", "service", "department"),
]


def _allowed_relations_q() -> models.Q:
    q = models.Q()
    for predicate, subject_type, object_type in ALLOWED_RELATIONS:
        q |= models.Q(predicate=predicate, subject_type=subject_type, object_type=object_type)
    return q


class Relation(models.Model):
    """``subject predicate object`` (e.g. doctor WORKS_IN department) with its provenance.

    ``subject_type``/``object_type`` copy the entities' types on save so that the database can
    refuse nonsense such as a doctor WORKS_IN a condition (CHECK constraint).
    """

    subject = models.ForeignKey(
        Entity, on_delete=models.CASCADE, related_name="relations_out", verbose_name=_("subject")
    )
    predicate = models.CharField(max_length=16, choices=Predicate.choices, verbose_name=_("predicate"))
    object = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="relations_in", verbose_name=_("object"))
    subject_type = models.CharField(
        max_length=16, choices=EntityType.choices, editable=False, verbose_name=_("subject type")
    )
    object_type = models.CharField(
        max_length=16, choices=EntityType.choices, editable=False, verbose_name=_("object type")
    )
    provenance = models.CharField(
        max_length=8, choices=Provenance.choices, default=Provenance.EDITOR, verbose_name=_("provenance")
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("relation")
        verbose_name_plural = _("relations")
        constraints = [
            models.UniqueConstraint(fields=["subject", "predicate", "object"], name="relation_uniq"),
            models.CheckConstraint(condition=~models.Q(subject=models.F("object")), name="relation_not_self"),
            models.CheckConstraint(
                condition=_allowed_relations_q(),
                name="relation_types_allowed",
                violation_error_message=_(
                    "This relation does not fit these entity types (for example, a doctor cannot WORK_IN a condition)."
                ),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.subject.name} {self.predicate} {self.object.name}"

    def save(self, *args: Any, **kwargs: Any) -> None:  # ``object`` is a field name here
        self._types_copy()
        super().save(*args, **kwargs)

    def clean(self) -> None:
        self._types_copy()  # before full_clean() checks the constraints

    def _types_copy(self) -> None:
        if self.subject_id:
            self.subject_type = self.subject.type
        if self.object_id:
            self.object_type = self.object.type


class AliasOrigin(models.TextChoices):
    EDITOR = "editor", _("Editor")
    SNOMED = "snomed", _("SNOMED CT")
    IMPORT = "import", _("Import")


class ReviewState(models.TextChoices):
    PENDING = "pending", _("Pending")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")


class Alias(models.Model):
    """Another name patients use for an entity, per language, reviewed by an editor.

    ``normalised`` (lower case, accents folded, punctuation as spaces) is what the resolver
    matches. One approved normalised text per language points to one entity unless every
    such alias is flagged ``ambiguous``.
    """

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="aliases", verbose_name=_("entity"))
    text = models.CharField(max_length=300, verbose_name=_("text"))
    normalised = models.CharField(max_length=300, editable=False, db_index=True, verbose_name=_("normalised"))
    language = models.CharField(max_length=8, default="nl", verbose_name=_("language"))
    origin = models.CharField(
        max_length=8, choices=AliasOrigin.choices, default=AliasOrigin.EDITOR, verbose_name=_("origin")
    )
    review_state = models.CharField(
        max_length=8,
        choices=ReviewState.choices,
        default=ReviewState.PENDING,
        db_index=True,
        verbose_name=_("review state"),
    )
    ambiguous = models.BooleanField(
        default=False, help_text=_("This text may name several entities."), verbose_name=_("ambiguous")
    )
    snomed_description_id = models.BigIntegerField(null=True, blank=True, verbose_name=_("SNOMED CT description id"))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, verbose_name=_("created by")
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    reviewed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("reviewed at"))

    class Meta:
        verbose_name = _("alias")
        verbose_name_plural = _("aliases")
        constraints = [
            models.UniqueConstraint(fields=["entity", "normalised", "language"], name="alias_entity_text_uniq"),
            models.UniqueConstraint(
                fields=["normalised", "language"],
                condition=models.Q(review_state="approved", ambiguous=False),
                name="alias_approved_unambiguous_uniq",
                violation_error_message=_(
                    "This text is already approved for another entity; mark both aliases ambiguous first."
                ),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.text} → {self.entity.name}"

    def save(self, *args: object, **kwargs: object) -> None:
        self.normalised = text_normalise(self.text)
        super().save(*args, **kwargs)  # type: ignore[arg-type]


class BodySiteDepartment(models.Model):
    """Editors' routing table: a SNOMED CT body structure → the department that treats it."""

    body_site_concept_id = models.BigIntegerField(db_index=True, verbose_name=_("body site concept id"))
    label = models.CharField(
        max_length=200, help_text=_("The body structure's name, for editors."), verbose_name=_("label")
    )
    department = models.ForeignKey(
        Entity, on_delete=models.CASCADE, limit_choices_to={"type": EntityType.DEPARTMENT}, verbose_name=_("department")
    )

    class Meta:
        verbose_name = _("body site department")
        verbose_name_plural = _("body site departments")
        constraints = [
            models.UniqueConstraint(fields=["body_site_concept_id", "department"], name="bodysite_department_uniq")
        ]

    def __str__(self) -> str:
        return f"{self.label} → {self.department.name}"


# --- SNOMED CT RF2 -----------------------------------------------------------------------------


class SnomedConcept(models.Model):
    id = models.BigIntegerField(primary_key=True, verbose_name=_("id"))
    effective_time = models.DateField(verbose_name=_("effective time"))
    active = models.BooleanField(verbose_name=_("active"))
    module_id = models.BigIntegerField(verbose_name=_("module id"))
    definition_status_id = models.BigIntegerField(verbose_name=_("definition status id"))

    class Meta:
        verbose_name = _("SNOMED CT concept")
        verbose_name_plural = _("SNOMED CT concepts")

    def __str__(self) -> str:
        return str(self.id)


class SnomedDescription(models.Model):
    """RF2 description; ``term_normalised`` is lower case with accents folded (resolver key)."""

    id = models.BigIntegerField(primary_key=True, verbose_name=_("id"))
    effective_time = models.DateField(verbose_name=_("effective time"))
    active = models.BooleanField(verbose_name=_("active"))
    module_id = models.BigIntegerField(verbose_name=_("module id"))
    concept_id = models.BigIntegerField(db_index=True, verbose_name=_("concept id"))
    language_code = models.CharField(max_length=8, verbose_name=_("language code"))
    type_id = models.BigIntegerField(verbose_name=_("type id"))
    term = models.TextField(verbose_name=_("term"))
    term_normalised = models.TextField(verbose_name=_("term normalised"))
    case_significance_id = models.BigIntegerField(verbose_name=_("case significance id"))

    class Meta:
        # Covering index: the resolver's term lookup is an index-only scan (after VACUUM), which
        # at national size avoids hundreds of random heap reads for common words.
        verbose_name = _("SNOMED CT description")
        verbose_name_plural = _("SNOMED CT descriptions")
        indexes = [
            models.Index(
                fields=["term_normalised"],
                name="snomed_desc_term_norm_idx",
                include=["concept_id", "active", "id", "term"],
            )
        ]

    def __str__(self) -> str:
        return self.term


class SnomedRelationship(models.Model):
    id = models.BigIntegerField(primary_key=True, verbose_name=_("id"))
    effective_time = models.DateField(verbose_name=_("effective time"))
    active = models.BooleanField(verbose_name=_("active"))
    module_id = models.BigIntegerField(verbose_name=_("module id"))
    source_id = models.BigIntegerField(verbose_name=_("source id"))
    destination_id = models.BigIntegerField(verbose_name=_("destination id"))
    relationship_group = models.IntegerField(verbose_name=_("relationship group"))
    type_id = models.BigIntegerField(verbose_name=_("type id"))
    characteristic_type_id = models.BigIntegerField(verbose_name=_("characteristic type id"))
    modifier_id = models.BigIntegerField(verbose_name=_("modifier id"))

    class Meta:
        verbose_name = _("SNOMED CT relationship")
        verbose_name_plural = _("SNOMED CT relationships")
        indexes = [
            # Covering: IS_A walks and finding-site lookups read only the index.
            models.Index(
                fields=["source_id", "type_id"], name="snomed_rel_source_type_idx", include=["destination_id", "active"]
            ),
            models.Index(fields=["destination_id", "type_id"], name="snomed_rel_dest_type_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} -[{self.type_id}]-> {self.destination_id}"


class SnomedLanguageMember(models.Model):
    """Language refset member: a description is preferred or acceptable in a language refset."""

    id = models.UUIDField(primary_key=True, verbose_name=_("id"))
    effective_time = models.DateField(verbose_name=_("effective time"))
    active = models.BooleanField(verbose_name=_("active"))
    module_id = models.BigIntegerField(verbose_name=_("module id"))
    refset_id = models.BigIntegerField(verbose_name=_("refset id"))
    referenced_component_id = models.BigIntegerField(db_index=True, verbose_name=_("referenced component id"))
    acceptability_id = models.BigIntegerField(verbose_name=_("acceptability id"))

    class Meta:
        verbose_name = _("SNOMED CT language refset member")
        verbose_name_plural = _("SNOMED CT language refset members")

    def __str__(self) -> str:
        return f"{self.referenced_component_id} in {self.refset_id}"


class SnomedImport(BackgroundRun):
    """One RF2 import of the release under ``path``: the files and row counts it loaded,
    timings (ms), and the background-run fields (``total`` / ``done``: release files found /
    read so far)."""

    path = models.CharField(max_length=1000, verbose_name=_("path"))
    release_type = models.CharField(max_length=16, help_text=_("Snapshot or Full"), verbose_name=_("release type"))
    files = models.JSONField(default=dict, blank=True, verbose_name=_("files"))
    counts = models.JSONField(default=dict, blank=True, verbose_name=_("counts"))
    timings_ms = models.JSONField(default=dict, blank=True, verbose_name=_("timings (ms)"))

    class Meta(BackgroundRun.Meta):
        verbose_name = _("SNOMED CT import")
        verbose_name_plural = _("SNOMED CT imports")

    def __str__(self) -> str:
        return f"{self.path} ({self.status})"
