"""Admin changes to a tenant's catalogue (resources, classes and events, plans, products,
price lists): list, add or replace, remove.

The CLI (`opsgraph catalogue list|put|rm`), the HTTP routes (api.catalogue_admin) and the
admin MCP link all come here. An object is checked whole against its type's model
(knowledge.catalogue.validate: every wrong field named) before anything is written; a
replace names the version it replaces when it wants to be sure nobody changed the object
since it was read (`if_version`: 409 otherwise), and two replaces racing never both win
(compare-and-set on the stored version). Every change is audited as a direct write
(`audit.record_transition`, None → applied, `detail.via = "direct"`) and bumps the
tenant's knowledge version, so whatever caches the catalogue reads it again.
"""

from __future__ import annotations

from typing import Any

from pymongo.database import Database
from pymongo.errors import DuplicateKeyError

from opsgraph.audit import record_transition
from opsgraph.errors import BadInput, Conflict, NotFound
from opsgraph.knowledge.catalogue import MODELS, TYPES, validate
from opsgraph.knowledge.documents import bump_knowledge_version
from opsgraph.operations.invoke import new_change_id
from opsgraph.store.catalogue_ids import object_id
from opsgraph.store.scope import TenantScope
from opsgraph.store.search_keys import KEY_FIELDS, with_keys

Document = dict[str, Any]
COLLECTION = "catalogue"
PUT, REMOVE = "catalogue.put", "catalogue.remove"
"""The operation names the audit trail keeps catalogue changes under."""


def shown(doc: Document) -> Document:
    """A stored object as callers see it: its own fields, no ids or search keys."""
    return {k: v for k, v in doc.items() if k not in ("_id", "tenant_id", *KEY_FIELDS)}


def _scope(db: Database[Document], tenant: str) -> TenantScope:
    scope = TenantScope(db, tenant)
    scope.require_tenant()
    return scope


def list_objects(db: Database[Document], tenant: str, kind: str | None = None) -> Document:
    """`{types, objects: [object]}`, by type then key; `kind` keeps one type."""
    if kind is not None and kind not in MODELS:
        raise BadInput(f"type: {kind!r} is not one of {', '.join(TYPES)}", field="type")
    scope = _scope(db, tenant)
    found = scope[COLLECTION].find({} if kind is None else {"type": kind},
                                   sort=[("type", 1), ("key", 1)])
    return {"types": list(TYPES), "objects": [shown(d) for d in found]}


def get_object(db: Database[Document], tenant: str, key: str) -> Document:
    """One object by key (NotFound naming it)."""
    found = _scope(db, tenant)[COLLECTION].find_one({"_id": object_id(tenant, key)})
    if found is None:
        raise NotFound(f"catalogue object {key!r} not found in tenant {tenant!r}")
    return shown(found)


def put_object(db: Database[Document], tenant: str, key: str, fields: Document, *,
               actor: str, if_version: int | None = None) -> Document:
    """Add or replace the object `key` with `fields` (its type and every field of that
    type; `key` and `version` are the store's); returns `{object, created, change_id,
    knowledge_version}`."""
    if not isinstance(fields, dict):
        raise BadInput("object: must be a JSON object of the object's fields", field="object")
    if "key" in fields and fields["key"] != key:
        raise BadInput(f"object.key: {fields['key']!r} differs from the key in the path "
                       f"({key!r})", field="key")
    scope = _scope(db, tenant)
    stored = scope[COLLECTION]
    old = stored.find_one({"_id": object_id(tenant, key)})
    current = int(old.get("version", 1)) if old else 0
    if if_version is not None and if_version != current:
        raise Conflict(f"catalogue object {key!r}: version {current} is stored, not "
                       f"{if_version} (someone changed it since you read it; read it again)",
                       version=current)
    if old is not None and old.get("type") != fields.get("type"):
        raise BadInput(f"object.type: {key!r} is a {old.get('type')}, not a "
                       f"{fields.get('type')} (remove it first to change its type)",
                       field="type")
    checked = validate({**{k: v for k, v in fields.items() if k != "version"}, "key": key,
                        "version": current + 1})
    doc = with_keys(COLLECTION, {"_id": object_id(tenant, key),
                                 **checked.model_dump(mode="json", exclude_none=True)})
    try:
        if old is None:
            stored.insert_one(doc)
        elif stored.update_one({"_id": doc["_id"], "version": current},
                               {"$set": {k: v for k, v in doc.items() if k != "_id"}},
                               ).matched_count == 0:
            raise DuplicateKeyError("moved")
    except DuplicateKeyError:
        raise Conflict(f"catalogue object {key!r} was changed by someone else at the same "
                       "time; read it again and retry") from None
    change_id = _audit(scope, PUT, actor, "Added" if old is None else "Replaced", doc)
    return {"object": shown(doc), "created": old is None, "change_id": change_id,
            "knowledge_version": bump_knowledge_version(db, tenant)}


def remove_object(db: Database[Document], tenant: str, key: str, *, actor: str) -> Document:
    """Remove the object `key`; returns `{key, removed, change_id, knowledge_version}`."""
    scope = _scope(db, tenant)
    old = scope[COLLECTION].find_one({"_id": object_id(tenant, key)})
    if old is None or scope[COLLECTION].delete_one({"_id": old["_id"]}).deleted_count == 0:
        raise NotFound(f"catalogue object {key!r} not found in tenant {tenant!r}")
    change_id = _audit(scope, REMOVE, actor, "Removed", old)
    return {"key": key, "removed": True, "change_id": change_id,
            "knowledge_version": bump_knowledge_version(db, tenant)}


def _audit(scope: TenantScope, operation: str, actor: str, verb: str, doc: Document) -> str:
    change_id = new_change_id()
    record_transition(scope, change_id, None, "applied", actor, None, detail={
        "via": "direct", "summary": f"{verb} {doc.get('type')} {doc.get('name')!r} "
                                    f"({doc.get('key')}) in the catalogue",
        "args": shown(doc) if operation == PUT else {"key": doc.get("key")}},
        operation=operation)
    return change_id
