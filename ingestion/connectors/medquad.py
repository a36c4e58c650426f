"""MedQuAD XML (Ben Abacha & Demner-Fushman, BMC Bioinformatics 2019; CC BY 4.0).

One ``<Document id source url>`` per file, with ``<Focus>``, ``<FocusAnnotations>`` and
``<QAPairs>``. One indexed document per QA pair that has an answer, identified as
``medquad:<source>:<document id>:<pid>`` (the identity outside relevance judgments use).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from lxml import etree

from ingestion.connectors.base import (
    BadRecord,
    Connector,
    ConnectorError,
    DocumentRecord,
    Record,
    Section,
    SkippedRecord,
)


def _text(element: etree._Element | None) -> str:
    return " ".join("".join(element.itertext()).split()) if element is not None else ""


class MedQuADConnector(Connector):
    """Reads the MedQuAD folders (``1_CancerGov_QA`` … ``12_MPlusHerbsSupplements_QA``).

    ``subsets`` selects folders by name or by the part between the number and ``_QA``
    (``GARD`` matches ``2_GARD_QA``), case-insensitive.
    """

    name = "medquad"
    source_key = "medquad"
    source_name = "MedQuAD"
    licence = "CC BY 4.0"
    description = "Consumer-health QA pairs from 12 NIH websites (Ben Abacha & Demner-Fushman, 2019)."

    @staticmethod
    def _subset_matches(folder: str, subsets: Sequence[str]) -> bool:
        if not subsets:
            return True
        name = folder.lower()
        core = name.split("_", 1)[-1].removesuffix("_qa").removesuffix("_qa_xml")
        return any(s.lower() in (name, core) or name.startswith(s.lower() + "_") for s in subsets)

    def units(self, path: Path, *, subsets: Sequence[str] = ()) -> list[Path]:
        if not path.is_dir():
            raise ConnectorError(f"MedQuAD path is not a folder: {path}")
        folders = sorted(p for p in path.iterdir() if p.is_dir() and self._subset_matches(p.name, subsets))
        if subsets and not folders:
            available = ", ".join(sorted(p.name for p in path.iterdir() if p.is_dir()))
            raise ConnectorError(f"no MedQuAD subset matches {list(subsets)}; available: {available}")
        files = sorted(f for folder in folders for f in folder.glob("*.xml"))
        if not files and not subsets:  # a flat folder of MedQuAD files (e.g. a test slice)
            files = sorted(path.glob("*.xml"))
        return files

    def records(self, unit: Path) -> Iterator[Record]:
        try:
            root = etree.parse(str(unit)).getroot()
        except (etree.XMLSyntaxError, OSError) as exc:
            yield BadRecord(location=str(unit), message=f"unreadable XML: {exc}")
            return
        # Five files use older variants of the schema: four NINDS files <doc docid corpus> with
        # <doctitle-focus>, <umls><cui>, <qaPairs><pair><question><answer>, and one CDC file
        # <DiseaseFile fid source> with <UMLS>. Tags and attributes are read from either.
        legacy = root.find(".//pair") is not None and root.find(".//QAPair") is None
        source = root.get("source") or root.get("corpus")
        doc_id = root.get("id") or root.get("docid") or root.get("fid")
        url = root.get("url") or ""
        if not source or not doc_id:
            yield BadRecord(location=str(unit), message="Document lacks its 'source' or 'id' attribute")
            return
        focus = _text(root.find("Focus") if root.find("Focus") is not None else root.find("doctitle-focus"))
        annotations = next(
            (a for a in (root.find(t) for t in ("FocusAnnotations", "UMLS", "umls")) if a is not None), None
        )

        def values(*tags: str) -> list[str]:
            if annotations is None:
                return []
            return [t for tag in tags for t in (_text(e) for e in annotations.iter(tag)) if t]

        cuis, synonyms = values("CUI", "cui"), values("Synonym", "synonym")
        semantic_types = values("SemanticType", "semanticType")
        group = next(iter(values("SemanticGroup", "semanticGroup")), "")
        pair_tag, question_tag, answer_tag = (
            ("pair", "question", "answer") if legacy else ("QAPair", "Question", "Answer")
        )
        for pair in root.iter(pair_tag):
            pid = pair.get("pid") or ""
            external_id = f"medquad:{source}:{doc_id}:{pid}"
            question_el = pair.find(question_tag)
            question = _text(question_el)
            answer = _text(pair.find(answer_tag))
            if not answer:
                yield SkippedRecord(location=f"{unit}#{pid}", reason="empty answer")
                continue
            context = focus + (f" ({', '.join(synonyms[:5])})" if synonyms else "")
            yield DocumentRecord(
                external_id=external_id,
                url=url,
                title=question or focus,
                sections=(Section(heading="", text=answer),),
                language="en",
                context=context,
                questions=(question,) if question else (),
                metadata={
                    "source": source,
                    "document_id": doc_id,
                    "pid": pid,
                    "qid": question_el.get("qid", "") if question_el is not None else "",
                    "qtype": question_el.get("qtype", "") if question_el is not None else "",
                    "focus": focus,
                    "synonyms": synonyms,
                    "umls_cuis": cuis,
                    "semantic_types": semantic_types,
                    "semantic_group": group,
                    "subset": unit.parent.name,
                },
            )
