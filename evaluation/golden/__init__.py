"""Golden question sets: JSONL import/export (``io``) and builders from real data (``builders``)."""
