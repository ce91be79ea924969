"""Indexes of the domain collections; `ensure_indexes` is safe to run on every start.

Every compound index leads with `tenant_id`, because every query the tenant scope sends
filters on it. Names are explicit so re-running with the same spec is a no-op.

A query is served by an index only in the shape the embedded store (SecantusDB) can walk:
equalities on every field of a leading prefix of the index, then at most one field with a
range or `$in` — `{tenant_id, status, start: {$gte, $lt}}` on (tenant_id, status, start).
Any other field in the filter (a second range, `$ne`, `$or`, a field outside the index)
turns the query into a scan of the whole collection, every tenant's records included; and
a sort or a limit never shortens the walk, so what it costs is what the filter matches.
Hence `(tenant_id, _id)` on every collection (a scoped lookup by id filters on both), and
reads that filter on the index's fields and check the rest in code (operations.windows).
MongoDB itself serves every one of these shapes with the same indexes.
"""

from __future__ import annotations

from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel, UpdateOne
from pymongo.database import Database

from opsgraph.store.search_keys import NAMED, changed_keys, name_fields

Document = dict[str, Any]
T = ("tenant_id", ASCENDING)
_HAS_EMAIL = {"email": {"$type": "string"}}
_KEYS_MARKER = {"_id": "search_keys", "version": 3}
"""Kept in `migrations` once every named record carries its search keys (version 3: members
found by one `member_keys` field, not `contact_keys` beside the name fields)."""


def _ix(name: str, *keys: tuple[str, int], unique: bool = False,
        partial: Document | None = None) -> IndexModel:
    options: Document = {"name": name, "unique": unique}
    if partial is not None:
        options["partialFilterExpression"] = partial
    return IndexModel([T, *keys], **options)


def _by_id() -> IndexModel:
    return _ix("tenant_id_", ("_id", ASCENDING))


def _named() -> list[IndexModel]:
    """The search keys of a named collection (store.search_keys)."""
    return [_ix("tenant_name_key", ("name_key", ASCENDING)),
            _ix("tenant_name_prefixes", ("name_prefixes", ASCENDING)),
            _ix("tenant_name_sounds", ("name_sounds", ASCENDING))]


INDEXES: dict[str, list[IndexModel]] = {
    "members": [_by_id(), *_named(),
                _ix("tenant_email", ("email", ASCENDING), unique=True, partial=_HAS_EMAIL),
                # Lookups by email: the store does not see that an equality on a string
                # implies the partial filter above.
                _ix("tenant_email_id", ("email", ASCENDING), ("_id", ASCENDING)),
                _ix("tenant_member_keys", ("member_keys", ASCENDING)),
                _ix("tenant_user", ("user_id", ASCENDING))],
    "staff": [_by_id(), *_named(), _ix("tenant_email", ("email", ASCENDING))],
    "shifts": [_by_id(), _ix("tenant_start", ("start", ASCENDING)),
               _ix("tenant_date", ("date", ASCENDING), ("start", ASCENDING)),
               _ix("tenant_staff_start", ("staff_id", ASCENDING), ("start", ASCENDING))],
    "resources": [_by_id(), *_named(), _ix("tenant_code", ("code", ASCENDING))],
    "bookings": [
        _by_id(),
        _ix("tenant_start", ("start", ASCENDING)),
        _ix("tenant_status_start", ("status", ASCENDING), ("start", ASCENDING)),
        _ix("tenant_member_status_start", ("member_id", ASCENDING), ("status", ASCENDING),
            ("start", ASCENDING)),
        _ix("tenant_resource_status_start", ("resource_id", ASCENDING),
            ("status", ASCENDING), ("start", ASCENDING)),
        # Two confirmed bookings can never start on the same resource at the same moment,
        # even if two applies race past the overlap check.
        _ix("tenant_resource_start_confirmed", ("resource_id", ASCENDING),
            ("start", ASCENDING), unique=True, partial={"status": "confirmed"}),
    ],
    "events": [_by_id(), *_named(), _ix("tenant_start", ("start", ASCENDING))],
    "registrations": [_by_id(),
                      _ix("tenant_event_status", ("event_id", ASCENDING),
                          ("status", ASCENDING), ("at", ASCENDING)),
                      _ix("tenant_member", ("member_id", ASCENDING)),
                      _ix("tenant_event_member", ("event_id", ASCENDING),
                          ("member_id", ASCENDING), unique=True)],
    "invoices": [_by_id(),
                 _ix("tenant_number", ("number", ASCENDING), unique=True),
                 _ix("tenant_seq", ("seq", DESCENDING)),
                 _ix("tenant_member_seq", ("member_id", ASCENDING), ("seq", DESCENDING)),
                 _ix("tenant_status_seq", ("status", ASCENDING), ("seq", DESCENDING)),
                 _ix("tenant_issued", ("issued", ASCENDING))],
    "inbox": [_by_id(), _ix("tenant_status_received", ("status", ASCENDING),
                            ("received_at", DESCENDING))],
    "outbox": [_by_id(), _ix("tenant_created", ("created_at", DESCENDING))],
    "knowledge": [_by_id(), *_named(), _ix("tenant_slug", ("slug", ASCENDING), unique=True)],
    "knowledge_vectors": [_by_id()],
    "catalogue": [_by_id(), *_named(),
                  _ix("tenant_type_key", ("type", ASCENDING), ("key", ASCENDING)),
                  _ix("tenant_key", ("key", ASCENDING), unique=True)],
    "tickets": [_by_id(), _ix("tenant_resource_status", ("resource_id", ASCENDING),
                              ("status", ASCENDING))],
    # the nightly few-shot promotion (engine.few_shot): one example per agent and content
    "few_shot_examples": [_by_id(),
                          _ix("tenant_agent_fingerprint", ("agent", ASCENDING),
                              ("fingerprint", ASCENDING), unique=True)],
}
"""Collection → its indexes. `tenants` is keyed by `_id` (the tenant id) and needs none."""


def ensure_indexes(db: Database[Document]) -> dict[str, list[str]]:
    """Create any missing index of the domain collections, and give records stored before
    search keys existed their keys; returns index names per collection."""
    names = {name: db[name].create_indexes(models) for name, models in INDEXES.items()}
    backfill_search_keys(db)
    return names


def backfill_search_keys(db: Database[Document]) -> int:
    """Search keys for every named record that has none (once per database: a marker in
    `migrations` says it is done); returns how many records it changed."""
    if db["migrations"].find_one({"_id": _KEYS_MARKER["_id"]}) == _KEYS_MARKER:
        return 0
    changed = 0
    for collection, field in NAMED.items():
        if collection == "members":
            continue  # its name keys come with its member keys, below
        todo = [UpdateOne({"_id": doc["_id"]}, {"$set": name_fields(doc[field])})
                for doc in db[collection].find({"name_key": {"$exists": False}}, {field: 1})
                if isinstance(doc.get(field), str)]
        if todo:
            changed += db[collection].bulk_write(todo, ordered=False).modified_count
    changed += _backfill_member_keys(db)
    db["migrations"].replace_one({"_id": _KEYS_MARKER["_id"]}, _KEYS_MARKER, upsert=True)
    return changed


def _backfill_member_keys(db: Database[Document]) -> int:
    """The search keys of members stored before them, `member_keys` included, and their
    `contact_keys` (and its index) gone: it is what `member_keys` replaced."""
    members = db["members"]
    todo = [UpdateOne({"_id": doc["_id"]}, {"$set": changed_keys("members", doc, {}),
                                            "$unset": {"contact_keys": ""}})
            for doc in members.find({"$or": [{"member_keys": {"$exists": False}},
                                             {"contact_keys": {"$exists": True}}]},
                                    {"name": 1, "email": 1, "phone": 1})
            if isinstance(doc.get("name"), str)]
    if "tenant_contact_keys" in members.index_information():
        members.drop_index("tenant_contact_keys")
    return members.bulk_write(todo, ordered=False).modified_count if todo else 0
