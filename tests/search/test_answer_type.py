"""Expected answer type: the kind of fact a practical question asks for, and the answer's
sentence that states it (``answer_type_weight``), on shared/data/hospital-nl's real pages with
the real encoder and index."""

from __future__ import annotations

import pytest

from zolsearch.search.answer_type import answer_types, sentence_states
from zolsearch.search.config import MEASUREMENT_OVERRIDES, pipeline_config_default
from zolsearch.search.generation import answer_plain
from zolsearch.search.pipeline import SearchRequest, pipeline_run


@pytest.mark.parametrize(
    ("question", "types"),
    [
        ("hoelang moet ik wachten op de poli in zuyderland", {"duration"}),
        ("hoeveel dagen op voorhand moet ik een tolk vragen", {"duration"}),
        ("tot hoe laat mag ik op bezoek in az sint jan brugge", {"clock"}),
        ("quelles sont les heures de visite à l'AZ Sint-Jan de Bruges", {"clock"}),
        ("hoeveel kost een eenpersoonskamer per dag in uz leuven", {"cost"}),
        ("where can I park at UZ Ghent hospital and how much does it cost", {"cost"}),
        ("hoeveel mensen mogen er tegelijk bij de patient", {"count"}),
        ("welk nummer moet ik bellen voor een ziekenwagen", {"phone"}),
        ("binnen hoeveel dagen moet ik mijn factuur betalen", {"duration", "cost"}),
        ("How many people are affected by Aicardi syndrome?", {"count"}),
        ("Is Aicardi syndrome inherited?", set()),
        ("mogen we bloemen meebrengen op intensieve zorg", set()),
        # when to call is not which number: triage questions ask no phone number
        ("wanneer moet ik de huisarts bellen bij koorts", set()),
        ("when should I call a doctor for a fever", set()),
        ("hoeveel tijd kost een MRI", {"duration"}),  # how long, not what it costs
        ("how much paracetamol can I take", set()),
    ],
)
def test_a_question_asks_for_the_kind_of_fact_its_words_say(question: str, types: set[str]) -> None:
    assert answer_types(question) == frozenset(types)


@pytest.mark.parametrize(
    ("sentence", "kind", "states"),
    [
        ("Wij streven naar een wachttijd van maximaal vijftien minuten.", "duration", True),
        ("Minstens 3 werkdagen voor uw afspraak in het ziekenhuis.", "duration", True),
        ("Het kan gebeuren dat u enige tijd moet wachten.", "duration", False),
        ("Elke dag tussen 11 en 12.30 u. en tussen 14 en 20 u.", "clock", True),
        ("De tijd waarop u ontslagen wordt, ligt meestal tussen 10.00 en 11.00 uur.", "clock", True),
        ("Volg in het ziekenhuis routenummer 640.", "clock", False),
        ("De kosten (€10,00) kunnen worden voldaan bij het ophalen.", "cost", True),
        ("U kunt de campus binnen de 30 minuten gratis verlaten.", "cost", True),
        ("Op de factuur staan verschillende rubrieken.", "cost", False),
        ("Maximaal 2 bezoekers per dag.", "count", True),
        ("Bezoek is welkom.", "count", False),
        ("Via +32 (0)50 45 26 70 (dienst cardiologie).", "phone", True),
        ("Bel de Afsprakendienst op 02/254.64.00.", "phone", True),
        ("Bel de Afsprakendienst.", "phone", False),
        ("Bel 112 bij levensgevaar.", "phone", True),
        ("Bel 088 - 459 76 00 of (010) 291 19 11.", "phone", True),
        ("Deze regeling geldt sinds 01.02.2024.", "phone", False),  # a date
        ("Personen met type 2 diabetes of een afwijking op chromosoom 7.", "count", False),
        ("The condition affects about 1 in 50,000 newborns.", "count", True),
        ("About 15 percent of older adults have it.", "count", True),
        ("Laat ons dit minstens 24 uur op voorhand weten.", "clock", False),  # a duration
        ("Laat ons dit minstens 24 uur op voorhand weten.", "duration", True),
    ],
)
def test_a_sentence_states_a_fact_of_a_kind(sentence: str, kind: str, states: bool) -> None:
    assert sentence_states(sentence, frozenset({kind})) is states
    assert sentence_states(sentence, frozenset()) is False


def _answer(question: str, weight: float) -> tuple[str, list[str]]:
    config = pipeline_config_default().with_overrides(**{**MEASUREMENT_OVERRIDES, "answer_type_weight": weight})
    state = pipeline_run(request=SearchRequest(question=question, language="nl"), config=config)
    assert state.draft is not None
    return answer_plain(state.draft.text), [state.chunks[i].document.url for i in state.draft.cited_chunk_ids]


@pytest.mark.parametrize(
    ("question", "host", "fact"),
    [
        (
            "hoelang moet ik wachten op de poli in zuyderland",
            "https://www.zuyderland.nl/",
            "Wij streven naar een wachttijd van maximaal vijftien minuten.",
        ),
        (
            "hoe laat moet ik de kamer verlaten op de dag van ontslag",
            "",
            "De tijd waarop u ontslagen wordt, ligt meestal tussen 10.00 en 11.00 uur.",
        ),
    ],
)
def test_the_sentence_stating_the_fact_asked_for_is_in_the_answer(
    hospital_pages: None, question: str, host: str, fact: str
) -> None:
    """GIVEN the hospital pages, whose sentence stating the waiting time (the discharge hour)
    shares fewer words with the question than other sentences of the same page
    WHEN the question is answered without the answer type, then with it (β = 2)
    THEN only the second answer states the fact, from the same first page."""
    without, cited = _answer(question, 0.0)
    assert fact not in without, without
    typed, cited_typed = _answer(question, 2.0)
    assert fact in typed, typed
    assert cited_typed[0] == cited[0] and cited[0].startswith(host)


def test_the_blind_pairs_sheet_hides_which_configuration_wrote_which_draft(hospital_pages: None, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a golden set of two questions whose drafts differ with and without the answer type
    and one whose drafts do not
    WHEN ``benchmarks.draft_pairs sheet`` writes the pairs for a reviewer and ``score`` reads
    labels that prefer configuration B's draft in each pair
    THEN the sheet holds the two differing questions only, with no configuration named in it; the
    key names each side's configuration and draft digest; and the score counts two preferences
    for B whichever side B was shown on."""
    import argparse
    import json

    from benchmarks.draft_pairs import score, sheet
    from evaluation.draft_labels import draft_sha256

    questions = [
        ("h022", "hoelang moet ik wachten op de poli in zuyderland"),
        ("h029", "hoe laat moet ik de kamer verlaten op de dag van ontslag"),
        ("h002", "mogen we bloemen meebrengen voor mijn papa op intensieve zorg in brugge"),
    ]
    golden = tmp_path / "set.jsonl"
    golden.write_text(
        "".join(
            json.dumps({"qid": qid, "question": q, "language": "nl", "tags": ["dev"]}) + "\n" for qid, q in questions
        ),
        encoding="utf-8",
    )
    out = tmp_path / "pairs.jsonl"
    sheet(argparse.Namespace(set=[golden], a=["answer_type_weight=0"], b=["answer_type_weight=2"], out=out, seed=1))
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    key = json.loads(out.with_suffix(".key.json").read_text(encoding="utf-8"))
    assert sorted(key["pairs"][line["id"]]["qid"] for line in lines) == ["h022", "h029"]
    assert "answer_type_weight" not in out.read_text(encoding="utf-8")
    for line in lines:
        pair = key["pairs"][line["id"]]
        assert {pair["A"], pair["B"]} == {"a", "b"} and pair["split"] == "dev"
        assert draft_sha256(line["A"]["draft"]) == pair[pair["A"]]["draft_sha256"]
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(
            json.dumps(
                {
                    "id": line["id"],
                    "A": "wrong" if key["pairs"][line["id"]]["A"] == "a" else "good",
                    "B": "good" if key["pairs"][line["id"]]["A"] == "a" else "wrong",
                    "better": "B" if key["pairs"][line["id"]]["A"] == "a" else "A",
                    "reason": "B states the fact",
                }
            )
            + "\n"
            for line in lines
        ),
        encoding="utf-8",
    )
    result = score(argparse.Namespace(key=out.with_suffix(".key.json"), labels=labels))
    assert result["all"]["preferred"] == {"a": 0, "b": 2, "same": 0}
    assert result["all"]["grades_b"] == {"good": 2} and result["all"]["b_graded"] == {"up": 2}
    labels.write_text(json.dumps({"id": "p999", "A": "good", "B": "good", "better": "A", "reason": "x"}) + "\n")
    with pytest.raises(SystemExit, match="not in the key"):
        score(argparse.Namespace(key=out.with_suffix(".key.json"), labels=labels))
