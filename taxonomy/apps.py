from django.apps import AppConfig


class TaxonomyConfig(AppConfig):
    """Curated hospital knowledge and SNOMED CT (issue 3; empty until then)."""

    name = "taxonomy"
    verbose_name = "Taxonomy"
