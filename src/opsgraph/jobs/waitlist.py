"""The nightly waitlist share-out: places freed on a full event go to its waitlist.

A place is free when an upcoming, scheduled event has fewer `registered` registrations than
its capacity (a cancelled registration — status `cancelled`, or removed — holds none).
Free places go to the event's `waitlisted` members by one rule, the same every night:

    members who missed out last time first, then waitlist order (`at`, then the
    registration id)

**Missed out last time**, from stored data only: of the member's registrations for other
events that started before the job's `now`, the one for the latest event (by start, then
event id) is still `waitlisted` — they queued for their last event and never got in.

**The job moves the member itself**, an audited system write, and proposes only the
notification. The member asked for a place when they joined the waitlist (their own
registration, or a change a manager approved); the rule, not a person, decides who is next,
so a manager's review would add nothing but delay. A promotion held as a pending change
would keep a freed place empty until someone decides, and two such proposals for one place
could both be approved past capacity. Each promotion is one compare-and-set
(`waitlisted` → `registered`), with its audit row through `audit.record_transition`
(`None → applied`, actor `waitlist share-out`, `detail.via = "waitlist_share_out"`, the
rule's inputs in `detail`). What reaches a person — the email telling the member — is
queued as a `communications.send_email` pending change (`approvals.record_pending`) and
sent only once a manager approves it.

Same input → same output: the order is a pure function of the stored registrations and
events and `now`; ids derive from the tenant and the registration. Idempotent: a place
given is no longer free, and the notification of a promotion is recorded once (its key is
the registration), so a second run the same night changes nothing. A run cut short after a
promotion but before its notification records the notification the next time.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any, TypedDict

from opsgraph.approvals.pending import record_pending
from opsgraph.audit import record_transition
from opsgraph.operations.base import Preview
from opsgraph.operations.reads import by_ids, where_in
from opsgraph.operations.records import Document, short_when
from opsgraph.store.scope import TenantScope

JOB = "share_out_waitlists"
ACTOR = "waitlist share-out"
VIA = "waitlist_share_out"
RULE = "missed out last time first, then waitlist order"
NOTICE_OPERATION = "communications.send_email"
NOTICE_AGENT = "waitlist-share-out"
_UPCOMING_EVENTS = 500
"""Upcoming events looked at per tenant and night (soonest first)."""


class WaitlistReport(TypedDict):
    """What one run did for one tenant."""

    events: int
    """upcoming events with a free place and a waitlist"""
    promoted: int
    """waitlisted members this run moved into a freed place"""
    notices: int
    """notification emails this run queued as pending changes"""


def notice_thread(registration_id: str) -> str:
    """The thread id the notification of one promotion is recorded under (its key)."""
    return f"waitlist_{registration_id}"


def _open_events(scope: TenantScope, now: datetime) -> list[tuple[Document, int]]:
    """(event, free places) for upcoming scheduled events with a free place and a
    waitlist, soonest first."""
    events = [e for e in scope["events"].find({"start": {"$gte": now}},
                                              sort=[("start", 1), ("_id", 1)],
                                              limit=_UPCOMING_EVENTS)
              if e.get("status", "scheduled") == "scheduled"]
    counts = Counter((r["event_id"], r["status"]) for r in where_in(
        scope["registrations"], "event_id", [e["_id"] for e in events],
        projection={"event_id": 1, "status": 1}))
    found = []
    for event in events:
        free = int(event["capacity"]) - counts[(event["_id"], "registered")]
        if free > 0 and counts[(event["_id"], "waitlisted")] > 0:
            found.append((event, free))
    return found


def missed_out_last_time(scope: TenantScope, member_ids: list[str], event_id: str,
                         now: datetime) -> set[str]:
    """The members whose latest past event (other than `event_id`) left them waitlisted."""
    regs = [r for r in where_in(scope["registrations"], "member_id", member_ids,
                                projection={"event_id": 1, "member_id": 1, "status": 1})
            if r["event_id"] != event_id]
    starts = {eid: e["start"] for eid, e in by_ids(
        scope["events"], [r["event_id"] for r in regs], projection={"start": 1}).items()}
    latest: dict[str, tuple[datetime, str, str]] = {}
    for reg in regs:
        start = starts.get(reg["event_id"])
        if start is None or _utc(start) >= now:
            continue
        key = (_utc(start), str(reg["event_id"]), str(reg["status"]))
        if reg["member_id"] not in latest or key[:2] > latest[reg["member_id"]][:2]:
            latest[reg["member_id"]] = key
    return {member for member, (_, _, status) in latest.items() if status == "waitlisted"}


def share_order(waiting: list[Document], missed: set[str]) -> list[Document]:
    """The waitlist in share-out order: missed out last time first, then `at`, then id."""
    return sorted(waiting, key=lambda r: (r["member_id"] not in missed, _utc(r["at"]),
                                          str(r["_id"])))


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _promote(scope: TenantScope, event: Document, reg: Document, position: int,
             missed: bool, now: datetime) -> bool:
    """Move one waitlisted registration into a place (compare-and-set), with its audit
    row; False when it is no longer waitlisted."""
    moved = scope["registrations"].find_one_and_update(
        {"_id": reg["_id"], "status": "waitlisted"},
        {"$set": {"status": "registered", "promoted_at": now, "promoted_by": JOB}})
    if moved is None:
        return False
    record_transition(scope, f"wl_{reg['_id']}", None, "applied", ACTOR, None, detail={
        "via": VIA, "event_id": event["_id"], "member_id": reg["member_id"],
        "registration_id": reg["_id"], "from": "waitlisted", "to": "registered",
        "waitlist_position": position, "missed_out_last_time": missed, "rule": RULE,
    }, operation="events.register", now=now)
    return True


def _queue_notice(scope: TenantScope, reg: Document, event: Document,
                  members: dict[str, Document], now: datetime) -> bool:
    """The email telling the member, as a pending change; False when it has no address
    or was recorded before."""
    member = members.get(reg["member_id"]) or {}
    address = member.get("email")
    if not isinstance(address, str) or not address:
        return False
    when = short_when(event["start"])
    subject = f"You have a place: {event['title']}"
    body = (f"Hello {member.get('name', '')},\n\nA place came free for {event['title']} on "
            f"{when}, and it is yours: you are now registered.\n")
    args = {"to": address, "subject": subject, "body": body}
    preview = Preview(f"Email {member.get('name', address)} <{address}>: {subject!r}", {},
                      {"to": address, "to_name": member.get("name"),
                       "member_id": reg["member_id"], "subject": subject, "body": body})
    thread = notice_thread(str(reg["_id"]))
    before = scope["pending_changes"].count({"thread_id": thread})
    record_pending(scope, thread_id=thread, task_id="notice", agent=NOTICE_AGENT,
                   operation=NOTICE_OPERATION, args=args, preview=preview,
                   proposed_by=ACTOR, now=now)
    return before == 0


def share_out(scope: TenantScope, now: datetime | None = None) -> WaitlistReport:
    """Give every freed place of the tenant's upcoming events to its waitlist, by the rule;
    queue the notifications of this run's promotions and of any earlier one left without."""
    at = now if now is not None else datetime.now(UTC)
    report = WaitlistReport(events=0, promoted=0, notices=0)
    promoted: list[tuple[Document, Document]] = []
    events = _open_events(scope, at)
    for event, free in events:
        waiting = list(scope["registrations"].find(
            {"event_id": event["_id"], "status": "waitlisted"}, sort=[("at", 1), ("_id", 1)]))
        missed = missed_out_last_time(scope, [w["member_id"] for w in waiting],
                                      str(event["_id"]), at)
        order = share_order(waiting, missed)
        for reg in order:
            if free <= 0:
                break
            if _promote(scope, event, reg, waiting.index(reg) + 1, reg["member_id"] in missed,
                        at):
                free -= 1
                promoted.append((event, reg))
    report["events"] = len(events)
    report["promoted"] = len(promoted)
    report["notices"] = _notify(scope, at)
    return report


def _notify(scope: TenantScope, now: datetime) -> int:
    """Queue the notice of every promotion that has none yet (this run's, or one a run
    cut short left behind)."""
    regs = list(scope["registrations"].find({"promoted_by": JOB, "notice_queued": None},
                                            sort=[("promoted_at", 1), ("_id", 1)]))
    if not regs:
        return 0
    events = by_ids(scope["events"], [r["event_id"] for r in regs])
    members = by_ids(scope["members"], [r["member_id"] for r in regs],
                     projection={"name": 1, "email": 1})
    queued = 0
    for reg in regs:
        event = events.get(reg["event_id"])
        if event is not None and _queue_notice(scope, reg, event, members, now):
            queued += 1
        scope["registrations"].update_one({"_id": reg["_id"]},
                                          {"$set": {"notice_queued": True}})
    return queued


def share_out_waitlists(scopes: list[TenantScope], now: datetime | None = None,
                        ) -> dict[str, Any]:
    """The job over these tenants: `{tenant: WaitlistReport}`."""
    return {scope.tenant_id: share_out(scope, now) for scope in scopes}
