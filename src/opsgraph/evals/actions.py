"""Evaluators of what the agents did: tools and arguments, approval cards, card previews."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from opsgraph.evals.cases import Case, tool_name
from opsgraph.evals.matching import Aliases, as_number, match_all, matches
from opsgraph.evals.records import Card, RunRecord
from opsgraph.evals.scores import Score, verdict
from opsgraph.operations.ranking import normalise


def run_aliases(run: RunRecord) -> Aliases:
    """The store's names, plus the id ↔ name pairs the run's tool results and cards show."""
    texts = [c.result for c in run.calls] + [card.summary for card in run.cards]
    return run.facts.aliases.merged(texts)


def short(value: Any, limit: int = 160) -> str:
    """Compact JSON of a value for a reason line."""
    text = json.dumps(value, default=str, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def tool_args(run: RunRecord, tool: str) -> list[dict[str, Any]]:
    """The arguments of every call of `tool`, cards of its operation included."""
    return ([c.args for c in run.calls if c.tool == tool]
            + [card.args for card in run.cards if tool_name(card.operation) == tool])


def tools_called(run: RunRecord) -> set[str]:
    """Every tool some task called (a card counts as a call of its operation's tool)."""
    return {c.tool for c in run.calls} | {tool_name(card.operation) for card in run.cards}


def tool_choice(case: Case, run: RunRecord) -> Score | None:
    """Every `tools_contains` tool called, no `tools_absent` tool called, and each `args`
    entry matched by some call of its tool."""
    want = case.expect
    if not (want.tools_contains or want.tools_absent or want.args):
        return None
    called = tools_called(run)
    reasons = [f"{t} was not called" for t in want.tools_contains if t not in called]
    reasons += [f"{t} was called" for t in want.tools_absent if t in called]
    aliases = run_aliases(run)
    for tool, args in want.args.items():
        seen = tool_args(run, tool)
        if not any(matches(args, actual, aliases) for actual in seen):
            calls = f"calls: {short(seen, 240)}" if seen else "never called"
            reasons.append(f"{tool}: no call with {short(args)} ({calls})")
    return verdict(reasons)


def refused_tasks(run: RunRecord) -> list[str]:
    """Tasks a gate refused (status `denied`)."""
    return [tid for tid, status in run.task_status.items() if status == "denied"]


def _card_problems(case: Case, run: RunRecord) -> list[str]:
    expected = case.expect.interrupts or []
    want = Counter(c.operation for c in expected)
    got = Counter(card.operation for card in run.cards)
    if want != got:
        return [f"expected cards {sorted(want.elements()) or 'none'}; raised "
                f"{sorted(got.elements()) or 'none'}"]
    wanted = [{"operation": c.operation, "args": c.args} for c in expected]
    raised = [{"operation": c.operation, "args": c.args} for c in run.cards]
    if not match_all(wanted, raised, run_aliases(run)):
        return [f"card arguments differ: expected {short(wanted)}; raised {short(raised, 240)}"]
    return []


def _clarify_problems(wanted: list[str], run: RunRecord) -> list[str]:
    """A clarifying question was asked, with an option holding each wanted phrase, and no
    card was raised in its place."""
    if not run.options:
        return ["asked no clarifying question (the answer has no options)"]
    options = [normalise(o) for o in run.options]
    reasons = [f"no option holds {phrase!r} (options: {short(run.options)})"
               for phrase in wanted if not any(normalise(phrase) in o for o in options)]
    if run.cards:
        reasons.append(f"raised {len(run.cards)} card(s) instead of asking")
    return reasons


def interrupts(case: Case, run: RunRecord) -> Score | None:
    """The cards raised are exactly the expected operations with matching arguments; a
    denied request changes nothing (no card, no applied write); an allowed one is not
    refused by a gate; a request that must be asked about asks, with the options wanted."""
    want = case.expect
    if want.interrupts is None and want.denied is None and want.clarify is None:
        return None
    reasons = _card_problems(case, run) if want.interrupts is not None else []
    if want.clarify is not None:
        reasons += _clarify_problems(want.clarify.options_contain, run)
    if want.denied is True:
        if run.cards and want.interrupts is None:
            reasons.append(f"raised {len(run.cards)} card(s) for a request the caller may "
                           "not make")
        if run.applied_writes():
            reasons.append("applied a write for a request the caller may not make")
    if want.denied is False and refused_tasks(run):
        reasons.append(f"a gate refused {', '.join(refused_tasks(run))} although the caller "
                       "may do this")
    return verdict(reasons)


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    elif value is not None and not isinstance(value, bool):
        yield value


def _spellings(value: Any, aliases: Aliases) -> set[str]:
    """How a summary may write a value: as is, as a name of the record it denotes, and
    numbers with two decimals."""
    out = {normalise(str(value))}
    number = as_number(value)
    if number is not None:
        out |= {f"{number:.2f}", str(number.normalize())}
    if isinstance(value, str):
        for rid in aliases.ids_of(value):
            out |= aliases.names_of(rid) | {rid}
    return {s for s in out if len(s) >= 2}


def _mentions(summary: str, value: Any, aliases: Aliases) -> bool:
    text = normalise(summary)
    return any(s in text for s in _spellings(value, aliases))


def _set_by_args(card: Card) -> dict[str, Any]:
    """What the arguments set on the record: a `changes` object, else every argument —
    but for those given as null, which set nothing (an operation's input reads null as not
    given: a model that sends `email: null` beside the status it changes is not asking to
    blank the email)."""
    changes = card.args.get("changes")
    given = changes if isinstance(changes, Mapping) else card.args
    return {k: v for k, v in given.items() if v is not None}


def _new_problems(card: Card, aliases: Aliases) -> list[str]:
    out = []
    for key, value in _set_by_args(card).items():
        if isinstance(card.args.get("changes"), Mapping) and key not in card.new:
            out.append(f"new lacks {key}")
        elif not matches({key: value}, card.new, aliases) and any(
                k.rstrip("_").removesuffix("_id") == key.rstrip("_").removesuffix("_id")
                for k in card.new):
            out.append(f"new {short({key: card.new.get(key)})} is not the argument "
                       f"{short(value)}")
    return out


def _old_problems(card: Card) -> list[str]:
    out = [f"old names {k}, which the change does not set" for k in card.old
           if k not in card.new]
    if card.before is not None:
        out += [f"old {k}={short(v)} but the record holds {short(card.before.get(k))}"
                for k, v in card.old.items() if not matches(v, card.before.get(k))]
    return out


def _summary_problems(card: Card, aliases: Aliases) -> list[str]:
    if not card.summary.strip():
        return ["the summary is empty"]
    changes = card.args.get("changes")
    if isinstance(changes, Mapping):
        return [f"the summary does not name {k}={short(v)}" for k, v in changes.items()
                if v is not None and not _mentions(card.summary, v, aliases)]
    values = list(_leaves(card.args)) + list(_leaves(card.new))
    if not any(_mentions(card.summary, v, aliases) for v in values):
        return ["the summary names neither the record nor a value it sets"]
    return []


def preview(case: Case, run: RunRecord) -> Score | None:
    """Each card's `new` holds what its arguments set, `old` is the stored value before,
    and the summary names the change."""
    if not run.cards:
        return None
    aliases = run_aliases(run)
    reasons = []
    for card in run.cards:
        problems = (_new_problems(card, aliases) + _old_problems(card)
                    + _summary_problems(card, aliases))
        reasons += [f"{card.operation}: {p}" for p in problems]
    return verdict(reasons)
