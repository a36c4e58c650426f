"""The RIVM COVID-19 FAQ workbook (Dutch): columns ``Context`` (question) and ``Answer``.

Each row is one paragraph; all rows with the same question form one document whose paragraphs
are joined in row order (the real file repeats some questions further down the sheet). The RIVM publishes no per-question URL in this file, so
documents point to the RIVM coronavirus page with a stable anchor per question.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import openpyxl

from ingestion.connectors.base import BadRecord, Connector, ConnectorError, DocumentRecord, Record, Section

RIVM_URL = "https://www.rivm.nl/coronavirus-covid-19/vragen-antwoorden"


class RIVMConnector(Connector):
    """Reads ``Corona_FAQ.xlsx`` (first sheet, header row ``Context, Answer``)."""

    name = "rivm"
    source_key = "rivm"
    source_name = "RIVM Corona FAQ"
    licence = "Public information of the RIVM"
    description = "Dutch COVID-19 questions and answers of the RIVM (2020)."

    def units(self, path: Path, *, subsets: Sequence[str] = ()) -> list[tuple[str, list[tuple[int, str]]]]:
        if not path.is_file():
            raise ConnectorError(f"RIVM workbook not found: {path}")
        try:
            workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
        except Exception as exc:  # openpyxl raises several unrelated types for a bad file
            raise ConnectorError(f"cannot open {path} as an Excel workbook: {exc}") from exc
        sheet = workbook.worksheets[0]
        rows = sheet.iter_rows(values_only=True)
        header = [str(c or "").strip().lower() for c in next(rows, ())]
        if "context" not in header or "answer" not in header:
            raise ConnectorError(f"{path}: expected columns 'Context' and 'Answer', found {header}")
        q_col, a_col = header.index("context"), header.index("answer")
        groups: dict[str, list[tuple[int, str]]] = {}
        for line, row in enumerate(rows, start=2):
            question = " ".join(str(row[q_col] or "").split())
            paragraph = " ".join(str(row[a_col] or "").split())
            if not question and not paragraph:
                continue  # blank rows (the real file ends with four)
            groups.setdefault(question, []).append((line, paragraph))
        workbook.close()
        return list(groups.items())

    def records(self, unit: tuple[str, list[tuple[int, str]]]) -> Iterator[Record]:
        question, rows = unit
        lines = ",".join(str(line) for line, _ in rows)
        if not question:
            yield BadRecord(location=f"rows {lines}", message="row without a question (Context)")
            return
        paragraphs = [text for _, text in rows if text]
        if not paragraphs:
            yield BadRecord(location=f"rows {lines}", message=f"question without answer: {question}")
            return
        digest = hashlib.sha1(question.encode("utf-8")).hexdigest()[:12]
        yield DocumentRecord(
            external_id=f"rivm:{digest}",
            url=f"{RIVM_URL}#{digest}",
            title=question,
            sections=(Section(heading="", text="\n\n".join(paragraphs)),),
            language="nl",
            context="RIVM, coronavirus COVID-19",
            questions=(question,),
            metadata={"rows": [line for line, _ in rows]},
        )
