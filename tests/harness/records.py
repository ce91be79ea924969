"""The engine's run records as the harness tests read them (newest first)."""

from __future__ import annotations

from pymongo import DESCENDING

from opsgraph.engine.thread_log import RUNS
from opsgraph.store.scope import Document, TenantScope


def recent_runs(scope: TenantScope, limit: int = 50) -> list[Document]:
    """The tenant's latest run records, newest first."""
    return list(scope[RUNS].find({}, sort=[("finished_at", DESCENDING)], limit=limit,
                                 projection={"_id": 0, "tenant_id": 0, "expires_at": 0}))
