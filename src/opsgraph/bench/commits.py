"""Case 5: checkpoint commits per request, counted on the graph's own MongoDBSaver.

The saver instance's `put` and `put_writes` are wrapped for the duration of one request (in
this process only, restored afterwards); MongoDB round trips are counted alongside with
pymongo command monitoring, by command and collection.
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from opsgraph.bench.drive import timed_run
from opsgraph.bench.environment import BenchEnv
from opsgraph.bench.report import Row
from opsgraph.bench.scripts import fanout_script

COMMIT_METHODS = ("put", "put_writes")


def _label(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """`put input`, `put loop`, `put_writes decompose`, `put_writes sub-task`, ..."""
    if name == "put":
        metadata = args[2] if len(args) > 2 else kwargs.get("metadata") or {}
        return f"put {metadata.get('source', '?')}"
    path = str(args[3] if len(args) > 3 else kwargs.get("task_path", ""))
    if "__pregel_push" in path:
        return "put_writes sub-task"
    return f"put_writes {path.split(', ')[-1] or '?'}"


@contextmanager
def counting_commits(saver: Any) -> Iterator[Counter[str]]:
    """Count `saver.put` / `saver.put_writes` calls inside the block, by what they commit.

    The wrap is on the instance (its class is untouched) and removed on the way out.
    """
    counts: Counter[str] = Counter()
    lock = threading.Lock()

    def counted(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)  # LangGraph reads the signature (does it take task_path?)
        def call(*args: Any, **kwargs: Any) -> Any:
            with lock:
                counts[_label(name, args, kwargs)] += 1
            return method(*args, **kwargs)
        return call

    for name in COMMIT_METHODS:
        setattr(saver, name, counted(name, getattr(saver, name)))
    try:
        yield counts
    finally:
        for name in COMMIT_METHODS:
            vars(saver).pop(name, None)


def _kind(counts: Counter[str], name: str) -> int:
    return sum(n for label, n in counts.items() if label.split(" ", 1)[0] == name)


def commit_row(env: BenchEnv, tasks: int = 8) -> Row:
    """Commits (and store round trips) of one `tasks`-task request at 0 ms."""
    from opsgraph.engine.graph import get_graph  # heavy: langgraph (cold start)

    spec = env.write_script(f"commits-{tasks}", fanout_script(tasks, 0))
    with env.commands.counting() as commands:
        with counting_commits(get_graph().checkpointer) as commits:
            timed_run(env, spec)
    puts, writes = _kind(commits, "put"), _kind(commits, "put_writes")
    total, allowed, round_trips = puts + writes, tasks + 2, sum(commands.values())
    return Row(
        case="5", name=f"checkpoint commits, {tasks}-task request",
        measured={"commits": total, "put": puts, "put_writes": writes, "allowed": allowed,
                  "per_subtask": round(total / tasks, 3), "store_round_trips": round_trips},
        summary=f"{total} ({puts} put + {writes} put_writes) = {total / tasks:.2f} per sub-task",
        ratio=total / allowed, limit=1.0, target=f"≤ {allowed} (1/sub-task + 2)",
        note=("durability=exit (as the runner); commits: " + _listing(commits)
              + f". {round_trips} MongoDB round trips in all: " + _listing(commands)))


def _listing(counts: Counter[str]) -> str:
    return ", ".join(f"{n} × {label}" for label, n in counts.most_common())
