"""`opsgraph resolve TEXT`: what code understands in a request (dates, people, bookings,
...) before any model reads it (`opsgraph.resolve`)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, tzinfo
from typing import Any

from opsgraph.cli.shared import Subcommands, add_json, add_principal, out, principal_from, store
from opsgraph.errors import BadInput
from opsgraph.principal import Principal


def _clock(raw: str | None, zone: tzinfo) -> datetime:
    """--now as an aware datetime (a time without an offset is the venue's), or now."""
    if raw is None:
        return datetime.now(UTC)
    try:
        when = datetime.fromisoformat(raw.strip())
    except ValueError:
        raise BadInput(f"--now: {raw!r} is not an ISO 8601 date and time "
                       "(e.g. 2026-12-03T10:00:00+00:00)") from None
    return when if when.tzinfo else when.replace(tzinfo=zone)


def _thread_history(principal: Principal, thread_id: str) -> list[str]:
    """The latest turns of a thread the caller may read, oldest first."""
    from opsgraph.api.threads import readable
    from opsgraph.engine.runner import thread_state
    from opsgraph.resolve.resolver import HISTORY_TURNS

    readable(principal, thread_id)
    _, state = thread_state(principal, thread_id)
    turns = [t["content"] for t in state.history if t["role"] != "summary"] if state else []
    return turns[-HISTORY_TURNS:]


def _mention_line(m: dict[str, Any]) -> str:
    what = m.get("value")
    if what is None and m.get("candidates"):
        what = "one of: " + "; ".join(f"{c['label']} [{c['value']}]" for c in m["candidates"])
    shown = f"{what}" + (f" to {m['end']}" if m.get("end") else "")
    label = f" ({m['label']})" if m.get("label") and m["label"] != m.get("value") else ""
    return f"{m['kind']:<9} {m['text']!r:<28} {shown if what else 'not found'}{label}"


def cmd_resolve(args: argparse.Namespace) -> int:
    from opsgraph.operations.base import Context
    from opsgraph.resolve.resolver import resolve_request, zone_of
    from opsgraph.store.scope import TenantScope

    if not args.text.strip():
        raise BadInput("TEXT: must not be empty")
    principal = principal_from(args, "staff")
    scope = TenantScope.of(principal, store())
    tenant = scope.require_tenant()
    timezone = str(tenant.get("timezone") or "UTC")
    now = _clock(args.now, zone_of(timezone))
    history = _thread_history(principal, args.thread) if args.thread else []
    found = resolve_request(Context(scope, principal, now), args.text, timezone=timezone,
                            now=now, history=history, tenant=tenant).to_json()
    out(args, found, lambda r: "\n".join(
        [f"now {r['now']} ({r['timezone']})"] + [_mention_line(m) for m in r["mentions"]]))
    return 0


def add_resolve_command(sub: Subcommands) -> None:
    p = sub.add_parser("resolve", help="what code understands in a request (no model)")
    p.add_argument("text", metavar="TEXT")
    add_principal(p, "staff")
    p.add_argument("--thread", default=None, metavar="ID",
                   help="read that thread's latest turns for 'her', 'that booking', ...")
    p.add_argument("--now", default=None, metavar="ISO-8601", help="the clock (default: now)")
    add_json(p)
    p.set_defaults(func=cmd_resolve)
