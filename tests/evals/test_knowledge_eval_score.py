"""Scoring a knowledge answer without a judge: facts present, numbers grounded in what was
read, forbidden confusions, declines to unanswerable questions."""

from __future__ import annotations

import pytest

from opsgraph.evals.knowledge_score import score_answer
from opsgraph.knowledge.declines import declines
from opsgraph.knowledge.figures import contains, normalise, quantities

COURT = ("Cancel at least 24 hours before the start time and there is no charge. Late "
         "cancellations and no-shows are charged the off-peak court fee of £8.")
CLASS = "Cancel at least 2 hours before the class starts. A later cancellation counts as a strike."
QUESTION = "how late can I cancel my court booking for free?"


def court(answer: str, read: str = COURT) -> tuple[bool, bool, list[str]]:
    s = score_answer(answer, facts=["24 hours"], unanswerable=False, read=[read],
                     asked=[QUESTION], forbidden=["2 hours"])
    return s.correct, s.fabrication, s.reasons


def sauna(answer: str, read: str = COURT) -> tuple[bool, bool]:
    s = score_answer(answer, facts=[], unanswerable=True, read=[read],
                     asked=["what are the sauna opening hours?"])
    return s.correct, s.fabrication


@pytest.mark.parametrize(("text", "same"), [
    ("£10.00", "£10"), ("£10.0", "£10"), ("10 pounds", "£10"), ("7pm", "19:00"),
    ("7:30 p.m.", "19:30"),
    ("9am", "09:00"), ("two hours", "2 hour"), ("24-hour", "24 hour"), ("48 hrs", "48 hour"),
    ("£1,200", "£1200"), ("35 pence", "35p"), ("ten working days", "10 working day"),
    ("20 metres", "20 m"), ("10 per cent", "10%"),
])
def test_normalise_writes_numbers_times_and_units_one_way(text: str, same: str) -> None:
    assert normalise(text) == normalise(same) == same


def test_numbers_match_whole() -> None:
    assert contains("it costs £8 per hour", "£8") and not contains("it costs £80", "£8")
    assert not contains("within 12 hours", "2 hours") and contains("a 2-hour window", "2 hours")
    assert contains("cancel by 6pm on Friday", "18:00") and not contains("at 18:30", "18:00")
    assert not contains("£8.50", "£8")


def test_a_right_answer_is_correct_and_grounded() -> None:
    assert court("You can cancel up to 24 hours before your court time at no charge; "
                 "later it costs £8.") == (True, False, [])
    assert court("Free up to twenty-four hours... I mean 24 hrs before.")[0]


def test_a_wrong_number_is_not_correct_and_a_confusion_is_forbidden() -> None:
    correct, fabrication, reasons = court("Cancel at least 2 hours before it starts.",
                                          read=COURT + "\n" + CLASS)
    assert not correct and fabrication  # grounded, but the class rule: forbidden
    assert reasons == ["forbidden: 2 hours", "missing: 24 hours"]


def test_a_number_in_nothing_read_is_a_fabrication() -> None:
    correct, fabrication, reasons = court("Cancel 24 hours ahead; otherwise a £15 fee applies.")
    assert correct and fabrication  # right fact, plus an invented fee
    assert reasons == ["not in what was read: £15"]
    # a price must be read as a price: "15" elsewhere in the text does not ground "£15"
    assert court("Cancel 24 hours ahead or pay £15.", read=COURT + " Up to 15 players.")[1]
    # a number from the question or an earlier turn is not invented
    assert not court("Cancel 24 hours before; that is the court rule.")[1]


def test_a_polite_decline_to_an_unanswerable_question_is_correct() -> None:
    assert sauna("I'm sorry, I couldn't find anything about a sauna in the knowledge base. "
                 "Please ask at reception.") == (True, False)
    assert sauna("Which facility do you mean - the pool?") == (True, False)
    assert sauna("The sauna opening hours are not provided by the tools I have.") == (True, False)
    assert sauna("The sauna opening hours cannot be found in the given information.") == (
        True, False)
    # declining, but adding a read number: not a fabrication, not a clean decline either
    assert sauna("The documents don't mention a sauna; late cancellations cost £8.") == (
        False, False)


def test_a_made_up_answer_to_an_unanswerable_question_is_a_fabrication() -> None:
    assert sauna("The sauna is open 07:00 to 21:00 every day.") == (False, True)
    assert sauna("Yes, the sauna is open whenever the club is open.") == (False, True)


def test_quantities_leave_list_markers_identifiers_and_the_number_one_out() -> None:
    assert quantities("1. Cancel one day ahead\n2. Pay £8 at 7pm") == {"£8", "19:00"}
    assert quantities("card chg_06d32ca33adfe100, SKU COA-PRV-60, on 01 Dec: 35p") == {"35"}
    assert declines("That isn't covered: the policy does not say.")
    assert not declines("The sauna opens at 07:00.")
