"""The per-thread run lease: renewed while held, lapses after a crash."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from opsgraph.engine.threads import _try_acquire, thread_lease
from opsgraph.errors import Conflict
from opsgraph.settings import get_settings
from opsgraph.store.scope import TenantScope


@pytest.fixture
def scope(demo_db: Any, monkeypatch: pytest.MonkeyPatch) -> TenantScope:
    monkeypatch.setenv("OPSGRAPH_THREAD_LEASE_S", "1")
    get_settings.cache_clear()
    return TenantScope(demo_db, "demo")


def test_a_held_lease_is_renewed_past_its_length(scope: TenantScope) -> None:
    with thread_lease(scope, "th-long"):
        time.sleep(1.6)  # longer than the 1 s lease: only renewal keeps it
        assert not _try_acquire(scope, "th-long", "someone-else", 1.0)
        with pytest.raises(Conflict, match="busy"):
            with thread_lease(scope, "th-long", wait_s=0.2):
                pass
    with thread_lease(scope, "th-long", wait_s=0.2):
        pass  # released on exit


def test_a_crashed_holders_lease_lapses(scope: TenantScope) -> None:
    scope["thread_leases"].insert_one({"thread_id": "th-crash", "owner": "dead-process",
                                       "until": datetime.now(UTC) + timedelta(seconds=1)})
    started = time.monotonic()
    with thread_lease(scope, "th-crash", wait_s=5):
        assert time.monotonic() - started >= 0.5
    assert scope["thread_leases"].count({"thread_id": "th-crash"}) == 0


def test_leases_are_per_tenant(scope: TenantScope, demo_db: Any) -> None:
    acme = TenantScope(demo_db, "acme")
    with thread_lease(scope, "th-same"), thread_lease(acme, "th-same", wait_s=0.2):
        pass
