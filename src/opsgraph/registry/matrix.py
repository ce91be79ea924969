"""The capability matrix: (verb, domain) → the agents that serve it, generated from specs.

The planner names a domain and a verb per sub-task; `route` picks the agent. Adding a
capability is adding a spec: nothing here lists agents by hand.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import partial

from opsgraph.principal import DOMAINS, VERBS
from opsgraph.registry.loader import get_registry
from opsgraph.registry.registry import Registry
from opsgraph.registry.spec import AgentSpec

Cell = tuple[str, str]  # (verb, domain)


def _preference(spec: AgentSpec, domain: str, verb: str) -> tuple[int, int, int, str]:
    """Sort key of an agent for one cell: lower is better, the name breaks ties.

    An agent holding a tool that *is* this domain's operation for the verb comes first
    (bookings.create for (create, bookings)); then the agent named for the verb or that
    operation; then the agent that lists the verb earlier (its primary capability).
    """
    direct = [t for t in spec.tools
              if spec.operation(t).domain == domain and spec.operation(t).verb == verb]
    named = spec.short_name == verb or any(t.split(".", 1)[1] == spec.short_name for t in direct)
    return (0 if direct else 1, 0 if named else 1, spec.operations.index(verb), spec.name)


@dataclass(frozen=True, slots=True)
class CapabilityMatrix:
    """Which agents serve which (verb, domain), best first."""

    registry: Registry
    cells: dict[Cell, tuple[str, ...]]

    def agents_for(self, domain: str, verb: str) -> tuple[str, ...]:
        """Names of the agents serving `verb` on `domain`, best first (empty when none)."""
        return self.cells.get((verb, domain), ())

    def route(self, domain: str, verb: str) -> AgentSpec | None:
        """The agent for one sub-task, or None when no agent serves that capability."""
        names = self.agents_for(domain, verb)
        return self.registry.get(names[0]) if names else None

    def verbs(self, domain: str) -> list[str]:
        """The verbs served on `domain`, in the canonical verb order."""
        return [v for v in VERBS if (v, domain) in self.cells]

    def as_table(self) -> str:
        """A Markdown table `domain | verb | agents` for prompts and docs."""
        rows = ["| domain | verb | agents |", "|---|---|---|"]
        for domain in DOMAINS:
            for verb in self.verbs(domain):
                rows.append(f"| {domain} | {verb} | {', '.join(self.cells[(verb, domain)])} |")
        return "\n".join(rows)


def build_matrix(registry: Registry) -> CapabilityMatrix:
    """Generate the matrix from the registry's specs."""
    found: dict[Cell, list[AgentSpec]] = {}
    for spec in registry:
        for verb in spec.operations:
            found.setdefault((verb, spec.domain), []).append(spec)
    cells: dict[Cell, tuple[str, ...]] = {}
    for (verb, domain), specs in found.items():
        ranked = sorted(specs, key=partial(_preference, domain=domain, verb=verb))
        cells[(verb, domain)] = tuple(spec.name for spec in ranked)
    return CapabilityMatrix(registry, cells)


_cache: dict[str, CapabilityMatrix] = {}
_lock = threading.Lock()


def capability_matrix(registry: Registry | None = None) -> CapabilityMatrix:
    """The matrix of `registry` (default: the process registry), built once per version."""
    if registry is None:
        registry = get_registry()
    with _lock:
        matrix = _cache.get(registry.version)
        if matrix is None or matrix.registry is not registry:
            matrix = _cache[registry.version] = build_matrix(registry)
        return matrix


def route(domain: str, verb: str, registry: Registry | None = None) -> AgentSpec | None:
    """The agent for (domain, verb) in `registry` (default: the process registry)."""
    return capability_matrix(registry).route(domain, verb)
