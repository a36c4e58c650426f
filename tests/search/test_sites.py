"""Site names: the question names the hospital of a page's web address (``site_named``)."""

from __future__ import annotations

import json

import pytest

from core.providers.embeddings import embedding_provider_get
from ingestion.models import Source
from ingestion.selectors import document_host_names
from ingestion.services import documents_upsert
from tests.search import HOSPITAL_NL, feature_of_candidates, hospital_page_records
from zolsearch.search.config import pipeline_config_default
from zolsearch.search.pipeline import SearchRequest, pipeline_run
from zolsearch.search.sites import (
    SiteMatcher,
    index_site_labels,
    index_sites_clear,
    name_labels,
    page_labels,
    site_labels,
)


@pytest.fixture(scope="module")
def sites() -> tuple[tuple[str, ...], ...]:
    """The labels of shared/data/hospital-nl's 100 pages (65 hospitals: address and name) and
    of MedQuAD's pages."""
    with (HOSPITAL_NL / "pages.jsonl").open(encoding="utf-8") as pages:
        hospitals = {page_labels(page["url"], page["metadata"]) for page in map(json.loads, pages)}
    return tuple(
        sorted(hospitals | {site_labels(u) for u in ("https://www.cancer.gov/x", "https://ghr.nlm.nih.gov/x")})
    )


@pytest.fixture(autouse=True)
def _fresh_site_cache():  # type: ignore[no-untyped-def]
    """No test sees another's index labels (the cache lives for the process)."""
    index_sites_clear()
    yield
    index_sites_clear()


def test_site_labels_are_the_hosts_name_parts() -> None:
    assert site_labels("https://www.hartcentrumbrugge-oostende.be/cardiologie/") == ("hartcentrumbrugge", "oostende")
    assert site_labels("https://www6.erasmusmc.nl/ickinderen/") == ("erasmusmc",)
    assert site_labels("https://ghr.nlm.nih.gov/condition/x") == ("ghr", "nlm", "nih")
    assert site_labels("https://uza.be/") == ("uza",)
    assert site_labels("medquad:GARD:0000004") == () and site_labels("") == ()
    assert site_labels("https://[::1/x") == ()  # does not parse: no labels, no error
    assert site_labels("https://WWW.UZGent.be:8443/nl") == ("uzgent",)


@pytest.mark.parametrize(
    ("question", "url"),
    [
        ("parkeerticket kwijt uz gent wat moet ik doen", "https://www.uzgent.be/nl/parkeren"),  # two words joined
        ("hoeveel dagen op voorhand een tolk vragen in jan portaels", "https://www.azjanportaels.be/nl/tolk"),
        ("afspraak maken bij de cardioloog in brugge", "https://www.hartcentrumbrugge-oostende.be/x"),  # ends
        ("hoeveel mensen mogen er kijken bij bravis", "https://www.bravismoederenkindcentrum.nl/bezoek"),  # begins
        ("spoed ziekenhuis geel via welke straat", "https://www.ziekenhuisgeel.be/spoed"),
        ("moet ik op spoed blijven slapen in het uza", "https://www.uza.be/spoed"),
        ("Quelles sont les heures de visite à l'AZ Sint-Jan de Bruges", "https://www.azsintjan.be/bezoek"),
        # a town's English or French name is its Dutch one (EXONYMS)
        ("where can I park at UZ Ghent hospital", "https://www.uzgent.be/nl/parkeren"),
        ("heures de visite à l'hôpital de Bruges", "https://www.hartcentrumbrugge-oostende.be/x"),
        ("parking at the hospital in Louvain", "https://www.uzleuven.be/x"),
    ],
)
def test_a_question_names_the_hospital_it_is_about(question: str, url: str, sites: tuple[tuple[str, ...], ...]) -> None:
    assert SiteMatcher(question, "nl", sites).names(site_labels(url))


@pytest.mark.parametrize(
    ("question", "url"),
    [
        # "moeder" is inside bravismoederenkindcentrum, not at either end
        ("mijn moeder spreekt alleen arabisch kan er een tolk komen", "https://www.bravismoederenkindcentrum.nl/x"),
        # "naar de" is two stop words, not "…naarde"
        ("kan ik zonder verwijzing naar de seh", "https://www.azoudenaarde.be/x"),
        # "recht" is shorter than a part may be; "umcutrecht" is not named
        ("ik wil niet weten hoe erg het is heb ik dat recht", "https://www.umcutrecht.nl/x"),
        # "ziekenhuis" and "sint" are parts of three or more hospitals' names: generic
        ("mag ik bloemen meebrengen naar het ziekenhuis", "https://www.antoniusziekenhuis.nl/x"),
        ("wat kost een kamer in sint maria halle", "https://www.sint-trudo.be/x"),
        ("What is the treatment of cancer?", "https://www.uzgent.be/x"),
    ],
)
def test_ordinary_words_name_no_hospital(question: str, url: str, sites: tuple[tuple[str, ...], ...]) -> None:
    assert not SiteMatcher(question, "nl", sites).names(site_labels(url))


def test_name_labels_leave_out_the_words_that_say_what_an_institution_is() -> None:
    assert name_labels("Deventer Ziekenhuis") == ("deventer",)
    assert name_labels("GZA Ziekenhuizen") == ("gza",)
    assert name_labels("Zuyderland Medisch Centrum") == ("zuyderland",)
    assert name_labels("AZ Sint-Jan Brugge") == ("sint", "jan", "brugge", "azsintjanbrugge")
    assert name_labels("Noorderhart Mariaziekenhuis (Mariaziekenhuis Noord-Limburg)") == (
        "noorderhart",
        "mariaziekenhuis",
        "noord",
        "limburg",
        "noorderhartmariaziekenhuis",
    )
    assert name_labels("UZ Gent") == ("gent", "uzgent") and name_labels("LUMC") == ("lumc",)
    assert page_labels("https://www.uzgent.be/x", {"hospital": "UZ Gent"}) == ("uzgent", "gent")
    assert page_labels("https://www.uzgent.be/x", {"hospital": 3}) == ("uzgent",)  # not a name: ignored
    assert page_labels("https://www.uzgent.be/x") == ("uzgent",)


@pytest.mark.parametrize(
    ("question", "url", "hospital", "named"),
    [
        # the name patients use is not in the address
        ("mag mijn dochtertje mee op bezoek in het deventer ziekenhuis", "https://www.dz.nl/bezoek", "Deventer Ziekenhuis", True),
        ("kan ik in tiel zonder verwijzing naar de seh", "https://www.ziekenhuisrivierenland.nl/seh", "Ziekenhuis Rivierenland Tiel", True),
        ("hoe krijg ik mijn vader in het daghospitaal van gza", "https://www.gzaziekenhuizen.be/x", "GZA Ziekenhuizen", True),
        # an institution word of a name names nothing
        ("mijn vader is overleden kan ik zijn medisch dossier inkijken", "https://www.zuyderland.nl/x", "Zuyderland Medisch Centrum", False),
        ("mag ik bloemen meebrengen naar het ziekenhuis", "https://www.dz.nl/bezoek", "Deventer Ziekenhuis", False),
    ],
)  # fmt: skip
def test_a_question_names_a_hospital_by_its_name(
    question: str, url: str, hospital: str, named: bool, sites: tuple[tuple[str, ...], ...]
) -> None:
    if named:
        assert not SiteMatcher(question, "nl", sites).names(site_labels(url))  # the address alone misses it
    assert SiteMatcher(question, "nl", sites).names(page_labels(url, {"hospital": hospital})) is named


@pytest.mark.django_db
def test_the_feature_marks_the_named_hospitals_pages_and_follows_ingestion() -> None:
    """GIVEN the 100 real pages of 65 hospitals of shared/data/hospital-nl ingested beside the
    bundled MedQuAD slice WHEN a patient asks about parking at one of them THEN exactly that
    hospital's candidates have ``site_named`` 1 while the source has a priority (none without),
    and the index's site labels include the hospitals once they are ingested."""
    records = hospital_page_records()
    wanted = {"www.uzgent.be", "www.uza.be"}
    before = index_site_labels()
    assert ("uzgent",) not in before
    source, _ = Source.objects.get_or_create(key="hospital-nl", defaults={"name": "hospital-nl"})
    documents_upsert(source=source, records=records, provider=embedding_provider_get())
    assert wanted <= {host for host, _ in document_host_names()}
    index_sites_clear()  # read again at once, not after SITES_CHECK_S
    sites = index_site_labels()
    assert {("uzgent", "gent"), ("uza", "antwerpen")} <= set(sites)  # address, then name

    question = "waar kan ik mijn auto parkeren aan het uz gent"
    state = pipeline_run(request=SearchRequest(question=question, language="nl"), config=pipeline_config_default())

    def marks(priorities: dict[str, int]) -> list[float]:
        return feature_of_candidates(state, "site_named", question=question, priorities=priorities, sites=sites)

    ids = [i for i, _ in state.fused if i in state.chunks]
    hosts = [state.chunks[i].document.url.split("/")[2] if "//" in state.chunks[i].document.url else "" for i in ids]
    assert "www.uzgent.be" in hosts and len(set(hosts) - {"www.uzgent.be", ""}) >= 3  # other hospitals' pages
    assert marks({"hospital-nl": 10}) == [1.0 if h == "www.uzgent.be" else 0.0 for h in hosts]
    assert set(marks({})) == {0.0}  # only the pages of a source with a priority (the hospital's own)


@pytest.mark.django_db
def test_the_gate_refuses_a_draft_from_another_hospital_than_the_one_named() -> None:
    """GIVEN the 100 real pages of 65 hospitals (priority 10) beside the bundled MedQuAD slice
    WHEN a patient asks about a single room at UZ Leuven THEN the draft the pipeline wrote
    passes the site agreement, the same draft citing another hospital's candidate page does
    not, and without a priority (no page is a hospital's own) the check never fires."""
    from dataclasses import replace

    from zolsearch.search.stages.quality_gate import draft_site_disagrees

    records = hospital_page_records()
    source, _ = Source.objects.get_or_create(key="hospital-nl", defaults={"name": "hospital-nl"})
    source.priority = 10
    source.save(update_fields=["priority"])
    documents_upsert(source=source, records=records, provider=embedding_provider_get())
    index_sites_clear()
    config = pipeline_config_default().with_overrides(source_priorities={"hospital-nl": 10})
    question = "hoeveel kost een eenpersoonskamer per dag in uz leuven"
    state = pipeline_run(request=SearchRequest(question=question, language="nl"), config=config)
    assert state.draft is not None
    hosts = {i: site_labels(c.document.url) for i, c in state.chunks.items()}
    assert ("uzleuven",) in hosts.values(), hosts
    assert any("uzleuven" in hosts[i] for i in state.draft.cited_chunk_ids), [
        hosts[i] for i in state.draft.cited_chunk_ids
    ]
    assert not draft_site_disagrees(state)
    other = next(i for i, labels in hosts.items() if labels and "leuven" not in "".join(labels))
    state.draft = replace(state.draft, cited_chunk_ids=[other])
    assert draft_site_disagrees(state)
    state.config = config.with_overrides(source_priorities={})
    assert not draft_site_disagrees(state)


@pytest.mark.django_db
def test_the_named_hospitals_pages_go_before_other_hospitals_pages() -> None:
    """GIVEN the 100 real pages of 65 hospitals (priority 10) beside the bundled MedQuAD slice
    WHEN a question names St Jansdal and the ranking has another hospital's page, a MedQuAD page
    and St Jansdal's page, in that order THEN St Jansdal's page takes the first hospital page's
    place and the MedQuAD page keeps its own; a question that names no hospital, or only one
    without a candidate page, leaves the order as it is; and the pipeline's candidates for the
    question begin, among hospital pages, with St Jansdal's."""
    from ingestion.models import Chunk
    from zolsearch.search.stages.rerank import named_hospital_first

    source, _ = Source.objects.get_or_create(key="hospital-nl", defaults={"name": "hospital-nl"})
    source.priority = 10
    source.save(update_fields=["priority"])
    documents_upsert(source=source, records=hospital_page_records(), provider=embedding_provider_get())
    index_sites_clear()
    config = pipeline_config_default().with_overrides(source_priorities={"hospital-nl": 10})
    question = "mag mijn vriend heel de dag bij mij blijven na de bevalling in st jansdal"
    state = pipeline_run(request=SearchRequest(question=question, language="nl"), config=config)
    own = [i for i, _ in state.fused if state.chunks[i].document.source.key == "hospital-nl"]
    assert own and "stjansdal" in state.chunks[own[0]].document.url

    chunks = Chunk.objects.select_related("document__source")
    jansdal = chunks.filter(document__url__contains="stjansdal.nl").first()
    other = chunks.filter(document__url__contains="mumc.nl").first()
    general = chunks.exclude(document__source__key="hospital-nl").first()
    assert jansdal is not None and other is not None and general is not None
    state.chunks = {c.id: c for c in (jansdal, other, general)}
    fused = [(other.id, 0.9), (general.id, 0.8), (jansdal.id, 0.7)]
    assert named_hospital_first(state, fused) == [(jansdal.id, 0.7), (general.id, 0.8), (other.id, 0.9)]
    for unnamed in ("mag mijn vriend heel de dag blijven na de bevalling", "bezoekuren in het az groeninge"):
        state.question = unnamed
        assert named_hospital_first(state, fused) == fused, unnamed


@pytest.mark.django_db
def test_crags_refined_ranking_puts_the_named_hospitals_pages_first_too(settings) -> None:  # type: ignore[no-untyped-def]
    """GIVEN the 100 real pages of 65 hospitals (priority 10) beside the bundled MedQuAD slice and
    a question naming St Jansdal WHEN CRAG refines it and adopts the deeper ranking (the first
    ranking's scores made the least confident possible) THEN the adopted ranking has St
    Jansdal's page first among the hospitals' pages, as the rerank stage orders its own; the
    reranker alone puts two other hospitals' maternity pages above it (named_hospital_first's
    docstring)."""
    from zolsearch.search.stages.rerank import CragStage

    settings.RERANKER = "features-lr"
    source, _ = Source.objects.get_or_create(key="hospital-nl", defaults={"name": "hospital-nl"})
    source.priority = 10
    source.save(update_fields=["priority"])
    documents_upsert(source=source, records=hospital_page_records(), provider=embedding_provider_get())
    index_sites_clear()
    config = pipeline_config_default().with_overrides(source_priorities={"hospital-nl": 10}, crag_enabled=False)
    question = "mag mijn vriend heel de dag bij mij blijven na de bevalling in st jansdal"
    state = pipeline_run(request=SearchRequest(question=question, language="nl"), config=config)
    state.config = config.with_overrides(crag_lower=0.0, crag_upper=1.0)
    first = {i: 0.0 for i, _ in state.fused}
    state.rerank = dict(first)
    CragStage._refine(state)
    assert state.trace.retrieval.crag_refined and state.rerank != first  # the refined ranking was adopted
    own = [i for i, _ in state.fused if state.chunks[i].document.source.key == "hospital-nl"]
    assert own and "stjansdal" in state.chunks[own[0]].document.url, [state.chunks[i].document.url for i in own[:3]]
