"""`Registry`: the validated agents, by name, with a content version."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

from opsgraph.errors import NotFound
from opsgraph.registry.spec import AgentSpec


class Registry:
    """Every agent of one registry folder. Iterating yields specs in name order."""

    def __init__(self, agents: dict[str, AgentSpec], root: Path | None = None) -> None:
        self.agents: dict[str, AgentSpec] = dict(sorted(agents.items()))
        self.root = root

    @cached_property
    def version(self) -> str:
        """sha256 of the canonical JSON of every spec: equal content, equal version."""
        canonical = json.dumps(
            [spec.model_dump(mode="json") for spec in self.agents.values()],
            sort_keys=True, separators=(",", ":"), ensure_ascii=False,
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def get(self, name: str) -> AgentSpec:
        """The agent called `name`; `NotFound` when there is none."""
        try:
            return self.agents[name]
        except KeyError:
            raise NotFound(f"agent: no agent named {name!r}", agent=name) from None

    def visitor_agents(self) -> list[AgentSpec]:
        """The visitor allowlist: agents anonymous callers may reach."""
        return [spec for spec in self.agents.values() if spec.visitor]

    def in_domain(self, domain: str) -> list[AgentSpec]:
        """Agents of one domain, in name order."""
        return [spec for spec in self.agents.values() if spec.domain == domain]

    def summaries(self) -> list[dict[str, Any]]:
        """`opsgraph agents list --json`: one summary per agent."""
        return [agent_summary(spec) for spec in self.agents.values()]

    def __iter__(self) -> Iterator[AgentSpec]:
        return iter(self.agents.values())

    def __len__(self) -> int:
        return len(self.agents)

    def __contains__(self, name: object) -> bool:
        return name in self.agents

    def __repr__(self) -> str:
        return f"Registry({len(self.agents)} agents, version={self.version[:12]})"


def agent_summary(spec: AgentSpec) -> dict[str, Any]:
    """`{name, domain, kind, operations, read_only, roles, entitlement, visitor, tools}`."""
    return {
        "name": spec.name,
        "domain": spec.domain,
        "kind": spec.kind,
        "operations": list(spec.operations),
        "read_only": spec.read_only,
        "roles": [role.value for role in spec.roles],
        "entitlement": spec.entitlement,
        "visitor": spec.visitor,
        "tools": list(spec.tools),
    }
