"""`opsgraph serve | seed | token`: run the API and dashboard locally, load the demo data,
print a bearer token for local use."""

from __future__ import annotations

import argparse
import signal
import sys

from opsgraph.cli.shared import Subcommands, add_json, out, store, tenant_principal


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from opsgraph.bootstrap import seed_if_new
    from opsgraph.registry.loader import get_registry

    get_registry()  # refuse to start on an invalid registry
    if seed_if_new(store()):
        print("seeded the demo tenant", file=sys.stderr)
    from opsgraph.models.auto import model_choice

    print(model_choice().line(), file=sys.stderr)  # which model answers, and why
    # uvicorn re-raises SIGTERM after its graceful shutdown; exiting through SystemExit
    # instead lets atexit stop the embedded store this process started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    # the app writes the access lines itself, with their request ids (opsgraph.telemetry)
    uvicorn.run("opsgraph.api.app:app", host=args.host, port=args.port, log_level="info",
                access_log=False)
    return 0


def cmd_seed(args: argparse.Namespace) -> int:
    from opsgraph.store.seed import SCALES, seed, seed_all

    scale = SCALES.get(args.scale)
    if scale is not None and args.tenant is None:
        print("error: --scale large needs --tenant (a tenant of its own, e.g. big)",
              file=sys.stderr)
        return 2
    db = store()
    out(args, seed_all(db) if args.tenant is None else
        seed(db, tenant=args.tenant.strip(), scale=scale))
    return 0


def cmd_token(args: argparse.Namespace) -> int:
    from opsgraph.auth import issue_token

    principal = tenant_principal(args, "staff")  # no token for a tenant that isn't
    out(args, {"token": issue_token(principal)}, lambda d: d["token"])
    return 0


def add_serve_commands(sub: Subcommands) -> None:
    """`opsgraph serve [--host H] [--port N]`, `seed [--tenant T] [--scale S]`, `token`."""
    p = sub.add_parser("serve", help="serve the API and dashboard")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("seed", help="load the demo data set (idempotent)")
    p.add_argument("--tenant", default=None, help="default: both demo tenants (demo, acme)")
    p.add_argument("--scale", choices=("demo", "large"), default="demo",
                   help="demo (default), or large: the demo club with 10,000 members, "
                        "200,000 bookings and 20,000 invoices (a few minutes; needs --tenant)")
    add_json(p)
    p.set_defaults(func=cmd_seed)

    p = sub.add_parser("token", help="print a bearer token for local use")
    p.add_argument("--tenant", required=True)
    p.add_argument("--user", required=True)
    p.add_argument("--role", required=True)
    p.add_argument("--channel", default="dashboard")
    add_json(p)
    p.set_defaults(func=cmd_token)
