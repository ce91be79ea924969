"""Domain indexes: idempotent, and every one leads with tenant_id."""

from __future__ import annotations

from typing import Any

from pymongo.database import Database

from opsgraph.store.indexes import INDEXES, ensure_indexes

Document = dict[str, Any]


def test_ensure_indexes_is_idempotent_and_tenant_first(db: Database[Document]) -> None:
    first = ensure_indexes(db)
    assert ensure_indexes(db) == first
    for name in INDEXES:
        info = db[name].index_information()
        assert set(first[name]) <= set(info)
        for index, spec in info.items():
            if index != "_id_":
                assert spec["key"][0][0] == "tenant_id", (name, index)
