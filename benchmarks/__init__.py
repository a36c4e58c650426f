"""Rerunnable benchmarks (``make bench``); results go to docs/BENCHMARKS.md. Never run by tests."""
