"""A seeded database of its own for a test session: demo + acme seeded at a fixed clock on
the session's store, dropped when the fixture ends."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from pymongo.database import Database

from opsgraph.store.client import new_client
from opsgraph.store.seed import seed_all


def seeded_database(mongo_uri: str, prefix: str,
                    now: datetime) -> Iterator[Database[dict[str, Any]]]:
    """Yield a database named `<prefix>_<random>` holding both seeded tenants."""
    client = new_client(mongo_uri)
    db = client[f"{prefix}_{uuid.uuid4().hex[:8]}"]
    seed_all(db, now=now)
    try:
        yield db
    finally:
        client.drop_database(db.name)
        client.close()
