"""The process-wide MongoDB client: `MONGODB_URI` if set, else the embedded server."""

from __future__ import annotations

import threading
from typing import Any

from pymongo import MongoClient
from pymongo.database import Database

from opsgraph.settings import get_settings
from opsgraph.store.embedded import start_for_home

Document = dict[str, Any]

_lock = threading.Lock()
_client: MongoClient[Document] | None = None


def get_client() -> MongoClient[Document]:
    """One client per process (pymongo pools connections; clients are thread-safe)."""
    global _client
    with _lock:
        if _client is None:
            settings = get_settings()
            uri = settings.mongodb_uri or start_for_home(settings.home).uri
            _client = MongoClient(uri, tz_aware=True, serverSelectionTimeoutMS=5000)
        return _client


def get_db() -> Database[Document]:
    """The opsgraph database."""
    return get_client()[get_settings().database]


def reset_client() -> None:
    """Forget the client (tests that switch stores; a forked process)."""
    global _client
    with _lock:
        if _client is not None:
            _client.close()
        _client = None
