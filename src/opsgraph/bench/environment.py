"""The bench's own world: a temp home, an in-memory embedded store, the seeded demo tenant.

Everything the process caches about the store (settings, client, compiled graph, model-call
slots) is forgotten on the way in and on the way out, and the environment is restored, so
the bench can run inside another process (the smoke test) without leaving traces.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pymongo import monitoring
from pymongo.database import Database

from opsgraph.bootstrap import prepare_store
from opsgraph.models.factory import reset_models
from opsgraph.models.limits import reset_model_call_slots
from opsgraph.principal import Channel, Principal, Role
from opsgraph.settings import environment_variable, get_settings
from opsgraph.store import embedded
from opsgraph.store.client import get_db, listened_to, reset_client
from opsgraph.store.seed import seed

_ENV_KEYS = ("MONGODB_URI", "OPSGRAPH_DB", "OPSGRAPH_HOME", "OPSGRAPH_MODEL",
             "OPSGRAPH_LIGHT_MODEL", "OPSGRAPH_MODEL_CONCURRENCY", "OPSGRAPH_RUN_MODEL_CALLS")
CONCURRENCY_ENV = "OPSGRAPH_MODEL_CONCURRENCY"


class CommandCounter(monitoring.CommandListener):
    """Counts MongoDB commands (`find members`, ...) sent inside `counting()`.

    It listens only there, on a client made for the block: a client with any listener makes
    pymongo publish an event for every command (measured: ~10 % of an 8-task request's
    CPU at 0 ms), a cost no timed case should pay when the product, with traces off, has no
    listener."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.timeline: list[tuple[float, float, str]] = []
        """Each command of the block that has ended: `time.perf_counter()` when it was sent
        and when its answer came (or its failure), and its key."""
        self.active = False
        self._lock = threading.Lock()
        self._sent: dict[int, tuple[float, str]] = {}

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        """Count the command (inside the block only: not the client's closing)."""
        if not self.active:
            return
        sent = time.perf_counter()
        target = event.command.get(event.command_name)
        key = f"{event.command_name} {target}" if isinstance(target, str) else \
            event.command_name
        with self._lock:
            self.counts[key] += 1
            self._sent[event.request_id] = (sent, key)

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        """The command's round trip joins the timeline."""
        self._ended(event.request_id)

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        """The command's round trip joins the timeline."""
        self._ended(event.request_id)

    def _ended(self, request_id: int) -> None:
        ended = time.perf_counter()
        with self._lock:
            sent = self._sent.pop(request_id, None)
            if sent is not None:
                self.timeline.append((sent[0], ended, sent[1]))

    @contextmanager
    def counting(self) -> Iterator[Counter[str]]:
        """Count the commands the process sends inside the block; yields the live counter.
        The graph is compiled again inside (its checkpointer's commands are counted too,
        not those that make its indexes) and after."""
        # heavy: langgraph (cold start)
        from opsgraph.engine.graph import get_graph, reset_graph

        with listened_to(self):
            reset_graph()
            get_graph()
            with self._lock:
                self.counts, self.timeline, self._sent = Counter(), [], {}
            self.active = True
            try:
                yield self.counts
            finally:
                self.active = False
                reset_graph()


@dataclass
class BenchEnv:
    """What every case needs: a principal on the seeded tenant, the db, script files."""

    root: Path
    principal: Principal
    commands: CommandCounter

    @property
    def db(self) -> Database[dict[str, Any]]:
        """The opsgraph database, on the process's client (the counting one in `counting`)."""
        return get_db()

    def write_script(self, name: str, content: dict[str, Any]) -> str:
        """Write a scripted-model file; returns its `scripted:` model spec."""
        path = self.root / "scripts" / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content), encoding="utf-8")
        return f"scripted:{path}"


def reset_process_state() -> None:
    """Forget settings, client, graph, models and model-call slots (read the env again)."""
    from opsgraph.engine.graph import reset_graph  # heavy: langgraph (cold start)

    get_settings.cache_clear()
    reset_client()
    reset_graph()
    reset_models()
    reset_model_call_slots()


@contextmanager
def model_concurrency(slots: int) -> Iterator[None]:
    """Run the block with `OPSGRAPH_MODEL_CONCURRENCY=slots` (no call may be in flight)."""
    try:
        with environment_variable(CONCURRENCY_ENV, str(slots)):
            reset_model_call_slots()
            yield
    finally:
        reset_model_call_slots()


@contextmanager
def bench_environment() -> Iterator[BenchEnv]:
    """Start the store, point opsgraph at it, seed the demo tenant; undo it all after."""
    saved = {key: os.environ.get(key) for key in _ENV_KEYS}
    root = Path(tempfile.mkdtemp(prefix="opsgraph-bench-"))
    server = embedded.start(":memory:", log_path=root / "store.log")
    try:
        unset = f"scripted:{root / 'no-model-chosen.yaml'}"
        os.environ.update({"MONGODB_URI": server.uri, "OPSGRAPH_HOME": str(root / "home"),
                           "OPSGRAPH_DB": f"bench_{uuid.uuid4().hex[:8]}",
                           "OPSGRAPH_MODEL": unset, "OPSGRAPH_LIGHT_MODEL": unset})
        for key in (CONCURRENCY_ENV, "OPSGRAPH_RUN_MODEL_CALLS"):
            os.environ.pop(key, None)
        reset_process_state()
        seed(prepare_store(get_db()))
        principal = Principal("demo", "bench", frozenset({Role.STAFF}), Channel.DASHBOARD)
        yield BenchEnv(root, principal, CommandCounter())
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        reset_process_state()
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
