"""`opsgraph drafts list|show|edit|send|discard`: reply drafts of inbound email, as staff
review them on the page (`jobs.drafts`; the routes are `api.drafts`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from opsgraph.cli.shared import Subcommands, add_json, add_principal, out, tenant_principal
from opsgraph.errors import BadInput
from opsgraph.status_words import DRAFT_STATES


def _body(args: argparse.Namespace) -> str | None:
    """`--body TEXT`, or `--body-file PATH` (`-`: standard input)."""
    if args.body_file is None:
        return args.body  # type: ignore[no-any-return]
    if args.body is not None:
        raise BadInput("--body-file: give --body or --body-file, not both")
    try:
        if args.body_file == "-":
            return sys.stdin.read()
        return Path(args.body_file).read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"--body-file: cannot read {args.body_file}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise BadInput(f"--body-file: {args.body_file} is not UTF-8 text") from None


def _sender(original: dict[str, Any]) -> str:
    name, address = original.get("from_name"), original.get("from") or "?"
    return f"{name} <{address}>" if name else address


def draft_text(d: dict[str, Any]) -> str:
    """One draft as the page shows it: the original, the reply, its sources, its change."""
    original = d["original"]
    lines = [f"{d['draft_id']}  {d['status_label']}",
             f"From: {_sender(original)}  ({original.get('received_at') or 'no date'})",
             f"Subject: {original.get('subject') or '(none)'}", "",
             *(f"> {line}" for line in (original.get("body") or "").splitlines()), "",
             f"Reply to {d['to']}", f"Subject: {d['subject']}", "", d["body"], ""]
    lines += [f"source: {s.get('title') or s['id']} ({s['kind']})" for s in d.get("sources") or []]
    change = d.get("change")
    if change:
        who = f" by {change['decided_by_name']}" if change.get("decided_by_name") else ""
        lines.append(f"change: {change['change_id']} {change['status_label']}{who}")
    return "\n".join(lines)


def _row(d: dict[str, Any]) -> str:
    return (f"{d['draft_id']}  {d['status_label']:<24} {_sender(d['original'])}: "
            f"{d['subject']}")


def cmd_list(args: argparse.Namespace) -> int:
    from opsgraph.jobs.drafts import list_drafts
    from opsgraph.store.scope import TenantScope

    listed = list_drafts(TenantScope.of(tenant_principal(args, "staff")), args.status)
    out(args, listed, lambda d: "\n".join(map(_row, d["drafts"])) or "no drafts")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from opsgraph.jobs.drafts import get_draft
    from opsgraph.store.scope import TenantScope

    scope = TenantScope.of(tenant_principal(args, "staff"))
    out(args, get_draft(scope, args.draft_id), draft_text)
    return 0


def cmd_edit(args: argparse.Namespace) -> int:
    from opsgraph.jobs.drafts import edit_draft

    principal = tenant_principal(args, "staff")
    edited = edit_draft(principal, args.draft_id, subject=args.subject, body=_body(args))
    out(args, edited, draft_text)
    return 0


def cmd_send(args: argparse.Namespace) -> int:
    from opsgraph.jobs.drafts import send_draft

    principal = tenant_principal(args, "staff")
    sent = send_draft(principal, args.draft_id, subject=args.subject, body=_body(args))
    out(args, sent, lambda d: f"{_row(d)}\nchange {d['change']['change_id']} waits "
                              "for a manager (opsgraph approvals list)")
    return 0


def cmd_discard(args: argparse.Namespace) -> int:
    from opsgraph.jobs.drafts import discard_draft

    out(args, discard_draft(tenant_principal(args, "staff"), args.draft_id), _row)
    return 0


def add_drafts_command(sub: Subcommands) -> None:
    """The `drafts` command group."""
    drafts = sub.add_parser("drafts", help="reply drafts of inbound email").add_subparsers(
        dest="drafts_command", required=True)
    commands = {"list": ("the tenant's drafts, newest first", cmd_list),
                "show": ("one draft: the original, the reply, its sources", cmd_show),
                "edit": ("change a draft's subject and/or body", cmd_edit),
                "send": ("send for a manager's approval (a pending email change)", cmd_send),
                "discard": ("set a draft aside; nothing is sent", cmd_discard)}
    for name, (words, func) in commands.items():
        p = drafts.add_parser(name, help=words)
        if name == "list":
            p.add_argument("--status", choices=DRAFT_STATES, default=None)
        else:
            p.add_argument("draft_id", metavar="DRAFT_ID")
        if name in ("edit", "send"):
            p.add_argument("--subject", default=None)
            p.add_argument("--body", default=None)
            p.add_argument("--body-file", default=None, metavar="PATH")
        add_principal(p, "staff")
        add_json(p)
        p.set_defaults(func=func)
