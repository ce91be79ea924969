"""The catalogue: every operation by id, built once at import and checked for consistency."""

from __future__ import annotations

from difflib import get_close_matches
from types import MappingProxyType

from opsgraph.errors import BadInput, NotFound
from opsgraph.operations import (
    bookings,
    communications,
    events,
    facilities,
    invoices,
    knowledge,
    members,
    reports,
    schedules,
)
from opsgraph.operations.base import Operation
from opsgraph.principal import DOMAINS, FEATURES, READ_VERBS, WRITE_VERBS

_MODULES = (members, bookings, schedules, events, invoices, communications, knowledge,
            facilities, reports)


def _checked(op: Operation) -> Operation:
    """Refuse an operation whose declaration contradicts the vocabularies."""
    verbs = READ_VERBS if op.kind == "read" else WRITE_VERBS
    problems = []
    if op.domain not in DOMAINS:
        problems.append(f"unknown domain {op.domain!r}")
    if op.verb not in verbs:
        problems.append(f"verb {op.verb!r} is not a {op.kind} verb")
    if op.feature not in FEATURES:
        problems.append(f"unknown feature {op.feature!r}")
    missing = set(op.references) - set(op.input.model_fields)
    if missing:
        problems.append(f"references name no input field: {sorted(missing)}")
    if not op.roles:
        problems.append("no roles")
    if problems:
        raise TypeError(f"{op.id}: " + "; ".join(problems))
    return op


def _build() -> dict[str, Operation]:
    ops: dict[str, Operation] = {}
    for module in _MODULES:
        for op in module.OPERATIONS:
            if op.id in ops:
                raise TypeError(f"{op.id}: declared twice")
            ops[op.id] = _checked(op)
    return dict(sorted(ops.items()))


CATALOGUE: MappingProxyType[str, Operation] = MappingProxyType(_build())
"""Operation id → operation, sorted by id; read-only."""


def get_operation(op_id: str) -> Operation:
    """The operation with this id (a tool name such as `members_update` works too)."""
    key = op_id.strip()
    op = CATALOGUE.get(key) or CATALOGUE.get(key.replace("_", ".", 1))
    if op is not None:
        return op
    close = get_close_matches(key, list(CATALOGUE), n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise NotFound(f"operation: no operation {op_id!r}; {hint}known: {', '.join(CATALOGUE)}")


def operations_in(domain: str) -> tuple[Operation, ...]:
    """The operations of one domain, sorted by id."""
    if domain not in DOMAINS:
        raise BadInput(f"domain: unknown domain {domain!r} (known: {', '.join(DOMAINS)})")
    return tuple(op for op in CATALOGUE.values() if op.domain == domain)
