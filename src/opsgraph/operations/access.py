"""Who may call what: the role sets operations declare, and "is this caller that member?".

A manager is not automatically staff (`Principal.has_any` only gives admin every role), so
each set spells out every role it admits.
"""

from __future__ import annotations

from typing import Any

from opsgraph.errors import Forbidden
from opsgraph.operations.base import Context
from opsgraph.principal import Principal, Role

Document = dict[str, Any]

ANYONE = frozenset({Role.VISITOR, Role.MEMBER, Role.STAFF, Role.MANAGER})
MEMBERS_UP = frozenset({Role.MEMBER, Role.STAFF, Role.MANAGER})
STAFF_UP = frozenset({Role.STAFF, Role.MANAGER})
MANAGERS = frozenset({Role.MANAGER})


def is_staff(principal: Principal) -> bool:
    """Staff, managers and admins see every member's records."""
    return principal.has_any(STAFF_UP)


def is_manager(principal: Principal) -> bool:
    """Managers and admins."""
    return principal.has_any(MANAGERS)


def caller_member(ctx: Context) -> Document | None:
    """The member record of the caller: its `user_id` is the member's id, email or user_id."""
    user = ctx.principal.user_id.strip()
    if not user or ctx.principal.is_visitor:
        return None
    members = ctx.scope["members"]
    # Three indexed lookups: the store answers an `$or` by reading every member.
    for query in ({"_id": user}, {"email": user.lower()}, {"user_id": user}):
        found = members.find_one(query)
        if found is not None:
            return found
    return None


def require_self(ctx: Context, member_id: str | None, action: str) -> None:
    """Let staff through; a member may act only on their own records."""
    if is_staff(ctx.principal):
        return
    me = caller_member(ctx)
    if me is None or member_id != me["_id"]:
        raise Forbidden(f"members may {action} only for themselves")


def own_member_id(ctx: Context) -> str | None:
    """None for staff (they see everyone); the caller's member id for a member.

    A member with no member record gets an id that matches nothing, so lists come back
    empty instead of leaking other members' data.
    """
    if is_staff(ctx.principal):
        return None
    me = caller_member(ctx)
    return str(me["_id"]) if me else "\x00no-member"


def member_filter(ctx: Context, member_id: str | None, action: str) -> Document:
    """The `member_id` part of a list's filter: a member sees only their own records; a
    named member narrows the list (and must be the caller, for a member)."""
    flt: Document = {}
    own = own_member_id(ctx)
    if own is not None:
        flt["member_id"] = own
    if member_id is not None:
        require_self(ctx, member_id, action)
        flt["member_id"] = member_id
    return flt
