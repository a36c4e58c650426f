"""Evaluation models arrive with issue 4 (golden sets, runs, judging)."""
