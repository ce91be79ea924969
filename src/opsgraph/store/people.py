"""People's names as the tenant's records hold them: a user id is also the id of their
staff or member record (as the demo users' are)."""

from __future__ import annotations

from collections.abc import Iterable

from opsgraph.store.scope import Query, TenantScope

_PEOPLE = ("staff", "members")
"""Where a user id's record is looked for, the first found first."""


def _names(scope: TenantScope, user_ids: list[str]) -> dict[str, str]:
    """The names on the staff and member records of `user_ids`, in one command; a staff
    record's name wins over a member record's of the same id."""
    found: dict[str, str] = {}
    queries = [Query(people, {"_id": {"$in": user_ids}}, {"name": 1}) for people in _PEOPLE]
    for _, doc in sorted(scope.find_in_each(queries), key=lambda hit: -hit[0]):
        if doc.get("name"):
            found[str(doc["_id"])] = str(doc["name"])
    return found


def record_name(scope: TenantScope, user_id: str) -> str | None:
    """The name on the staff or member record whose id is `user_id`, else None."""
    return _names(scope, [user_id]).get(user_id)


def display_name(scope: TenantScope, user_id: str) -> str:
    """A person's name (`record_name`), else the user id itself."""
    return record_name(scope, user_id) or user_id


def display_names(scope: TenantScope, user_ids: Iterable[str]) -> dict[str, str]:
    """`display_name` of each user id, in one command (a list's deciders)."""
    wanted = set(user_ids)
    found = _names(scope, sorted(wanted)) if wanted else {}
    return {user_id: found.get(user_id, user_id) for user_id in wanted}
