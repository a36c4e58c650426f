"""factory_boy factories for evaluation rows, and golden items built from the ingested test
corpus (real MedQuAD documents of tests/conftest.py's session corpus)."""

from __future__ import annotations

import factory

from evaluation.golden.io import GoldenItem
from evaluation.models import GoldenQuestion, GoldenSet
from ingestion.models import Document


class GoldenSetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = GoldenSet

    name = factory.Sequence(lambda n: f"set-{n}")
    version = 1


class GoldenQuestionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = GoldenQuestion

    golden_set = factory.SubFactory(GoldenSetFactory)
    qid = factory.Sequence(lambda n: f"q{n}")
    position = factory.Sequence(lambda n: n)
    question = "Wat is hartfalen?"
    language = "nl"


def medquad_items(*, external_ids: list[str]) -> list[GoldenItem]:
    """Golden items for ingested MedQuAD pairs: the pair's own question, its document url as the
    expected url and its focus (with the source's synonyms) as the expected entity."""
    documents = {d.external_id: d for d in Document.objects.filter(external_id__in=external_ids)}
    items = []
    for external_id in external_ids:
        document = documents[external_id]
        meta = document.metadata
        items.append(
            GoldenItem(
                qid=external_id,
                question=document.title,
                language="en",
                category=meta.get("qtype") or "general",
                expected_entities=(meta["focus"],),
                synonyms={meta["focus"]: list(meta.get("synonyms", []))},
                expected_urls=(document.url,),
            )
        )
    return items
