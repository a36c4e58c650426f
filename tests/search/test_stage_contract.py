"""The stage contract: every stage changes only the state fields it declares, composition always
runs, and a stop skips the stages after it."""

from __future__ import annotations

import copy
from dataclasses import fields

import pytest

from taxonomy.services import sample_hospital_load
from zolsearch.search import pipeline as pipeline_module
from zolsearch.search.config import ConfigInvalid, PipelineConfig, pipeline_config_default
from zolsearch.search.contract import Outcome
from zolsearch.search.pipeline import STAGES, SearchRequest, pipeline_run
from zolsearch.search.stages.base import SearchState

pytestmark = pytest.mark.django_db

# Fields every stage may touch without declaring them: the trace and the timings.
UNDECLARED = {"trace", "timings_ms"}


def _snapshot(state: SearchState) -> dict[str, object]:
    """Containers are copied (in-place changes show); other values are kept by reference."""
    return {
        f.name: copy.copy(v) if isinstance(v := getattr(state, f.name), list | dict | set) else v
        for f in fields(state)
        if f.name not in UNDECLARED
    }


def _same_value(old: object, new: object) -> bool:
    """Equal containers and scalars; a numpy array (``chunk_vectors``, ``filtered_vectors``) is
    the same only when it is the same object (``==`` on arrays is element-wise)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(_same_value(old[k], new[k]) for k in old)
    if isinstance(old, list | set | str | int | float | bool) or old is None:
        return type(old) is type(new) and old == new
    return old is new


def _changed(before: dict[str, object], state: SearchState) -> set[str]:
    changed = set()
    for name, old in before.items():
        new = getattr(state, name)
        if isinstance(old, list | dict | set | str | int | float | bool) or old is None:
            same = type(old) is type(new) and _same_value(old, new)
        else:
            same = old is new
        if not same:
            changed.add(name)
    return changed


@pytest.mark.parametrize(
    "question",
    [
        "What are the symptoms of ABCD syndrome?",  # answered
        "Waar kan ik terecht met hartfalen?",  # graph facts pinned
        "Ik heb pijn op de borst en kan moeilijk ademen, wat moet ik doen?",  # red flag
    ],
)
def test_each_stage_changes_only_what_it_declares(monkeypatch: pytest.MonkeyPatch, question: str) -> None:
    """GIVEN the pipeline WHEN each stage runs THEN the fields it changed are among its ``adds``
    (a stage that writes an undeclared field breaks the contract the next stages rely on)."""
    sample_hospital_load()
    violations: list[str] = []
    for stage in STAGES:
        original = type(stage).run

        def checked(self, state, _original=original):  # type: ignore[no-untyped-def]
            before = _snapshot(state)
            try:
                _original(self, state)
            finally:
                extra = _changed(before, state) - self.adds
                if extra:
                    violations.append(f"{self.name} changed {sorted(extra)} but declares {sorted(self.adds)}")

        monkeypatch.setattr(type(stage), "run", checked)
    pipeline_run(request=SearchRequest(question=question), config=pipeline_config_default())
    assert violations == []


def test_a_stop_skips_later_stages_but_composition_runs() -> None:
    """GIVEN a red-flag question WHEN the pipeline runs THEN retrieval and generation never ran,
    composition did, and the reply is the routing message only."""
    state = pipeline_run(
        request=SearchRequest(question="Mijn vader reageert niet meer en ademt niet", language="nl"),
        config=pipeline_config_default(),
    )
    assert state.outcome == Outcome.RED_FLAG and state.stop is not None and state.stop.stage == "red_flags"
    assert "dense" not in state.timings_ms and "generate" not in state.timings_ms and "compose" in state.timings_ms
    assert state.answer == "Dit kan levensbedreigend zijn. Bel nu 112." and state.citations == []


def test_every_stage_declares_its_reads_and_adds() -> None:
    names = {f.name for f in fields(SearchState)}
    for stage in STAGES:
        assert stage.adds and stage.reads, stage.name
        assert stage.adds <= names and stage.reads <= names, stage.name
    assert [s.name for s in STAGES if s.always] == ["compose"]
    assert pipeline_module.STAGES[-1].name == "compose"


def test_pipeline_config_is_frozen_validated_and_hashed() -> None:
    config = pipeline_config_default()
    with pytest.raises(Exception, match="frozen"):
        config.top_k = 3  # type: ignore[misc]
    changed = config.with_override_pairs(["lexical_enabled=false", "top_k=5", "guard_threshold=0.7"])
    assert changed.lexical_enabled is False and changed.top_k == 5 and changed.guard_threshold == 0.7
    assert changed.hash != config.hash and len(changed.hash) == 64
    assert PipelineConfig.from_values(config.as_dict()).hash == config.hash
    with pytest.raises(ConfigInvalid, match="unknown override"):
        config.with_override_pairs(["no_such_flag=1"])
    with pytest.raises(ConfigInvalid, match="top_k"):
        config.with_override_pairs(["top_k=many"])
    with pytest.raises(ConfigInvalid, match="guard_threshold"):
        config.with_overrides(guard_threshold=1.5)


def test_a_stored_configuration_without_a_later_field_does_what_it_did() -> None:
    """GIVEN a configuration stored before ``lexical_stopword_languages`` existed (BM25 kept
    every word) WHEN it is read again THEN the field is () rather than today's default, and an
    unknown stop word language is refused with the languages that have a list."""
    config = pipeline_config_default()
    assert config.lexical_stopword_languages == ("nl", "fr")
    stored = {k: v for k, v in config.as_dict().items() if k != "lexical_stopword_languages"}
    assert PipelineConfig.from_values(stored).lexical_stopword_languages == ()
    assert PipelineConfig.from_values(config.as_dict()).lexical_stopword_languages == ("nl", "fr")
    with pytest.raises(ConfigInvalid, match="no stop word list for \\['xx'\\]"):
        config.with_override_pairs(["lexical_stopword_languages=nl,xx"])
    assert config.with_override_pairs(["lexical_stopword_languages="]).lexical_stopword_languages == ()
