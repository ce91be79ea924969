"""TenantScope.find_in_each: several collections' queries in one command, each held to the
tenant, on the real store."""

from __future__ import annotations

from typing import Any

from pymongo import MongoClient
from pymongo.database import Database

from opsgraph.store.scope import Query, TenantScope
from tests.heard import Heard

Document = dict[str, Any]


def _records(db: Database[Document]) -> None:
    for tenant in ("t1", "t2"):
        db["members"].insert_many([
            {"_id": f"{tenant}_m1", "tenant_id": tenant, "name": "Jane Smith", "email": "j@x",
             "keys": ["jane", "smith"]},
            {"_id": f"{tenant}_m2", "tenant_id": tenant, "name": "Tom Baker", "keys": ["tom"]}])
        db["resources"].insert_one({"_id": f"{tenant}_r1", "tenant_id": tenant,
                                    "name": "Court 1", "keys": ["court", "jane"]})
    db["events"].insert_one({"_id": "t2_e1", "tenant_id": "t2", "title": "Jane's night",
                             "keys": ["jane"]})


def test_each_querys_records_of_the_tenant_come_in_one_command_tagged_with_their_query(
        db: Database[Document], mongo_uri: str) -> None:
    _records(db)
    sent = Heard()
    client: MongoClient[Document] = MongoClient(mongo_uri, event_listeners=[sent])
    try:
        scope = TenantScope(client[db.name], "t1")
        found = scope.find_in_each([
            Query("members", {"keys": {"$in": ["jane", "tom"]}}, {"_id": 1, "name": 1}),
            Query("events", {"keys": "jane"}, {"title": 1}),
            Query("resources", {"keys": "jane"}, {"_id": 1, "name": 1})])
        assert sent.names == ["aggregate members"]
    finally:
        client.close()
    # t2 has an event and records of the same names: none of them comes to t1
    assert sorted(found, key=lambda f: (f[0], f[1]["_id"])) == [
        (0, {"_id": "t1_m1", "name": "Jane Smith"}), (0, {"_id": "t1_m2", "name": "Tom Baker"}),
        (2, {"_id": "t1_r1", "name": "Court 1"})]
    assert [i for i, _ in found] == sorted(i for i, _ in found)  # the first query's first


def test_a_querys_own_tenant_id_is_replaced_by_the_scopes(db: Database[Document]) -> None:
    _records(db)
    scope = TenantScope(db, "t1")
    found = scope.find_in_each([
        Query("members", {"tenant_id": "t2", "keys": "jane"}, {"_id": 1}),
        Query("events", {"tenant_id": "t2"}, {"_id": 1})])
    assert found == [(0, {"_id": "t1_m1"})]  # as `find` does: t2's event stays out of reach
    assert scope.find_in_each([]) == []
