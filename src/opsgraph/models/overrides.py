"""Per-tenant, per-agent model overrides (`PUT /v1/tenant/models`).

One document per tenant in `tenant_models`, reached only through the tenant's scope:

    {_id: tenant_id, tenant_id, models: {agent_name: model_spec}, updated_at, updated_by}

Which model an agent runs on: the tenant's override for that agent, else the run's explicit
model (`--model`), else the default of the agent's tier.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from opsgraph.errors import BadInput
from opsgraph.models.factory import Tier, tier_spec
from opsgraph.models.spec import check_model_spec
from opsgraph.settings import get_settings

if TYPE_CHECKING:
    from opsgraph.store.scope import TenantScope

COLLECTION: Final = "tenant_models"


def get_overrides(scope: TenantScope) -> dict[str, str]:
    """The tenant's `{agent_name: model_spec}` overrides (empty when none are set)."""
    doc = scope[COLLECTION].find_one({"_id": scope.tenant_id})
    models = (doc or {}).get("models") or {}
    return {str(agent): str(spec) for agent, spec in models.items()}


def _validated(models: Mapping[str, str], known_agents: set[str]) -> dict[str, str]:
    if not isinstance(models, Mapping):
        raise BadInput("models: expected an object of agent name → model spec",
                       field="models")
    clean: dict[str, str] = {}
    for agent, spec in models.items():
        if not isinstance(agent, str) or agent not in known_agents:
            raise BadInput(f"models.{agent}: unknown agent {agent!r}",
                           field=f"models.{agent}")
        if not isinstance(spec, str):
            raise BadInput(f"models.{agent}: model spec must be a string, got {spec!r}",
                           field=f"models.{agent}")
        try:
            parsed = check_model_spec(spec)
            if parsed.provider not in get_settings().override_providers:
                allowed = ", ".join(sorted(get_settings().override_providers))
                raise BadInput(f"provider {parsed.provider!r} is not allowed for tenant "
                               f"overrides here (allowed: {allowed})")
            clean[agent] = str(parsed)
        except BadInput as exc:
            raise BadInput(f"models.{agent}: {exc.message}", field=f"models.{agent}",
                           spec=spec) from None
    return clean


def set_overrides(scope: TenantScope, models: Mapping[str, str], known_agents: set[str],
                  actor: str) -> dict[str, str]:
    """Replace the tenant's overrides with `models`, all or nothing; returns what is stored.

    Every agent name must be in `known_agents` and every spec must parse (a named file must
    exist) before anything is written.
    """
    clean = _validated(models, known_agents)
    scope[COLLECTION].update_one(
        {"_id": scope.tenant_id},
        {"$set": {"models": clean, "updated_at": datetime.now(UTC), "updated_by": actor}},
        upsert=True,
    )
    return clean


def resolve_model_spec(scope: TenantScope, agent_name: str, tier: Tier | str,
                       run_model: str | None, *,
                       overrides: Mapping[str, str] | None = None) -> str:
    """The spec `agent_name` runs on: tenant override > the run's model > the tier default.

    Pass `overrides` (from `get_overrides`) to resolve many agents with one read.
    """
    found = get_overrides(scope) if overrides is None else overrides
    if agent_name in found:
        return found[agent_name]
    if run_model:
        return run_model
    return tier_spec(tier)
