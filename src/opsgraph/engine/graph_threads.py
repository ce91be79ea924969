"""The threads a run's graph runs on: one pool per process, not new threads per run.

LangGraph gives every run a thread pool of its own (`BackgroundExecutor`), so a run starts
a thread for each node and sub-task it runs at once, and the runner started one more to
pump the graph's stream. Measured on the bench's 8-task request: each start took 0.7-3.4 ms
(a new thread waits to be scheduled behind the busy ones), the plan's 8 sub-tasks took
2.9 ms each to launch (0.4 ms on this pool) and the pump's start was on the plan event's
path. Here the pump runs on the process's pool, and LangGraph's runner is handed a
`RunTasks`: LangGraph's own executor for one run (it waits for the run's tasks when the
run ends, and re-raises the first error of one) on that pool, whose idle threads the next
run takes.

The runner takes it through the config key LangGraph itself uses to hand a parent's
executor to a subgraph (`CONFIG_KEY_RUNNER_SUBMIT`: no public setting does this, see
langchain-ai/langgraph#8820); `tests/engine/test_graph_threads.py` fails if a LangGraph
upgrade stops honouring it.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

from langgraph._internal._constants import CONFIG_KEY_RUNNER_SUBMIT
from langgraph.pregel._executor import BackgroundExecutor, Submit

THREAD_PREFIX = "graph"
MAX_THREADS = 4096
"""A bound no process reaches (a run holds at most ~12 threads at once): were it reached, a
run's node could wait for sub-tasks queued behind it."""


@functools.cache
def pool() -> ThreadPoolExecutor:
    """The process's pool (threads start as runs need them and stay for the next runs)."""
    return ThreadPoolExecutor(max_workers=MAX_THREADS, thread_name_prefix=THREAD_PREFIX)


class RunTasks(BackgroundExecutor):
    """One run's graph tasks on the process's pool: enter it around the run's stream."""

    def __init__(self) -> None:  # BackgroundExecutor's own, with the shared pool
        self.stack = ExitStack()
        self.executor = pool()
        self.tasks = {}

    def configurable(self) -> dict[str, Any]:
        """The config entry that makes the graph's runner submit its tasks here."""
        submit: Submit[Any, Any] = self.submit
        return {CONFIG_KEY_RUNNER_SUBMIT: lambda: submit}
