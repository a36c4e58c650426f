"""Each connector on real files: MedQuAD XML, the RIVM workbook, JSON Lines and saved pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from ingestion.connectors import ConnectorError, connector_get
from ingestion.connectors.base import BadRecord, DocumentRecord, SkippedRecord


def _all(name: str, path: Path, **kwargs: object) -> list:
    connector = connector_get(name)
    return [record for unit in connector.units(path, **kwargs) for record in connector.records(unit)]


def test_medquad_identity_metadata_and_empty_answers(fixtures_dir: Path) -> None:
    """GIVEN a real GARD file (1 answered pair) and a real ADAM file (5 pairs, answers removed)
    WHEN the medquad connector reads them
    THEN one document with the source:id:pid identity and its metadata, and 5 counted skips."""
    records = _all("medquad", fixtures_dir / "medquad")
    documents = [r for r in records if isinstance(r, DocumentRecord)]
    skipped = [r for r in records if isinstance(r, SkippedRecord)]
    assert len(skipped) == 5 and all(s.reason == "empty answer" for s in skipped)
    assert [d.external_id for d in documents] == ["medquad:GARD:0000004:1"]
    document = documents[0]
    assert document.url == "https://rarediseases.info.nih.gov/gard/335/abcd-syndrome"
    assert document.questions == ("What are the symptoms of ABCD syndrome ?",)
    assert document.metadata["focus"] == "ABCD syndrome"
    assert document.metadata["umls_cuis"] == ["C1838099"]
    assert document.metadata["semantic_group"] == "Disorders"
    assert document.metadata["qtype"] == "symptoms"
    assert document.metadata["synonyms"][0].startswith("Albinism, Black lock")
    assert document.sections[0].text.startswith("What are the signs and symptoms of ABCD syndrome?")


def test_medquad_slice_matches_the_xml(slice_dir: Path) -> None:
    """Every answered QAPair of the committed slice becomes exactly one document."""
    expected = set()
    for file in slice_dir.rglob("*.xml"):
        root = etree.parse(str(file)).getroot()
        legacy = root.tag == "doc"  # 4 MedQuAD files use <doc docid corpus><pair><answer>
        source = root.get("source") or root.get("corpus")
        doc_id = root.get("id") or root.get("docid") or root.get("fid")  # 1 CDC file: <DiseaseFile fid>
        for pair in root.iter("pair" if legacy else "QAPair"):
            if "".join(pair.find("answer" if legacy else "Answer").itertext()).strip():
                expected.add(f"medquad:{source}:{doc_id}:{pair.get('pid')}")
    records = _all("medquad", slice_dir)
    ids = [r.external_id for r in records if isinstance(r, DocumentRecord)]
    assert len(ids) == len(set(ids)) == len(expected)
    assert set(ids) == expected
    assert "medquad:NINDS:0000007:1" in expected  # the lower-case schema variant is covered


def test_medquad_lowercase_schema_variant(slice_dir: Path) -> None:
    """GIVEN the real NINDS file that uses <doc docid corpus> THEN its pairs and focus are read."""
    connector = connector_get("medquad")
    records = list(connector.records(slice_dir / "6_NINDS_QA" / "0000007.xml"))
    assert [r.external_id for r in records] == [f"medquad:NINDS:0000007:{pid}" for pid in (1, 2, 3, 4)]
    assert records[0].metadata["focus"] == "Holmes-Adie" and records[1].metadata["qtype"] == "treatment"
    assert records[0].questions == ("what is holmes-adie syndrome ?",)


def test_medquad_diseasefile_variant(fixtures_dir: Path) -> None:
    """GIVEN the real CDC file rooted at <DiseaseFile fid source> THEN it is read like the others."""
    records = list(connector_get("medquad").records(fixtures_dir / "medquad-variants" / "0000397.xml"))
    assert records and all(isinstance(r, DocumentRecord) for r in records)
    assert records[0].external_id == "medquad:CDC:0000397:1"
    assert records[0].metadata["focus"] == "Parasites - Taeniasis"
    assert records[0].url == "http://www.cdc.gov/parasites/taeniasis/"


def test_medquad_subsets_select_folders(slice_dir: Path) -> None:
    records = _all("medquad", slice_dir, subsets=["CDC"])
    assert records and all(r.metadata["source"] == "CDC" for r in records if isinstance(r, DocumentRecord))
    with pytest.raises(ConnectorError, match="no MedQuAD subset matches"):
        connector_get("medquad").units(slice_dir, subsets=["NOPE"])


def test_rivm_groups_paragraphs_in_row_order(fixtures_dir: Path) -> None:
    """GIVEN the real RIVM workbook (54 questions over 111 paragraph rows, 4 blank rows at the end)
    THEN 54 Dutch documents whose paragraphs are joined in row order."""
    documents = _all("rivm", fixtures_dir / "rivm" / "Corona_FAQ.xlsx")
    assert len(documents) == 54 and all(isinstance(d, DocumentRecord) for d in documents)
    first = documents[0]
    assert first.language == "nl"
    assert first.title == "Welke maatregelen gelden in Nederland tegen verspreiding van het coronavirus?"
    paragraphs = first.sections[0].text.split("\n\n")
    assert paragraphs[0].startswith("Iedereen in Nederland: blijf thuis bij klachten")
    assert paragraphs[1].startswith("Iedereen in heel Nederland: probeer zoveel mogelijk thuis te werken")
    assert first.metadata["rows"][:2] == [2, 3]
    assert sum(len(d.metadata["rows"]) for d in documents) == 111
    assert len({d.external_id for d in documents}) == 54


def test_rivm_rejects_a_file_that_is_not_a_workbook(tmp_path: Path) -> None:
    bad = tmp_path / "faq.xlsx"
    bad.write_text("not excel")
    with pytest.raises(ConnectorError, match="cannot open"):
        connector_get("rivm").units(bad)


def test_jsonl_reports_bad_lines_with_numbers(tmp_path: Path) -> None:
    """GIVEN a JSONL file with good lines, invalid JSON, a missing field and a wrong type
    THEN good lines become documents and each bad one a BadRecord naming its line."""
    file = tmp_path / "pages.jsonl"
    file.write_text(
        '{"external_id": "p1", "url": "https://x.test/1", "title": "Een", "text": "Tekst een.", "questions": ["Wat?"], "metadata": {"a": 1}}\n'
        "{not json}\n"
        '{"external_id": "p3", "url": "https://x.test/3", "text": "zonder titel"}\n'
        "\n"
        '{"external_id": "p5", "url": "https://x.test/5", "title": "Vijf", "text": "Tekst.", "questions": "no list"}\n'
        '{"external_id": "p6", "url": "https://x.test/6", "title": "Six", "text": "Text six.", "language": "en", "summary": "S"}\n',
        encoding="utf-8",
    )
    records = _all("jsonl", file)
    good = [r for r in records if isinstance(r, DocumentRecord)]
    bad = {r.location: r.message for r in records if isinstance(r, BadRecord)}
    assert [d.external_id for d in good] == ["p1", "p6"]
    assert good[0].questions == ("Wat?",) and good[0].metadata == {"a": 1} and good[0].language == "nl"
    assert good[1].language == "en" and good[1].summary == "S"
    assert set(bad) == {"pages.jsonl:2", "pages.jsonl:3", "pages.jsonl:5"}
    assert "invalid JSON" in bad["pages.jsonl:2"]
    assert "title" in bad["pages.jsonl:3"]
    assert "questions" in bad["pages.jsonl:5"]


def test_html_keeps_main_text_and_headings(fixtures_dir: Path) -> None:
    """GIVEN saved pages with navigation, header, footer, aside and script
    THEN title, canonical url, language, sections per heading and only the main text remain."""
    records = _all("html", fixtures_dir / "html")
    by_id = {r.external_id: r for r in records}
    page = by_id["html:https://voorbeeld.ziekenhuis.test/afdelingen/cardiologie"]  # canonical url is the identity
    assert page.title == "Cardiologie | Voorbeeldziekenhuis (voorbeelddata)"
    assert page.url == "https://voorbeeld.ziekenhuis.test/afdelingen/cardiologie"
    assert page.language == "nl"
    assert page.summary.startswith("De dienst cardiologie")
    assert [s.heading for s in page.sections] == ["Cardiologie", "Raadplegingen", "Hartfalen"]
    text = "\n".join(s.text for s in page.sections)
    assert "Campus Noord: maandag tot vrijdag" in text
    for dropped in ("Menu-item", "nieuwe parking", "tracking", "sample data", "Afdelingen"):
        assert dropped not in text
    short = by_id["html:spoed.htm"]
    assert short.url == "file:///spoed.htm"
    assert "Navigatie" not in short.sections[0].text and "dag en nacht open" in short.sections[0].text


def test_html_text_in_containers_lists_and_inline_elements(tmp_path: Path) -> None:
    """GIVEN text directly in a div around a list, a heading nested in a div, and text in <body>
    THEN every piece is kept once, in order, without glued sentences or leaked headings."""
    (tmp_path / "a.html").write_text(
        "<html><body><main><div>Bel 089 32 50 50 voor een <b>afspraak</b>.<ul><li>Maandag open.</li></ul>"
        "Daarna dicht.</div><div><h2>Parking</h2></div><p>Gratis.</p></main></body></html>"
    )
    (tmp_path / "b.html").write_text("<html><body>Tekst direct in body.</body></html>")
    by_id = {r.external_id: r for r in _all("html", tmp_path)}
    sections = by_id["html:a.html"].sections
    assert [(s.heading, s.text) for s in sections] == [
        ("", "Bel 089 32 50 50 voor een afspraak.\nMaandag open.\nDaarna dicht."),
        ("Parking", "Gratis."),
    ]
    assert by_id["html:b.html"].sections[0].text == "Tekst direct in body."
