"""The process-wide MongoDB client: `MONGODB_URI` if set, else the embedded server."""

from __future__ import annotations

import threading
from decimal import Decimal
from typing import Any

from bson.codec_options import TypeCodec, TypeRegistry
from bson.decimal128 import Decimal128
from pymongo import MongoClient
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


def get_client() -> MongoClient[Document]:
    """One client per process (pymongo pools connections; clients are thread-safe)."""
    global _client
    with _lock:
        if _client is None:
            settings = get_settings()
            uri = settings.mongodb_uri or start_for_home(settings.home).uri
            _client = new_client(uri)
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
