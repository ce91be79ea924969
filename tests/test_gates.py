"""Gates: property tests over generated callers, agents of the real registry and verbs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from opsgraph.gates import decide, operation_decision
from opsgraph.operations.catalogue import CATALOGUE
from opsgraph.principal import VERBS, WRITE_VERBS, Channel, Plan, Principal, Role
from opsgraph.registry.loader import get_registry

AGENTS = sorted(get_registry().agents.values(), key=lambda a: a.name)
OPERATIONS = sorted(CATALOGUE.values(), key=lambda o: o.id)

principals = st.builds(
    lambda roles, channel: Principal("demo", "u", frozenset(roles), channel),
    st.sets(st.sampled_from(list(Role)), min_size=1, max_size=2),
    st.sampled_from(list(Channel)),
)
cases = st.tuples(principals, st.sampled_from(AGENTS), st.sampled_from(VERBS),
                  st.sampled_from(list(Plan)), st.sampled_from(["observe", "enforce"]))


@settings(max_examples=400, deadline=None)
@given(cases)
def test_email_channel_never_writes(case) -> None:  # type: ignore[no-untyped-def]
    principal, agent, verb, plan, mode = case
    if decide(principal, agent, verb, plan=plan, mode=mode) and principal.channel is Channel.EMAIL:
        assert verb not in WRITE_VERBS and agent.kind == "query"


@settings(max_examples=400, deadline=None)
@given(cases)
def test_visitors_reach_only_the_allowlist(case) -> None:  # type: ignore[no-untyped-def]
    principal, agent, verb, plan, mode = case
    if decide(principal, agent, verb, plan=plan, mode=mode) and principal.is_visitor:
        assert agent.visitor and agent.read_only and agent.kind == "query"


@settings(max_examples=400, deadline=None)
@given(cases)
def test_action_agents_enforce_their_declared_roles(case) -> None:  # type: ignore[no-untyped-def]
    principal, agent, verb, plan, mode = case
    if decide(principal, agent, verb, plan=plan, mode=mode) and agent.kind == "action":
        assert principal.roles & set(agent.roles)


@settings(max_examples=300, deadline=None)
@given(principals, st.sampled_from(OPERATIONS), st.sampled_from(list(Plan)))
def test_operations_never_write_for_email_or_visitors(principal, op, plan) -> None:  # type: ignore[no-untyped-def]
    if operation_decision(principal, op, plan) and op.kind == "write":
        assert principal.channel is not Channel.EMAIL and not principal.is_visitor


def test_exactly_four_visitor_agents_and_the_reasons_are_readable() -> None:
    visitors = [a for a in AGENTS if a.visitor]
    assert len(visitors) == 4
    guest = Principal.visitor("demo")
    refund = get_registry().get("invoices.refund")
    denied = decide(guest, refund, "refund", plan=Plan.PRO)
    assert not denied and denied.gate == "visitor" and "invoices.refund" in denied.reason
    staff = Principal("demo", "u", frozenset({Role.STAFF}), Channel.EMAIL)
    denied = decide(staff, get_registry().get("members.update"), "update", plan=Plan.PRO)
    assert denied.gate == "read_only" and "email" in denied.reason
    basic = decide(Principal("acme", "u", frozenset({Role.MANAGER})),
                   get_registry().get("reports.revenue"), "report", plan=Plan.BASIC)
    assert basic.gate == "entitlement"


def test_capability_gate_observes_or_enforces() -> None:
    manager = Principal("demo", "u", frozenset({Role.MANAGER}))
    lookup = get_registry().get("members.lookup")
    assert decide(manager, lookup, "report", plan=Plan.PRO, mode="observe")
    refused = decide(manager, lookup, "report", plan=Plan.PRO, mode="enforce")
    assert refused.gate == "capability"
