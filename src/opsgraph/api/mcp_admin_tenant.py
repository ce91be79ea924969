"""The admin link's tools for running a tenant beyond its harness: its settings, its
agents (`catalogue`, the registry) and its catalogue of objects (`catalogue_objects`,
`catalogue_put`, `catalogue_remove`) — thin wrappers over what `GET`/`PUT
/v1/tenant/settings`, `GET /v1/agents` and `/v1/catalogue` call (`api.first_run`,
`api.catalog`, `operations.catalogue_admin`).

An agent may not grant itself more: `settings_set` has no `harness_agent_may_force` (the
setting that lets an agent force a harness activation stays a person's choice, made over
HTTP or the dashboard); sending it is a wrong field, refused.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from opsgraph.api.catalog import agents_for
from opsgraph.api.catalogue_admin import KEY_PATTERN, CatalogueObjectRequest
from opsgraph.api.db import db
from opsgraph.api.first_run import read_tenant_settings, set_tenant_settings
from opsgraph.lazy_build import LazyModel
from opsgraph.operations.catalogue_admin import list_objects, put_object, remove_object
from opsgraph.principal import Principal


class SettingsArgs(LazyModel):
    """`settings_set`: what an agent may change of the tenant's settings."""

    model_config = ConfigDict(extra="forbid")
    capability_mode: Literal["observe", "enforce"] = Field(
        description="`enforce` refuses an agent a verb it does not declare; `observe` lets "
                    "it through and logs it.")
    off_topic_reply: str | None = Field(
        None, max_length=500, description="The club's own reply to a message that asks "
                                          "nothing of it; absent: unchanged, empty: generic.")
    modules: list[str] | None = Field(
        None, max_length=20, description="The harness modules enabled (e.g. "
                                         "`safeguarding`); absent: unchanged.")


def settings_get(principal: Principal, args: Any) -> dict[str, Any]:
    """The tenant's settings, as `GET /v1/tenant/settings`."""
    return read_tenant_settings(principal.tenant_id)


def settings_set(principal: Principal, args: SettingsArgs) -> dict[str, Any]:
    """Set the tenant's settings, as `PUT /v1/tenant/settings` (never `may_force`)."""
    return set_tenant_settings(principal, args.capability_mode, args.off_topic_reply,
                         args.modules, None)


def catalogue(principal: Principal, args: Any) -> dict[str, Any]:
    """The registry as the admin may use it, as `GET /v1/agents`."""
    return {"agents": agents_for(principal)}


class CatalogueTypeArg(LazyModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    type: str | None = Field(None, description="Only objects of this type (resource, class, "
                                               "event, plan, product, price_list).")


class CatalogueKeyArg(LazyModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    key: str = Field(pattern=KEY_PATTERN, max_length=80, description="The object's key.")


class CataloguePutArgs(CatalogueObjectRequest):
    key: str = Field(pattern=KEY_PATTERN, max_length=80, description="The object's key.")



def catalogue_objects(principal: Principal, args: CatalogueTypeArg) -> dict[str, Any]:
    """The tenant's catalogue objects, as `GET /v1/catalogue`."""
    return list_objects(db(), principal.tenant_id, args.type)


def catalogue_put(principal: Principal, args: CataloguePutArgs) -> dict[str, Any]:
    """Add or replace an object, as `PUT /v1/catalogue/{key}` (audited)."""
    return put_object(db(), principal.tenant_id, args.key, args.object,
                      actor=principal.user_id, if_version=args.if_version)


def catalogue_remove(principal: Principal, args: CatalogueKeyArg) -> dict[str, Any]:
    """Remove an object, as `DELETE /v1/catalogue/{key}` (audited)."""
    return remove_object(db(), principal.tenant_id, args.key, actor=principal.user_id)
