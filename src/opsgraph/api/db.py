"""The store as the API's handlers reach it, opened on first use: a route that never
touches the store (`/v1/info`, a refused request) never opens the client."""

from __future__ import annotations

from typing import TYPE_CHECKING

from opsgraph.store.client import get_db

if TYPE_CHECKING:
    from pymongo.database import Database

    from opsgraph.store.scope import Document


def db() -> Database[Document]:
    """The process's database (`store.client.get_db`)."""
    return get_db()
