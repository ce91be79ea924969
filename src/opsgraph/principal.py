"""Who is asking: tenant, user, roles, channel; and the canonical vocabularies."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from opsgraph.errors import BadInput


class Role(StrEnum):
    VISITOR = "visitor"
    MEMBER = "member"
    STAFF = "staff"
    MANAGER = "manager"
    ADMIN = "admin"


class Plan(StrEnum):
    BASIC = "basic"
    PRO = "pro"
    ENTERPRISE = "enterprise"


class Channel(StrEnum):
    DASHBOARD = "dashboard"
    EMAIL = "email"
    API = "api"
    MCP = "mcp"


DOMAINS: tuple[str, ...] = (
    "bookings", "schedules", "members", "events", "invoices",
    "communications", "facilities", "knowledge", "reports",
)
READ_VERBS: tuple[str, ...] = ("get", "list", "search", "check", "report")
WRITE_VERBS: tuple[str, ...] = (
    "create", "update", "cancel", "assign", "send", "issue", "refund", "register",
)
VERBS: tuple[str, ...] = READ_VERBS + WRITE_VERBS

# Features each plan enables; operations and agents name the feature they need.
PLAN_FEATURES: dict[Plan, frozenset[str]] = {
    Plan.BASIC: frozenset({"core", "bookings", "members", "knowledge"}),
    Plan.PRO: frozenset({
        "core", "bookings", "members", "knowledge", "events", "invoices",
        "schedules", "communications", "facilities",
    }),
    Plan.ENTERPRISE: frozenset({
        "core", "bookings", "members", "knowledge", "events", "invoices",
        "schedules", "communications", "facilities", "reports",
    }),
}
FEATURES: frozenset[str] = frozenset().union(*PLAN_FEATURES.values())


ANONYMOUS = "anonymous"
"""The user id every visitor without a session shares."""

E = TypeVar("E", bound=StrEnum)


def _parse(kind: type[E], field: str, value: str) -> E:
    """Normalise (`.strip().lower()`) and check a vocabulary word; unknown is an error."""
    try:
        return kind(value.strip().lower())
    except ValueError:
        allowed = ", ".join(member.value for member in kind)
        raise BadInput(f"{field}: unknown {field} {value!r} (allowed: {allowed})") from None


def parse_role(value: str) -> Role:
    """A canonical role; an unknown role is an error, never a silent mismatch."""
    return _parse(Role, "role", value)


def parse_roles(values: Iterable[str]) -> frozenset[Role]:
    """Parse several roles; every one must be canonical."""
    return frozenset(parse_role(v) for v in values)


def parse_channel(value: str) -> Channel:
    """A known channel."""
    return _parse(Channel, "channel", value)


def parse_plan(value: str) -> Plan:
    """A known plan."""
    return _parse(Plan, "plan", value)


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller of one request. Anonymous callers are a `visitor` with no user."""

    tenant_id: str
    user_id: str
    roles: frozenset[Role]
    channel: Channel = Channel.DASHBOARD

    @classmethod
    def visitor(cls, tenant_id: str, channel: Channel = Channel.API,
                session: str | None = None) -> Principal:
        """An anonymous caller: user `anonymous`, or with `session` (a visitor's own
        secret, see api.principals) a user id of that session alone."""
        if session is None:
            return cls(tenant_id, ANONYMOUS, frozenset({Role.VISITOR}), channel)
        digest = hashlib.sha256(f"{tenant_id}\n{session}".encode()).hexdigest()[:24]
        return cls(tenant_id, f"visitor-{digest}", frozenset({Role.VISITOR}), channel)

    @property
    def read_only(self) -> bool:
        """Inbound email always runs read-only, whoever sent it."""
        return self.channel is Channel.EMAIL

    @property
    def is_visitor(self) -> bool:
        return self.roles <= {Role.VISITOR}

    @property
    def is_anonymous(self) -> bool:
        """A visitor with no session of their own: every such caller is the same user."""
        return self.is_visitor and self.user_id == ANONYMOUS

    def has_any(self, roles: Iterable[Role]) -> bool:
        """True when the caller holds at least one of `roles` (admin holds every role)."""
        wanted = set(roles)
        return Role.ADMIN in self.roles or bool(self.roles & wanted)

    @property
    def can_decide(self) -> bool:
        """Managers and admins decide pending changes."""
        return bool(self.roles & {Role.MANAGER, Role.ADMIN})
