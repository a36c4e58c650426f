"""SAMPLE hospital data for the demo: invented departments, campuses, doctors, conditions and
treatments in Dutch. No real people, phone numbers or addresses: every doctor's name is made up
and marked ``is_sample``; the admin and the README say so. SNOMED CT ids are real International
concepts (present in the heart-failure subset where routing is demonstrated)."""

from __future__ import annotations

DEPARTMENTS = [
    (
        "cardiologie",
        "Cardiologie",
        "Cardiology",
        "012 34 56 01",
        "Onderzoek en behandeling van hart- en vaatziekten, zoals hartfalen en hartritmestoornissen.",
    ),
    (
        "neurologie",
        "Neurologie",
        "Neurology",
        "012 34 56 02",
        "Aandoeningen van de hersenen, het ruggenmerg en de zenuwen, zoals epilepsie en beroerte.",
    ),
    ("pneumologie", "Pneumologie", "Pulmonology", "012 34 56 03", "Longziekten, zoals astma en COPD."),
    ("endocrinologie", "Endocrinologie", "Endocrinology", "012 34 56 04", "Hormonale aandoeningen en diabetes."),
    (
        "spoedgevallen",
        "Spoedgevallen",
        "Emergency department",
        "012 34 56 00",
        "Dag en nacht open voor dringende zorg. Bel 112 bij levensgevaar.",
    ),
]
CAMPUSES = [
    ("campus-noord", "Campus Noord (voorbeeld)", "North campus (sample)", "Voorbeeldstraat 1, 9999 Voorbeeldstad"),
    ("campus-zuid", "Campus Zuid (voorbeeld)", "South campus (sample)", "Demolaan 2, 9999 Voorbeeldstad"),
]
# slug, name, department slugs, campus slug
DOCTORS = [
    ("dr-anna-demo", "dr. Anna Demo", ["cardiologie"], "campus-noord"),
    ("dr-bram-fictief", "dr. Bram Fictief", ["cardiologie"], "campus-zuid"),
    ("dr-chris-voorbeeld", "dr. Chris Voorbeeld", ["neurologie"], "campus-noord"),
    ("dr-dina-proef", "dr. Dina Proef", ["pneumologie"], "campus-zuid"),
    ("dr-eli-test", "dr. Eli Test", ["endocrinologie", "spoedgevallen"], "campus-noord"),
]
# slug, Dutch name, English name, SNOMED CT concept, departments that treat it
CONDITIONS = [
    ("hartfalen", "Hartfalen", "Heart failure", 84114007, ["cardiologie"]),
    ("hartritmestoornis", "Hartritmestoornis", "Cardiac arrhythmia", 698247007, ["cardiologie"]),
    ("epilepsie", "Epilepsie", "Epilepsy", 84757009, ["neurologie"]),
    ("astma", "Astma", "Asthma", 195967001, ["pneumologie"]),
    ("diabetes", "Diabetes", "Diabetes mellitus", 73211009, ["endocrinologie"]),
]
TREATMENTS = [
    ("pacemaker", "Pacemaker", "Pacemaker implantation", None, "cardiologie"),
    ("longfunctieonderzoek", "Longfunctieonderzoek", "Lung function test", None, "pneumologie"),
]
# alias text, entity slug, language
ALIASES = [
    ("hartzwakte", "hartfalen", "nl"),
    ("hartinsufficiëntie", "hartfalen", "nl"),
    ("suikerziekte", "diabetes", "nl"),
    ("vallende ziekte", "epilepsie", "nl"),
    ("spoed", "spoedgevallen", "nl"),
    ("heart failure", "hartfalen", "en"),
]
# SNOMED CT body structure → department (the editors' routing table)
BODY_SITES = [
    (80891009, "Heart structure", "cardiologie"),
    (87878005, "Left cardiac ventricular structure", "cardiologie"),
    (39607008, "Lung structure", "pneumologie"),
    (12738006, "Brain structure", "neurologie"),
]


def department_url(slug: str) -> str:
    """The (invented) web page of SAMPLE department ``slug``."""
    return f"https://voorbeeld.ziekenhuis.test/afdelingen/{slug}"


def department_campus(slug: str) -> str:
    """The campus slug SAMPLE department ``slug`` is LOCATED_AT: departments alternate between
    the campuses in the order of :data:`DEPARTMENTS`."""
    index = [d[0] for d in DEPARTMENTS].index(slug)
    return CAMPUSES[index % len(CAMPUSES)][0]
