"""Fixtures: the demo club seeded once per session (read-only), and a resolver bound to a
caller and a clock given as an offset from the seed's anchor Monday ("+2d 10:00")."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from pymongo.database import Database

from opsgraph.operations.base import Context
from opsgraph.principal import Principal, parse_channel, parse_role
from opsgraph.resolve import Resolution
from opsgraph.resolve.resolver import resolve_request
from opsgraph.resolve.score import clock_at
from opsgraph.store.scope import TenantScope
from tests.seeded import seeded_database

Document = dict[str, Any]
SEEDED_AT = datetime(2030, 1, 9, 10, 0, tzinfo=UTC)  # anchor: Monday 7 January 2030
Resolve = Callable[..., Resolution]


@pytest.fixture(scope="session")
def club(mongo_uri: str) -> Iterator[Database[Document]]:
    """demo + acme seeded once; tests using it never write."""
    yield from seeded_database(mongo_uri, "resolve", SEEDED_AT)


@pytest.fixture
def resolve(club: Database[Document]) -> Resolve:
    """`resolve(text, now="+2d 10:00", role="staff", user="cli", history=[...])`."""

    def run(text: str, now: str = "+2d 10:00", role: str = "staff", user: str = "cli",
            history: Sequence[str] = (), tenant: str = "demo") -> Resolution:
        principal = Principal(tenant, user, frozenset({parse_role(role)}),
                              parse_channel("dashboard"))
        scope = TenantScope(club, tenant)
        clock = clock_at(scope, now)
        return resolve_request(Context(scope, principal, clock), text, timezone="UTC",
                               now=clock, history=history)

    return run
