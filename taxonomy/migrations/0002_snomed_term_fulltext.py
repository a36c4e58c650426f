"""Full-text index on normalised SNOMED CT terms, for editors' term search in the admin
(accent-insensitive through ``term_normalised``; the 'simple' configuration: no stemming, so
clinical words stay as they are)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("taxonomy", "0001_initial")]
    operations = [
        migrations.RunSQL(
            "CREATE INDEX snomed_desc_term_fts_idx ON taxonomy_snomeddescription "
            "USING gin (to_tsvector('simple', term_normalised))",
            "DROP INDEX IF EXISTS snomed_desc_term_fts_idx",
        )
    ]
