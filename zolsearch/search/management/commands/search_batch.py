"""``manage.py search_batch QUERIES.tsv --out RUN.trec --k 10``: the API's pipeline over a file."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from core.providers.embeddings import EmbeddingModelMismatch, EmbeddingUnavailable
from zolsearch.search.config import pipeline_config_default
from zolsearch.search.pipeline import InvalidQuestion, SearchError, SearchRequest
from zolsearch.search.services import search_answer
from zolsearch.search.trec import TrecHit, ranked_documents, trec_run_write


class Command(BaseCommand):
    help = "Answer every 'qid<TAB>question' line of a file and write a TREC run (qid Q0 external_id rank score tag)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("queries", help="TSV file: qid<TAB>question per line.")
        parser.add_argument("--out", required=True, help="TREC run file to write.")
        parser.add_argument("--k", type=int, default=10, help="Documents per query (default 10).")
        parser.add_argument("--tag", default="zolsearch", help="Run tag (last column).")
        parser.add_argument("--language", default=None, help="Question language (default: detected).")

    def handle(self, *args: object, **options: Any) -> None:
        k = int(options["k"])
        if k < 1:
            raise CommandError("--k must be at least 1")
        path = Path(str(options["queries"]))
        if not path.is_file():
            raise CommandError(f"queries file not found: {path}")
        queries = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            qid, sep, question = line.partition("\t")
            if not sep or not qid.strip() or not question.strip():
                raise CommandError(f"{path}:{number}: expected 'qid<TAB>question', got {line!r}")
            if any(ch.isspace() for ch in qid.strip()):
                raise CommandError(f"{path}:{number}: a TREC qid cannot contain whitespace: {qid.strip()!r}")
            queries.append((qid.strip(), question.strip()))
        base = pipeline_config_default()
        depth = max(base.top_k, 2 * k)
        # Only the ranking goes into the run file: extractive answers keep the batch fast and
        # free (no LLM calls); hnsw.ef_search must stay ≥ the candidate count.
        config = base.with_overrides(
            top_k=depth,
            dense_candidates=max(base.dense_candidates, depth),
            lexical_candidates=max(base.lexical_candidates, depth),
            hnsw_ef_search=max(base.hnsw_ef_search, depth),
            generator="extractive",
            llm_model="",
        )
        out = Path(str(options["out"]))
        tag = str(options["tag"])
        if any(ch.isspace() for ch in tag) or not tag:
            raise CommandError("--tag must be one word")
        failed = lines = 0
        # Written query by query, so an interrupted batch keeps the queries it finished.
        with out.open("w", encoding="utf-8") as handle:
            for qid, question in tqdm(queries, desc="search_batch", disable=options["verbosity"] == 0):
                try:
                    _, answer = search_answer(
                        request=SearchRequest(question=question, language=cast(str | None, options["language"])),
                        config=config,
                        channel="batch",
                    )
                except InvalidQuestion as exc:
                    self.stderr.write(f"{qid}: skipped: {exc}")
                    failed += 1
                    continue
                except (SearchError, EmbeddingModelMismatch, EmbeddingUnavailable) as exc:
                    raise CommandError(f"{qid}: {exc} (the run file holds the queries before it)") from exc
                ranked = ranked_documents(answer.chunk_scores, k=k)
                lines += trec_run_write(
                    (
                        TrecHit(qid=qid, docno=docno, rank=rank, score=score, tag=tag)
                        for rank, (docno, score) in enumerate(ranked, start=1)
                    ),
                    handle,
                )
                handle.flush()
        self.stdout.write(
            self.style.SUCCESS(f"Wrote {lines} lines for {len(queries) - failed} queries to {out} ({failed} skipped).")
        )
