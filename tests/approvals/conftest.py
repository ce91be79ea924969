"""Fixtures of the approval tests: the demo tenant's scope on the real embedded store."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from pymongo.database import Database

from opsgraph.approvals import PendingChange, ensure_indexes, record_pending
from opsgraph.operations.base import Preview
from opsgraph.principal import Principal, Role
from opsgraph.store.scope import Document, TenantScope

Propose = Callable[..., PendingChange]
T0 = datetime(2030, 1, 7, 9, 0, tzinfo=UTC)


def race(n: int, attempt: Callable[[int], object],
         ) -> tuple[list[object], list[BaseException]]:
    """Run `attempt(i)` in n threads released together; (results, errors)."""
    wins: list[object] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(n)

    def run(i: int) -> None:
        barrier.wait()
        try:
            wins.append(attempt(i))
        except BaseException as exc:  # collected and asserted on by the caller
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return wins, errors


def person(role: Role, user: str | None = None, tenant: str = "demo") -> Principal:
    """A principal of `tenant` with one role."""
    return Principal(tenant, user or f"{role.value}-1", frozenset({role}))


@pytest.fixture
def store(db: Database[Document]) -> Database[Document]:
    """The test database with the approval indexes in place."""
    ensure_indexes(db)
    return db


@pytest.fixture
def scope(store: Database[Document]) -> TenantScope:
    return TenantScope(store, "demo")


@pytest.fixture
def manager() -> Principal:
    return person(Role.MANAGER, "mgr-ada")


@pytest.fixture
def propose(scope: TenantScope) -> Propose:
    """Record a proposal (a fresh task each call unless `task_id` is given)."""
    tasks = itertools.count(1)

    def _propose(target: TenantScope | None = None, **kw: Any) -> PendingChange:
        args = kw.pop("args", {"member": "mem_1", "changes": {"email": "jane@new.example"}})
        preview = kw.pop("preview", Preview("Update Jane", {"email": "jane@old.example"},
                                            {"email": "jane@new.example"}))
        fields: dict[str, Any] = {
            "thread_id": "th-1", "task_id": f"t{next(tasks)}", "agent": "members.editor",
            "operation": "members.update", "proposed_by": "staff-bo", "now": T0, **kw,
        }
        return record_pending(target or scope, args=args, preview=preview, **fields)

    return _propose


@pytest.fixture
def staff() -> Principal:
    return person(Role.STAFF, "staff-bo")


@pytest.fixture
def seeded(store: Database[Document]) -> Database[Document]:
    """The demo data set (tenant `demo` on the pro plan, and `acme`), loaded by the seed."""
    from opsgraph.store.seed import seed_all

    seed_all(store)
    return store


@pytest.fixture
def jane(seeded: Database[Document]) -> str:
    """Jane Smith of the demo data set; returns her id."""
    member = seeded["members"].find_one({"tenant_id": "demo",
                                         "email": "jane.smith@example.com"})
    assert member is not None
    return str(member["_id"])


ProposeOp = Callable[..., PendingChange]


@pytest.fixture
def propose_op(scope: TenantScope, staff: Principal) -> ProposeOp:
    """Propose a write the way an agent's preview tool does, and record it."""
    from opsgraph.operations.base import Context
    from opsgraph.operations.catalogue import get_operation
    from opsgraph.principal import Plan
    from opsgraph.tools.guard import guard

    tasks = itertools.count(1)

    def _propose(op_id: str, raw: dict[str, Any], by: Principal | None = None,
                 now: datetime = T0) -> PendingChange:
        who = by or staff
        call = guard(get_operation(op_id), Context(scope, who, now), "preview", Plan.PRO)
        outcome = call(raw)
        assert outcome.ok and outcome.proposal is not None, outcome.content
        return record_pending(scope, thread_id="th-ops", task_id=f"t{next(tasks)}",
                              agent=f"{op_id.split('.')[0]}.agent", operation=op_id,
                              args=outcome.proposal.args, preview=outcome.proposal.preview,
                              proposed_by=who, now=now)

    return _propose
