"""Evaluation metrics as pure functions (no database access): import from the submodules.

- ``retrieval``: URL-prefix graded relevance; nDCG@k, MRR, precision@k, recall@k.
- ``answers``: entity recall (normalised and stemmed whole-word matching); refusal detection.
- ``stats``: bootstrap confidence intervals, percentiles, latency summaries, McNemar's test.
- ``criteria``: the ER-only and composite pass criteria of one question.
"""
