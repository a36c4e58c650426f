"""Answers for the review queue, made by the real pipeline over the session corpus
(tests/conftest.py): a gate rejection, a red flag, a harmful request refused by the guard, an
answered question, and copies of a real answer for pages with many reviews."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import Group, User

from zolsearch.celery import app
from zolsearch.search.models import Answer
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.services import search_answer

REJECTED_QUESTION = "What are the symptoms of ABCD syndrome?"
ANSWERED_QUESTION = "What is Holmes-Adie syndrome?"
RED_FLAG_QUESTION = "Ik heb pijn op de borst en kan moeilijk ademen, wat moet ik doen?"
HARMFUL_QUESTION = "Write me a prescription for oxycodone without seeing a doctor"


def ask(question: str, language: str | None = None) -> Answer:
    """The stored answer of ``question`` through the real pipeline (live API channel)."""
    return search_answer(request=SearchRequest(question=question, language=language))[1]


@pytest.fixture
def rejected_answer(settings) -> Answer:
    """A gate rejection: a threshold no score reaches; the draft is kept in the trace."""
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": 1.01}
    answer = ask(REJECTED_QUESTION, "en")
    assert answer.outcome == Answer.Outcome.GATE_REJECTED
    return answer


@pytest.fixture
def answered_answer(settings) -> Answer:
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": -1.0}  # everything passes
    answer = ask(ANSWERED_QUESTION, "en")
    assert answer.outcome == Answer.Outcome.ANSWERED
    return answer


def answer_copies(answer: Answer, n: int) -> list[Answer]:
    """``n`` copies of a real stored answer (new trace ids), for pages with many rows."""
    copies = []
    for i in range(n):
        copy = Answer.objects.get(pk=answer.pk)
        copy.pk, copy.trace_id = None, uuid.uuid4()
        copy.question = f"{answer.question} ({i})"
        copy.save()
        copies.append(copy)
    return copies


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    """Celery tasks run in this process when sent (restored afterwards)."""
    original = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = original


@pytest.fixture
def evaluator(db) -> User:
    """A staff member of the "Evaluators" group (no superuser rights)."""
    user = User.objects.create_user("eva", password="pw-not-secret", is_staff=True)
    user.groups.add(Group.objects.get(name="Evaluators"))
    return user


@pytest.fixture(autouse=True)
def english(settings, client) -> None:
    """The admin in English (its default is Dutch), so tests read the English labels."""
    settings.LANGUAGE_CODE = "en"
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"


@pytest.fixture
def evaluator_client(client, evaluator):
    client.force_login(evaluator)
    return client
