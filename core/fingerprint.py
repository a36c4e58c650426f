"""Fingerprints of source code, so stored results made by older code are recognised."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=32)
def source_fingerprint(*paths: str) -> str:
    """SHA-256 (first 16 hex characters) over the ``.py`` files under ``paths`` (files or folders
    relative to the project root), in sorted order, names and contents. Missing paths count as
    empty. Stable across machines and checkouts of the same code."""
    digest = hashlib.sha256()
    for relative in sorted(paths):
        root = BASE_DIR / relative
        files = sorted(root.rglob("*.py")) if root.is_dir() else [root] if root.is_file() else []
        for file in files:
            digest.update(str(file.relative_to(BASE_DIR)).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()[:16]
