"""`opsgraph chat MESSAGE`: one run of the assistant, its events printed as they come (the
same printing serves a run resumed by `opsgraph approvals decide`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

from opsgraph.cli.shared import Subcommands, add_json, add_principal, principal_from, store
from opsgraph.engine.events import Event
from opsgraph.status_words import RUN_WORDS


def print_events(args: argparse.Namespace, events: Iterable[Event]) -> int:
    """Print a run's events; exit 1 when the run failed."""
    status = "failed"
    for ev in events:
        if ev.event == "run_finished":
            status = ev.data["status"]
        if args.json:
            print(ev.to_json_line(), flush=True)
        else:
            _human_event(ev)
    return 1 if status == "failed" else 0


def _human_event(ev: Event) -> None:
    d = ev.data
    if ev.event == "token":
        print(d["text"], end="", flush=True)
    elif ev.event == "plan":
        for t in d["tasks"]:
            deps = f" after {', '.join(t['depends_on'])}" if t["depends_on"] else ""
            print(f"plan  {t['id']}: {t['domain']}.{t['operation']} → {t['agent']}{deps}")
    elif ev.event == "task_finished":  # in the words the API and the page use
        print(f"task  {d['task_id']} {d.get('status_label') or d['status']}")
    elif ev.event == "answer":
        if "waiting" in d or "withdrawn" in d:  # written by code, not streamed as tokens
            print(d["text"], end="")
        print()
        for s in d["sources"]:
            print(f"  source: {s['kind']} {s['id']} {s['title']}")
    elif ev.event == "approval_required":
        for c in d["changes"]:
            print(f"needs approval  {c['change_id']}: {c['summary']} (expires {c['expires_at']})")
    elif ev.event == "error":
        print(f"error  {d.get('code')}: {d.get('message')}", file=sys.stderr)
    elif ev.event == "run_finished":
        label = d.get("status_label")
        said = f": {label}" if label and label != RUN_WORDS.get(d["status"]) else ""
        print(f"run {d['status']}{said} (thread {d['thread_id']})")


def cmd_chat(args: argparse.Namespace) -> int:
    from opsgraph.engine.runner import stream_run
    from opsgraph.models.demo import script_for

    store()
    principal = principal_from(args, "staff")
    # demo mode: an example request runs on its own scripted model, as on the page
    model = args.model or script_for(principal, args.message)
    return print_events(args, stream_run(principal, args.message, thread_id=args.thread,
                                         model=model))


def add_run_commands(sub: Subcommands) -> None:
    p = sub.add_parser("chat", help="one run of the assistant")
    p.add_argument("message", metavar="MESSAGE")
    add_principal(p, "staff")
    p.add_argument("--channel", default="dashboard")
    p.add_argument("--thread", default=None)
    p.add_argument("--model", default=None, metavar="SPEC")
    add_json(p)
    p.set_defaults(func=cmd_chat)
