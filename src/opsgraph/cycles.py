"""The one cycle finder (`graphlib` of the standard library), for every graph opsgraph
checks: a plan's task dependencies, an agent's tool prerequisites, a harness's steps."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from graphlib import CycleError, TopologicalSorter


def find_cycle(edges: Mapping[str, Iterable[str]], order: Sequence[str] = ()) -> list[str]:
    """One cycle of the graph (`edges`: node → the nodes it points to) as `[a, b, ..., a]`,
    or `[]` when there is none. It starts at its node that comes first in `order` (then
    by name), so the same graph always reports the same cycle."""
    try:
        # graphlib reads node → its predecessors: a cycle is the same either way round
        TopologicalSorter({node: list(to) for node, to in edges.items()}).prepare()
    except CycleError as exc:
        ring = list(reversed(exc.args[1][1:]))  # [b, a, ..., b] → along the edges
        rank = {node: n for n, node in enumerate(order)}
        start = min(range(len(ring)), key=lambda i: (rank.get(ring[i], len(rank)), ring[i]))
        ring = ring[start:] + ring[:start]
        return [*ring, ring[0]]
    return []
