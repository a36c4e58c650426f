from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TaxonomyConfig(AppConfig):
    """Curated hospital knowledge and SNOMED CT (issue 3; empty until then)."""

    name = "taxonomy"
    verbose_name = _("Taxonomy")
