"""The guard around every tool call: `operations.invoke`, its errors turned into data.

A read tool invokes its operation in mode `read`; a write tool in mode `preview` only —
an agent never applies, it proposes (a `Proposal` for a person to decide). The checks and
their order are `invoke`'s. A refusal or a bad call comes back to the model as a short
message it can act on (invalid arguments name each field and ask for the call again, as
does a bad value or a name that matches nothing; an ambiguous name lists the candidates);
anything unexpected is logged in full and the model is told only that the tool failed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from opsgraph.errors import AmbiguousReference, BadInput, NotFound, OpsgraphError, Unprocessable
from opsgraph.operations.base import Context, Operation
from opsgraph.operations.invoke import invoke, listing
from opsgraph.principal import Plan
from opsgraph.tools.contract import Proposal, ToolKind, ToolOutcome

log = logging.getLogger(__name__)


def _call(op: Operation, ctx: Context, kind: ToolKind, plan: Plan, raw: Any) -> ToolOutcome:
    if kind == "read":
        ran = invoke(op, ctx, raw, "read", plan=plan)
        return ToolOutcome(True, ran.result.data, ran.result.sources)
    previewed = invoke(op, ctx, raw, "preview", plan=plan)
    preview = previewed.preview
    body = {"proposed": preview.summary, "old": preview.old, "new": preview.new}
    return ToolOutcome(True, body, proposal=Proposal(op.id, previewed.json_args, preview))


def as_given(op: Operation, raw: Any) -> Any:
    """The model's arguments without the optional ones it left empty (`""`, or blanks): the
    schema it is shown gives an optional field as its plain type, so a small model fills one
    it has nothing for with an empty string (`bookings_list {member: ""}` for "who has court
    2 today?"); that is read as not given, as null is. A required field keeps its value, for
    its error to name."""
    if not isinstance(raw, dict):
        return raw
    fields = op.input.model_fields
    return {key: value for key, value in raw.items()
            if not (isinstance(value, str) and not value.strip() and key in fields
                    and not fields[key].is_required())}


def for_model(op: Operation, exc: OpsgraphError) -> Any:
    """What the model is told about a refused or bad call."""
    if isinstance(exc, AmbiguousReference):
        return {"message": exc.message, "candidates": exc.candidates,
                "next": "ask which one is meant, or call with the id"}
    if isinstance(exc, Unprocessable) and "errors" in exc.detail:
        return (f"invalid arguments for {op.tool_name}: {listing(exc.detail['errors'])}; "
                "call it again with corrected arguments")
    if isinstance(exc, BadInput | Unprocessable):  # the message names the field and the fix
        return f"{exc.message}; call {op.tool_name} again with that corrected"
    if isinstance(exc, NotFound):
        return (f"{exc.message}; use the name or reference exactly as the request gives it "
                f"and call {op.tool_name} again")
    return exc.message


def guard(op: Operation, ctx: Context, kind: ToolKind,
          plan: Plan) -> Callable[[Any], ToolOutcome]:
    """The guarded call of `op` for one request: never raises for a bad call."""

    def call(raw: Any) -> ToolOutcome:
        try:
            return _call(op, ctx, kind, plan, as_given(op, raw))
        except OpsgraphError as exc:
            return ToolOutcome(False, for_model(op, exc))
        except Exception:
            log.exception("tool %s failed", op.tool_name)
            return ToolOutcome(False, f"{op.tool_name} failed unexpectedly; "
                                      "do not repeat the same call")

    return call
