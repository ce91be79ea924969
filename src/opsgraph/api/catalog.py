"""The registry as one caller may use it (`GET /v1/agents`, `opsgraph agents list`)."""

from __future__ import annotations

from typing import Any

from opsgraph.gates import decide
from opsgraph.models.factory import tier_spec
from opsgraph.models.names import model_words
from opsgraph.models.spec import shown
from opsgraph.principal import Principal, parse_plan
from opsgraph.registry.loader import get_registry
from opsgraph.registry.spec import AgentSpec
from opsgraph.store.scope import TenantScope


def agent_row(agent: AgentSpec) -> dict[str, Any]:
    """One agent as clients see it (docs/reference.md)."""
    return {"name": agent.name, "domain": agent.domain, "kind": agent.kind,
            "operations": list(agent.operations), "read_only": agent.read_only,
            "roles": list(agent.roles), "entitlement": agent.entitlement,
            "visitor": agent.visitor, "tools": list(agent.tools),
            "description": agent.description}


def agents_for(principal: Principal) -> list[dict[str, Any]]:
    """Agents the caller passes every gate for on at least one of the agent's verbs, each
    with its model tier and that tier's model (`GET /v1/agents`)."""
    tenant = TenantScope.of(principal).require_tenant()
    plan = parse_plan(str(tenant.get("plan", "basic")))
    rows = []
    for agent in get_registry().agents.values():
        if any(decide(principal, agent, verb, plan=plan, mode="enforce")
               for verb in agent.operations):
            # which model it runs on without a tenant override (the settings page)
            spec = tier_spec(agent.model_tier)
            rows.append({**agent_row(agent), "model_tier": agent.model_tier,
                         "default_model": shown(spec), "default_model_name": model_words(spec)})
    return rows
