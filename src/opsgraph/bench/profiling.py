"""What dominates harness CPU: exact per-thread CPU of named cost centres.

Two samplers were tried first and mislead here. cProfile's per-call cost inflates code made
of many tiny Python calls (difflib's name matching came out at 44 % of a request whose
tools take 17 % unprofiled); a stack sampler charges CPU to wherever a thread sits when
looked at, which after a burst of work is usually a blocking socket read. So the bench
times the centres themselves: for the profiled requests only, a few functions of the
runtime are wrapped (in this process, restored afterwards; no file changes) to add the
calling thread's CPU time (`time.thread_time`) spent inside them. A function is wrapped
where its callers look it up: in each module that imports it by name (a wrapper on the
defining module alone is never called by those, and its CPU fell to "the rest": the ranker,
the per-task model resolution and system prompt were missing from the list so). A centre
entered inside another counts to the outer one, so the shares add up; "the rest" is the
process's CPU outside them.
"""

from __future__ import annotations

import functools
import gc
import importlib
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, Literal

from opsgraph.knowledge.embeddings import Embedder
from opsgraph.tools.contract import BoundTool

Wrap = Literal["call", "generator", "factory"]
# (label, the modules its callers look it up in, attribute, how): "factory" wraps what the
# function returns (a closure).
CENTRES: tuple[tuple[str, tuple[str, ...], str, Wrap], ...] = (
    ("tool calls: guard + operation (also in the floor)",
     ("opsgraph.tools.binding",), "guard", "factory"),
    ("model calls: langchain invoke + scripted model (also in the floor)",
     ("opsgraph.engine.model_calls",), "invoke", "call"),
    ("plan call: structured output (also in the floor)",
     ("opsgraph.engine.model_calls",), "structured", "call"),
    ("synthesis: streamed answer (also in the floor)",
     ("opsgraph.engine.model_calls",), "stream_text", "generator"),
    ("ranking the request: rank_agents",
     ("opsgraph.engine.decompose", "opsgraph.engine.code_plans"), "rank_agents", "call"),
    ("routing plan tasks: choose_agent", ("opsgraph.engine.decompose",), "choose_agent",
     "call"),
    ("per-task model resolution: resolve_model_spec", ("opsgraph.engine.agent_run",),
     "resolve_model_spec", "call"),
    ("per-task tool binding: bind_agent_tools", ("opsgraph.engine.agent_run",),
     "bind_agent_tools", "call"),
    ("per-task system prompt: system_prompt", ("opsgraph.engine.agent_run",), "system_prompt",
     "call"),
    ("run set-up: make_context (tenant read)", ("opsgraph.engine.runner",), "make_context",
     "call"),
    ("thread lease: acquire", ("opsgraph.engine.threads",), "_try_acquire", "call"),
)
SCHEMA = "tool schemas: BoundTool.schema() per offered tool per turn"
EMBEDDING = ("embeddings: Embedder._run (ONNX; the request's is made ahead, in the "
             "background, so outside rank_agents)")
SAVER = (("checkpoint writes: MongoDBSaver.put / put_writes", ("put", "put_writes")),
         ("checkpoint reads: MongoDBSaver.get_tuple", ("get_tuple",)))
_DONE = object()
REST = "the rest: LangGraph's loop and executor, events, threads, message objects"
GC = "garbage collection"


class CentreClock:
    """CPU seconds per centre, added from any thread."""

    def __init__(self) -> None:
        self.cpu: defaultdict[str, float] = defaultdict(float)
        self.collections: defaultdict[int, int] = defaultdict(int)
        self._lock = threading.Lock()
        self._local = threading.local()

    def add(self, label: str, seconds: float) -> None:
        """Add CPU seconds to a centre."""
        with self._lock:
            self.cpu[label] += seconds

    def _gc_spent(self) -> float:
        """CPU seconds this thread has spent collecting garbage so far."""
        return float(getattr(self._local, "gc", 0.0))

    def on_gc(self, phase: str, info: dict[str, Any]) -> None:
        """A `gc.callbacks` hook: time each collection in the thread that triggered it."""
        if phase == "start":
            self._local.gc_start = time.thread_time()
            return
        spent = time.thread_time() - getattr(self._local, "gc_start", time.thread_time())
        self._local.gc = self._gc_spent() + spent
        self.add(GC, spent)
        with self._lock:
            self.collections[int(info.get("generation", -1))] += 1

    def _since(self, start: tuple[float, float]) -> float:
        return time.thread_time() - start[0] - (self._gc_spent() - start[1])

    @contextmanager
    def _inside(self, label: str) -> Iterator[None]:
        """The calling thread's CPU in the block (less collections) added to `label`, unless
        the thread is inside a centre already (which counts it)."""
        if getattr(self._local, "inside", False):
            yield
            return
        self._local.inside = True
        start = (time.thread_time(), self._gc_spent())
        try:
            yield
        finally:
            self._local.inside = False
            self.add(label, self._since(start))

    def timed(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn`, adding the calling thread's CPU inside it to `label`."""
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            with self._inside(label):
                return fn(*args, **kwargs)
        return call

    def timed_generator(self, label: str, fn: Callable[..., Iterator[Any]]
                        ) -> Callable[..., Iterator[Any]]:
        """A generator function, timing each step (not the consumer between steps)."""
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Iterator[Any]:
            steps = fn(*args, **kwargs)
            while True:
                with self._inside(label):
                    item = next(steps, _DONE)
                if item is _DONE:
                    return
                yield item
        return call

    def wrapped(self, label: str, fn: Callable[..., Any], how: Wrap) -> Callable[..., Any]:
        """`fn` wrapped the way `how` says."""
        if how == "generator":
            return self.timed_generator(label, fn)
        if how == "factory":
            return lambda *args, **kwargs: self.timed(label, fn(*args, **kwargs))
        return self.timed(label, fn)


@contextmanager
def patched(target: Any, name: str, value: Any) -> Iterator[None]:
    """`target.name` is `value` for the block (and as it was after)."""
    original = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, original)


@contextmanager
def timing_centres(clock: CentreClock, saver: Any) -> Iterator[list[str]]:
    """Wrap every centre for the block; yields the centres that could not be found."""
    missing: list[str] = []
    with ExitStack() as stack:
        for label, module_names, attribute, how in CENTRES:
            for module_name in module_names:
                module = importlib.import_module(module_name)
                if not hasattr(module, attribute):
                    missing.append(f"{module_name}.{attribute}")
                    continue
                fn = getattr(module, attribute)
                stack.enter_context(patched(module, attribute, clock.wrapped(label, fn, how)))
        stack.enter_context(patched(BoundTool, "schema",
                                    clock.timed(SCHEMA, BoundTool.schema)))
        stack.enter_context(patched(Embedder, "_run", clock.timed(EMBEDDING, Embedder._run)))
        for label, methods in SAVER:
            for method in methods:  # on the instance: its class stays untouched
                setattr(saver, method, clock.timed(label, getattr(saver, method)))
                stack.callback(vars(saver).pop, method, None)
        gc.callbacks.append(clock.on_gc)
        stack.callback(gc.callbacks.remove, clock.on_gc)
        yield missing


def dominant_costs(run: Callable[[], None], requests: int) -> list[str]:
    """Run `run` (`requests` requests) with the centres timed; the report lines."""
    from opsgraph.engine.graph import get_graph  # heavy: langgraph (cold start)

    clock = CentreClock()
    gc.collect()  # a full collection owed to earlier work is not this request's cost
    with timing_centres(clock, get_graph().checkpointer) as missing:
        start = time.process_time()
        run()
        total = time.process_time() - start
    clock.cpu[REST] = max(0.0, total - sum(clock.cpu.values()))
    total = total or 1e-9
    lines = [f"{total * 1000 / requests:.1f} ms CPU per request ({requests} requests of 8 "
             "tasks at 0 ms), by cost centre:"]
    lines += [f"{100 * secs / total:5.1f} %  {secs * 1000 / requests:5.1f} ms  {label}"
              for label, secs in sorted(clock.cpu.items(), key=lambda kv: -kv[1]) if secs > 0]
    counts = ", ".join(f"gen {gen}: {n / requests:.1f}" for gen, n in
                       sorted(clock.collections.items()))
    lines.append(f"garbage collections per request: {counts or 'none'}")
    if missing:
        lines.append("not found (the runtime changed): " + ", ".join(missing))
    return lines
