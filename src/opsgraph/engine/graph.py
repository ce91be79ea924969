"""The graph: the harness around the supervisor (decompose → execute → synthesise),
checkpointed in MongoDB.

START → harness → ((decompose → execute | agent) → synthesise → harness)* → END:
the harness node (`engine.harness_node`) runs the tenant's version and hands over to the
supervisor, or to one agent, when a step asks for it."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from opsgraph.engine.context import RunContext
from opsgraph.engine.decompose import decompose
from opsgraph.engine.execute import execute
from opsgraph.engine.harness_node import agent_step, harness, route
from opsgraph.engine.state import RunState
from opsgraph.engine.synthesise import synthesise
from opsgraph.settings import get_settings
from opsgraph.store.client import get_client
from opsgraph.telemetry.traces import span

CHECKPOINT_TTL_S = 30 * 24 * 3600

_lock = threading.Lock()
_compiled: CompiledStateGraph[Any, Any, Any, Any] | None = None


Node = TypeVar("Node", bound=Callable[..., dict[str, Any]])


def _traced(name: str, node: Node) -> Node:
    """`node` inside a span of its own (`telemetry.traces`), child of the run's."""
    @functools.wraps(node)
    def run(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        with span(f"node {name}"):
            return node(state, runtime)

    return cast(Node, run)


def build_graph() -> StateGraph[RunState, RunContext, RunState, RunState]:
    """The graph, uncompiled."""
    graph = StateGraph(RunState, context_schema=RunContext)
    graph.add_node("harness", _traced("harness", harness))
    graph.add_node("decompose", _traced("decompose", decompose))
    graph.add_node("execute", _traced("execute", execute))
    graph.add_node("synthesise", _traced("synthesise", synthesise))
    graph.add_node("agent", _traced("agent", agent_step))
    graph.add_edge(START, "harness")
    graph.add_conditional_edges("harness", route, ["decompose", "agent", END])
    graph.add_edge("decompose", "execute")
    graph.add_edge("execute", "synthesise")
    graph.add_edge("synthesise", "harness")
    graph.add_edge("agent", "synthesise")
    return graph


def get_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    """The compiled graph with the MongoDB checkpointer, once per process."""
    global _compiled
    with _lock:
        if _compiled is None:
            from langgraph.checkpoint.mongodb import MongoDBSaver  # heavy: langgraph (cold start)

            saver = MongoDBSaver(get_client(), db_name=get_settings().database,
                                 ttl=CHECKPOINT_TTL_S)
            _compiled = build_graph().compile(checkpointer=saver)
        return _compiled


def reset_graph() -> None:
    """Forget the compiled graph (tests that switch stores)."""
    global _compiled
    with _lock:
        _compiled = None
