"""Constants and helpers shared by the golden set builders."""

from __future__ import annotations

import hashlib

SPLITS = ("dev", "heldout")
# Share of MedQuAD documents (not pairs) in the held-out split, in percent of the hash space.
HELDOUT_PERCENT = 20
CI_MEDQUAD_COUNT = 40
CI_SEED = 0
MEDSAFETY_NOTE_CHARS = 300
SAMPLE_NOTE = "SAMPLE (invented hospital, taxonomy/sample.py)"


def _hash_int(text: str) -> int:
    """A stable 64-bit integer of ``text`` (SHA-256, first 8 bytes): the same on every machine and
    Python run, unlike ``hash()``."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
