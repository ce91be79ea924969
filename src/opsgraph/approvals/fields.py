"""A change's fields as a manager reads them: one row per field, old → new, in words.

A card's `old` and `new` are what the operation's preview made (amounts as JSON numbers,
statuses as stored); `change_fields` writes them the way people read them — amounts with
the tenant's currency (`£30.00`), statuses in words (`Partly refunded`) — so the API, the
CLI and the page show the same text. Ids are left out: the names beside them are what a
manager reads. Nested objects become dotted fields (`changes.phone`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from opsgraph.operations.currency import money_text
from opsgraph.status_words import record_label

MONEY_FIELDS: Final = frozenset({"amount", "total", "paid", "refunded", "outstanding",
                                 "price", "balance", "net"})
"""Field names (the last part of a dotted one) whose values are amounts of money."""


def _flatten(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(item, Mapping):
            out.update(_flatten(item, path))
        else:
            out[path] = item
    return out


def _is_id(path: str) -> bool:
    last = path.rsplit(".", 1)[-1]
    return last == "id" or last.endswith("_id")


def value_text(path: str, value: Any, currency: str) -> str:
    """One value in words: money with its currency, a status in words, a list of lines as
    `description amount; ...`, empty as an em dash."""
    last = path.rsplit(".", 1)[-1]
    if value is None or value == "" or value == []:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if last in MONEY_FIELDS and isinstance(value, int | float | str):
        try:
            return money_text(currency, value)
        except ArithmeticError:
            return str(value)
    if last == "status" and isinstance(value, str):
        return record_label(value)
    if isinstance(value, list):
        return "; ".join(_item_text(item, currency) for item in value)
    return str(value)


def _item_text(item: Any, currency: str) -> str:
    if not isinstance(item, Mapping):
        return str(item)
    return " ".join(value_text(str(k), v, currency) for k, v in item.items()
                    if not _is_id(str(k)))


def change_fields(old: Mapping[str, Any], new: Mapping[str, Any],
                  currency: str) -> list[dict[str, Any]]:
    """`[{field, label, old, new, changed}]`, `old`/`new` in words (`—` for none)."""
    before, after = _flatten(old), _flatten(new)
    rows = []
    for path in dict.fromkeys([*after, *before]):
        if _is_id(path):
            continue
        rows.append({"field": path, "label": path.replace("_", " ").replace(".", " · "),
                     "old": value_text(path, before.get(path), currency),
                     "new": value_text(path, after.get(path), currency),
                     "changed": path not in before or before.get(path) != after.get(path)})
    return rows
