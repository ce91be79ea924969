"""Tool prerequisites as a DAG: a tool is offered once all it requires has succeeded.

Indegree counting as in Kahn's algorithm: each tool starts with one count per
prerequisite; each prerequisite that completed successfully removes one. The offered set
is the current frontier (count zero). A failed prerequisite never counts, so it keeps its
dependents closed. When a model calls a tool before its prerequisites, `prerequisite_args`
says whether the reads it skipped are fully determined by that call's own arguments (a
`members_get` by the `member` of a `members_update`; a `bookings_availability` by the
resource and the day of a `bookings_create`), so the loop can make them first.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any


def frontier(tools: Sequence[str], requires: Mapping[str, Sequence[str]],
             succeeded: Collection[str]) -> list[str]:
    """The tools that may be offered now, in declaration order."""
    indegree = {tool: len(set(requires.get(tool, ()))) for tool in tools}
    for tool in tools:
        for needed in set(requires.get(tool, ())):
            if needed in succeeded:
                indegree[tool] -= 1
    return [tool for tool in tools if indegree[tool] == 0]


# Where a prerequisite's field may come from in the call it guards, besides its own name.
_SOURCES: dict[str, tuple[str, ...]] = {
    "date": ("start", "date", "from"),
    "query": ("member", "to", "name", "staff"),
    "from": ("start", "date"),
}


def prerequisite_args(fields: Mapping[str, bool], args: Mapping[str, Any]) -> dict[str, Any] | None:
    """Arguments for a prerequisite read taken from the call it guards: each of its fields
    (name → required) from the same-named argument or a known source (`date` from `start`);
    None when a required field has no value there."""
    filled: dict[str, Any] = {}
    for name, required in fields.items():
        for source in (name, *_SOURCES.get(name, ())):
            value = args.get(source)
            if isinstance(value, str) and value.strip():
                filled[name] = value.strip()[:10] if name in ("date", "from") else value
                break
        else:
            if required:
                return None
    return filled
