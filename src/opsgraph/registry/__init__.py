"""The agent registry: specs in `agents/**/*.yaml`, validated, versioned and ranked.

    spec.py           AgentSpec (pydantic, extra="forbid"), the rules within one spec
    loader.py         load_registry / validate_paths / get_registry, Problem
    registry.py       Registry: agents by name, content version, visitor allowlist
    matrix.py         capability matrix (verb, domain) → agents; route()
    prompt.py         system prompts and the planner's capability summary
    schema.py         agents/schema.json (`python -m opsgraph.registry.schema`)
    ranker.py         rank_agents: request → best agents, agent vectors cached per version
    routing_eval.py   top-1 / top-3 routing quality on evals/datasets/routing.yaml

Importing this package does not import numpy or onnxruntime: the ranker and the routing
eval load lazily on first attribute access.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from opsgraph.registry.loader import (
    Problem,
    clear_registry_cache,
    get_registry,
    load_registry,
    validate_paths,
)
from opsgraph.registry.matrix import CapabilityMatrix, capability_matrix, route
from opsgraph.registry.operation_index import OperationInfo
from opsgraph.registry.prompt import capability_summary, system_prompt
from opsgraph.registry.registry import Registry, agent_summary
from opsgraph.registry.spec import AgentSpec, Slot

if TYPE_CHECKING:
    from opsgraph.registry.ranker import Ranked, rank_agents, warm
    from opsgraph.registry.routing_eval import RoutingReport, evaluate_routing

__all__ = [
    "AgentSpec",
    "CapabilityMatrix",
    "OperationInfo",
    "Problem",
    "Ranked",
    "Registry",
    "RoutingReport",
    "Slot",
    "agent_summary",
    "capability_matrix",
    "capability_summary",
    "clear_registry_cache",
    "evaluate_routing",
    "get_registry",
    "load_registry",
    "rank_agents",
    "route",
    "system_prompt",
    "validate_paths",
    "warm",
]

_LAZY = {
    "Ranked": "opsgraph.registry.ranker",
    "rank_agents": "opsgraph.registry.ranker",
    "warm": "opsgraph.registry.ranker",
    "RoutingReport": "opsgraph.registry.routing_eval",
    "evaluate_routing": "opsgraph.registry.routing_eval",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'opsgraph.registry' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
