"""Fixtures of the evaluation tests: a real evaluation run over the session's corpus."""

from __future__ import annotations

import pytest

from evaluation.services.golden import golden_set_import
from evaluation.services.runs import evaluation_run_create, evaluation_run_execute
from ingestion.models import Document
from tests.evaluation.factories import medquad_items


@pytest.fixture
def evaluated_run():  # type: ignore[no-untyped-def]
    """A real evaluation run (pipeline + local judge) over 12 MedQuAD questions of the corpus."""
    ids = list(
        Document.objects.filter(external_id__startswith="medquad:")
        .order_by("external_id")
        .values_list("external_id", flat=True)[:12]
    )
    golden_set, _ = golden_set_import(name="calibration-dev", items=medquad_items(external_ids=ids))
    return evaluation_run_execute(run_id=evaluation_run_create(golden_set=golden_set).pk)
