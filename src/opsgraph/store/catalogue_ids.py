"""The stored id of a tenant's catalogue object (collection `catalogue`): the seed writes
it (`store.seed`), the catalogue's admin operations find and replace objects by it."""

from __future__ import annotations


def object_id(tenant: str, key: str) -> str:
    """`cat_<tenant>_<key>`: the stored id of the tenant's catalogue object `key`."""
    return f"cat_{tenant}_{key}"
