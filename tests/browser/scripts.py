"""Scripted-model files for the browser scenarios (beside tests/e2e/scripts.py)."""

from __future__ import annotations

from typing import Any

from tests.e2e.scripts import call, task

BOOKING_DAY = "2030-01-07"
BOOKING_REQUEST = "Book Emily Chen onto Court 1 on 7 January 2030 at 6pm"
BOOKING_ANSWER = "Emily Chen's booking is handled."


def booking(start: str = f"{BOOKING_DAY}T18:00:00", end: str = f"{BOOKING_DAY}T19:00:00",
            synthesis_delay_ms: int = 0) -> dict[str, Any]:
    """A staff member's booking: check Court 1, propose the booking, then answer."""
    turns = [call("bookings_availability", resource="Court 1", date=BOOKING_DAY),
             call("bookings_create", member="Emily Chen", resource="Court 1", start=start,
                  end=end),
             {"content": "I proposed the booking."}]
    return {"plan": {"tasks": [task("t1", "bookings", "create", BOOKING_REQUEST)]},
            "turns": {"t1": turns}, "synthesis": BOOKING_ANSWER,
            "synthesis_delay_ms": synthesis_delay_ms}
