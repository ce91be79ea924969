"""Every event of a thread's runs, stored as it is emitted, and the thread's summary.

`thread_events` holds one document per event: `{tenant_id, thread_id, seq, run_id, event,
data, at, expires_at}`. `seq` numbers the thread's events 1, 2, 3, ... across all its runs
and is the event's SSE `id:`. It is allocated by inserting under a unique (tenant, thread,
seq) index: a writer tries the number after the last it wrote (or read) and, when another
writer took it, reads the highest stored number and tries the next. So number n + 1 is only
ever inserted once n is stored, and a reader that has seen n never misses a lower one.
One run writes a thread at a time (its lease, `engine.threads`); the retry covers the rest.

Stored events are the client's form (`client_safe`): an internal fault's words go to the
log, never into the store, so a replay shows what the live stream showed.

`threads` holds one summary per thread for the lists: `{thread_id, title, requester
{user_id, name, roles}, status, run_id, updated_at, created_at, change_ids, has_changes}`,
kept at `run_started`, `approval_required` and `run_finished`. Both expire with the
thread's checkpoints (`CHECKPOINT_TTL_S` after the last write).

`runs` holds one record per run (`RunRecord`), the answer log: `{thread_id, run_id,
run_key, request, user_id, resumed, harness {version, registry_version, fallback},
steps_ran, model_calls, total_model_calls, seconds, sources, status, error, started_at,
finished_at}`. A message paused for approval has one record per run, sharing `run_key`;
its harness budget adds up their model calls and active seconds (`spent_before`), so the
time spent waiting for a decision never counts.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo import ASCENDING, DESCENDING
from pymongo.database import Database
from pymongo.errors import BulkWriteError, DuplicateKeyError

from opsgraph.engine.events import Event
from opsgraph.principal import Principal
from opsgraph.store.people import display_name
from opsgraph.store.scope import Document, TenantScope

log = logging.getLogger(__name__)

EVENTS = "thread_events"
THREADS = "threads"
RUNS = "runs"
TTL_S = 30 * 24 * 3600  # as the checkpoints (engine.graph.CHECKPOINT_TTL_S)
TITLE_CHARS = 80
_TRIES = 50
DUPLICATE_KEY = 11000


def client_safe(event: str, data: Mapping[str, Any], reference: str) -> dict[str, Any]:
    """`data` as any client may see it: an internal error's text (a library's words about
    our servers) is logged under `reference` and replaced by a message naming it."""
    if event != "error" or data.get("code") != "internal":
        return dict(data)
    log.error("%s: run error: %s", reference, data.get("message"))
    return {**data, "message": f"internal error (the server log has it under {reference})"}


def title_of(request: str) -> str:
    """A thread's title: its first message on one line, trimmed."""
    line = " ".join(request.split())
    return line if len(line) <= TITLE_CHARS else line[:TITLE_CHARS - 1].rstrip() + "…"


def requester_of(scope: TenantScope, principal: Principal,
                 name: str | None = None) -> dict[str, Any]:
    """`{user_id, name, roles}` of whoever asked (`name`: their display name when the
    caller has it already, else looked up)."""
    return {"user_id": principal.user_id,
            "name": name or display_name(scope, principal.user_id),
            "roles": sorted(r.value for r in principal.roles)}


class ThreadLog:
    """Appends one thread's events (one writer per run) and keeps its summary."""

    def __init__(self, scope: TenantScope, thread_id: str) -> None:
        self.scope = scope
        self.thread_id = thread_id
        self._last: int | None = None

    def open(self, run_id: str, requester: Principal, request: str,
             now: datetime | None = None, requester_name: str | None = None) -> None:
        """The summary of a run about to start: made on the thread's first run (title,
        requester; `requester_name` as `requester_of` takes it), marked `running` on every
        run."""
        at = now or datetime.now(UTC)
        self.scope[THREADS].update_one(
            {"thread_id": self.thread_id},
            {"$set": {"status": "running", "run_id": run_id, "updated_at": at,
                      "expires_at": at + timedelta(seconds=TTL_S)},
             "$setOnInsert": {"title": title_of(request), "created_at": at,
                              "requester": requester_of(self.scope, requester,
                                                        requester_name),
                              "change_ids": [], "has_changes": False}},
            upsert=True)

    def expect_empty(self) -> None:
        """The thread most likely has no event yet (its id was just made, or no run of it
        has ended): its first event tries number 1 with no read first. Should another
        writer's events be there (a run that failed before its checkpoint), the number is
        taken, and the write reads the highest stored and goes after it, as on any
        collision."""
        if self._last is None:
            self._last = 0

    def append(self, run_id: str, event: str, data: Mapping[str, Any]) -> Event:
        """Store one event (client-safe) under the thread's next number; the event as sent."""
        at = datetime.now(UTC)
        doc = self._doc(run_id, event, data, at)
        coll = self.scope[EVENTS]
        seq = self._next()
        for _ in range(_TRIES):
            try:
                coll.insert_one({**doc, "seq": seq})
                break
            except DuplicateKeyError:  # another writer took it: after the highest stored
                seq = last_seq(self.scope, self.thread_id) + 1
        else:
            raise RuntimeError(f"thread {self.thread_id}: no event number after "
                               f"{_TRIES} tries")
        self._last = seq
        self._summarise(run_id, event, doc["data"], at)
        return Event(str(seq), event, doc["data"])

    def append_many(self, run_id: str, events: Sequence[tuple[str, Mapping[str, Any]]]
                    ) -> list[Event]:
        """Store several events at once, in order under the next numbers (one insert for
        the batch; from a number another writer took, one at a time as `append` does)."""
        if len(events) < 2:
            return [self.append(run_id, event, data) for event, data in events]
        at = datetime.now(UTC)
        docs = [self._doc(run_id, event, data, at) for event, data in events]
        first = self._next()
        try:
            self.scope[EVENTS].insert_many([{**doc, "seq": first + i}
                                            for i, doc in enumerate(docs)], ordered=True)
            stored = len(docs)
        except BulkWriteError as exc:  # ordered: those before the number taken are stored
            if any(e.get("code") != DUPLICATE_KEY for e in exc.details.get("writeErrors", [])):
                raise
            stored = int(exc.details.get("nInserted", 0))
        if stored:
            self._last = first + stored - 1
        sent = [Event(str(first + i), doc["event"], doc["data"])
                for i, doc in enumerate(docs[:stored])]
        for event in sent:
            self._summarise(run_id, event.event, event.data, at)
        return sent + [self.append(run_id, doc["event"], doc["data"]) for doc in docs[stored:]]

    def _next(self) -> int:
        """The number to try for the next event: after the last this log wrote or read."""
        return self._last + 1 if self._last is not None else last_seq(self.scope,
                                                                       self.thread_id) + 1

    def _doc(self, run_id: str, event: str, data: Mapping[str, Any],
             at: datetime) -> Document:
        return {"thread_id": self.thread_id, "run_id": run_id, "event": event,
                "data": client_safe(event, data, f"run {run_id}"), "at": at,
                "expires_at": at + timedelta(seconds=TTL_S)}

    def _summarise(self, run_id: str, event: str, data: Mapping[str, Any],
                   at: datetime) -> None:
        threads = self.scope[THREADS]
        if event == "approval_required":
            ids = [c.get("change_id") for c in data.get("changes", []) if isinstance(c, dict)]
            threads.update_one({"thread_id": self.thread_id},
                               {"$addToSet": {"change_ids": {"$each": ids}},
                                "$set": {"has_changes": True, "updated_at": at}})
        elif event == "run_finished":  # the status of this thread's latest run only
            threads.update_one({"thread_id": self.thread_id, "run_id": run_id},
                               {"$set": {"status": data.get("status"),
                                         "status_label": data.get("status_label"),
                                         "updated_at": at,
                                         "expires_at": at + timedelta(seconds=TTL_S)}})


class EventIds:
    """Makes one run's events: each is stored in the thread's log as it is made, and its
    id is the number the log gave it."""

    def __init__(self, log: ThreadLog) -> None:
        self.run_id = "run_" + uuid.uuid4().hex[:16]
        self.log = log

    def make(self, event: str, data: dict[str, Any]) -> Event:
        return self.log.append(self.run_id, event, data)

    def make_many(self, events: list[tuple[str, dict[str, Any]]]) -> list[Event]:
        """Several events that came together, stored in one write, in order."""
        return self.log.append_many(self.run_id, events)


class RunRecord:
    """What one run did, gathered from its events and graph updates, stored as it ends."""

    def __init__(self, scope: TenantScope, thread_id: str, run_id: str, requester: Principal,
                 harness: Any, *, resumed: bool = False) -> None:
        self.scope = scope
        self.thread_id = thread_id
        self.run_id = run_id
        self.user_id = requester.user_id
        self.resumed = resumed
        self.harness: dict[str, Any] = harness.model_dump() if harness is not None else {}
        self.answer: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None

    def saw(self, event: str, data: Mapping[str, Any]) -> None:
        """An event of the run (its answer and error are recorded)."""
        if event == "answer":
            self.answer = dict(data)
        elif event == "error" and self.error is None:
            self.error = {"code": data.get("code"), "message": data.get("message")}

    def updated(self, chunk: Mapping[str, Any]) -> None:
        """A graph update (`{node: writes}`): the harness state as the run leaves it."""
        for writes in chunk.values():
            if isinstance(writes, Mapping) and isinstance(writes.get("harness"), Mapping):
                self.harness = dict(writes["harness"])

    def finish(self, status: str, model_calls: int, started_at: datetime,
               spent_calls: int) -> Document:
        """Store the record; returns it."""
        at = datetime.now(UTC)
        h = self.harness
        doc: Document = {
            "thread_id": self.thread_id, "run_id": self.run_id,
            "run_key": h.get("run_key") or self.run_id, "request": h.get("message", ""),
            "user_id": self.user_id, "resumed": self.resumed,
            "harness": {"version": h.get("version", 0),
                        "registry_version": h.get("registry_version"),
                        "fallback": h.get("fallback")},
            "steps_ran": list(h.get("steps_ran") or []), "model_calls": model_calls,
            "total_model_calls": spent_calls + model_calls,
            "seconds": round((at - started_at).total_seconds(), 3),
            "sources": list((self.answer or {}).get("sources") or []),
            "status": status, "error": self.error, "started_at": started_at,
            "finished_at": at, "expires_at": at + timedelta(seconds=TTL_S)}
        self.scope[RUNS].insert_one(doc)
        return doc


def spent_before(scope: TenantScope, run_key: str) -> tuple[int, float]:
    """Model calls and active seconds of the earlier runs of one message (`run_key`)."""
    calls, seconds = 0, 0.0
    for doc in scope[RUNS].find({"run_key": run_key},
                                projection={"model_calls": 1, "seconds": 1}):
        calls += int(doc.get("model_calls") or 0)
        seconds += float(doc.get("seconds") or 0.0)
    return calls, seconds


def last_seq(scope: TenantScope, thread_id: str) -> int:
    """The highest event number stored for the thread (0: none)."""
    doc = scope[EVENTS].find_one({"thread_id": thread_id}, sort=[("seq", DESCENDING)],
                                 projection={"seq": 1})
    return int(doc["seq"]) if doc else 0


def events_after(scope: TenantScope, thread_id: str, after: int = 0,
                 limit: int = 500) -> list[tuple[str, Event]]:
    """The thread's stored events numbered above `after`, in order: `(run_id, event)`."""
    docs = scope[EVENTS].find({"thread_id": thread_id, "seq": {"$gt": after}},
                              sort=[("seq", ASCENDING)], limit=limit)
    return [(str(d["run_id"]), Event(str(d["seq"]), str(d["event"]), dict(d["data"])))
            for d in docs]


def summary(scope: TenantScope, thread_id: str) -> Document | None:
    """The thread's summary document, or None."""
    return scope[THREADS].find_one({"thread_id": thread_id})


def summaries(scope: TenantScope, user_id: str, with_changes: bool,
              limit: int = 200) -> list[Document]:
    """The threads a person asked for, and with `with_changes` every thread that carries
    a change; newest first."""
    flt: Document = {"requester.user_id": user_id}
    if with_changes:
        flt = {"$or": [flt, {"has_changes": True}]}
    return list(scope[THREADS].find(flt, sort=[("updated_at", DESCENDING)], limit=limit))


def ensure_indexes(db: Database[Document]) -> None:
    """Unique event numbers per thread; the lists' orders; expiry with the thread."""
    events = db[EVENTS]
    events.create_index([("tenant_id", 1), ("thread_id", 1), ("seq", 1)], unique=True)
    events.create_index("expires_at", expireAfterSeconds=0)
    # the answer log: finished runs newest first, then their events by run
    events.create_index([("tenant_id", 1), ("event", 1), ("at", -1), ("run_id", -1)])
    events.create_index([("tenant_id", 1), ("run_id", 1), ("seq", 1)])
    threads = db[THREADS]
    threads.create_index([("tenant_id", 1), ("thread_id", 1)], unique=True)
    threads.create_index([("tenant_id", 1), ("requester.user_id", 1), ("updated_at", -1)])
    threads.create_index([("tenant_id", 1), ("has_changes", 1), ("updated_at", -1)])
    threads.create_index("expires_at", expireAfterSeconds=0)
    runs = db[RUNS]
    runs.create_index([("tenant_id", 1), ("finished_at", -1)])
    runs.create_index([("tenant_id", 1), ("run_key", 1)])
    runs.create_index([("tenant_id", 1), ("run_id", 1)])
    runs.create_index("expires_at", expireAfterSeconds=0)


INTERRUPTED = ("the run stopped before it finished (its server stopped or timed out); "
               "nothing more will come of it; send the message again to continue")


def _held(scope: TenantScope, thread_ids: list[str]) -> set[str]:
    """Which of these threads a live lease holds (a run in flight)."""
    leases = scope["thread_leases"].find({"thread_id": {"$in": thread_ids},
                                          "until": {"$gte": datetime.now(UTC)}},
                                         projection={"thread_id": 1})
    return {str(doc["thread_id"]) for doc in leases}


def settle_lapsed(scope: TenantScope, threads: list[Document]) -> list[Document]:
    """`threads` (summaries) with every run that is `running` but holds no live lease
    settled as `failed`: its process died (SIGKILL, a Lambda timeout) before it could
    say so, and a live run renews its lease until its `run_finished`. The thread's log
    gets the `error` (code `interrupted`) and `run_finished {status: failed}` the run
    never wrote, so the list, a replay and a follower all see it end. A compare-and-set
    on the summary (still `running`, still that run) makes one reader the writer, and
    keeps a newer run that took the thread meanwhile untouched."""
    running = [t for t in threads if t.get("status") == "running"]
    held = _held(scope, [str(t["thread_id"]) for t in running]) if running else set()
    for thread in running:
        if thread["thread_id"] in held:
            continue
        run_id = str(thread.get("run_id"))
        won = scope[THREADS].update_one(
            {"thread_id": thread["thread_id"], "run_id": run_id, "status": "running"},
            {"$set": {"status": "failed", "interrupted": True}})
        if won.modified_count:
            log.warning("run %s on thread %s lapsed without finishing: settled as failed",
                        run_id, thread["thread_id"])
            thread_log = ThreadLog(scope, str(thread["thread_id"]))
            thread_log.append(run_id, "error", {"code": "interrupted", "message": INTERRUPTED})
            thread_log.append(run_id, "run_finished", {"thread_id": thread["thread_id"],
                                                       "status": "failed",
                                                       "interrupted": True})
        thread.update(status="failed", interrupted=True)
    return threads


def run_active(scope: TenantScope, thread_id: str) -> bool:
    """A run is going on in the thread: its latest run has not finished and holds the
    thread's lease (`engine.threads`). A run that holds none is over: it is settled as
    failed (`settle_lapsed`), its `run_finished` stored before this returns."""
    thread = summary(scope, thread_id)
    if thread is None:
        return False
    return settle_lapsed(scope, [thread])[0].get("status") == "running"
