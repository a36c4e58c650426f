"""Reviewers' labels of stored drafts, kept in a file so they outlive the database (issue 10's
gate target, issue 12's review loop).

The gate target of issue 10 counts the good answers the fast gate refuses; "good" is what the
judge approves. The local judge approves wrong answers (an English narcolepsy page for a Dutch
question about staying the night after a birth: `docs/EVALUATION.md`, "Cross-lingual term
agreement"), so a reviewer reads the drafts and labels them. A label in the review queue
(:func:`evaluation.review.selectors.calibration_labels`) belongs to one stored answer and goes
with its database; a **draft-labels file** keeps the same verdict for the same draft of the
same golden question in any database: the answer an evaluation run stores for that question is
matched when its draft is the same text (:func:`draft_sha256`), so a label never carries over
to a draft the pipeline writes differently later.

File: JSON Lines, one object per draft, keys

- ``set``: golden set name; ``qid``: the golden question's id; ``language``: its language;
- ``draft_sha256``: :func:`draft_sha256` of the draft the reviewer read;
- ``label``: ``"good"`` (a patient may be given it: it answers or routes the question from a
  page about what was asked) or ``"wrong"`` (another condition, another question, another
  hospital's rule, or unsupported);
- ``reason``: why, in a few words (required).

Other keys (the sheet of :func:`judge_approved_sheet` adds ``question``, ``draft``, ``cited``,
``gate_refused`` to read from) are ignored when read. A draft of a hospital's page is that
hospital's text: remove them before committing a file built on such pages
(:func:`draft_labels_write` writes only the keys above). The review queue's verdicts on
evaluation runs' answers become labels with ``manage.py review_export --labels FILE``
(:func:`draft_labels_from_reviews`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.jsonl import jsonl_objects
from evaluation.models import EvaluationResult, EvaluationRun
from ingestion.models import Chunk
from zolsearch.search.contract import Outcome
from zolsearch.search.models import Answer
from zolsearch.search.selectors import answer_material, answer_trace

logger = logging.getLogger(__name__)

LABELS = {"good": True, "wrong": False}
KEYS = ("set", "qid", "language", "draft_sha256", "label", "reason")


class DraftLabelsInvalid(ValueError):
    """A draft-labels file that cannot be read: the message names the line and the key."""


@dataclass(frozen=True)
class DraftLabel:
    """One reviewer's verdict on one draft: ``good`` True for "good", False for "wrong"."""

    set: str
    qid: str
    language: str
    draft_sha256: str
    good: bool
    reason: str

    @property
    def key(self) -> tuple[str, str, str]:
        """``(set, qid, draft_sha256)``: the draft the label is for (files hold one label per key)."""
        return (self.set, self.qid, self.draft_sha256)

    def as_row(self) -> dict[str, str]:
        """The file's object for this label (the keys of :data:`KEYS`, in that order)."""
        return {
            "set": self.set,
            "qid": self.qid,
            "language": self.language,
            "draft_sha256": self.draft_sha256,
            "label": "good" if self.good else "wrong",
            "reason": self.reason,
        }


def draft_sha256(text: str) -> str:
    """Hex SHA-256 (64 characters) of ``text`` with its whitespace runs made single spaces and
    its ends stripped: the key that matches a stored draft to its label. Never raises."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


def draft_labels_read(path: Path) -> list[DraftLabel]:
    """The labels of the draft-labels file at ``path`` (format in the module docstring); blank
    lines are skipped. Raises :class:`DraftLabelsInvalid` naming the file and line for a line
    that is not a JSON object, a missing or empty key, a label other than "good" / "wrong", a
    ``draft_sha256`` that is not 64 hex characters, or the same draft of the same question
    labelled twice, and naming the file for text that is not UTF-8; ``OSError``
    (``FileNotFoundError``, ``IsADirectoryError`` among them) when the file cannot be read."""
    labels: list[DraftLabel] = []
    seen: set[tuple[str, str, str]] = set()
    try:
        rows = jsonl_objects(path)
    except UnicodeDecodeError as exc:  # a ValueError too, but without a line
        raise DraftLabelsInvalid(f"{path}: not UTF-8 text ({exc.reason})") from exc
    except ValueError as exc:  # a line that is not a JSON object, named by file and line
        raise DraftLabelsInvalid(str(exc)) from exc
    for number, row in rows:
        fields: dict[str, str] = {}
        for key in KEYS:
            value = row.get(key)
            if not isinstance(value, str) or not value.strip():
                raise DraftLabelsInvalid(f"{path}:{number}: '{key}' is missing or empty")
            fields[key] = value.strip()
        if fields["label"] not in LABELS:
            raise DraftLabelsInvalid(f"{path}:{number}: label {fields['label']!r} is not 'good' or 'wrong'")
        sha = fields["draft_sha256"].lower()
        if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise DraftLabelsInvalid(f"{path}:{number}: draft_sha256 is not 64 hex characters")
        draft = (fields["set"], fields["qid"], sha)
        if draft in seen:
            raise DraftLabelsInvalid(f"{path}:{number}: {fields['set']} {fields['qid']}: this draft is labelled twice")
        seen.add(draft)
        labels.append(
            DraftLabel(
                set=fields["set"],
                qid=fields["qid"],
                language=fields["language"],
                draft_sha256=sha,
                good=LABELS[fields["label"]],
                reason=fields["reason"],
            )
        )
    return labels


def draft_labels_write(path: Path, labels: Sequence[DraftLabel]) -> None:
    """Write ``labels`` to ``path`` (keys of :data:`KEYS` only, sorted by set, qid and hash;
    parents created). Raises ``OSError`` when it cannot be written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ordered = sorted(labels, key=lambda label: label.key)
    path.write_text(
        "".join(json.dumps(label.as_row(), ensure_ascii=False) + "\n" for label in ordered), encoding="utf-8"
    )


def _run_answers(runs: Sequence[EvaluationRun]) -> list[tuple[str, str, Answer]]:
    """``(set, qid, answer)`` of every stored answer of ``runs`` (two queries)."""
    rows = list(
        EvaluationResult.objects.filter(run__in=runs, answer__isnull=False).values_list(
            "run__golden_set__name", "question__qid", "answer_id"
        )
    )
    answers = Answer.objects.in_bulk([answer_id for _s, _q, answer_id in rows])
    return [(name, qid, answers[answer_id]) for name, qid, answer_id in rows if answer_id in answers]


def draft_labels_for_runs(
    *,
    runs: Sequence[EvaluationRun],
    labels: Sequence[DraftLabel],
    matched: set[tuple[str, str, str]] | None = None,
) -> list[tuple[int, bool]]:
    """``[(answer_id, good), …]`` for the stored answers of ``runs`` whose golden set, question
    and draft text (:func:`~zolsearch.search.selectors.answer_material`, hashed by
    :func:`draft_sha256`) match a label: the shape calibration takes review labels in. An
    answer without a draft, or whose draft no label names, is left out. ``matched``: when given,
    the ``(set, qid, hash)`` of each label that matched is added to it (a label can match the
    answers of several runs of its set). One query per answer of a labelled question (its trace
    and cited chunks)."""
    index = draft_label_index(labels)
    out: list[tuple[int, bool]] = []
    for name, qid, answer in _run_answers(runs):
        found = _label_of(answer=answer, golden_set=name, qid=qid, index=index)
        if found is not None:
            sha, good = found
            out.append((answer.pk, good))
            if matched is not None:
                matched.add((name, qid, sha))
    return out


def judge_approved_sheet(*, runs: Sequence[EvaluationRun], answer_ids: Sequence[int]) -> list[dict[str, Any]]:
    """A reviewer's sheet of the answers ``answer_ids`` of ``runs`` (the judge-approved drafts a
    check found: :func:`evaluation.services.calibration.calibration_check` rows' cohorts): per
    draft the keys of :data:`KEYS` with ``label`` and ``reason`` blank for the reviewer to fill
    in, and ``question``, ``draft``, ``cited`` (web addresses) and ``gate_refused`` (the stored
    answer is a fallback) to read. Ordered by set and qid."""
    wanted = set(answer_ids)
    sheet: list[dict[str, Any]] = []
    for name, qid, answer in _run_answers(runs):
        if answer.pk not in wanted:
            continue
        material = answer_material(answer=answer)
        if material is None:
            continue
        cited = answer_trace(answer=answer).cited_chunk_ids
        urls = list(Chunk.objects.filter(id__in=cited).values_list("document__url", flat=True).distinct())
        sheet.append(
            {
                "set": name,
                "qid": qid,
                "language": answer.language,
                "draft_sha256": draft_sha256(material.text),
                "label": "",
                "reason": "",
                "question": answer.question,
                "draft": material.text,
                "cited": urls,
                "gate_refused": answer.outcome != Outcome.ANSWERED,
            }
        )
    return sorted(sheet, key=lambda row: (row["set"], row["qid"]))


def draft_labels_from_reviews() -> list[DraftLabel]:
    """The review queue's verdicts on the stored answers of evaluation runs that the evaluator
    marked as calibration labels (``Review.calibration_label``, as calibration reads the queue),
    as draft labels: "good answer" and "wrongly refused" → good; "rightly refused", "wrong
    answer" and "unsafe" → wrong (:data:`evaluation.review.models.POSITIVE_VERDICTS`), the
    review's reason kept; when two reviewed answers share one draft, the later review wins. A review of a live answer (no golden question) or of an answer without
    a draft is left out; an answer stored by several runs gives one label per run's set and
    question. Ordered by set, qid and hash. Two queries, plus one per reviewed answer."""
    from evaluation.review.models import NEGATIVE_VERDICTS, POSITIVE_VERDICTS, Review

    reviews = {
        answer_id: (verdict, reason)
        for answer_id, verdict, reason in Review.objects.filter(
            calibration_label=True, verdict__in=[*POSITIVE_VERDICTS, *NEGATIVE_VERDICTS]
        )
        .order_by("reviewed_at", "pk")
        .values_list("answer_id", "verdict", "reason")
    }
    order = {answer_id: i for i, answer_id in enumerate(reviews)}
    rows = sorted(
        EvaluationResult.objects.filter(answer_id__in=list(reviews)).values_list(
            "run__golden_set__name", "question__qid", "answer_id"
        ),
        key=lambda row: order[row[2]],
    )
    answers = Answer.objects.in_bulk([answer_id for _s, _q, answer_id in rows])
    labels: dict[tuple[str, str, str], DraftLabel] = {}
    for name, qid, answer_id in rows:
        answer = answers.get(answer_id)
        material = answer_material(answer=answer) if answer is not None else None
        if answer is None or material is None:
            continue
        verdict, reason = reviews[answer_id]
        label = DraftLabel(
            set=name,
            qid=qid,
            language=answer.language,
            draft_sha256=draft_sha256(material.text),
            good=verdict in POSITIVE_VERDICTS,
            reason=" ".join(reason.split()) or verdict,
        )
        labels[label.key] = label
    return sorted(labels.values(), key=lambda label: label.key)


def draft_labels_merged(existing: Sequence[DraftLabel], new: Sequence[DraftLabel]) -> list[DraftLabel]:
    """``existing`` with ``new`` added; a new label of the same draft (set, qid, hash) replaces
    the existing one. Ordered by set, qid and hash."""
    merged = {label.key: label for label in existing}
    merged.update({label.key: label for label in new})
    return sorted(merged.values(), key=lambda label: label.key)


LabelIndex = dict[tuple[str, str], dict[str, bool]]


def draft_labels_default() -> list[DraftLabel]:
    """The labels of ``settings.DRAFT_LABELS_PATH``; ``[]`` when nothing exists there. Raises
    :class:`DraftLabelsInvalid` for a file that cannot be read as labels and ``OSError`` when
    the path cannot be read (a directory, no permission)."""
    from django.conf import settings

    path = Path(settings.DRAFT_LABELS_PATH)
    return draft_labels_read(path) if path.exists() else []


def draft_label_index(labels: Sequence[DraftLabel]) -> LabelIndex:
    """``{(set, qid): {draft SHA-256: good}}`` of ``labels``."""
    index: LabelIndex = {}
    for label in labels:
        index.setdefault((label.set, label.qid), {})[label.draft_sha256] = label.good
    return index


def draft_label_index_default() -> LabelIndex:
    """:func:`draft_label_index` of :func:`draft_labels_default`; an empty index, logged, when
    the labels cannot be read (a broken file, a directory): the numbers that read them
    (evaluation runs' and studies' ``reviewed_correct``) do not depend on them otherwise."""
    try:
        return draft_label_index(draft_labels_default())
    except (DraftLabelsInvalid, OSError) as exc:
        logger.warning("draft labels not read, reviewed_correct left out: %s", exc)
        return {}


def _label_of(*, answer: Answer, golden_set: str, qid: str, index: LabelIndex) -> tuple[str, bool] | None:
    """``(draft SHA-256, good)`` of the label of ``index`` that names ``answer``'s draft for
    question ``qid`` of ``golden_set``; None when none does (no label for the question: no
    query; else one for the draft)."""
    drafts = index.get((golden_set, qid))
    if not drafts:
        return None
    material = answer_material(answer=answer)
    if material is None:
        return None
    sha = draft_sha256(material.text)
    good = drafts.get(sha)
    return None if good is None else (sha, good)


def reviewed_correct(*, answer: Answer | None, golden_set: str, qid: str, index: LabelIndex) -> bool | None:
    """Whether the pipeline did with ``answer``'s draft what its reviewer's label says: served
    (outcome answered) a draft labelled good, or did not serve one labelled wrong.

    A question the pipeline answered without a draft (a refusal before generation such as CRAG's
    or the input guard's, a red flag, no results) served nothing: that is right when every label
    of the question says its draft was wrong, and wrong when every label says good (a
    configuration that refuses earlier must not look better for it). ``None`` when no label of
    ``index`` names the question, when ``answer`` is None (the pipeline failed: an error, not a
    decision), when it has both kinds of label and no draft, or when its draft is one no label
    names (written differently): then the question does not count.
    One query (the draft) for a labelled question, none otherwise."""
    drafts = index.get((golden_set, qid))
    if not drafts or answer is None:
        return None
    material = answer_material(answer=answer)
    if material is None:
        verdicts = set(drafts.values())
        return (True not in verdicts) if len(verdicts) == 1 else None
    good = drafts.get(draft_sha256(material.text))
    return None if good is None else (answer.outcome == Outcome.ANSWERED) == good
