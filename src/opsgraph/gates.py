"""Gates: pure decisions taken before any agent runs (so a denial costs no model call).

Order: visitor allowlist → hard read-only (channel `email`, read-only agents) → role →
plan entitlement → capability (the agent serves this verb; per-tenant `observe` logs and
allows, `enforce` denies). Each gate is a small function; `decide` runs them in order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from opsgraph.principal import PLAN_FEATURES, WRITE_VERBS, Plan, Principal, Role

log = logging.getLogger(__name__)

CapabilityMode = Literal["observe", "enforce"]


class GatedAgent(Protocol):
    """What a gate needs to know of an agent (AgentSpec satisfies it)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def roles(self) -> Sequence[str]: ...
    @property
    def entitlement(self) -> str: ...
    @property
    def visitor(self) -> bool: ...
    @property
    def operations(self) -> Sequence[str]: ...


@dataclass(frozen=True, slots=True)
class Decision:
    """Allow or deny, with the gate that decided and a reason a person can read."""

    allowed: bool
    gate: str
    reason: str

    def __bool__(self) -> bool:
        return self.allowed


ALLOW = Decision(True, "all", "allowed")


@dataclass(frozen=True, slots=True)
class Request:
    principal: Principal
    agent: GatedAgent
    verb: str
    plan: Plan
    mode: CapabilityMode


def _writes(req: Request) -> bool:
    return req.verb in WRITE_VERBS or req.agent.kind == "action"


def visitor_gate(req: Request) -> Decision | None:
    if req.principal.is_visitor and not req.agent.visitor:
        return Decision(False, "visitor", f"visitors may not use {req.agent.name}")
    return None


def read_only_gate(req: Request) -> Decision | None:
    if req.principal.read_only and _writes(req):
        return Decision(False, "read_only",
                        f"the {req.principal.channel.value} channel is read-only; "
                        f"{req.agent.name} may change records")
    if req.agent.read_only and req.verb in WRITE_VERBS:
        return Decision(False, "read_only", f"{req.agent.name} is read-only; cannot {req.verb}")
    return None


def role_gate(req: Request) -> Decision | None:
    declared = {Role(r) for r in req.agent.roles}
    if declared and not (declared & req.principal.roles):
        have = ", ".join(sorted(r.value for r in req.principal.roles))
        need = ", ".join(sorted(r.value for r in declared))
        return Decision(False, "role", f"{req.agent.name} needs one of: {need} (caller: {have})")
    return None


def entitlement_gate(req: Request) -> Decision | None:
    if req.agent.entitlement not in PLAN_FEATURES[req.plan]:
        return Decision(False, "entitlement",
                        f"{req.agent.name} needs the '{req.agent.entitlement}' feature, "
                        f"which the {req.plan.value} plan does not include")
    return None


def capability_gate(req: Request) -> Decision | None:
    if req.verb in req.agent.operations:
        return None
    reason = f"{req.agent.name} does not serve '{req.verb}'"
    if req.mode == "enforce":
        return Decision(False, "capability", reason)
    log.warning("capability gate (observe): %s", reason)
    return None


GATES: tuple[Callable[[Request], Decision | None], ...] = (
    visitor_gate, read_only_gate, role_gate, entitlement_gate, capability_gate,
)


def decide(principal: Principal, agent: GatedAgent, verb: str, *, plan: Plan,
           mode: CapabilityMode = "observe") -> Decision:
    """Allow or deny `principal` running `agent` for `verb`; pure apart from one log line."""
    req = Request(principal, agent, verb, plan, mode)
    for gate in GATES:
        denied = gate(req)
        if denied is not None:
            return denied
    return ALLOW


class GatedOperation(Protocol):
    """What the operation gate needs (operations.base.Operation satisfies it)."""

    @property
    def id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def roles(self) -> frozenset[Role]: ...
    @property
    def feature(self) -> str: ...


def operation_decision(principal: Principal, op: GatedOperation, plan: Plan) -> Decision:
    """May `principal` call `op` at all: read-only channel, visitors, role, plan feature.

    Used by direct calls (REST, CLI) and by every tool before it runs. Admin holds
    every operation role.
    """
    if op.kind == "write" and principal.is_visitor:
        return Decision(False, "visitor", f"visitors may not call {op.id}")
    if op.kind == "write" and principal.read_only:
        return Decision(False, "read_only",
                        f"the {principal.channel.value} channel is read-only; {op.id} writes")
    if not principal.has_any(op.roles):
        need = ", ".join(sorted(r.value for r in op.roles))
        return Decision(False, "role", f"{op.id} needs one of: {need}")
    if op.feature not in PLAN_FEATURES[plan]:
        return Decision(False, "entitlement",
                        f"{op.id} needs the '{op.feature}' feature, which the "
                        f"{plan.value} plan does not include")
    return ALLOW
