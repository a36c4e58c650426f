"""Curated hospital knowledge (entities, relations, aliases) and SNOMED CT terminology tables.

Entities and relations are the graph the pipeline treats as the authority for routing ("which
department treats X", "where does Dr. Y work"). SNOMED CT rows keep the RF2 64-bit ids as
primary keys; they are written only by the RF2 importer (``taxonomy.snomed``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

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
    DOCTOR = "doctor", "Doctor"
    DEPARTMENT = "department", "Department"
    CONDITION = "condition", "Condition"
    TREATMENT = "treatment", "Treatment"
    CAMPUS = "campus", "Campus"
    SERVICE = "service", "Service"


class Entity(models.Model):
    """A doctor, department, condition, treatment, campus or service of the hospital.

    ``name`` is the Dutch display name; ``names`` holds other languages (``{"en": "…"}``).
    ``snomed_concept_id`` links a condition or treatment to SNOMED CT (the resolver's bridge).
    ``is_sample`` marks invented demo data, shown as such in the admin.
    """

    type = models.CharField(max_length=16, choices=EntityType.choices, db_index=True)
    slug = models.SlugField(max_length=120, unique=True)
    name = models.CharField(max_length=200)
    names = models.JSONField(default=dict, blank=True, help_text='Other languages, e.g. {"en": "Cardiology"}.')
    url = models.CharField(max_length=500, blank=True)
    phone = models.CharField(max_length=40, blank=True)
    description = models.TextField(blank=True)
    published = models.BooleanField(default=True)
    is_sample = models.BooleanField(default=False, help_text="Invented demonstration data, not a real hospital.")
    snomed_concept_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["type", "name"]
        verbose_name_plural = "entities"

    def __str__(self) -> str:
        return f"{self.name} ({self.get_type_display()})"

    def name_in(self, language: str) -> str:
        """The name in ``language``, else the Dutch name."""
        return str(self.names.get(language) or self.name)


class Predicate(models.TextChoices):
    WORKS_IN = "WORKS_IN", "works in"
    TREATS = "TREATS", "treats"
    OFFERS = "OFFERS", "offers"
    LOCATED_AT = "LOCATED_AT", "located at"
    PART_OF = "PART_OF", "part of"


class Provenance(models.TextChoices):
    EDITOR = "editor", "Editor"
    IMPORT = "import", "Import"
    SNOMED = "snomed", "SNOMED CT"


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

    subject = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="relations_out")
    predicate = models.CharField(max_length=16, choices=Predicate.choices)
    object = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="relations_in")
    subject_type = models.CharField(max_length=16, choices=EntityType.choices, editable=False)
    object_type = models.CharField(max_length=16, choices=EntityType.choices, editable=False)
    provenance = models.CharField(max_length=8, choices=Provenance.choices, default=Provenance.EDITOR)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["subject", "predicate", "object"], name="relation_uniq"),
            models.CheckConstraint(condition=~models.Q(subject=models.F("object")), name="relation_not_self"),
            models.CheckConstraint(
                condition=_allowed_relations_q(),
                name="relation_types_allowed",
                violation_error_message="This relation does not fit these entity types (for example, a doctor cannot WORK_IN a condition).",
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
    EDITOR = "editor", "Editor"
    SNOMED = "snomed", "SNOMED CT"
    IMPORT = "import", "Import"


class ReviewState(models.TextChoices):
    PENDING = "pending", "Pending"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"


class Alias(models.Model):
    """Another name patients use for an entity, per language, reviewed by an editor.

    ``normalised`` (lower case, accents folded, punctuation as spaces) is what the resolver
    matches. One approved normalised text per language points to one entity unless every
    such alias is flagged ``ambiguous``.
    """

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="aliases")
    text = models.CharField(max_length=300)
    normalised = models.CharField(max_length=300, editable=False, db_index=True)
    language = models.CharField(max_length=8, default="nl")
    origin = models.CharField(max_length=8, choices=AliasOrigin.choices, default=AliasOrigin.EDITOR)
    review_state = models.CharField(
        max_length=8, choices=ReviewState.choices, default=ReviewState.PENDING, db_index=True
    )
    ambiguous = models.BooleanField(default=False, help_text="This text may name several entities.")
    snomed_description_id = models.BigIntegerField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "aliases"
        constraints = [
            models.UniqueConstraint(fields=["entity", "normalised", "language"], name="alias_entity_text_uniq"),
            models.UniqueConstraint(
                fields=["normalised", "language"],
                condition=models.Q(review_state="approved", ambiguous=False),
                name="alias_approved_unambiguous_uniq",
                violation_error_message="This text is already approved for another entity; mark both aliases ambiguous first.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.text} → {self.entity.name}"

    def save(self, *args: object, **kwargs: object) -> None:
        self.normalised = text_normalise(self.text)
        super().save(*args, **kwargs)  # type: ignore[arg-type]


class BodySiteDepartment(models.Model):
    """Editors' routing table: a SNOMED CT body structure → the department that treats it."""

    body_site_concept_id = models.BigIntegerField(db_index=True)
    label = models.CharField(max_length=200, help_text="The body structure's name, for editors.")
    department = models.ForeignKey(Entity, on_delete=models.CASCADE, limit_choices_to={"type": EntityType.DEPARTMENT})

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["body_site_concept_id", "department"], name="bodysite_department_uniq")
        ]

    def __str__(self) -> str:
        return f"{self.label} → {self.department.name}"


# --- SNOMED CT RF2 -----------------------------------------------------------------------------


class SnomedConcept(models.Model):
    id = models.BigIntegerField(primary_key=True)
    effective_time = models.DateField()
    active = models.BooleanField()
    module_id = models.BigIntegerField()
    definition_status_id = models.BigIntegerField()

    def __str__(self) -> str:
        return str(self.id)


class SnomedDescription(models.Model):
    """RF2 description; ``term_normalised`` is lower case with accents folded (resolver key)."""

    id = models.BigIntegerField(primary_key=True)
    effective_time = models.DateField()
    active = models.BooleanField()
    module_id = models.BigIntegerField()
    concept_id = models.BigIntegerField(db_index=True)
    language_code = models.CharField(max_length=8)
    type_id = models.BigIntegerField()
    term = models.TextField()
    term_normalised = models.TextField()
    case_significance_id = models.BigIntegerField()

    class Meta:
        # Covering index: the resolver's term lookup is an index-only scan (after VACUUM), which
        # at national size avoids hundreds of random heap reads for common words.
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
    id = models.BigIntegerField(primary_key=True)
    effective_time = models.DateField()
    active = models.BooleanField()
    module_id = models.BigIntegerField()
    source_id = models.BigIntegerField()
    destination_id = models.BigIntegerField()
    relationship_group = models.IntegerField()
    type_id = models.BigIntegerField()
    characteristic_type_id = models.BigIntegerField()
    modifier_id = models.BigIntegerField()

    class Meta:
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

    id = models.UUIDField(primary_key=True)
    effective_time = models.DateField()
    active = models.BooleanField()
    module_id = models.BigIntegerField()
    refset_id = models.BigIntegerField()
    referenced_component_id = models.BigIntegerField(db_index=True)
    acceptability_id = models.BigIntegerField()

    def __str__(self) -> str:
        return f"{self.referenced_component_id} in {self.refset_id}"


class SnomedImport(BackgroundRun):
    """One RF2 import of the release under ``path``: the files and row counts it loaded,
    timings (ms), and the background-run fields (``total`` / ``done``: release files found /
    read so far)."""

    path = models.CharField(max_length=1000)
    release_type = models.CharField(max_length=16, help_text="Snapshot or Full")
    files = models.JSONField(default=dict, blank=True)
    counts = models.JSONField(default=dict, blank=True)
    timings_ms = models.JSONField(default=dict, blank=True)

    class Meta(BackgroundRun.Meta):
        pass

    def __str__(self) -> str:
        return f"{self.path} ({self.status})"
