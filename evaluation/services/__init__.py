"""Writes of evaluation, split by subdomain: golden sets, runs, judging."""
