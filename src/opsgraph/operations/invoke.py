"""The one way to call an operation: `invoke(op, ctx, raw_args, mode)`.

Every caller goes through it: a person's direct call (`operations.direct`: REST
`POST /v1/operations/{op_id}` and `opsgraph ops call`), an agent's tool call
(`tools.guard`) and a manager's edited values (`approvals.edits`). Each gets the same checks
in the same order, and each error is one of opsgraph's typed errors:

1. **mode** fits the operation: `read` for a read, `preview` or `apply` for a write
   (BadInput otherwise).
2. **gate**: may this principal call the operation at all: the write gate (visitors and
   the read-only email channel never write), the operation's roles, the tenant's plan
   (`gates.operation_decision`) (Forbidden, with `gate` naming the gate that refused). It
   comes before anything reads the tenant's records, so a refused caller learns nothing
   from the names they sent.
3. **validate** the raw arguments against the operation's input model: not an object is
   BadInput; otherwise Unprocessable with one `{field, message}` per problem in `errors`
   (an unknown field is answered with the fields that exist).
4. **resolve** references, names → ids (`operations.references`): NotFound, or
   AmbiguousReference with candidates.
5. **authorize** the values (`op.authorize`, e.g. a refund over a limit needs an admin),
   on resolved ids so that a refusal names the real record (Forbidden).
6. the mode's ending: `read` runs the read; `preview` computes what a write would do;
   `apply` previews, then applies at once under a new change id and writes one audit row
   (None → applied, `detail.via = "direct"`): a person acting directly is their own
   approver.

Steps 4 to 6 read through a scope that refuses writes; only `apply`'s own apply writes.
Callers only present the errors: HTTP as JSON error bodies, the guard as a message for the
model, an edit as 422 where a value does not make a valid change.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args, overload

from pydantic import BaseModel, ValidationError

from opsgraph.audit import record_transition
from opsgraph.errors import BadInput, Forbidden, Unprocessable
from opsgraph.gates import operation_decision
from opsgraph.operations.base import Context, Operation, OpInput, Preview, Result
from opsgraph.operations.references import resolve_args
from opsgraph.principal import Plan, parse_plan
from opsgraph.store.scope import TenantScope

Mode = Literal["read", "preview", "apply"]
MODES: tuple[Mode, ...] = get_args(Mode)


@dataclass(frozen=True, slots=True)
class Ran:
    """A read: the resolved arguments and what the operation returned."""

    args: OpInput
    result: Result


@dataclass(frozen=True, slots=True)
class Previewed:
    """A write previewed, nothing written: the resolved arguments and the preview."""

    args: OpInput
    preview: Preview

    @property
    def json_args(self) -> dict[str, Any]:
        """The arguments the caller set, resolved, as JSON (what a proposal stores)."""
        return plain_args(self.args)


@dataclass(frozen=True, slots=True)
class Applied(Previewed):
    """A write applied at once: its change id and what the handler returned."""

    change_id: str
    result: dict[str, Any]


def new_change_id() -> str:
    """A fresh change id: `chg_` and 16 hex digits (pending changes and direct writes)."""
    return "chg_" + secrets.token_hex(8)


def plain_args(args: OpInput) -> dict[str, Any]:
    """The fields that were set, by their aliases, as JSON."""
    return args.model_dump(mode="json", by_alias=True, exclude_unset=True)


def plan_of(scope: TenantScope) -> Plan:
    """The tenant's plan; a tenant without a settings document gets the basic plan."""
    tenant = scope.tenant()
    if tenant is None or not tenant.get("plan"):
        return Plan.BASIC
    return parse_plan(str(tenant["plan"]))


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


def validation_errors(exc: ValidationError, model: type[BaseModel]) -> list[dict[str, str]]:
    """One `{field, message}` per problem, the field as a dotted path; a field that does not
    exist is answered with the fields that do."""
    problems = []
    for err in exc.errors():
        loc = tuple(err.get("loc", ()))
        message = str(err.get("msg", "invalid"))
        if err.get("type") == "extra_forbidden":
            known = _fields_at(model, loc[:-1])
            if known:
                message += f" (allowed: {', '.join(known)})"
        problems.append({"field": ".".join(str(p) for p in loc) or "args", "message": message})
    return problems


def listing(errors: list[dict[str, str]]) -> str:
    """`field: problem; field: problem`: short enough for a model or a person."""
    return "; ".join(f"{e['field']}: {e['message']}" for e in errors)


def validate_args(op: Operation, raw_args: object) -> OpInput:
    """`raw_args` parsed into the operation's input model (step 3 of the module docstring)."""
    if not isinstance(raw_args, Mapping):
        raise BadInput(f"args: expected a JSON object, got {type(raw_args).__name__}")
    try:
        return op.input.model_validate(dict(raw_args))
    except ValidationError as exc:
        errors = validation_errors(exc, op.input)
        raise Unprocessable(f"{op.id}: {listing(errors)}", errors=errors) from None


def _check_mode(op: Operation, mode: Mode) -> None:
    if mode not in MODES:
        raise BadInput(f"mode: unknown mode {mode!r} (allowed: {', '.join(MODES)})")
    if (mode == "read") != (op.kind == "read"):
        raise BadInput(f"{op.id} is a {op.kind} operation: it cannot be called to {mode}")


def _gate(op: Operation, ctx: Context, plan: Plan) -> None:
    decision = operation_decision(ctx.principal, op, plan)
    if not decision:
        raise Forbidden(decision.reason, gate=decision.gate)


def check(op: Operation, ctx: Context, raw_args: object, *,
          plan: Plan | None = None) -> OpInput:
    """Steps 2 to 5 without an ending: the arguments, resolved, if `ctx.principal` may make
    this call with these values. A manager's approval runs it as the decider, so approving
    never reaches past the decider's own authority (a refund over their limit)."""
    _gate(op, ctx, plan_of(ctx.scope) if plan is None else plan)
    parsed = validate_args(op, raw_args)
    reader = Context(ctx.scope.reader(), ctx.principal, ctx.now)
    args = resolve_args(reader, op, parsed)
    if op.authorize is not None:
        op.authorize(reader, args)
    return args


@overload
def invoke(op: Operation, ctx: Context, raw_args: object, mode: Literal["read"], *,
           plan: Plan | None = None) -> Ran: ...


@overload
def invoke(op: Operation, ctx: Context, raw_args: object, mode: Literal["preview"], *,
           plan: Plan | None = None) -> Previewed: ...


@overload
def invoke(op: Operation, ctx: Context, raw_args: object, mode: Literal["apply"], *,
           plan: Plan | None = None) -> Applied: ...


def invoke(op: Operation, ctx: Context, raw_args: object, mode: Mode, *,
           plan: Plan | None = None) -> Ran | Previewed | Applied:
    """Call `op` as `ctx.principal` in `mode`, checked in the module docstring's order.

    `plan` is the tenant's plan when the caller already knows it (an agent's tools, bound
    once per request); otherwise it is read from the tenant's settings.
    """
    _check_mode(op, mode)
    args = check(op, ctx, raw_args, plan=plan)
    reader = Context(ctx.scope.reader(), ctx.principal, ctx.now)
    if mode == "read":
        assert op.run is not None  # guaranteed for reads
        return Ran(args, op.run(reader, args))
    assert op.preview is not None and op.apply is not None  # guaranteed for writes
    preview = op.preview(reader, args)
    if mode == "preview":
        return Previewed(args, preview)
    change_id = new_change_id()
    result = op.apply(ctx, args, change_id)
    record_transition(ctx.scope, change_id, None, "applied", ctx.principal.user_id, None,
                      detail={"via": "direct", "summary": preview.summary,
                              "args": plain_args(args)},
                      operation=op.id, now=ctx.now)
    return Applied(args, preview, change_id, dict(result))
