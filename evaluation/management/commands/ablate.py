"""``manage.py ablate --name NAME --set SET [--set …] --factor FLAG [--factor 'flag: a, b'] …``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from core.commands import DatabaseCommand
from evaluation.ablation.report import study_markdown
from evaluation.models import AblationStudy
from evaluation.services.ablation import (
    StudyInvalid,
    ablation_study_create,
    ablation_study_enqueue,
    ablation_study_execute,
    ablation_study_resume,
    factors_from_text,
)
from evaluation.services.golden import GoldenSetNotFound, golden_set_resolve
from zolsearch.search.config import ConfigInvalid, pipeline_config_default


class Command(DatabaseCommand):
    help = (
        "Create an ablation study (golden sets, factors, design, repetitions) and run it in this process "
        "or queue it for the worker; prints the results as Markdown. Committed sets are imported first."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", default="", help="The study's name (default: its factors).")
        parser.add_argument("--set", action="append", default=[], dest="sets", help="Golden set name (repeatable).")
        parser.add_argument(
            "--factor",
            action="append",
            default=[],
            dest="factors",
            metavar="FLAG[: LEVEL, LEVEL…]",
            help="A flag to vary; a true/false flag alone is tried at its base value and the other; "
            "else give the levels, base first ('top_k: 10, 5').",
        )
        parser.add_argument("--design", choices=[c for c, _ in AblationStudy.Design.choices], default="ofat")
        parser.add_argument("--fraction-p", type=int, default=0, help="p of a 2^(k-p) fractional design.")
        parser.add_argument("--generator", action="append", default=[], dest="generators", help="e.g. E=ABCD.")
        parser.add_argument("--repetitions", type=int, default=1)
        parser.add_argument("--override", action="append", default=[], metavar="FIELD=VALUE", help="Change the base.")
        parser.add_argument("--background", action="store_true", help="Queue the study for the Celery worker.")
        parser.add_argument("--resume", type=int, default=None, metavar="STUDY_ID", help="Resume a stopped study.")
        parser.add_argument("--markdown", type=Path, default=None, help="Also write the Markdown report here.")

    def handle(self, *args: object, **options: Any) -> None:
        if options["resume"] is not None:
            study = ablation_study_resume(study_id=options["resume"])
        else:
            study = self._create(options)
        if options["background"]:
            ablation_study_enqueue(study=study)
            self.stdout.write(f"Queued study {study.pk} ({study.design_description}); follow it in the admin.")
            return
        quiet = options["verbosity"] == 0
        with tqdm(total=study.total, initial=study.done, desc=f"study {study.pk}", disable=quiet) as bar:
            study = ablation_study_execute(study_id=study.pk, progress=lambda done, total: bar.update(1))
        if study.status != AblationStudy.Status.SUCCEEDED:
            raise CommandError(f"study {study.pk} {study.status}: {study.error} (resume it with --resume {study.pk})")
        text = study_markdown(
            title=f"Ablation study {study.pk}: {study.name}",
            description=study.design_description,
            results=study.results,
            recommendations=study.recommendations,
        )
        if options["markdown"]:
            options["markdown"].write_text(text, encoding="utf-8")
        self.stdout.write(text)

    def _create(self, options: dict[str, Any]) -> AblationStudy:
        if not options["sets"] or not options["factors"]:
            raise CommandError("give at least one --set and one --factor")
        try:
            sets = [golden_set_resolve(name=name, version=None) for name in options["sets"]]
            base = pipeline_config_default().with_override_pairs(list(options["override"]))
            factors = factors_from_text(text="\n".join(options["factors"]), names=[], base=base)
            return ablation_study_create(
                name=options["name"] or ", ".join(f["name"] for f in factors),
                golden_sets=sets,
                factors=factors,
                design=options["design"],
                fraction_p=options["fraction_p"],
                generators=options["generators"] or None,
                repetitions=options["repetitions"],
                base_config=base,
                created_by="manage.py",
            )
        except (GoldenSetNotFound, StudyInvalid, ConfigInvalid) as exc:
            raise CommandError(str(exc)) from exc
