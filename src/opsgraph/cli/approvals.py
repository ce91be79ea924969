"""`opsgraph approvals list | decide CHANGE_ID`: a tenant's pending changes, and a
manager's decision on one (which resumes the run that proposed it)."""

from __future__ import annotations

import argparse

from opsgraph.cli.runs import print_events
from opsgraph.cli.shared import (
    Subcommands,
    add_json,
    add_principal,
    json_object,
    out,
    principal_from,
    store,
)


def cmd_approvals_list(args: argparse.Namespace) -> int:
    from opsgraph.approvals.pending import list_changes
    from opsgraph.store.scope import TenantScope

    store()
    principal = principal_from(args, "manager")
    rows = [c.to_json() for c in list_changes(TenantScope.of(principal), "pending")]
    out(args, rows, lambda rs: "\n".join(
        f"{r['change_id']}  {r['operation']:<28} {r['summary']}"
        + (f"  (waits for {', '.join(r['waits_for'])})" if r.get("waits_for") else "")
        + "".join(f"\n    {f['label']}: {f['old']} → {f['new']}" for f in r["fields"]
                  if f["changed"])
        for r in rs) or "none pending")
    return 0


def cmd_approvals_decide(args: argparse.Namespace) -> int:
    from opsgraph.engine.approval_flow import decide_and_resume

    store()
    principal = principal_from(args, "manager")
    values = None if args.values is None else json_object(args.values, "--values")
    events = decide_and_resume(principal, args.change_id, args.decision,
                               feedback=args.feedback, values=values, model=args.model)
    return print_events(args, events)


def add_approval_commands(sub: Subcommands) -> None:
    approvals = sub.add_parser("approvals", help="pending changes").add_subparsers(
        dest="approvals_command", required=True)
    p = approvals.add_parser("list", help="pending changes of a tenant")
    add_principal(p, "manager")
    add_json(p)
    p.set_defaults(func=cmd_approvals_list)
    p = approvals.add_parser("decide", help="decide a change and resume its run")
    p.add_argument("change_id", metavar="CHANGE_ID")
    p.add_argument("--decision", required=True,
                   choices=["approve", "reject", "revise", "edit"])
    p.add_argument("--feedback", default=None)
    p.add_argument("--values", default=None, metavar="JSON")
    add_principal(p, "manager")
    p.add_argument("--model", default=None, metavar="SPEC")
    add_json(p)
    p.set_defaults(func=cmd_approvals_decide)
