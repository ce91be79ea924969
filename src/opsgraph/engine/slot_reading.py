"""The model fills, code checks: what the resolver read in a request for an action agent.

Before an action agent's first model call, code resolves the task's words (the person's
message, or the task's own instruction when the plan has several tasks) with the thread's
recent turns, once, and matches the mentions to the agent's typed slots (a shift slot by
the shift the words name, resolve.shifts; a `changes` slot by the new values the words
give a member's record, resolve.changes). The brief lists each resolved slot by name and
label ("member: Jane Smith", "start: Thu 4 Dec 18:00"), never a person's id: only a record
no tool takes by name (a booking, a shift) shows its id with its label. A write call whose
record argument is not what the request names is answered as an error naming what the
request does name, and the model calls again (it is not corrected silently: the resolver
can be wrong, and the card must show what the agent asked for); so is a new e-mail address
or phone number in neither the request nor the task's reads, and a time on another day
than the one the request names. A required slot that several records match is asked
about, with the candidates as options, before any model call. With
`OPSGRAPH_DIRECT_PROPOSALS` on (the default), a write tool whose every required argument
is a resolved slot is called by code, with no model turn (a booking's end left open is one
slot of the resource).

Reading the words (the resolver and the slots it fills: `engine.slot_filling`) is apart
from what this module does with the reading, so that a run whose agents only read never
imports the resolver.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from opsgraph.engine.context import RunContext
from opsgraph.engine.plan import PlannedTask
from opsgraph.engine.tool_loop import call_record
from opsgraph.resolve.mentions import Mention
from opsgraph.store.search_keys import digits
from opsgraph.tools.contract import BoundTool, ToolOutcome

KIND_OF_COLLECTION = {"members": "member", "staff": "staff", "resources": "resource",
                      "events": "event", "bookings": "booking", "invoices": "invoice",
                      "shifts": "shift"}
"""The record kind a reference argument names, by the collection it resolves in."""
ID_ONLY = frozenset({"booking", "shift"})
"""Records with no name a tool accepts: a write names them by id, so the brief shows it."""


@dataclass
class SlotReading:
    """The agent's slots as the resolver filled them."""

    filled: dict[str, Mention] = field(default_factory=dict)
    """Slot name → the one mention that fills it (a value, no doubt)."""
    ambiguous: dict[str, Mention] = field(default_factory=dict)
    """Slot name → a mention several records match (its candidates)."""
    code_calls: list[dict[str, Any]] = field(default_factory=list)
    """The reads code made to fill slots (`pick_free`), kept with the task's calls."""
    any_of: set[str] = field(default_factory=set)
    """Slots whose candidates are any of a kind ("a court"): code may pick a free one."""
    more: dict[str, list[Mention]] = field(default_factory=dict)
    """Slot name → the other records an `each` slot names ("add Charlie and Kai"): one
    write for each."""
    required: tuple[str, ...] = ()
    mentions: tuple[Mention, ...] = ()
    asked: str = ""
    """The person's message, the task's instruction and the recent turns."""
    seen: list[Any] = field(default_factory=list)
    """What the task's reads returned: where a value the request's own words do not give
    may come from ("her new email is in her message"). Made text only when a write needs
    checking."""

    def question(self) -> tuple[str, list[str], str] | None:
        """(question, options, slot) for the first required slot several records match, or
        whose words match none (no options then)."""
        for name in self.required:
            mention = self.ambiguous.get(name)
            if mention is not None and name not in self.filled:
                options = [c.label for c in mention.candidates]
                if not options:  # the words name a record the club does not have
                    return (f"No {mention.kind} matches “{mention.text}”. Which "
                            f"{mention.kind} do you mean?", [], name)
                return (f"Which {mention.kind} do you mean by “{mention.text}”: "
                        + " or ".join(options) + "?", options, name)
        return None

    def brief(self) -> str:
        """The brief's block of resolved slots (labels; an id only for a record with no
        name a tool takes: a booking, a shift)."""
        if not self.filled and not self.ambiguous:
            return ""
        lines = ["What code read in the request (use these values; a name as written here, "
                 "a time as its ISO 8601):"]
        for name, mention in self.filled.items():
            others = "".join(f" and {shown(m)}" for m in self.more.get(name, ()))
            each = " (one call for each)" if others else ""
            lines.append(f"- {name}: {shown(mention)}{others}{each}")
        for name, mention in self.ambiguous.items():
            if name not in self.filled:
                lines.append(f"- {name}: several match “{mention.text}” — "
                             + " or ".join(c.label for c in mention.candidates)
                             + ": ask which one")
        return "\n".join(lines)

    def named(self, kind: str) -> list[Mention]:
        """The request's mentions of one record kind (resolved or ambiguous)."""
        return [m for m in self.mentions if m.kind == kind and (m.value or m.candidates)]


def _when(value: str) -> str:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return value
    return f"{moment:%a} {moment.day} {moment:%b} {moment:%H:%M}"


def shown(mention: Mention) -> str:
    """How a resolved mention is shown to a model: a record by its label, a time in words
    with its ISO 8601 value, an amount with what it is when code worked it out ("in full"),
    anything else by its value."""
    value = mention.value or ""
    if mention.kind == "datetime":
        end = f" to {_when(mention.end)} ({mention.end})" if mention.end else ""
        return f"{_when(value)} ({value}){end}"
    if mention.kind == "date":
        try:
            day = date.fromisoformat(value)
            return f"{day:%a} {day.day} {day:%b %Y} ({value})"
        except ValueError:
            return value
    if mention.kind == "money" and mention.label:
        return f"{value} ({mention.label})"
    if mention.kind in ID_ONLY and mention.label:
        return f"{mention.label} (id {value})"
    return mention.label or value


def task_words(ctx: RunContext, task: PlannedTask, several_tasks: bool) -> str:
    """What a task is asked in: the person's message, or the task's own instruction when the
    plan has several tasks (or there is no message)."""
    return task.instruction if several_tasks or not ctx.request else ctx.request


def pick_free(tools: dict[str, BoundTool], reading: SlotReading) -> None:
    """Settle a resource slot the request filled with "a court" (any of them will do) by
    the first candidate free at the start it names, read with the agent's availability
    tool; left for the question when none is free or no start is named."""
    start = reading.filled.get("start")
    check = tools.get("bookings_availability")
    if start is None or not start.value or start.kind != "datetime" or check is None:
        return
    at = datetime.fromisoformat(start.value)
    for name in sorted(reading.any_of & set(reading.ambiguous)):
        mention = reading.ambiguous[name]
        for cand in mention.candidates:
            args = {"resource": cand.value, "date": start.value[:10]}
            outcome = check.call(args)
            reading.code_calls.append({**call_record({"name": check.name, "args": args},
                                                     outcome.ok, outcome.content), "by": "code"})
            free = outcome.content.get("free", []) if outcome.ok and isinstance(
                outcome.content, dict) else []
            if any(datetime.fromisoformat(str(f["start"])) == at for f in free):
                reading.filled[name] = Mention(mention.text, "resource", cand.value,
                                               cand.label, start=mention.start)
                del reading.ambiguous[name]
                break


def checked_tools(tools: dict[str, BoundTool], reading: SlotReading) -> dict[str, BoundTool]:
    """The tools, each write tool wrapped so a record argument that is not what the request
    names answers an error naming what it does name, and a new e-mail address or phone
    number that neither the request nor a read gave answers an error saying so; each read
    wrapped to keep what it returned (`SlotReading.seen`)."""
    if not reading.mentions:
        return tools
    return {name: BoundTool(tool.name, tool.kind, tool.operation,
                            _checked(tool, reading) if tool.kind == "preview"
                            else _kept(tool, reading))
            for name, tool in tools.items()}


def _kept(tool: BoundTool, reading: SlotReading) -> Any:
    inner = tool.call

    def call(raw: dict[str, Any]) -> ToolOutcome:
        outcome = inner(raw)
        if outcome.ok:
            reading.seen.append(outcome.content)
        return outcome

    return call


_CONTACT = {"email": ("e-mail address", re.compile(r"\b(?:e-?mail|address|contact)", re.I)),
            "phone": ("phone number", re.compile(r"\b(?:phone|mobile|cell|number|tel|contact)",
                                                 re.I))}


def _argument(mention: Mention) -> str:
    """What a tool argument naming the mention's record should say: its name, or its id
    for a record that has none (a booking, a shift)."""
    if mention.kind in ID_ONLY and mention.value:
        return mention.value
    return mention.label or mention.text


def invented_contact(raw: Any, reading: SlotReading) -> str | None:
    """The error for a change's new e-mail address or phone number that nothing asked for:
    the request, its recent turns and the task's instruction neither give one nor speak of
    one, and no read returned it (a small model fills `changes` with made-up ones: held-out
    members-09 "cancel kai robinson's membership" set a new email and phone)."""
    changes = raw.get("changes") if isinstance(raw, dict) else None
    if not isinstance(changes, dict):
        return None
    seen = " ".join([reading.asked, *map(str, reading.seen)])
    for key, (what, words) in _CONTACT.items():
        given = changes.get(key)
        if (not isinstance(given, str) or not given.strip()
                or any(m.kind == key for m in reading.mentions)
                or words.search(reading.asked)):
            continue
        known = (given.strip().lower() in seen.lower() if key == "email"
                 else len(digits(given)) >= 6 and digits(given)[-6:] in digits(seen))
        if not known:
            return (f"changes.{key}: {given!r} is not in the request, which asks for no new "
                    f"{what}; leave {key} out of the changes")
    return None


def _checked(tool: BoundTool, reading: SlotReading) -> Any:
    inner = tool.call

    def call(raw: dict[str, Any]) -> ToolOutcome:
        outcome = inner(raw)
        for arg, collection in tool.operation.references.items():
            named = reading.named(KIND_OF_COLLECTION.get(collection, ""))
            given = raw.get(arg) if isinstance(raw, dict) else None
            if not named or given is None:
                continue
            labels = [_argument(m) for m in named if m.value] or [
                c.label for m in named for c in m.candidates]
            ids = {m.value for m in named} | {c.value for m in named for c in m.candidates}
            hint = (f"the request names {' and '.join(labels)}; call {tool.name} again with "
                    f"{arg} {labels[0]!r}")
            if outcome.proposal is not None and outcome.proposal.args.get(arg) not in ids:
                return ToolOutcome(False, f"{arg}: {given!r} is not what the request names: "
                                          + hint)
            if not outcome.ok and str(outcome.content).startswith(f"{arg}:"):
                return ToolOutcome(False, f"{outcome.content} ({hint})")
        if outcome.proposal is None:
            return outcome
        wrong = invented_contact(raw, reading) or other_time(
            tool.name, outcome.proposal.args, raw if isinstance(raw, dict) else {}, reading)
        return outcome if wrong is None else ToolOutcome(False, wrong)

    return call


def other_time(tool_name: str, args: dict[str, Any], raw: dict[str, Any],
               reading: SlotReading) -> str | None:
    """The error for a change on another day than the request names: when the request names
    one date and time and it fills a slot, the proposal's value (`args`, validated; `raw` as
    the model wrote it, for the message) for that slot must be on that day — the moment
    itself, a time within its range ("thurs evening"), or another time that day (the agent
    offers the nearest free slot when the asked one is taken). Held-out bookings-03 on a
    Friday: "book me a court for thurs evening, 7ish" was proposed for that Friday at 19:00
    although the brief said Thu 10 Dec 19:00. Requests naming several times ("move my 6pm
    to 7pm") are left to the model: which slot each fills is its reading."""
    if sum(m.kind == "datetime" for m in reading.mentions) != 1:
        return None
    for slot, mention in reading.filled.items():
        given = args.get(slot)
        if mention.kind != "datetime" or not mention.value or not isinstance(given, str):
            continue
        try:
            moment, start = datetime.fromisoformat(given), datetime.fromisoformat(mention.value)
            end = datetime.fromisoformat(mention.end) if mention.end else start
        except ValueError:
            continue  # the operation's own validation speaks of a malformed time
        if moment.tzinfo is None or start <= moment <= end or (
                moment.astimezone(start.tzinfo).date() in {start.date(), end.date()}):
            continue
        written = raw.get(slot) if isinstance(raw.get(slot), str) else given
        return (f"{slot}: {written!r} is on another day than the request names: "
                f"{shown(mention)}; call {tool_name} again with a {slot} on that day "
                f"({mention.value!r}, or the nearest free time that day)")
    return None


def direct_calls(ctx: RunContext, tools: dict[str, BoundTool], write_tool: str | None,
                 reading: SlotReading) -> list[dict[str, Any]] | None:
    """The write calls code can make with no model turn — one, or one for each record an
    `each` slot names — when every required argument of the task's write tool is a slot the
    resolver filled without doubt; None otherwise."""
    args = direct_call(ctx, tools, write_tool, reading)
    if args is None:
        return None
    calls = [args]
    for name, others in reading.more.items():
        if name in args:
            calls += [{**args, name: m.value} for m in others]
    return calls


def direct_call(ctx: RunContext, tools: dict[str, BoundTool], write_tool: str | None,
                reading: SlotReading) -> dict[str, Any] | None:
    """The write call code can make with no model turn: every required argument of the
    task's write tool is a slot the resolver filled without doubt (an `end` may come from
    the start's range, or be one booking slot of the resource named after it); None
    otherwise."""
    if write_tool is None or write_tool not in tools:
        return None
    fields = tools[write_tool].operation.input.model_fields
    args: dict[str, Any] = {}
    for name, info in fields.items():
        key = info.alias or name
        mention = reading.filled.get(key)
        end = _end_of_start(ctx, reading) if key == "end" and mention is None else None
        if mention is not None and mention.value:
            args[key] = (json.loads(mention.value) if mention.kind == "changes"
                         else mention.value)
        elif end is not None:
            args[key] = end
        elif info.is_required():
            return None
    return args


def _end_of_start(ctx: RunContext, reading: SlotReading) -> str | None:
    """The end the request gives its start: the range's, else one booking slot of the
    resource named (its `slot_minutes`, 60 unless set, as bookings.availability counts)."""
    start, resource = reading.filled.get("start"), reading.filled.get("resource")
    if start is None or not start.value:
        return None
    if start.end:
        return start.end
    if resource is None or not resource.value or start.kind != "datetime":
        return None
    doc = ctx.scope["resources"].find_one({"_id": resource.value}, projection={"slot_minutes": 1})
    if doc is None:
        return None
    length = timedelta(minutes=int(doc.get("slot_minutes") or 60))
    return (datetime.fromisoformat(start.value) + length).isoformat()
