"""Tool prerequisites as a DAG: a tool is offered once all it requires has succeeded.

Indegree counting as in Kahn's algorithm: each tool starts with one count per
prerequisite; each prerequisite that completed successfully removes one. The offered set
is the current frontier (count zero). A failed prerequisite never counts, so it keeps its
dependents closed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence


def frontier(tools: Sequence[str], requires: Mapping[str, Sequence[str]],
             succeeded: Collection[str]) -> list[str]:
    """The tools that may be offered now, in declaration order."""
    indegree = {tool: len(set(requires.get(tool, ()))) for tool in tools}
    for tool in tools:
        for needed in set(requires.get(tool, ())):
            if needed in succeeded:
                indegree[tool] -= 1
    return [tool for tool in tools if indegree[tool] == 0]
