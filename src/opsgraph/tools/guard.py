"""The guard around every tool call.

In order: validate the arguments against the operation's input model, resolve record
names to ids (before anything is refused, so a refusal names the real record), gate the
operation for the caller, authorize the values, then run it — a read against a read-only
scope, a preview-write as a preview only (never applied). Errors come back to the model
as short data it can act on; the full detail goes to the log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from opsgraph.errors import AmbiguousReference, Forbidden, OpsgraphError
from opsgraph.gates import operation_decision
from opsgraph.operations.base import Context, Operation, OpInput, Preview
from opsgraph.principal import Plan
from opsgraph.tools.contract import Proposal, ToolKind, ToolOutcome, ToolRetry

log = logging.getLogger(__name__)


def _fields_at(model: type[BaseModel], path: tuple[Any, ...]) -> list[str] | None:
    """The field names of the (nested) model at `path`, or None where there is none."""
    for key in path:
        field = model.model_fields.get(str(key))
        if field is None:
            return None
        inner = next((a for a in (field.annotation, *get_args(field.annotation))
                      if isinstance(a, type) and issubclass(a, BaseModel)), None)
        if inner is None:
            return None
        model = inner
    return [info.alias or name for name, info in model.model_fields.items()]


def validation_message(exc: ValidationError, model: type[BaseModel] | None = None) -> str:
    """`field: problem; field: problem` — short enough for a model or a person; a field
    that does not exist is answered with the fields that do."""
    parts = []
    for err in exc.errors():
        loc = tuple(err.get("loc", ()))
        where = ".".join(str(p) for p in loc) or "arguments"
        message = f"{where}: {err.get('msg', 'invalid')}"
        known = _fields_at(model, loc[:-1]) if model and err.get("type") == "extra_forbidden" \
            else None
        if known:
            message += f" (allowed: {', '.join(known)})"
        parts.append(message)
    return "; ".join(parts)


def _validate(op: Operation, raw: Any) -> OpInput:
    if not isinstance(raw, dict):
        raise ToolRetry(f"{op.tool_name} takes an object of arguments, got {type(raw).__name__}")
    try:
        return op.input.model_validate(raw)
    except ValidationError as exc:
        raise ToolRetry(f"invalid arguments for {op.tool_name}: "
                        f"{validation_message(exc, op.input)}; call it again with corrected "
                        "arguments") from None


def _invoke(op: Operation, ctx: Context, kind: ToolKind, plan: Plan, raw: Any) -> ToolOutcome:
    from opsgraph.operations.references import resolve_args

    reader = Context(ctx.scope.reader(), ctx.principal, ctx.now)
    args = resolve_args(reader, op, _validate(op, raw))
    decision = operation_decision(ctx.principal, op, plan)
    if not decision:
        raise Forbidden(decision.reason)
    if op.authorize is not None:
        op.authorize(reader, args)
    if kind == "read":
        assert op.run is not None
        result = op.run(reader, args)
        return ToolOutcome(True, result.data, result.sources)
    if kind != "preview":
        raise Forbidden(f"{op.tool_name}: an agent's write tools only ever preview")
    assert op.preview is not None
    preview = op.preview(reader, args)
    if not isinstance(preview, Preview):
        log.error("%s: preview-write succeeded without producing a preview", op.id)
        return ToolOutcome(False, f"{op.tool_name} produced no preview; nothing was proposed")
    proposal = Proposal(op.id, args.model_dump(mode="json", by_alias=True, exclude_unset=True),
                        preview)
    body = {"proposed": preview.summary, "old": preview.old, "new": preview.new}
    return ToolOutcome(True, body, proposal=proposal)


def guard(op: Operation, ctx: Context, kind: ToolKind,
          plan: Plan) -> Callable[[Any], ToolOutcome]:
    """The guarded call of `op` for one request: never raises for a bad call."""

    def call(raw: Any) -> ToolOutcome:
        try:
            return _invoke(op, ctx, kind, plan, raw)
        except ToolRetry as exc:
            return ToolOutcome(False, str(exc))
        except AmbiguousReference as exc:
            return ToolOutcome(False, {"message": exc.message, "candidates": exc.candidates,
                                       "next": "ask which one is meant, or call with the id"})
        except OpsgraphError as exc:
            return ToolOutcome(False, exc.message)
        except Exception:
            log.exception("tool %s failed", op.tool_name)
            return ToolOutcome(False, f"{op.tool_name} failed unexpectedly; "
                                      "do not repeat the same call")

    return call
