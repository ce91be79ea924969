"""Reads shaped for the store's indexes (store.indexes says which shapes it serves).

- `where_in`, `by_ids`: records by id (or another field), in short `$in` lists: the
  embedded store compares every record it fetches with the whole list, so one long list
  costs its square.
- `first_in_windows`: the first `limit` records of a range, read window by window, each
  window twice as wide as the one before. The store fetches every record a filter matches
  whatever the sort and limit, so one query over the whole range costs what the range
  holds; windows cost about what the page holds, whether the tenant is small or large.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any

from opsgraph.store.scope import ScopedCollection

Document = dict[str, Any]
ID_BATCH = 25


def where_in(coll: ScopedCollection, field: str, values: Iterable[str],
             projection: Mapping[str, Any] | None = None) -> Iterator[Document]:
    """The records whose `field` is one of `values`, asked `ID_BATCH` values at a time."""
    wanted = sorted(set(values))
    for first in range(0, len(wanted), ID_BATCH):
        yield from coll.find({field: {"$in": wanted[first:first + ID_BATCH]}},
                             projection=projection)


def by_ids(coll: ScopedCollection, ids: Iterable[str],
           projection: Mapping[str, Any] | None = None) -> dict[str, Document]:
    """The records with these ids (id → record); ids with no record are left out."""
    return {str(doc["_id"]): doc for doc in where_in(coll, "_id", ids, projection)}


def time_windows(start: datetime, end: datetime, first: timedelta,
                 ) -> Iterator[tuple[datetime, datetime]]:
    """[start, end) cut into windows of `first`, then twice, four times ... as wide."""
    width, low = first, start
    while low < end:
        high = min(end, low + width)
        yield low, high
        low, width = high, width * 2


def numbers_down(top: int, first: int) -> Iterator[tuple[int, int]]:
    """Numbers from the highest down: first every number above `top`, then windows below
    it, each twice as wide as the one before, down to 0."""
    yield top + 1, 2**62
    width, high = first, top + 1
    while high > 0:
        low = max(0, high - width)
        yield low, high
        high, width = low, width * 2


def first_in_windows(coll: ScopedCollection, flt: Mapping[str, Any], field: str,
                     windows: Iterable[tuple[Any, Any]], limit: int,
                     order: Callable[[Document], Any], *, newest_first: bool = False,
                     keep: Callable[[Document], bool] | None = None) -> list[Document]:
    """The first `limit` records in `order` among those matching `flt` with `field` in one
    of the `windows` ([low, high) each, in the order `order` reads them) and `keep`.

    `flt` holds equalities only, on the fields of an index that continues with `field`.
    """
    found: list[Document] = []
    for low, high in windows:
        docs = [d for d in coll.find({**flt, field: {"$gte": low, "$lt": high}})
                if keep is None or keep(d)]
        found += sorted(docs, key=order, reverse=newest_first)
        if len(found) >= limit:
            break
    return found[:limit]
