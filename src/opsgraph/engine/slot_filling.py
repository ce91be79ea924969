"""The resolver's half of slot reading: an action agent's typed slots filled from what code
reads in the task's words (`read_slots`), and that reading, once per run (`resolution_of`).

Before an action agent's first model call, code resolves the task's words with the thread's
recent turns and matches the mentions to the agent's slots (a shift slot by the shift the
words name, resolve.shifts; a `changes` slot by the new values the words give a member's
record, resolve.changes); `engine.slot_reading` uses the `SlotReading` it makes. Apart from
that module because the resolver (`opsgraph.resolve.resolver`, with phonenumbers and
rapidfuzz) is about 50 ms of CPU to import, which a run whose agents only read, the usual
first request, never needs: its importers import this module where they use it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from opsgraph.engine.context import RunContext
from opsgraph.engine.memory import Turn, earlier_turns
from opsgraph.engine.plan import PlannedTask
from opsgraph.engine.slot_reading import SlotReading, task_words
from opsgraph.operations.base import Context
from opsgraph.resolve.any_resource import find_any_resource
from opsgraph.resolve.changes import member_changes
from opsgraph.resolve.mentions import Mention, Resolution
from opsgraph.resolve.resolver import resolve_request, zone_of
from opsgraph.resolve.shifts import find_shift
from opsgraph.resolve.slots import candidates_for

if TYPE_CHECKING:
    from opsgraph.registry.spec import AgentSpec


def resolution_of(ctx: RunContext, text: str, history: list[Turn] | None = None) -> Resolution:
    """What `text` names, read at the run's start in the venue's time zone, with the
    thread's recent turns (`history`, default the run's: as an agent's brief shows them)."""
    turns = ctx.history if history is None else history
    earlier = [t["content"] for t in earlier_turns(turns)]
    key = (text, *earlier)
    found = ctx.resolutions.get(key)
    if not isinstance(found, Resolution):
        found = ctx.resolutions[key] = resolve_request(
            Context(ctx.scope, ctx.principal), text, timezone=ctx.timezone,
            now=ctx.started_at, history=earlier, tenant=ctx.venue)
    return found


def read_slots(ctx: RunContext, agent: AgentSpec, task: PlannedTask,
               several_tasks: bool) -> SlotReading:
    """Resolve the task's words once and fill the agent's typed slots."""
    typed = [s for s in agent.slots if s.kind != "text"]
    if not typed:
        return SlotReading()
    words = task_words(ctx, task, several_tasks)
    resolution = resolution_of(ctx, words)
    if any(s.kind == "shift" for s in typed):
        resolution = with_shift(ctx, agent, words, resolution)
    asked = "\n".join([ctx.request or "", task.instruction,
                        *(t["content"] for t in earlier_turns(ctx.history))])
    reading = SlotReading(required=tuple(s.name for s in typed if s.required),
                          mentions=resolution.mentions, asked=asked)
    used: set[int] = set()
    for slot in typed:
        chosen = task.resolved.get(slot.name)
        if chosen is not None:  # the person picked it from a clarifying question's options
            reading.filled[slot.name] = Mention(chosen["label"], slot.kind, chosen["value"],
                                                chosen["label"])
            continue
        if slot.kind == "changes":
            changes = read_changes(words, resolution, reading.filled.get("member"))
            if changes is not None:
                reading.filled[slot.name] = changes
            continue
        for mention in candidates_for(slot.kind, resolution):
            if id(mention) in used:
                continue
            used.add(id(mention))
            (reading.filled if mention.value else reading.ambiguous)[slot.name] = mention
            break
        if slot.each and slot.name in reading.filled:
            _each(reading, slot.name, slot.kind, resolution, used)
        if (slot.kind == "resource" and slot.name not in reading.filled
                and slot.name not in reading.ambiguous):
            kind_only = find_any_resource(Context(ctx.scope, ctx.principal), words)
            if kind_only is not None:  # "a court": any one of them will do
                reading.ambiguous[slot.name] = kind_only
                reading.any_of.add(slot.name)
    return reading


def _each(reading: SlotReading, name: str, kind: str, resolution: Resolution,
          used: set[int]) -> None:
    """The other records of `kind` the request names for an `each` slot: more writes when
    every one is resolved, a question when one of them is ambiguous."""
    first = reading.filled[name]
    rest = [m for m in candidates_for(kind, resolution)
            if id(m) not in used and m.value != first.value]
    used.update(id(m) for m in rest)
    doubt = next((m for m in rest if not m.value), None)
    if doubt is not None:
        del reading.filled[name]
        reading.ambiguous[name] = doubt
    elif rest:
        reading.more[name] = list({m.value: m for m in rest}.values())


def read_changes(text: str, resolution: Resolution, member: Mention | None
                 ) -> Mention | None:
    """The new values `text` gives the member (resolve.changes) as a `changes` mention:
    its value the JSON object members.update takes, its label "phone → +447700900999"."""
    changes = member_changes(text, resolution.mentions, member.label if member else None)
    if changes is None:
        return None
    label = ", ".join(f"{k} → {v}" for k, v in changes.items())
    return Mention(label, "changes", json.dumps(changes), label)


def with_shift(ctx: RunContext, agent: AgentSpec, text: str, resolution: Resolution
               ) -> Resolution:
    """`resolution` and the shift `text` names by day, role and time (resolve.shifts), for
    an agent with a shift slot. An agent that only assigns wants an open shift."""
    shift = find_shift(Context(ctx.scope, ctx.principal), text, resolution.mentions,
                       zone_of(ctx.timezone), open_only=tuple(agent.operations) == ("assign",))
    if shift is None:
        return resolution
    return Resolution(resolution.now, resolution.timezone, (*resolution.mentions, shift))
