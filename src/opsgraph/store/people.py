"""People's names as the tenant's records hold them: a user id is also the id of their
staff or member record (as the demo users' are)."""

from __future__ import annotations

from opsgraph.store.scope import TenantScope


def record_name(scope: TenantScope, user_id: str) -> str | None:
    """The name on the staff or member record whose id is `user_id`, else None."""
    for people in ("staff", "members"):
        doc = scope[people].find_one({"_id": user_id}, projection={"name": 1})
        if doc and doc.get("name"):
            return str(doc["name"])
    return None


def display_name(scope: TenantScope, user_id: str) -> str:
    """A person's name (`record_name`), else the user id itself."""
    return record_name(scope, user_id) or user_id
