"""Scripted-model files for the browser scenarios (beside tests/e2e/scripts.py)."""

from __future__ import annotations

from typing import Any

from tests.e2e.scripts import call, task

BOOKING_DAY = "2030-01-07"
BOOKING_REQUEST = "Book Emily Chen onto Court 1 on 7 January 2030 at 6pm"
BOOKING_ANSWER = "Emily Chen's booking is handled."
POLICY_ANSWER = "Bookings can be cancelled free of charge up to 24 hours ahead."
BOOK_AND_POLICY_REQUEST = ("Book Emily Chen onto Court 1 on 7 January 2030 at 6pm, and what is "
                           "our cancellation policy?")


def booking(start: str = f"{BOOKING_DAY}T18:00:00",
            end: str = f"{BOOKING_DAY}T19:00:00") -> dict[str, Any]:
    """A staff member's booking: one task checks Court 1 and proposes the booking."""
    turns = [call("bookings_availability", resource="Court 1", date=BOOKING_DAY),
             call("bookings_create", member="Emily Chen", resource="Court 1", start=start,
                  end=end),
             {"content": "I proposed the booking."}]
    return {"plan": {"tasks": [task("t1", "bookings", "create", BOOKING_REQUEST)]},
            "turns": {"t1": turns}, "synthesis": BOOKING_ANSWER}


def booking_and_policy(synthesis_delay_ms: int) -> dict[str, Any]:
    """Two tasks for BOOK_AND_POLICY_REQUEST: the booking and a read whose findings the
    model writes up. The run that resumes after the decision writes its answer with the
    model, `synthesis_delay_ms` late. (The read is not a knowledge task: a knowledge
    agent's lone answer is passed on without a synthesis call, so nothing would be late.)"""
    script = booking()
    script["plan"]["tasks"].append(task("t2", "facilities", "get", "Status of Court 1"))
    script["turns"]["t2"] = [call("facilities_status", resource="Court 1"),
                             {"content": "Court 1 is open."}]
    return {**script, "synthesis": POLICY_ANSWER, "synthesis_delay_ms": synthesis_delay_ms}


EMAIL_REPLY = "Thanks for asking: cancellations need 24 hours notice."


def email_reply(reply: str = EMAIL_REPLY) -> dict[str, Any]:
    """An inbound email's run: the policy read (the draft's source), then the reply."""
    turns = [call("knowledge_search", query="cancellation policy"),
             call("knowledge_read_section", document="booking-policy",
                  section="booking-policy#cancelling-a-booking"),
             {"content": reply}]
    return {"plan": {"tasks": [task("t1", "knowledge", "search", "Find the cancellation "
                                                                  "policy")]},
            "turns": {"t1": turns}, "synthesis": reply}
