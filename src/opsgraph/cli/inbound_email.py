"""`opsgraph email ingest PATH`: draft a reply to an inbound email (an RFC 822 file),
read-only (`jobs.inbound_email`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from opsgraph.cli.shared import Subcommands, add_json, add_tenant, out, store
from opsgraph.errors import BadInput


def _read_email_file(path: Path) -> bytes:
    if not path.exists():
        raise BadInput(f"{path}: no such file")
    if not path.is_file():
        raise BadInput(f"{path}: not a file")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise BadInput(f"{path}: cannot read ({exc.strerror or exc})") from None


def _human_ingest(result: dict[str, Any]) -> str:
    lines = [f"{'existing ' if result['duplicate'] else ''}draft {result['draft_id']} "
             f"(run {result['status']}, thread {result['thread_id']})"]
    if result["draft"]:
        d = result["draft"]
        lines += [f"To: {d['to']}", f"Subject: {d['subject']}", "", d["body"], ""]
    lines += [f"denied  {t['task_id']} {t['operation']}: {t['reason']}" for t in result["denied"]]
    lines += [f"error  {e.get('code')}: {e.get('message')}" for e in result["errors"]]
    lines.append(f"pending changes {result['pending_changes']}, writes {result['writes']}")
    return "\n".join(lines)


def cmd_email_ingest(args: argparse.Namespace) -> int:
    """Ingest an RFC 822 file read-only; exit 1 when the run failed or anything was written."""
    from opsgraph.jobs.inbound_email import ingest_email, parse_email
    from opsgraph.models.spec import parse_model_spec

    raw = _read_email_file(Path(args.path))
    parse_email(raw, args.path)  # bad input fails before the store starts
    if args.model is not None:
        parse_model_spec(args.model)
    store()
    result = ingest_email(args.tenant, raw, model=args.model, source=args.path)
    out(args, result, _human_ingest)
    clean = result["pending_changes"] == 0 and result["writes"] == 0
    return 0 if clean and result["status"] == "completed" else 1


def add_email_command(sub: Subcommands) -> None:
    """`opsgraph email ingest PATH [--tenant T] [--model SPEC] [--json]`.

    No --user/--role: an email runs as its sender, staff, on the read-only email channel.
    """
    email = sub.add_parser("email", help="inbound email").add_subparsers(
        dest="email_command", required=True)
    p = email.add_parser("ingest", help="draft a reply to an RFC 822 file (read-only)")
    p.add_argument("path", metavar="PATH")
    add_tenant(p)
    p.add_argument("--model", default=None, metavar="SPEC")
    add_json(p)
    p.set_defaults(func=cmd_email_ingest)
