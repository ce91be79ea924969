"""Agent Inbox's HumanResponses as opsgraph decisions, through the one decision path.

`command: {resume: ...}` takes a list of HumanResponses (one per pending interrupt, in the
order `threads.get_state` lists them), one HumanResponse (the only interrupt), or a map of
interrupt id → HumanResponse (or a list of one). Each becomes a decision on the change its
interrupt carries — accept → approve, edit → edit with the edited `args`, response →
revise with the text as feedback, ignore → reject — decided by
`engine.approval_flow.decide_and_resume` exactly as `POST /v1/approvals/{id}` decides it:
compare-and-set, the decider's roles and tenant, separation of duties, one apply.
Anything else in a resume is refused; nothing reaches the graph as a raw `Command`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from opsgraph.engine.events import Event
from opsgraph.errors import BadInput, Conflict, OpsgraphError
from opsgraph.principal import Principal

_DECISIONS = {"accept": "approve", "edit": "edit", "response": "revise", "ignore": "reject"}
_SHAPE = ("a HumanResponse is {\"type\": \"accept\"|\"edit\"|\"response\"|\"ignore\", "
          "\"args\": null | text | {\"action\", \"args\"}}")


@dataclass(frozen=True, slots=True)
class InboxDecision:
    """One HumanResponse as the decision it stands for."""

    change_id: str
    decision: str
    feedback: str | None = None
    values: dict[str, Any] | None = None


def decision_of(change_id: str, response: Any, where: str) -> InboxDecision:
    """One HumanResponse (`where` names it in errors) as a decision on `change_id`."""
    if isinstance(response, list) and len(response) == 1:
        response = response[0]
    if not isinstance(response, Mapping) or response.get("type") not in _DECISIONS:
        raise BadInput(f"{where}: {_SHAPE}")
    kind, args = str(response["type"]), response.get("args")
    if kind == "response":
        if not isinstance(args, str) or not args.strip():
            raise BadInput(f"{where}.args: a response needs the text of what should change")
        return InboxDecision(change_id, "revise", feedback=args.strip())
    if kind == "edit":
        edited = args.get("args") if isinstance(args, Mapping) else None
        if not isinstance(edited, Mapping) or not edited:
            raise BadInput(f"{where}.args: an edit needs {{\"action\", \"args\": {{field: "
                           "value}}}} with the edited values")
        return InboxDecision(change_id, "edit", values=dict(edited))
    return InboxDecision(change_id, _DECISIONS[kind])


def decisions_of(resume: Any, pending: list[dict[str, Any]]) -> list[InboxDecision]:
    """The decisions a resume asks for; `pending` is the thread's interrupts in order
    (`{id, change_id}` each). 409 when the thread waits for nothing."""
    if not pending:
        raise Conflict("the thread is not waiting for a decision: nothing to resume (its "
                       "cards were decided already, or it never paused)")
    by_id = {str(i["id"]): str(i["change_id"]) for i in pending}
    if isinstance(resume, Mapping) and "type" not in resume:
        unknown = [k for k in resume if k not in by_id]
        if unknown:
            raise Conflict(f"command.resume: the thread is not waiting on interrupt(s) "
                           f"{', '.join(map(str, unknown))} (waiting on: "
                           f"{', '.join(by_id)})", waiting=sorted(by_id))
        return [decision_of(by_id[k], v, f"command.resume.{k}") for k, v in resume.items()]
    responses = resume if isinstance(resume, list) else [resume]
    if len(responses) != len(pending):
        raise BadInput(f"command.resume: {len(responses)} HumanResponse(s) for "
                       f"{len(pending)} pending interrupt(s); send one per interrupt, or a "
                       "map of interrupt id → HumanResponse")
    return [decision_of(str(i["change_id"]), r, f"command.resume[{n}]")
            for n, (i, r) in enumerate(zip(pending, responses, strict=True))]


def decide_all(principal: Principal, decisions: list[InboxDecision]) -> Iterator[Event]:
    """Each decision in turn through `decide_and_resume`; the resumed runs' events. The
    first decision's refusal raises before any event; a later one's is an `error` event
    (the earlier decisions stand: each is its own compare-and-set)."""
    from opsgraph.engine.approval_flow import decide_and_resume  # heavy: langgraph (cold start)

    for n, d in enumerate(decisions):
        events = decide_and_resume(principal, d.change_id, d.decision, feedback=d.feedback,
                                   values=d.values)
        try:
            yield from events
        except OpsgraphError as exc:
            if n == 0:
                raise
            yield Event("", "error", {"code": exc.code, "message": exc.message,
                                      "change_id": d.change_id})
