"""What one run carries besides its checkpointed state: who, where, limits, usage."""

from __future__ import annotations

import functools
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from opsgraph.engine.budget import SecondsBudget
from opsgraph.engine.cancel import RunCancelled
from opsgraph.engine.few_shot import agents_with_examples
from opsgraph.engine.memory import Turn
from opsgraph.engine.threads import ThreadLease
from opsgraph.errors import RunAborted
from opsgraph.harness.spec import HarnessDoc
from opsgraph.models.limits import run_ticket
from opsgraph.principal import Plan, Principal
from opsgraph.settings import get_settings
from opsgraph.store.people import record_name
from opsgraph.store.scope import TenantScope


@functools.cache
def _read_ahead_executor() -> ThreadPoolExecutor:
    """The threads of the runs' read-ahead lookups, one pool per process (no thread starts
    before the first lookup, so a pool made twice by a race costs nothing)."""
    return ThreadPoolExecutor(4, thread_name_prefix="run-read-ahead")


class CapReached(RunAborted):
    """A run limit stopped a runaway: `cap` names which one."""

    code = "cap_reached"

    def __init__(self, cap: str, message: str) -> None:
        super().__init__(message, cap=cap)
        self.cap = cap


@dataclass
class Usage:
    """Model calls and tokens of one run (thread-safe accumulation)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, tokens: dict[str, int]) -> None:
        with self._lock:
            self.input_tokens += tokens.get("input", 0)
            self.output_tokens += tokens.get("output", 0)
            self.cache_read_tokens += tokens.get("cache_read", 0)
            self.cache_write_tokens += tokens.get("cache_write", 0)

    def spend_call(self, budget: int, where: str) -> None:
        """Count one model call; past the per-run budget the run stops."""
        with self._lock:
            if self.calls >= budget:
                raise CapReached("model_call_budget",
                                 f"model call budget of {budget} per run reached at {where}")
            self.calls += 1

    def to_json(self) -> dict[str, int]:
        return {"model_calls": self.calls, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "cache_read_tokens": self.cache_read_tokens,
                "cache_write_tokens": self.cache_write_tokens}


@dataclass
class RunContext:
    """Handed to every node and task through LangGraph's runtime context (not persisted)."""

    principal: Principal
    scope: TenantScope
    plan: Plan
    capability_mode: str
    thread_id: str
    run_model: str | None = None
    call_budget: int = field(default_factory=lambda: get_settings().run_model_calls)
    usage: Usage = field(default_factory=Usage)
    model_overrides: dict[str, str] = field(default_factory=dict)
    """The tenant's per-agent models, read once per run."""
    request: str = ""
    """The person's message, as every agent sees it next to its own instruction."""
    timezone: str = "UTC"
    """The venue's time zone (the tenant's `timezone`)."""
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    ticket: int = field(default_factory=run_ticket)
    """The run's place in the queue for model-call slots: runs are served in start order."""
    lease: ThreadLease | None = None
    """The thread's lease, held for the run (None outside a runner, e.g. in tests)."""
    run_id: str = ""
    """This run's id (a resumed message has one per run: its segments)."""
    harness: tuple[int, HarnessDoc] | None = None
    """The harness version this run executes; None: the one its state names."""
    spent_calls: int = 0
    spent_s: float = 0.0
    """Model calls and active seconds of the message's earlier runs (before a pause for
    approval): the harness budget adds them up, never the time spent waiting."""
    seconds_budget: SecondsBudget | None = None
    """While a tenant's harness version runs, its budget of seconds: every model call gets
    a deadline from it (`engine.budget`). None: the built-in harness, no deadline."""
    venue: dict[str, object] | None = None
    """The tenant's `currency` and `country`, read once per run: how the resolver reads
    amounts and national phone numbers (`resolve_request`'s `tenant`; None: it reads the
    tenant itself)."""
    tenant_view: dict[str, Any] = field(default_factory=dict)
    """What harness templates may show of the tenant: `name`, `timezone`."""
    off_topic_reply: str = ""
    modules: tuple[str, ...] = ()
    """The modules the tenant enabled (their rules and tools join its agents')."""
    """The tenant's own reply to a message with nothing to do (empty: the generic one)."""
    _caller: str | None = field(default=None, repr=False)
    _name: Future[str | None] | None = field(default=None, repr=False)
    _few_shot_agents: Future[frozenset[str]] | None = field(default=None, repr=False)
    resolutions: dict[tuple[str, ...], Any] = field(default_factory=dict, repr=False)
    """What the resolver read, by the text and the earlier turns it was read with: the
    planning shortcuts and the agent's slot reading read the same request once."""
    tasks_planned: int = 1
    """How many tasks the run's plan holds (one: the message is the task's own words)."""
    history: list[Turn] = field(default_factory=list)
    """The thread's turns, this message last (set by the node that runs agents), so that an
    agent keeps a follow-up's subject ("and off-peak?", "cancel her other one")."""

    def step(self, where: str) -> None:
        """The start of a step of the graph or of a sub-task, or a write to the thread: one
        read of the thread's lease in the store (steps starting at the same moment share
        it: `ThreadLease.confirm`). It must still hold, or the run stops here
        with `lease_lost`; and when someone asked the run to stop (the request may have
        come to another process: it marks the lease), it stops with `RunCancelled`."""
        if self.lease is not None and self.lease.confirm(where):
            raise RunCancelled(f"the run was stopped at {where}", run_id=self.run_id)

    def check_lease(self, where: str) -> None:
        """Before a sub-task or a model call: stop if a renewal already found the lease
        lost (no I/O)."""
        if self.lease is not None:
            self.lease.check(where)

    def local_now(self) -> datetime:
        """When the run started, in the venue's time zone (UTC when the zone is unknown)."""
        try:
            return self.started_at.astimezone(ZoneInfo(self.timezone))
        except (ZoneInfoNotFoundError, ValueError):
            return self.started_at.astimezone(UTC)

    def caller_line(self) -> str:
        """Who asks, as models are told: `Raj Mehta (manager)`, or the role alone
        (`a staff member`) when no staff or member record has the user id — never the raw
        id, which a model would copy into an argument. Looked up once per run."""
        if self._caller is None:
            self._caller = describe_caller(self.principal, self.caller_name())
        return self._caller

    def caller_name(self) -> str | None:
        """The name on the staff or member record whose id is the caller's user id (None:
        no such record). Looked up once per run: the prompts and the thread's summary."""
        return self._name_read().result()

    def _name_read(self) -> Future[str | None]:
        if self._name is None:
            self._name = _read_ahead_executor().submit(record_name, self.scope,
                                                       self.principal.user_id)
        return self._name

    def few_shot_agents(self) -> frozenset[str]:
        """The agents (and the planner) the tenant has worked examples for, read once per
        run: the planner and each task look only those up (`engine.few_shot`)."""
        return self._few_shot_read().result()

    def _few_shot_read(self) -> Future[frozenset[str]]:
        if self._few_shot_agents is None:
            self._few_shot_agents = _read_ahead_executor().submit(agents_with_examples,
                                                                  self.scope)
        return self._few_shot_agents

    def read_ahead(self) -> None:
        """Start the run's read-once lookups (the caller's name, the agents with worked
        examples) in the background, so that they overlap the thread's lease and
        bookkeeping instead of following them on the way to the plan call. The accessors
        take the answers (or raise what the read raised)."""
        self._name_read()
        if get_settings().few_shot:
            self._few_shot_read()

    def today_line(self, clock: bool = True) -> str:
        """`Monday 30 November 2026 (2026-11-30), 18:05 Europe/London` — what models are told;
        without the `clock` (the planner's: a small model copied the run's own time into an
        instruction the request gave no time for) `Monday 30 November 2026 (2026-11-30),
        Europe/London`."""
        now = self.local_now()
        return (f"{now:%A} {now.day} {now:%B %Y} ({now:%Y-%m-%d}), "
                + (f"{now:%H:%M} " if clock else "") + self.timezone)


ROLE_ORDER = ("admin", "manager", "staff", "member", "visitor")
"""Roles from the most to the least trusted: a caller is described by the first they hold."""
_ROLE_WORDS = {"admin": "an administrator", "manager": "a manager",
               "staff": "a staff member", "member": "a member", "visitor": "a visitor"}


def describe_caller(principal: Principal, name: str | None) -> str:
    """`Name (role)` from the caller's record's name, else the role in words."""
    held = {r.value for r in principal.roles}
    role = next((r for r in ROLE_ORDER if r in held), "visitor")
    return f"{name} ({role})" if name else _ROLE_WORDS[role]
