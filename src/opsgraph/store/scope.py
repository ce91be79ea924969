"""Tenant scope: the only way code reaches tenant data.

A `TenantScope` is made from a `Principal`, so no caller passes a raw tenant id. Every
filter it sends gets `tenant_id` and every document it writes carries it. It offers no
aggregate: a `$lookup` or `$unionWith` stage reads another collection past a leading
`$match` on the tenant.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pymongo import ReturnDocument
from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.results import DeleteResult, InsertManyResult, InsertOneResult, UpdateResult

from opsgraph.errors import Forbidden, NotFound
from opsgraph.principal import Principal
from opsgraph.store.client import get_db

Document = dict[str, Any]


class ReadOnlyViolation(Forbidden):
    """A read (or a preview) tried to write: the kind of a tool is enforced by its scope."""

    code = "read_only_violation"


class ScopedCollection:
    """A collection seen through one tenant (optionally refusing every write)."""

    __slots__ = ("_coll", "read_only", "tenant_id")

    def __init__(self, coll: Collection[Document], tenant_id: str,
                 read_only: bool = False) -> None:
        self._coll = coll
        self.tenant_id = tenant_id
        self.read_only = read_only

    def _writable(self) -> Collection[Document]:
        if self.read_only:
            raise ReadOnlyViolation(f"write to '{self._coll.name}' refused: read-only scope")
        return self._coll

    @property
    def name(self) -> str:
        return self._coll.name

    def _f(self, flt: Mapping[str, Any] | None) -> Document:
        return {**(flt or {}), "tenant_id": self.tenant_id}

    def _d(self, doc: Mapping[str, Any]) -> Document:
        return {**doc, "tenant_id": self.tenant_id}

    def find(self, flt: Mapping[str, Any] | None = None, *, sort: Sequence[tuple[str, int]]
             | None = None, limit: int = 0, projection: Mapping[str, Any] | None = None,
             ) -> Iterator[Document]:
        cur = self._coll.find(self._f(flt), projection, sort=list(sort) if sort else None,
                              limit=limit)
        return iter(cur)

    def find_one(self, flt: Mapping[str, Any] | None = None, **kw: Any) -> Document | None:
        return self._coll.find_one(self._f(flt), **kw)

    def distinct(self, key: str, flt: Mapping[str, Any] | None = None) -> list[Any]:
        """The distinct values of `key` among the tenant's matching documents."""
        return self._coll.distinct(key, self._f(flt))

    def count(self, flt: Mapping[str, Any] | None = None) -> int:
        return self._coll.count_documents(self._f(flt))

    def insert_one(self, doc: Mapping[str, Any]) -> InsertOneResult:
        return self._writable().insert_one(self._d(doc))

    def insert_many(self, docs: Sequence[Mapping[str, Any]],
                    ordered: bool = True) -> InsertManyResult:
        return self._writable().insert_many([self._d(d) for d in docs], ordered=ordered)

    def update_one(self, flt: Mapping[str, Any], update: Mapping[str, Any],
                   upsert: bool = False) -> UpdateResult:
        return self._writable().update_one(self._f(flt), update, upsert=upsert)

    def update_many(self, flt: Mapping[str, Any], update: Mapping[str, Any]) -> UpdateResult:
        return self._writable().update_many(self._f(flt), update)

    def find_one_and_update(self, flt: Mapping[str, Any], update: Mapping[str, Any], *,
                            upsert: bool = False, after: bool = True) -> Document | None:
        """Atomic read-modify-write; the compare-and-set primitive."""
        ret = ReturnDocument.AFTER if after else ReturnDocument.BEFORE
        return self._writable().find_one_and_update(self._f(flt), update, upsert=upsert,
                                              return_document=ret)

    def delete_one(self, flt: Mapping[str, Any]) -> DeleteResult:
        return self._writable().delete_one(self._f(flt))

    def delete_many(self, flt: Mapping[str, Any]) -> DeleteResult:
        return self._writable().delete_many(self._f(flt))


_collections: dict[tuple[int, str, str], Collection[Document]] = {}


def _collection(db: Database[Document], name: str) -> Collection[Document]:
    """`db[name]`, made once per client: pymongo builds a new Collection (codec and concern
    options) on every `db[name]`, and a run asks for its collections hundreds of times. Keyed
    by the client's identity (two clients of one server compare equal in pymongo, and a
    closed one must not answer for an open one); a cached collection keeps its client alive,
    so the identity cannot be reused while cached."""
    key = (id(db.client), db.name, name)
    coll = _collections.get(key)
    if coll is None or coll.database.client is not db.client:
        if len(_collections) >= 512:
            _collections.clear()
        coll = _collections[key] = db[name]
    return coll


class TenantScope:
    """All of one tenant's data."""

    __slots__ = ("_db", "read_only", "tenant_id")

    def __init__(self, db: Database[Document], tenant_id: str, read_only: bool = False) -> None:
        self._db = db
        self.tenant_id = tenant_id
        self.read_only = read_only

    def reader(self) -> TenantScope:
        """The same tenant, refusing every write (what read tools and previews get)."""
        return TenantScope(self._db, self.tenant_id, read_only=True)

    def bookkeeper(self) -> TenantScope:
        """The same tenant, writable, for what a read leaves behind that is no tenant data
        (the vectors a search embedded, kept so no one embeds them again)."""
        return TenantScope(self._db, self.tenant_id)

    @classmethod
    def of(cls, principal: Principal, db: Database[Document] | None = None) -> TenantScope:
        """The scope of the principal's tenant."""
        if db is None:
            db = get_db()
        return cls(db, principal.tenant_id)

    def __getitem__(self, name: str) -> ScopedCollection:
        return ScopedCollection(_collection(self._db, name), self.tenant_id, self.read_only)

    def tenant(self) -> Document | None:
        """The tenant's settings document (plan, capability mode, ...)."""
        return self._db["tenants"].find_one({"_id": self.tenant_id})

    def require_tenant(self) -> Document:
        """The tenant's settings document; NotFound when the tenant does not exist."""
        doc = self.tenant()
        if doc is None:
            raise NotFound(f"tenant {self.tenant_id!r} not found ('opsgraph seed' loads the "
                           "demo tenants)")
        return doc
