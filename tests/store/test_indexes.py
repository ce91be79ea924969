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


def test_records_stored_before_search_keys_get_them_once(db: Database[Document]) -> None:
    from opsgraph.store.indexes import backfill_search_keys

    db["members"].insert_one({"_id": "m_old", "tenant_id": "t", "name": "Émile Zola",
                              "email": "emile@example.org"})
    db["resources"].insert_one({"_id": "r_old", "tenant_id": "t", "name": "Court_9"})
    assert backfill_search_keys(db) == 2
    old = db["members"].find_one({"_id": "m_old"})
    assert old is not None and old["name_key"] == "emilezola"
    assert {"emile", "zola", "z"} <= set(old["name_prefixes"])
    resource = db["resources"].find_one({"_id": "r_old"})
    assert resource is not None and resource["name_key"] == "court9"
    db["members"].insert_one({"_id": "m_later", "tenant_id": "t", "name": "Late Comer"})
    assert backfill_search_keys(db) == 0  # done once: later records carry their own keys


def test_members_keyed_by_contact_keys_get_member_keys_once(db: Database[Document]) -> None:
    from opsgraph.store.indexes import backfill_search_keys
    from opsgraph.store.search_keys import name_fields

    ensure_indexes(db)
    db["migrations"].replace_one({"_id": "search_keys"}, {"_id": "search_keys", "version": 2})
    # a member as version 2 stored one: name keys and contact_keys, no member_keys
    db["members"].insert_one({"_id": "m_v2", "tenant_id": "t", "name": "Jane Smith",
                              "email": "jane@example.org", "phone": "+44 7700 900123",
                              **name_fields("Jane Smith"), "contact_keys": ["jane", "0123"]})
    db["members"].create_index([("tenant_id", 1), ("contact_keys", 1)],
                               name="tenant_contact_keys")
    # and one a re-seed gave member_keys beside the contact_keys it had
    db["members"].insert_one({"_id": "m_reseeded", "tenant_id": "t", "name": "Tom Baker",
                              **name_fields("Tom Baker"), "member_keys": ["n:tom"],
                              "contact_keys": ["tom"]})
    assert backfill_search_keys(db) == 2
    assert "contact_keys" not in (db["members"].find_one({"_id": "m_reseeded"}) or {"x": 1})
    old = db["members"].find_one({"_id": "m_v2"})
    assert old is not None and "contact_keys" not in old
    assert {"n:jane", "s:s530", "c:jane", "c:900123"} <= set(old["member_keys"])
    assert "tenant_contact_keys" not in db["members"].index_information()
    assert backfill_search_keys(db) == 0
