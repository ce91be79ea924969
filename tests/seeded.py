"""Seeded databases for tests: demo + acme seeded at a clock on the session's store, dropped
when the fixture ends, and copied server-side into a test's own database (a copy plus its
indexes costs about half a seed)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from pymongo.database import Database

from opsgraph.bootstrap import prepare_store
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


def copy_into(template: Database[dict[str, Any]], db: Database[dict[str, Any]]) -> None:
    """Make `db` a copy of `template`'s documents with every index the product creates
    (`$out` keeps no indexes on this store, so they are made after the copy)."""
    for name in template.list_collection_names():
        template[name].aggregate([{"$out": {"db": db.name, "coll": name}}])
    prepare_store(db)
