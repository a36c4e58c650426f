from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TaxonomyConfig(AppConfig):
    """Curated hospital knowledge and SNOMED CT (issue 3; empty until then)."""

    name = "taxonomy"
    verbose_name = _("Taxonomy")

    def ready(self) -> None:
        from django.core.signals import setting_changed
        from django.db.models.signals import post_delete, post_save

        from taxonomy.models import Alias, BodySiteDepartment, Entity
        from taxonomy.resolver import lookup_terms_changed, lookup_terms_clear

        for model in (Alias, Entity, BodySiteDepartment):
            post_save.connect(lookup_terms_changed, sender=model, dispatch_uid=f"lookup-terms-save-{model.__name__}")
            post_delete.connect(
                lookup_terms_changed, sender=model, dispatch_uid=f"lookup-terms-delete-{model.__name__}"
            )
        setting_changed.connect(lookup_terms_clear, dispatch_uid="lookup-terms-settings")
