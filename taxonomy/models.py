"""Taxonomy models arrive with issue 3 (entities, relations, aliases, SNOMED CT)."""
