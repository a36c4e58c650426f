"""Identifier stripping benchmark: recall and precision per kind, false positives on the
project's question sets, and latency.

Data, three kinds:
- ``data/privacy/labelled.jsonl``: hand-written messages with their identifier spans and hard
  negatives (format in ``data/privacy/README.md``); split ``dev`` (tuned on) and ``holdout``
  (written at the same time, before the rules; its errors are not printed). Both were written by
  the recognisers' author, so both are optimistic.
- ``generated_rows``: ``TEMPLATES`` filled with Faker's names, streets and towns, which the rules
  were not written from; ``generated-dev`` (seed 20261124, tuned on) and ``generated-test`` (seed
  20261125, never tuned on: the honest recall figure).
- ``UNLABELLED_SETS``: the project's question sets, which hold no personal identifiers: every
  finding there is a false positive, or a public person ("Victor Hugo").

Matching is span-level: a labelled span counts as found when a finding of the same kind
overlaps it by at least one character ("overlap"), and a finding counts as correct when it
overlaps a labelled span of its kind. ``*_exact`` asks for the same start and end as well.
``any_kind_recall`` counts a labelled span as found when a finding of any kind overlaps it (the
value is gone from the stripped text even if its kind was wrong), and ``leaks`` lists messages
whose stripped text still contains a labelled value.

Latency: ``identifiers_strip`` per message in ms (3 passes over the labelled and generated
messages) after one warm-up call; ``*_best_of_3`` takes each message's fastest pass, which is
what the code costs when other processes share the 2 cores (the 1-minute load average is
recorded beside it); the engine build is ``engine_build_s``. Run:
``.venv/bin/python -m benchmarks.privacy``; results in ``docs/bench-results/privacy.json``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
LABELLED = BASE_DIR / "data" / "privacy" / "labelled.jsonl"
KINDS = ("PERSON", "INSZ", "PHONE", "EMAIL", "ADDRESS", "DATE_OF_BIRTH", "IBAN")


def labelled_rows(path: Path = LABELLED) -> list[dict[str, Any]]:
    """Rows of the labelled set; raises ValueError if a span's text is not ``text[start:end]``."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        for span in row["spans"]:
            if row["text"][span["start"] : span["end"]] != span["text"]:
                raise ValueError(f"{row['id']}: span {span} does not match its text")
    return rows


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def scores(rows: Iterable[dict[str, Any]], find: Callable[[str, str], list[tuple[str, int, int]]]) -> dict[str, Any]:
    """Recall/precision per kind and overall for ``find(text, language) -> [(kind, start, end)]``.

    Returns ``{"per_kind": {kind: {...}}, "overall": {...}, "errors": [...]}``; each cell has
    ``recall``, ``precision`` (overlap matching, in [0, 1], None when undefined), their exact
    counterparts, ``gold`` and ``found`` counts; ``overall`` adds ``any_kind_recall``.
    """
    counts = {kind: {"gold": 0, "hit": 0, "hit_exact": 0, "found": 0, "ok": 0, "ok_exact": 0} for kind in KINDS}
    any_kind_hits = 0
    errors: list[dict[str, Any]] = []
    for row in rows:
        found = find(row["text"], row["language"])
        gold = [(s["kind"], s["start"], s["end"]) for s in row["spans"]]
        for kind, start, end in gold:
            c = counts[kind]
            c["gold"] += 1
            same = [f for f in found if f[0] == kind and _overlap(f[1:], (start, end))]
            c["hit"] += bool(same)
            c["hit_exact"] += any(f[1:] == (start, end) for f in same)
            any_kind_hits += any(_overlap(f[1:], (start, end)) for f in found)
            if not same:
                errors.append({"id": row["id"], "split": row["split"], "missed": kind, "text": row["text"][start:end]})
        for kind, start, end in found:
            c = counts[kind]
            c["found"] += 1
            same = [g for g in gold if g[0] == kind and _overlap(g[1:], (start, end))]
            c["ok"] += bool(same)
            c["ok_exact"] += any(g[1:] == (start, end) for g in same)
            if not same:
                errors.append(
                    {"id": row["id"], "split": row["split"], "spurious": kind, "text": row["text"][start:end]}
                )

    def cell(c: dict[str, int]) -> dict[str, Any]:
        def ratio(a: int, b: int) -> float | None:
            return round(a / b, 4) if b else None

        return {
            "recall": ratio(c["hit"], c["gold"]),
            "precision": ratio(c["ok"], c["found"]),
            "recall_exact": ratio(c["hit_exact"], c["gold"]),
            "precision_exact": ratio(c["ok_exact"], c["found"]),
            "gold": c["gold"],
            "found": c["found"],
        }

    total = {key: sum(c[key] for c in counts.values()) for key in next(iter(counts.values()))}
    overall = cell(total) | {"any_kind_recall": round(any_kind_hits / total["gold"], 4) if total["gold"] else None}
    return {"per_kind": {kind: cell(c) for kind, c in counts.items()}, "overall": overall, "errors": errors}


# Templates of the generated set: written before the recognisers were run on it. {slot}s are
# filled from Faker's own name, street and town lists (not core/data/first_names.txt), so a
# name the rules have never seen is the normal case here. "doctor" slots are kept by design
# (labelled nothing); "first_lower"/"surname_lower" are names typed without capitals.
TEMPLATES: tuple[tuple[str, str], ...] = (
    ("nl", "Goeiemiddag, mijn naam is {name} en ik wil mijn afspraak van volgende week verzetten."),
    ("nl", "Kunnen jullie mij terugbellen op {phone}? Het gaat over mijn uitslag."),
    ("nl", "Ik ben {name}, geboren op {dob}, en ik zoek mijn uitslagen."),
    ("nl", "Mijn {kin} {name} ligt sinds gisteren op geriatrie, wanneer is het bezoekuur?"),
    ("nl", "Nieuw adres: {street}, {town}. Kunnen jullie dat aanpassen in mijn dossier?"),
    ("nl", "Stuur de factuur naar {email} aub, mijn rijksregisternummer is {insz}"),
    ("nl", "Graag een afspraak bij dokter {doctor} voor mijn knie, mijn gsm: {phone}"),
    ("nl", "Mevrouw {surname} van kamer 12 vraagt of haar dochter mag overnachten."),
    ("nl", "hallo, {first_lower} {surname_lower} hier, mag ik na de operatie zelf naar huis rijden?"),
    ("nl", "Ik woon in de {street} in {town} en zoek de wachtpost."),
    ("nl", "Mijn {kin} {first} (°{dob}) heeft sinds 3 dagen koorts, moet ik naar spoed?"),
    ("nl", "De terugbetaling mag op {iban}, dank u."),
    ("nl", "Ik heb 2 x 500 mg paracetamol genomen, is dat genoeg? Groeten, {name}"),
    ("nl", "Wie is de behandelende arts van meneer {surname}? Ik ben zijn {kin}."),
    ("nl", "Geboortedatum: {dob}. Naam: {name}. Telefoon: {phone}."),
    ("nl", "Waar moet ik zijn voor een bloedname op campus Sint-Jan? {name}"),
    ("nl", "Is dokter {doctor} morgen aanwezig op de raadpleging?"),
    ("nl", "{name} ({dob}) wordt morgen opgenomen voor een heupoperatie, wat moet ze meebrengen?"),
    ("nl", "Ik bel voor {first}, mijn {kin}, zij heeft om 14u een afspraak op cardiologie."),
    ("nl", "mijn mailadres is gewijzigd naar {email}"),
    ("nl", "Sinds 12 maart neem ik 40 mg pantoprazol, mag dat samen met de chemo van dr. {doctor}?"),
    ("nl", "Mijn afspraak op 14/02/2026 om 9u30 bij dokter {doctor} kan niet doorgaan."),
    ("fr", "Bonjour, je suis {name}, pouvez-vous me rappeler au {phone} ?"),
    ("fr", "Madame {surname} est née le {dob} et a rendez-vous en cardiologie."),
    ("fr", "J'habite {street}, {town}. Quel campus est le plus proche ?"),
    ("fr", "Mon numéro national est {insz}, mon e-mail {email}."),
    ("fr", "Le docteur {doctor} consulte-t-il le lundi ?"),
    ("fr", "Mon fils {first} a 39 de fièvre depuis hier."),
    ("en", "Hello, I am {name} and my date of birth is {dob}."),
    ("en", "Please call my husband {name} on {phone}."),
    ("en", "Can Dr {doctor} see me this week? My email is {email}"),
    ("en", "My address is {street}, {town}."),
)
_SLOT_KINDS = {
    "name": "PERSON", "first": "PERSON", "surname": "PERSON", "first_lower": "PERSON", "surname_lower": "PERSON",
    "phone": "PHONE", "email": "EMAIL", "street": "ADDRESS", "town": "ADDRESS", "dob": "DATE_OF_BIRTH",
    "insz": "INSZ", "iban": "IBAN",
}  # fmt: skip
_KIN = {
    "nl": ["moeder", "vader", "dochter", "zoon", "man", "vrouw", "oma", "opa", "broer", "zus"],
    "fr": ["mère", "père", "fille", "fils"],
    "en": ["mother", "father", "wife", "son"],
}
_MONTH_NAMES = {
    "nl": "januari februari maart april mei juni juli augustus september oktober november december".split(),
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre".split(),
    "en": "January February March April May June July August September October November December".split(),
}
_LOCALES = {"nl": ("nl_BE", "nl_NL"), "fr": ("fr_FR", "fr_BE"), "en": ("en_GB", "en_GB")}


def generated_rows(n: int = 300, seed: int = 20261124, split: str = "generated-dev") -> list[dict[str, Any]]:
    """``n`` messages from ``TEMPLATES`` filled with Faker (seeded: the same rows for the same
    Faker version, pinned in constraints.txt), in the labelled set's format, with ``split``.

    Phone numbers are Belgian/Dutch numbers that libphonenumber calls valid (Faker's own are
    often not), in the formats patients type; INSZ numbers are Faker's nl_BE ``ssn`` (valid
    checksums) written in several ways.
    """
    import random

    import phonenumbers
    from faker import Faker

    rng = random.Random(seed)
    fakers = {loc: Faker(loc) for pair in _LOCALES.values() for loc in pair}
    for i, faker in enumerate(fakers.values()):
        faker.seed_instance(seed + i)

    def phone() -> str:
        while True:
            if rng.random() < 0.8:
                mobile = rng.random() < 0.6
                zone = rng.choice(["470", "472", "475", "477", "478", "479", "484", "486", "488", "491", "494", "496"])
                if not mobile:
                    zone = rng.choice(["11", "12", "13", "14", "15", "16", "50", "51", "53", "56", "87", "89"])
                rest = f"{rng.randrange(10**6):06d}"
                national = "0" + zone + rest
                if national[1:] in ("89325050", "70245245"):
                    continue
                text = rng.choice(
                    [
                        f"0{zone} {rest[:2]} {rest[2:4]} {rest[4:]}",
                        f"0{zone}/{rest[:2]}.{rest[2:4]}.{rest[4:]}",
                        f"0{zone}{rest}",
                        f"+32 {zone} {rest[:2]} {rest[2:4]} {rest[4:]}",
                        f"0032{zone}{rest}",
                        f"0{zone}-{rest[:2]}-{rest[2:4]}-{rest[4:]}",
                    ]
                )
                region = "BE"
            else:
                rest = f"{rng.randrange(10**8):08d}"
                text = rng.choice([f"06-{rest}", f"06 {rest[:2]} {rest[2:4]} {rest[4:6]} {rest[6:]}", f"+31 6 {rest}"])
                region = "NL"
            if phonenumbers.is_valid_number(phonenumbers.parse(text, region)):
                return text

    def dob(language: str, faker: Faker) -> str:
        born = faker.date_of_birth(minimum_age=0, maximum_age=95)
        month = _MONTH_NAMES[language][born.month - 1]
        return rng.choice(
            [
                f"{born.day:02d}/{born.month:02d}/{born.year}",
                f"{born.day}/{born.month}/{born.year}",
                f"{born.day:02d}.{born.month:02d}.{born.year}",
                f"{born.day}-{born.month}-{born.year % 100:02d}",
                f"{born.day} {month} {born.year}",
                *([f"{month} {born.day}, {born.year}"] if language == "en" else []),
            ]
        )

    def insz(faker: Faker) -> str:
        d = Faker("nl_BE")
        d.seed_instance(rng.randrange(10**9))
        number = d.ssn()
        return rng.choice(
            [
                number,
                f"{number[:2]}.{number[2:4]}.{number[4:6]}-{number[6:9]}.{number[9:]}",
                f"{number[:6]} {number[6:9]} {number[9:]}",
            ]
        )

    def street(language: str, faker: Faker) -> str:
        if language == "fr":  # fr_BE's streets are American ("Paquet Court"); fr_FR's are French
            return f"{fakers['fr_FR'].street_name()} {rng.randrange(1, 300)}"
        return faker.street_address().split("\n")[0] if language == "nl" else fakers["nl_BE"].street_address()

    def town(language: str, faker: Faker) -> str:
        if language == "nl" and faker is fakers["nl_NL"]:
            return f"{faker.postcode()} {faker.city()}"
        belgian = fakers["nl_BE"]
        return f"{belgian.postcode()} {belgian.city()}"

    rows = []
    for index in range(n):
        language, template = TEMPLATES[index % len(TEMPLATES)]
        faker = fakers[rng.choice(_LOCALES[language])]
        first, surname = faker.first_name(), faker.last_name()
        values = {
            "name": f"{first} {surname}", "first": first, "surname": surname, "first_lower": first.lower(),
            "surname_lower": surname.lower(), "phone": phone(), "email": faker.email(), "street": street(language, faker),
            "town": town(language, faker), "dob": dob(language, faker), "insz": insz(faker),
            "iban": " ".join(textwrap_chunks(fakers["nl_BE"].iban())) if rng.random() < 0.5 else fakers["nl_BE"].iban(),
            "doctor": faker.last_name(), "kin": rng.choice(_KIN[language]),
        }  # fmt: skip
        text, spans, position = "", [], 0
        for match in re.finditer(r"\{(\w+)\}", template):
            text += template[position : match.start()]
            slot = match.group(1)
            value = values[slot]
            if slot in _SLOT_KINDS:
                spans.append(
                    {"kind": _SLOT_KINDS[slot], "start": len(text), "end": len(text) + len(value), "text": value}
                )
            text += value
            position = match.end()
        text += template[position:]
        for a, b in zip(spans, spans[1:], strict=False):  # "street, town" is one address, as in labelled.jsonl
            if a["kind"] == b["kind"] == "ADDRESS" and text[a["end"] : b["start"]] == ", ":
                b["start"], b["text"] = a["start"], text[a["start"] : b["end"]]
                a["kind"] = ""
        spans = [span for span in spans if span["kind"]]
        rows.append(
            {"id": f"{split[10]}{index + 1:03d}", "language": language, "split": split, "text": text, "spans": spans}
        )
    return rows


def textwrap_chunks(value: str, size: int = 4) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)]


# Question sets of the project that carry no personal identifiers (MedQuAD questions and their
# paraphrases, safety and guard examples, hospital questions): every finding on them is a false
# positive or a public name ("Victor Hugo"), listed for review.
UNLABELLED_SETS = (
    "data/golden/medquad-dev.jsonl",
    "data/golden/medquad-heldout-noisy.jsonl",
    "data/golden/medquad-heldout-para-en.jsonl",
    "data/golden/medquad-heldout-para-nl.jsonl",
    "data/golden/must-answer.jsonl",
    "data/golden/red-flags.jsonl",
    "data/golden/rivm-faq.jsonl",
    "data/golden/sample-hospital.jsonl",
    "data/safety/guard-seed.jsonl",
    "data/safety/red-flags-holdout.jsonl",
    "data/safety/red-flags-holdout2.jsonl",
    "../shared/data/hospital-nl/questions.jsonl",
)


def unlabelled_findings(find: Callable[[str, str], list[tuple[str, int, int]]]) -> dict[str, Any]:
    """Findings on ``UNLABELLED_SETS`` (the sets that exist): counts per kind and the findings."""
    messages, listed = 0, []
    per_kind = dict.fromkeys(KINDS, 0)
    for name in UNLABELLED_SETS:
        path = BASE_DIR / name
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            text = row.get("question") or row.get("text") or ""
            messages += 1
            for kind, start, end in find(text, row.get("language") or "nl"):
                per_kind[kind] += 1
                listed.append({"set": path.name, "kind": kind, "text": text[start:end], "message": text[:160]})
    return {
        "messages": messages,
        "messages_with_findings": len({(f["set"], f["message"]) for f in listed}),
        "per_kind": per_kind,
        "findings": listed,
    }


def main() -> None:
    sys.path.insert(0, str(BASE_DIR))
    from benchmarks.common import percentile, results_write
    from core.privacy import identifiers_find, identifiers_strip

    rows = labelled_rows() + generated_rows() + generated_rows(seed=20261125, split="generated-test")
    t0 = time.perf_counter()
    identifiers_strip("warm-up: bel 0470 12 34 56", language="nl")
    build_s = time.perf_counter() - t0

    def find(text: str, language: str) -> list[tuple[str, int, int]]:
        return [(f.kind, f.start, f.end) for f in identifiers_find(text, language=language)]

    latencies_ms = []
    best_ms = [float("inf")] * len(rows)
    leaks = []
    for repeat in range(3):
        for index, row in enumerate(rows):
            t = time.perf_counter()
            stripped, _kinds = identifiers_strip(row["text"], language=row["language"])
            latencies_ms.append((time.perf_counter() - t) * 1000)
            best_ms[index] = min(best_ms[index], latencies_ms[-1])
            leaked = [s["kind"] for s in row["spans"] if s["text"] in stripped]
            if leaked and repeat == 0:
                leaks.append({"id": row["id"], "split": row["split"], "kinds": leaked})
    splits = {}
    tuned_errors = []
    for split in ("dev", "holdout", "labelled", "generated-dev", "generated-test"):
        subset = [r for r in rows if r["split"] == split or (split == "labelled" and r["split"] in ("dev", "holdout"))]
        result = scores(subset, find)
        splits[split] = {"messages": len(subset), "per_kind": result["per_kind"], "overall": result["overall"]}
        if split in ("dev", "generated-dev"):
            tuned_errors += result["errors"]
    unlabelled = unlabelled_findings(find)
    payload = {
        "data": {
            "labelled": f"{LABELLED.relative_to(BASE_DIR)} (dev and holdout splits)",
            "generated-dev": "generated_rows(300, seed 20261124): TEMPLATES filled from Faker; rules tuned on it",
            "generated-test": "generated_rows(300, seed 20261125): the same templates, other values; never tuned on",
        },
        "matching": "span-level; overlap (same kind, ≥1 shared character) and exact (same start and end)",
        "messages": len(rows),
        "splits": splits,
        "leaks": {split: [leak for leak in leaks if leak["split"] == split] for split in splits if split != "labelled"},
        "unlabelled_question_sets": unlabelled,
        "engine_build_s": round(build_s, 2),
        "latency_ms": {
            "what": "identifiers_strip per message (labelled and generated, 3 passes), warm engine",
            "p50": round(percentile(latencies_ms, 50), 3),
            "p95": round(percentile(latencies_ms, 95), 3),
            "max": round(max(latencies_ms), 3),
            "p50_best_of_3": round(percentile(best_ms, 50), 3),
            "p95_best_of_3": round(percentile(best_ms, 95), 3),
            "load_average_1m": round(os.getloadavg()[0], 2),
        },
        "errors_of_tuning_splits": tuned_errors,
    }
    for split, result in splits.items():
        print(f"== {split} ({result['messages']} messages)")
        for kind, c in [*result["per_kind"].items(), ("overall", result["overall"])]:
            print(
                f"  {kind:14} recall {c['recall']}  precision {c['precision']}  (gold {c['gold']}, found {c['found']})"
            )
    print(f"unlabelled question sets: {unlabelled['messages']} messages, findings {unlabelled['per_kind']}")
    print(f"leaks: {len(leaks)}  latency ms: {payload['latency_ms']}  engine build {payload['engine_build_s']} s")
    for error in tuned_errors:
        print("  error:", error)
    print(results_write("privacy", payload))


if __name__ == "__main__":
    main()
