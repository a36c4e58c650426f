"""``manage.py golden_build KIND --out FILE``: build a golden question set (JSONL) from real data.

Kinds and their input (``--source``):

- ``medquad``: a MedQuAD folder; needs ``--split dev|heldout``; ``--limit`` questions, ``--seed``.
- ``hospital-nl``: the ``hospital-nl`` folder (real hospital pages; write the set outside the
  repository, e.g. ``.data/golden/hospital-nl.jsonl``: the pages' texts are never committed);
  ``--qrels-out FILE`` also writes every judgement (grades 3 and 1) as TREC qrels, for the
  judged-only figures of ``benchmarks.retrieval_quality --qrels``.
- ``rivm``: the RIVM ``Corona_FAQ.xlsx`` workbook.
- ``medsafetybench``: the folder of MedSafetyBench CSVs (or one CSV); ``--limit`` per category.
- ``sample-hospital``: no input (hand-written questions over the invented SAMPLE hospital).
- ``ci``: the MedQuAD slice (default ``settings.DEMO_CORPUS_PATH``, the bundled
  ``data/medquad-slice``).

Needs no database: it reads files and writes one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.golden import builders
from evaluation.golden.io import GoldenItem, golden_jsonl_load, golden_jsonl_write
from ingestion.connectors import ConnectorError
from zolsearch.search.trec import trec_qrels_write

KINDS = (
    "medquad",
    "hospital-nl",
    "rivm",
    "medsafetybench",
    "sample-hospital",
    "red-flags",
    "paraphrase",
    "typos",
    "ci",
)
NEEDS_SOURCE = {"medquad", "hospital-nl", "rivm", "medsafetybench", "paraphrase", "typos"}
TAKES_LIMIT = {"medquad", "medsafetybench"}


class Command(BaseCommand):
    help = (
        "Build a golden question set as JSONL: medquad (--split dev|heldout), rivm, medsafetybench "
        "(--limit per category), sample-hospital (invented SAMPLE data), red-flags (data/safety), "
        "paraphrase (--source a MedQuAD golden JSONL, --language en|nl), typos (--source a MedQuAD golden "
        "JSONL: its focus misspelled by one edit, --seed) or ci (the regression set)."
    )
    requires_system_checks: list[str] = []  # no checks: some touch the database, which this never needs

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kind", choices=KINDS)
        parser.add_argument("--out", required=True, help="JSONL file to write (its folder must exist).")
        parser.add_argument("--source", default=None, help="Input file or folder (see the kinds).")
        parser.add_argument("--split", choices=builders.SPLITS, default=None, help="MedQuAD split (by document).")
        parser.add_argument(
            "--limit", type=int, default=None, help="medquad: at most N questions; medsafetybench: N per category."
        )
        parser.add_argument("--seed", type=int, default=0, help="Seed of the --limit sample and of typos (default 0).")
        parser.add_argument(
            "--language", choices=("en", "nl"), default="en", help="paraphrase: the language of the paraphrases."
        )
        parser.add_argument(
            "--qrels-out",
            default=None,
            help="hospital-nl: also write every judgement (grades 3 and 1) as TREC qrels to this file.",
        )

    def handle(self, *args: object, **options: Any) -> None:
        kind = str(options["kind"])
        out = Path(str(options["out"]))
        split = options["split"]
        limit = options["limit"]
        seed = int(options["seed"])
        source = self._source(kind, options["source"])
        if split is not None and kind != "medquad":
            raise CommandError(f"--split applies to medquad only, not {kind}")
        if kind == "medquad" and split is None:
            raise CommandError(f"medquad needs --split ({' or '.join(builders.SPLITS)})")
        if limit is not None:
            if kind not in TAKES_LIMIT:
                raise CommandError(f"--limit applies to {' and '.join(sorted(TAKES_LIMIT))} only, not {kind}")
            if not isinstance(limit, int) or limit < 1:
                raise CommandError("--limit must be a positive number")
        qrels_out = Path(str(options["qrels_out"])) if options.get("qrels_out") else None
        if qrels_out is not None and kind != "hospital-nl":
            raise CommandError(f"--qrels-out applies to hospital-nl only, not {kind}")
        if qrels_out is not None and not qrels_out.parent.is_dir():
            raise CommandError(f"--qrels-out folder does not exist: {qrels_out.parent}")
        if not out.parent.is_dir():
            raise CommandError(f"--out folder does not exist: {out.parent}")
        if out.is_dir():
            raise CommandError(f"--out is a folder, not a file: {out}")

        try:
            if kind == "paraphrase":
                assert source is not None
                items = builders.medquad_paraphrased(items=golden_jsonl_load(source), language=str(options["language"]))
            elif kind == "typos":
                assert source is not None
                items = builders.medquad_misspelled(items=golden_jsonl_load(source), seed=seed)
            else:
                items = self._build(kind, source=source, split=str(split), limit=limit, seed=seed)
        except (ConnectorError, ValueError, OSError) as exc:
            raise CommandError(f"cannot build {kind} from {source}: {exc}") from exc
        if not items:
            raise CommandError(f"no questions built for {kind} from {source}; nothing written")
        with out.open("w", encoding="utf-8") as handle:
            count = golden_jsonl_write(items, handle)
        self.stdout.write(self.style.SUCCESS(f"Wrote {count} {kind} questions to {out}"))
        if qrels_out is not None:
            assert source is not None
            with qrels_out.open("w", encoding="utf-8") as handle:
                judgements = trec_qrels_write(builders.hospital_nl_qrels(path=source), handle)
            self.stdout.write(self.style.SUCCESS(f"Wrote {judgements} judgements to {qrels_out}"))

    @staticmethod
    def _source(kind: str, value: object) -> Path | None:
        if kind == "sample-hospital":
            if value is not None:
                raise CommandError("sample-hospital takes no --source (its questions are written in the code)")
            return None
        if value is None and kind == "red-flags":
            return Path(settings.BASE_DIR) / "data" / "safety" / "red-flags.jsonl"
        if value is None:
            if kind in NEEDS_SOURCE:
                raise CommandError(f"{kind} needs --source PATH")
            return Path(settings.DEMO_CORPUS_PATH)
        path = Path(str(value))
        if not path.exists():
            raise CommandError(f"--source does not exist: {path}")
        return path

    @staticmethod
    def _build(kind: str, *, source: Path | None, split: str, limit: int | None, seed: int) -> list[GoldenItem]:
        if kind == "sample-hospital":
            return builders.sample_hospital_golden()
        assert source is not None  # _source gives every other kind a path
        if kind == "medquad":
            return builders.medquad_golden(path=source, split=split, limit=limit, seed=seed)
        if kind == "hospital-nl":
            return builders.hospital_nl_golden(path=source)
        if kind == "rivm":
            return builders.rivm_golden(path=source)
        if kind == "medsafetybench":
            return builders.medsafetybench_golden(path=source, limit_per_category=limit, seed=seed)
        if kind == "red-flags":
            return builders.red_flags_golden(path=source)
        return builders.ci_golden(slice_path=source)
