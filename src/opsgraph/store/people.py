"""People's names as the tenant's records hold them: a user id is also the id of their
staff or member record (as the demo users' are)."""

from __future__ import annotations

from collections.abc import Iterable

from opsgraph.store.scope import TenantScope

_PEOPLE = ("staff", "members")


def record_name(scope: TenantScope, user_id: str) -> str | None:
    """The name on the staff or member record whose id is `user_id`, else None."""
    for people in _PEOPLE:
        doc = scope[people].find_one({"_id": user_id}, projection={"name": 1})
        if doc and doc.get("name"):
            return str(doc["name"])
    return None


def display_name(scope: TenantScope, user_id: str) -> str:
    """A person's name (`record_name`), else the user id itself."""
    return record_name(scope, user_id) or user_id


def display_names(scope: TenantScope, user_ids: Iterable[str]) -> dict[str, str]:
    """`display_name` of each user id, in one read per collection (a list's deciders)."""
    wanted, found = set(user_ids), dict[str, str]()
    for people in _PEOPLE:
        missing = sorted(wanted - found.keys())
        if not missing:
            break
        for doc in scope[people].find({"_id": {"$in": missing}}, projection={"name": 1}):
            if doc.get("name"):
                found[str(doc["_id"])] = str(doc["name"])
    return {user_id: found.get(user_id, user_id) for user_id in wanted}
