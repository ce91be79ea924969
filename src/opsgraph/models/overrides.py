"""Per-tenant, per-agent model overrides (`GET`/`PUT /v1/tenant/models`).

One document per tenant in `tenant_models`, reached only through the tenant's scope:

    {_id: tenant_id, tenant_id, models: {agent_name: model_spec}, updated_at, updated_by}

A tenant chooses from the deployment's list only (`OPSGRAPH_ALLOWED_MODELS`; unset, the
default and light tier models). A choice is compared with that list as text and never
opened, so the answer for a spec that names a server file is the same whether the file
exists or not; file-backed specs (`scripted:`, `llamacpp:`) are the deployment's to name.
A choice on the list must also be able to run here (`factory.unavailable`): an `openai:`
spec without `OPENAI_BASE_URL` is refused when it is chosen, not when a run needs it.

Which model an agent runs on: the tenant's override for that agent (while it is still on
the list), else the run's explicit model (`--model`), else the default of the agent's tier.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from opsgraph.errors import ConfigurationError, OpsgraphError, Unprocessable
from opsgraph.models.auto import DEMO_SPEC
from opsgraph.models.factory import Tier, tier_spec, unavailable
from opsgraph.models.names import model_words
from opsgraph.models.spec import ModelSpec, parse_model_spec
from opsgraph.settings import get_settings

if TYPE_CHECKING:
    from opsgraph.store.scope import TenantScope

COLLECTION: Final = "tenant_models"


@dataclass(frozen=True, slots=True)
class AllowedModel:
    """A model a tenant may choose, and why it cannot run here (None when it can)."""

    spec: ModelSpec
    unavailable: str | None

    def to_json(self) -> dict[str, str]:
        return {"spec": str(self.spec), "provider": self.spec.provider,
                "model": self.spec.name, "name": model_words(str(self.spec))}


def _allowed_specs() -> list[ModelSpec]:
    """The deployment's list, parsed and canonical, in its order without repeats; a
    malformed entry is a configuration error naming its variable."""
    settings = get_settings()
    # Unset: the two tiers' models as this process resolved them (configured, or picked by
    # models.auto); demo mode's placeholder is no model a tenant can choose.
    named = ([("OPSGRAPH_ALLOWED_MODELS", text) for text in settings.allowed_models]
             or [(variable, spec) for variable, spec in (
                 ("OPSGRAPH_MODEL", tier_spec("default")),
                 ("OPSGRAPH_LIGHT_MODEL", tier_spec("light"))) if spec != DEMO_SPEC])
    specs: list[ModelSpec] = []
    for variable, text in named:
        try:
            spec = parse_model_spec(text)
        except OpsgraphError as exc:
            raise ConfigurationError(f"{variable}: {exc.message}") from None
        if spec not in specs:
            specs.append(spec)
    return specs


def allowed_models() -> list[AllowedModel]:
    """Every model on the deployment's list, each with whether it can run here."""
    return [AllowedModel(spec, unavailable(spec)) for spec in _allowed_specs()]


def _canonical(text: object) -> str | None:
    """`text` as a canonical spec, None when it is not a spec at all (never opens a file)."""
    if not isinstance(text, str):
        return None
    try:
        return str(parse_model_spec(text))
    except OpsgraphError:
        return None


def get_overrides(scope: TenantScope) -> dict[str, str]:
    """The tenant's `{agent_name: model_spec}` overrides that are in force: a stored choice
    the deployment no longer allows is left out (the agent runs on its default again)."""
    doc = scope[COLLECTION].find_one({"_id": scope.tenant_id})
    models = (doc or {}).get("models") or {}
    allowed = {str(spec) for spec in _allowed_specs()}
    return {str(agent): str(spec) for agent, spec in models.items() if str(spec) in allowed}


def model_settings(scope: TenantScope) -> dict[str, Any]:
    """What `GET` and `PUT /v1/tenant/models` answer: the tenant's overrides and the models
    it may choose (those that can run here), `{"models": {...}, "allowed": [...]}`."""
    return {"models": get_overrides(scope),
            "allowed": [m.to_json() for m in allowed_models() if m.unavailable is None]}


def _validated(models: Mapping[str, object], known_agents: set[str]) -> dict[str, str]:
    """The overrides made canonical; Unprocessable listing every agent and choice at fault."""
    allowed = {str(m.spec): m for m in allowed_models()}
    listing = ", ".join(spec for spec, m in allowed.items() if m.unavailable is None)
    clean: dict[str, str] = {}
    errors: list[dict[str, str]] = []
    for agent, text in models.items():
        field = f"models.{agent}"
        spec = _canonical(text)
        if agent not in known_agents:
            errors.append({"field": field, "message": "unknown agent (GET /v1/agents lists "
                                                      "them)"})
        elif spec is None or spec not in allowed:
            errors.append({"field": field, "message": "not one of the models this deployment "
                                                      f"allows (allowed: {listing or 'none'})"})
        elif (why := allowed[spec].unavailable) is not None:
            errors.append({"field": field, "message": f"{spec} cannot run here: {why}"})
        else:
            clean[agent] = spec
    if errors:
        raise Unprocessable("; ".join(f"{e['field']}: {e['message']}" for e in errors),
                            errors=errors)
    return clean


def set_overrides(scope: TenantScope, models: Mapping[str, object], known_agents: set[str],
                  actor: str) -> dict[str, str]:
    """Replace the tenant's overrides with `models`, all or nothing; returns what is stored.

    Every agent must be in `known_agents` and every spec on the deployment's list and able
    to run here, before anything is written.
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
