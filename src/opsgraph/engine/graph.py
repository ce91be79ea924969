"""The supervisor graph: decompose → execute → synthesise, checkpointed in MongoDB."""

from __future__ import annotations

import threading
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from opsgraph.engine.context import RunContext
from opsgraph.engine.decompose import decompose
from opsgraph.engine.execute import execute
from opsgraph.engine.state import RunState
from opsgraph.engine.synthesise import synthesise

CHECKPOINT_TTL_S = 30 * 24 * 3600

_lock = threading.Lock()
_compiled: CompiledStateGraph[Any, Any, Any, Any] | None = None


def build_graph() -> StateGraph[RunState, RunContext, RunState, RunState]:
    """The graph, uncompiled."""
    graph = StateGraph(RunState, context_schema=RunContext)
    graph.add_node("decompose", decompose)
    graph.add_node("execute", execute)
    graph.add_node("synthesise", synthesise)
    graph.add_edge(START, "decompose")
    graph.add_edge("decompose", "execute")
    graph.add_edge("execute", "synthesise")
    graph.add_edge("synthesise", END)
    return graph


def get_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    """The compiled graph with the MongoDB checkpointer, once per process."""
    global _compiled
    with _lock:
        if _compiled is None:
            from langgraph.checkpoint.mongodb import MongoDBSaver

            from opsgraph.settings import get_settings
            from opsgraph.store.client import get_client

            saver = MongoDBSaver(get_client(), db_name=get_settings().database,
                                 ttl=CHECKPOINT_TTL_S)
            _compiled = build_graph().compile(checkpointer=saver)
        return _compiled


def reset_graph() -> None:
    """Forget the compiled graph (tests that switch stores)."""
    global _compiled
    with _lock:
        _compiled = None
