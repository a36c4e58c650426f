"""SNOMED CT import and resolver at national size (issue 3): a generated RF2 Snapshot release.

Generates (seed 3) 350,000 concepts, 1,500,000 descriptions (Dutch and English, made-up words),
5,000,000 relationships (each concept IS_A 1–3 parents higher up, plus attribute edges, 20 %
of disorders with a FINDING_SITE) and one language refset member per description, then times
``manage.py snomed_import`` in a separate process (``/usr/bin/time`` for its peak RSS) on a
fresh embedded database (``BENCH_SNOMED_PGDATA``), and the resolver's latency on 200 texts
built around real terms of the release.

Run: ``.venv/bin/python -m benchmarks.snomed_national`` (generation ≈ 2 min, import several).
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
import uuid

from benchmarks.common import BASE_DIR, percentile, results_write

CONCEPTS, DESCRIPTIONS, RELATIONSHIPS = 350_000, 1_500_000, 5_000_000
RELEASE = BASE_DIR / ".data" / "bench-snomed" / "release"
SYLLABLES = [
    "har",
    "ton",
    "fa",
    "len",
    "cor",
    "di",
    "ne",
    "pul",
    "mo",
    "gas",
    "tro",
    "ren",
    "hep",
    "a",
    "to",
    "os",
    "te",
    "ar",
    "thri",
    "tis",
    "oma",
    "ose",
    "lig",
    "ment",
    "bron",
    "chi",
]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))


def generate() -> None:
    rng = random.Random(3)
    RELEASE.mkdir(parents=True, exist_ok=True)
    concept_ids = [100000 + i * 10 + 3 for i in range(CONCEPTS)]  # fake but well-formed bigints
    with (RELEASE / "sct2_Concept_Snapshot_BE_20260315.txt").open("w") as out:
        out.write("id\teffectiveTime\tactive\tmoduleId\tdefinitionStatusId\r\n")
        for cid in concept_ids:
            out.write(f"{cid}\t20260315\t{1 if rng.random() > 0.05 else 0}\t11000172109\t900000000000074008\r\n")
    with (
        (RELEASE / "sct2_Description_Snapshot_BE_20260315.txt").open("w") as out,
        (RELEASE / "der2_cRefset_LanguageSnapshot-nl_BE_20260315.txt").open("w") as lang,
    ):
        out.write("id\teffectiveTime\tactive\tmoduleId\tconceptId\tlanguageCode\ttypeId\tterm\tcaseSignificanceId\r\n")
        lang.write("id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\tacceptabilityId\r\n")
        for i in range(DESCRIPTIONS):
            cid = concept_ids[i % CONCEPTS]
            language = "nl" if i % 3 else "en"
            term = " ".join(_word(rng) for _ in range(rng.randint(1, 4)))
            type_id = 900000000000003001 if i < CONCEPTS else 900000000000013009
            did = 200000 + i * 10 + 1
            out.write(f"{did}\t20260315\t1\t11000172109\t{cid}\t{language}\t{type_id}\t{term}\t900000000000448009\r\n")
            lang.write(
                f"{uuid.UUID(int=rng.getrandbits(128))}\t20260315\t1\t11000172109\t31000172101\t{did}\t{900000000000548007 if i < CONCEPTS else 900000000000549004}\r\n"
            )
    with (RELEASE / "sct2_Relationship_Snapshot_BE_20260315.txt").open("w") as out:
        out.write(
            "id\teffectiveTime\tactive\tmoduleId\tsourceId\tdestinationId\trelationshipGroup\ttypeId\tcharacteristicTypeId\tmodifierId\r\n"
        )
        for i in range(RELATIONSHIPS):
            index = i % CONCEPTS
            source = concept_ids[index]
            if i < CONCEPTS * 2 and index > 0:
                destination, type_id = concept_ids[rng.randrange(0, index)], 116680003
            elif i % 5 == 0:
                destination, type_id = concept_ids[rng.randrange(CONCEPTS)], 363698007
            else:
                destination, type_id = concept_ids[rng.randrange(CONCEPTS)], 246075003
            out.write(
                f"{300000 + i * 10 + 2}\t20260315\t1\t11000172109\t{source}\t{destination}\t{i % 4}\t{type_id}\t900000000000011006\t900000000000451002\r\n"
            )


def main() -> None:
    if not (RELEASE / "sct2_Relationship_Snapshot_BE_20260315.txt").exists():
        t0 = time.perf_counter()
        generate()
        print(f"generated in {time.perf_counter() - t0:.0f} s", flush=True)
    env = dict(
        os.environ, EMBEDDED_PGDATA=str(BASE_DIR / os.environ.get("BENCH_SNOMED_PGDATA", ".data/bench-snomed/postgres"))
    )
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=BASE_DIR, env=env, check=True)
    wall, maxrss = float("nan"), 0
    if not os.environ.get("BENCH_SNOMED_RESOLVER_ONLY"):  # set it to time only the resolver on the last import
        t0 = time.perf_counter()
        command = ["/usr/bin/time", "-f", "maxrss_kb=%M", sys.executable, "manage.py", "snomed_import", str(RELEASE)]
        result = subprocess.run(command, cwd=BASE_DIR, env=env, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t0
        maxrss = int(re.search(r"maxrss_kb=(\d+)", result.stderr).group(1))
        print(
            result.stdout.strip().splitlines()[-1],
            f"wall {wall:.0f} s, importer peak RSS {maxrss / 1024:.0f} MB",
            flush=True,
        )

    os.environ["EMBEDDED_PGDATA"] = env["EMBEDDED_PGDATA"]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zolsearch.settings")
    sys.path.insert(0, str(BASE_DIR))
    import django

    django.setup()
    from django.db import connection

    from taxonomy.models import SnomedImport
    from taxonomy.resolver import text_resolve

    with connection.cursor() as cursor:
        cursor.execute("SELECT term FROM taxonomy_snomeddescription TABLESAMPLE SYSTEM (0.1) LIMIT 200")
        terms = [row[0] for row in cursor.fetchall()]
        cursor.execute("SELECT pg_size_pretty(pg_database_size(current_database()))")
        size = cursor.fetchone()[0]
    texts = [f"Ik heb last van {term}, waar moet ik heen?" for term in terms]
    for text in texts[:5]:
        text_resolve(text=text, language="nl")
    latencies = []
    for text in texts:
        t0 = time.perf_counter()
        text_resolve(text=text, language="nl", with_terms=False)  # as the search pipeline calls it
        latencies.append((time.perf_counter() - t0) * 1000)
    run = SnomedImport.objects.latest("started_at")
    payload = {
        "release": {
            "concepts": CONCEPTS,
            "descriptions": DESCRIPTIONS,
            "relationships": RELATIONSHIPS,
            "language_members": DESCRIPTIONS,
        },
        "import": {
            "wall_s": round(wall, 1),
            "importer_peak_rss_mb": round(maxrss / 1024),
            "timings_ms": run.timings_ms,
            "counts": run.counts,
            "database_size": size,
        },
        "resolver_ms": {
            "p50": round(percentile(latencies, 50), 2),
            "p95": round(percentile(latencies, 95), 2),
            "n": len(latencies),
        },
    }
    print(payload, flush=True)
    results_write("snomed_national", payload)


if __name__ == "__main__":
    main()
