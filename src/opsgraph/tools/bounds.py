"""Tool results as a model sees them: bounded in size, a cut list saying what it left out.

A list longer than the bound keeps its first rows and gains an `omitted` note — how many
rows it left out and which of the tool's optional arguments narrow the call ("… 88 more
bookings; narrow with member/date") — so a model asks again more precisely rather than
reading a truncated half-row. Anything else over the bound is cut as text with a note.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from opsgraph.operations.base import Operation


def _size(value: Any) -> int:
    return len(json.dumps(value, default=str, ensure_ascii=False))


def narrowing_fields(op: Operation) -> list[str]:
    """The optional arguments of `op`: the ones a caller narrows a list with."""
    return [info.alias or name for name, info in op.input.model_fields.items()
            if not info.is_required()]


def _omitted(left_out: int, what: str, narrow: Sequence[str]) -> str:
    how = f"narrow with {'/'.join(narrow)}" if narrow else "ask for fewer"
    return f"… {left_out} more {what}; {how}"


def _fit_rows(rows: list[Any], room: int) -> int:
    """How many of the first `rows` fit in `room` characters."""
    used, kept = 2, 0
    for row in rows:
        used += _size(row) + 1
        if used > room:
            break
        kept += 1
    return kept


def bound_data(data: Any, limit: int, narrow: Sequence[str] = ()) -> Any:
    """`data` within `limit` characters of JSON: its longest list cut to the rows that fit
    (with an `omitted` note), else the text cut."""
    if _size(data) <= limit:
        return data
    if isinstance(data, list):
        kept = _fit_rows(data, limit - 80)
        return [*data[:kept], _omitted(len(data) - kept, "rows", narrow)]
    if isinstance(data, dict):
        lists = [(k, v) for k, v in data.items() if isinstance(v, list) and v]
        if lists:
            key, rows = max(lists, key=lambda kv: _size(kv[1]))
            rest = {k: v for k, v in data.items() if k != key}
            kept = _fit_rows(rows, limit - _size(rest) - 80 - len(key))
            bounded = {**rest, key: rows[:kept],
                       "omitted": _omitted(len(rows) - kept, key, narrow)}
            if _size(bounded) <= limit:
                return bounded
    text = data if isinstance(data, str) else json.dumps(data, default=str,
                                                          ensure_ascii=False)
    return text[:limit] + f"… ({len(text) - limit} more characters left out)"
