"""``manage.py calibrate --set NAME … [--run ID …] [--language nl …] [--max-false-refusal 0.05]
[--pooled | --pooled-only] [--activate --reason TEXT] [--export data/calibration/gate.json]``, or
``manage.py calibrate --check --set NAME … [--labels FILE] [--sheet FILE]`` on held-out runs.

Calibrates the fast gate per language for the active embedding model on the stored answers of
evaluation runs (the newest succeeded run of each ``--set``, and each ``--run``) and the review
queue's calibration labels (:mod:`evaluation.services.calibration`); prints each row's threshold
and evidence. ``--activate`` makes the new rows with a threshold active (audited, frozen into
each request's configuration); ``--export`` writes the model's active calibration into the
calibration file a fresh install starts with (``GATE_CALIBRATION_PATH``; other models' entries,
and this model's languages without an active row in this database, are kept, except a language
whose row was retired here: :func:`evaluation.services.calibration.calibration_file_merged`). ``--pooled``
adds a row for every language pooled (language ``*``), which the gate uses for a question
language without an active row of its own (French, Turkish, Arabic: too few answers each);
``--pooled-only`` makes that row alone.

``--check`` creates no row: it prints, per run and language, what the live gate (the thresholds
and context weights of the configuration requests get now) refuses of the runs' judge-approved
and rotated drafts (:func:`evaluation.services.calibration.calibration_check`): the held-out
check of a calibration chosen on other runs. ``--labels FILE``: a draft-labels file
(:mod:`evaluation.draft_labels`) whose reviewers' labels win over the judge, in the check and in
calibration (the review queue's labels always count and win over the file's); ``--sheet FILE``
(with ``--check``): the checked runs' good drafts written for a reviewer to label.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.commands import DatabaseCommand
from evaluation.draft_labels import DraftLabelsInvalid, draft_labels_for_runs, draft_labels_read, judge_approved_sheet
from evaluation.models import EvaluationRun
from evaluation.review.selectors import calibration_labels
from evaluation.selectors import runs_latest_succeeded
from evaluation.services.calibration import (
    CalibrationInvalid,
    calibrate_from_runs,
    calibration_activate,
    calibration_check,
    calibration_file_merged,
)
from zolsearch.search.config import pipeline_config_default


def reviewed(line: dict[str, Any]) -> str:
    """ " (reviewed: g good, b wrong)" for a check row with reviewers' labels, else ""."""
    if not line["reviewed_good"] and not line["reviewed_bad"]:
        return ""
    return f" (reviewed: {line['reviewed_good']} good, {line['reviewed_bad']} wrong)"


class Command(DatabaseCommand):
    help = "Calibrate the fast gate per language on stored answers of evaluation runs and review labels."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--set", action="append", default=[], dest="sets", metavar="NAME")
        parser.add_argument("--run", action="append", default=[], type=int, dest="runs", metavar="ID")
        parser.add_argument("--language", action="append", default=[], dest="languages")
        parser.add_argument("--max-false-refusal", type=float, default=0.05, help="Share of good answers refused.")
        parser.add_argument("--activate", action="store_true", help="Activate the new rows that have a threshold.")
        parser.add_argument("--reason", default="", help="Why (required with --activate).")
        parser.add_argument(
            "--pooled",
            action="store_true",
            help="Also make a row for every language pooled ('*'), the gate's threshold for languages without their own.",
        )
        parser.add_argument("--pooled-only", action="store_true", help="Make only the pooled row ('*').")
        parser.add_argument(
            "--export",
            default="",
            help="Write the active calibration to this calibration file (languages without an active row here keep the file's).",
        )
        parser.add_argument(
            "--check", action="store_true", help="Print what the live gate refuses of these runs' drafts; no rows."
        )
        parser.add_argument(
            "--labels",
            default="",
            metavar="FILE",
            help="A draft-labels file (evaluation.draft_labels): reviewers' labels that win over the judge.",
        )
        parser.add_argument(
            "--sheet",
            default="",
            metavar="FILE",
            help="With --check: write the good drafts of the checked runs (judge-approved or reviewed) for a reviewer to label.",
        )

    def handle(self, *args: object, **options: Any) -> None:
        config = pipeline_config_default()
        model_key = config.embedding_model
        if options["check"] and (options["activate"] or options["export"]):
            raise CommandError("--check creates no rows: it cannot be combined with --activate or --export")
        if options["activate"] and not str(options["reason"]).strip():
            raise CommandError("--activate needs --reason (it is kept in the calibration's history)")
        runs = runs_latest_succeeded(names=options["sets"], model_key=model_key)
        missing = sorted(set(options["sets"]) - {r.golden_set.name for r in runs})
        if missing:
            raise CommandError(f"no succeeded run with {model_key} of: {', '.join(missing)} (manage.py evaluate first)")
        explicit = list(EvaluationRun.objects.filter(pk__in=options["runs"]).select_related("golden_set"))
        if len(explicit) != len(set(options["runs"])):
            raise CommandError(f"unknown run id among {options['runs']}")
        if options["sheet"] and not options["check"]:
            raise CommandError("--sheet goes with --check")
        labels = [(label.answer_id, label.positive) for label in calibration_labels(model_key=model_key)]
        if options["labels"]:
            try:
                from_file = draft_labels_read(Path(str(options["labels"])))
            except (DraftLabelsInvalid, OSError) as exc:
                raise CommandError(str(exc)) from exc
            keys: set[tuple[str, str, str]] = set()
            matched = draft_labels_for_runs(runs=[*runs, *explicit], labels=from_file, matched=keys)
            self.stdout.write(
                f"{len(keys)} of {len(from_file)} draft labels match a stored draft of these runs "
                f"({len(matched)} stored answers)"
            )
            queued = {answer_id for answer_id, _ in labels}
            labels += [pair for pair in matched if pair[0] not in queued]  # the review queue's label wins
        if options["check"]:
            checked = calibration_check(
                runs=[*runs, *explicit],
                model_key=model_key,
                thresholds=config.gate_thresholds_by_language,
                default_threshold=config.gate_threshold,
                context_weights=config.gate_context_weights_by_language,
                focus_check=config.gate_focus_check,
                site_check=config.gate_site_check,
                term_check=config.gate_term_check,
                term_check_across=config.gate_term_check_across,
                labels=labels,
            )
            if options["sheet"]:
                out = Path(str(options["sheet"]))
                sheet = judge_approved_sheet(
                    runs=[*runs, *explicit], answer_ids=[i for line in checked for i in line["good_ids"]]
                )
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in sheet), encoding="utf-8")
                self.stdout.write(f"Wrote {len(sheet)} drafts to label to {out}")
            for line in checked:
                if options["languages"] and line["language"] not in options["languages"]:
                    continue
                good, off = line["good_refused"], line["off_topic_refused"]
                self.stdout.write(
                    f"run {line['run']} {line['set']} {line['language']}: threshold {line['threshold']:.2f}, "
                    f"w {line['context_weight']:.1f}{', focus check' if line['focus_check'] else ''}"
                    f"{', site check' if line['site_check'] else ''}"
                    f"{', term check' if line['term_check'] else ''}"
                    f"{' (also across languages)' if line['term_check_across'] else ''}; "
                    f"{'good' if reviewed(line) else 'judge-approved'} refused "
                    f"{'—' if good is None else f'{good:.1%}'} of {line['good']}"
                    f"{reviewed(line)}, off-topic refused "
                    f"{'—' if off is None else f'{off:.1%}'} of {line['off_topic']}"
                    f" ({line['rotated_on_topic']} rotated drafts left out: from a page relevant to the question)"
                    f"{' (targets met)' if line['met'] else ''}"
                )
            return
        try:
            rows = calibrate_from_runs(
                runs=[*runs, *explicit],
                model_key=model_key,
                labels=labels,
                languages=options["languages"],
                max_false_refusal=float(options["max_false_refusal"]),
                created_by="manage.py",
                pooled=bool(options["pooled"] or options["pooled_only"]),
                pooled_only=bool(options["pooled_only"]),
            )
        except CalibrationInvalid as exc:
            raise CommandError(str(exc)) from exc
        for row in rows:
            self.stdout.write(
                f"calibration {row.pk} {row.language}: threshold {row.threshold} ({row.rule}); "
                f"{row.positives} positives, {row.negatives} negatives; false refusals {row.false_refusal}, "
                f"negatives refused {row.negatives_refused}, ROC AUC {row.roc_auc}; "
                f"targets {row.evidence.get('targets', {})}"
            )
            if options["activate"] and row.threshold is not None:
                calibration_activate(calibration_id=row.pk, changed_by="manage.py", reason=str(options["reason"]))
                self.stdout.write(f"  activated {row.language}: {row.threshold:.2f}")
        if options["export"]:
            out = Path(str(options["export"]))
            existing = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
            try:
                merged = calibration_file_merged(existing=existing, model_key=model_key)
            except CalibrationInvalid as exc:
                raise CommandError(str(exc)) from exc
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(merged, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            self.stdout.write(f"Wrote {out}")
