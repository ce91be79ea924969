"""The process-wide MongoDB client: `MONGODB_URI` if set, else the embedded server."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from bson.codec_options import TypeCodec, TypeRegistry
from bson.decimal128 import Decimal128
from pymongo import MongoClient, monitoring
from pymongo.database import Database

from opsgraph.settings import get_settings
from opsgraph.store.embedded import start_for_home
from opsgraph.telemetry.traces import store_listeners

Document = dict[str, Any]



class _DecimalCodec(TypeCodec):
    """Amounts of money are Decimals in code and Decimal128 in the store, both ways."""

    python_type = Decimal
    bson_type = Decimal128

    def transform_python(self, value: Decimal) -> Decimal128:
        return Decimal128(value)

    def transform_bson(self, value: Decimal128) -> Decimal:
        return value.to_decimal()


def new_client(uri: str, **options: Any) -> MongoClient[Document]:
    """A client with opsgraph's codec options (timezone-aware datetimes, Decimal money)."""
    options.setdefault("serverSelectionTimeoutMS", 5000)
    options.setdefault("event_listeners", store_listeners())
    return MongoClient(uri, tz_aware=True, type_registry=TypeRegistry([_DecimalCodec()]),
                       **options)


_lock = threading.Lock()
_client: MongoClient[Document] | None = None


def _uri() -> str:
    settings = get_settings()
    return settings.mongodb_uri or start_for_home(settings.home).uri


def get_client() -> MongoClient[Document]:
    """One client per process (pymongo pools connections; clients are thread-safe)."""
    global _client
    with _lock:
        if _client is None:
            _client = new_client(_uri())
        return _client


@contextmanager
def listened_to(listener: monitoring.CommandListener) -> Iterator[None]:
    """Inside the block the process's client is a new one that also tells `listener` of
    every command (the bench counts commands so); the client from before comes back after.
    What holds a client of its own (a compiled graph's checkpointer) keeps it."""
    global _client
    before = get_client()
    listening = new_client(_uri(), event_listeners=[*store_listeners(), listener])
    with _lock:
        _client = listening
    try:
        yield
    finally:
        with _lock:
            _client = before
        listening.close()


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
