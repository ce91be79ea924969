"""`resolve_request`: every mention in a request, found by code before any model call.

The finders run in an order that keeps them from reading the same words twice, each
marking what it used: e-mail addresses, invoice numbers and typed ids, phone numbers,
amounts ("in full": what the invoice named has left to refund), then named records
(members, staff, resources, events; "Morning Yoga" is an
event, not a morning), the caller's own record for "me" and "my" (resolve.self_refs), then
dates and times, words that point at earlier turns ("her",
"that booking", "the same time", resolve.history), a pick among the records an earlier
turn listed ("the family one", resolve.choice), and last a booking named by its member
and day (resolve.bookings).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from opsgraph.errors import BadInput
from opsgraph.operations.base import Context
from opsgraph.operations.currency import currency_code
from opsgraph.resolve.bookings import find_booking
from opsgraph.resolve.choice import find_choices, picks_one, settle_here
from opsgraph.resolve.contacts import find_emails, find_phones, venue_country
from opsgraph.resolve.dates import find_moments
from opsgraph.resolve.days import find_days
from opsgraph.resolve.events import narrow_events, unmatched_events
from opsgraph.resolve.history import carry_over, points_back
from opsgraph.resolve.keys import find_keys
from opsgraph.resolve.mentions import Mention, Resolution
from opsgraph.resolve.money import find_amounts, find_full_amounts
from opsgraph.resolve.names import find_named
from opsgraph.resolve.self_refs import find_self
from opsgraph.resolve.times import find_times
from opsgraph.resolve.tokens import Claimed, Token, tokenize

HISTORY_TURNS = 6
"""How many of the latest earlier turns are read for references."""
_MONTH_FIRST = frozenset({"US", "PH", "CA"})


def zone_of(timezone: str) -> ZoneInfo:
    """The venue's time zone; BadInput naming it when it is not an IANA zone."""
    try:
        return ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise BadInput(f"timezone: {timezone!r} is not a time zone (e.g. Europe/London)") from None


def resolve_request(ctx: Context, text: str, *, timezone: str, now: datetime | None = None,
                    history: Sequence[str] = (),
                    tenant: Mapping[str, object] | None = None) -> Resolution:
    """What `text` names, read at `now` (default: the context's clock) in the venue's
    `timezone`; `history` holds earlier turns of the thread, oldest first. `tenant`: the
    tenant's settings document when the caller has it at hand (else it is read)."""
    zone = zone_of(timezone)
    clock = (now or ctx.now).astimezone(zone)
    settings = dict(tenant) if tenant is not None else ctx.scope.tenant() or {}
    turns = list(history)[-HISTORY_TURNS:] if points_back(text) or picks_one(text) else []
    earlier = [_with_booking(ctx, turn, _mentions(ctx, turn, clock, zone, settings), zone)
               for turn in turns if turn.strip()]
    found = carry_over(text, _mentions(ctx, text, clock, zone, settings), earlier, zone)
    found = settle_here(ctx, text, found)
    found += find_choices(ctx, text, found, earlier)
    found = _with_booking(ctx, text, found, zone)
    return Resolution(clock, timezone, tuple(sorted(found, key=lambda m: (m.start, m.kind))))


def _mentions(ctx: Context, text: str, now: datetime, zone: ZoneInfo,
              tenant: dict[str, object]) -> list[Mention]:
    """The mentions of one text, without references to other turns."""
    claimed = Claimed()
    country = venue_country(tenant)
    found = find_emails(text, claimed)
    found += find_keys(ctx, text, claimed)
    found += find_phones(text, claimed, country)
    found += find_amounts(text, claimed, currency_code(tenant))
    found += find_full_amounts(ctx, text, claimed, found)
    tokens = tokenize(text)
    day_first = country not in _MONTH_FIRST
    found += find_named(ctx, text, tokens, claimed,
                        _time_tokens(text, tokens, now, day_first))
    found += find_self(ctx, text, claimed, found)
    moments = find_moments(text, claimed, now, zone, day_first)
    return (narrow_events(ctx, found, moments, zone) + moments
            + unmatched_events(text, claimed))


def _with_booking(ctx: Context, text: str, found: list[Mention], zone: ZoneInfo
                  ) -> list[Mention]:
    """`found` and the booking `text` names by member and day, if any."""
    booking = find_booking(ctx, text, found, zone)
    return found if booking is None else [*found, booking]


def _time_tokens(text: str, tokens: list[Token], now: datetime, day_first: bool
                 ) -> frozenset[int]:
    """Indexes of the tokens inside a day or a clock time ("thurs", "6pm")."""
    spans = [(d.start, d.end) for d in find_days(text, now.date(), day_first)]
    spans += [(t.start, t.end) for t in find_times(text, spans)]
    return frozenset(i for i, t in enumerate(tokens)
                     if any(s < t.end and t.start < e for s, e in spans))
