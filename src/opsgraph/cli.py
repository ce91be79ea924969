"""`opsgraph`: the command line (the reference is docs/reference.md). `--json` prints
machine-readable output to stdout; errors go to stderr with a non-zero exit (2 for bad
input). A reader that stops early (`opsgraph agents list | head`) ends it quietly."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any

from opsgraph.errors import OpsgraphError
from opsgraph.principal import Principal, parse_channel, parse_role

Handler = Callable[[argparse.Namespace], int]
DESCRIPTION = """\
opsgraph: agents for an operations business, with every change approved by a manager.

`--json` prints machine-readable output to stdout; errors go to stderr with a non-zero
exit (2 for bad input). `opsgraph COMMAND --help` lists a command's options.

Model specs (--model, OPSGRAPH_MODEL): bedrock:<model-id>, openai:<model> (with
OPENAI_BASE_URL), llamacpp:<path.gguf>, scripted:<path.yaml|json>.
Store: MONGODB_URI, else an embedded one under OPSGRAPH_HOME (~/.local/share/opsgraph).
"""


def out(args: argparse.Namespace, data: Any, human: Callable[[Any], str] | None = None) -> None:
    """Print `data` as JSON with --json, else as text."""
    if getattr(args, "json", False) or human is None:
        print(json.dumps(data, indent=None if getattr(args, "json", False) else 2, default=str))
    else:
        print(human(data))


def principal_from(args: argparse.Namespace, default_role: str) -> Principal:
    role = parse_role(getattr(args, "role", None) or default_role)
    channel = parse_channel(getattr(args, "channel", None) or "dashboard")
    return Principal(args.tenant.strip(), (args.user or "cli").strip(), frozenset({role}), channel)


def store() -> Any:
    from opsgraph.bootstrap import prepare_store

    return prepare_store()


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
    from opsgraph.store.scope import TenantScope

    principal = principal_from(args, "staff")
    TenantScope.of(principal, store()).require_tenant()  # no token for a tenant that isn't
    token = issue_token(principal)
    out(args, {"token": token}, lambda d: d["token"])
    return 0


def _add_principal(p: argparse.ArgumentParser, role: str | None) -> None:
    p.add_argument("--tenant", default="demo")
    p.add_argument("--user", default=None)
    p.add_argument("--role", default=None, help=f"default: {role}")


def build_parser() -> argparse.ArgumentParser:
    from opsgraph import cli_catalogue, cli_drafts, cli_harness
    from opsgraph import cli_commands as cc

    parser = argparse.ArgumentParser(prog="opsgraph", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("serve", help="serve the API and dashboard")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("seed", help="load the demo data set (idempotent)")
    p.add_argument("--tenant", default=None, help="default: both demo tenants (demo, acme)")
    p.add_argument("--scale", choices=("demo", "large"), default="demo",
                   help="demo (default), or large: the demo club with 10,000 members, "
                        "200,000 bookings and 20,000 invoices (a few minutes; needs --tenant)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_seed)

    p = sub.add_parser("token", help="print a bearer token for local use")
    p.add_argument("--tenant", required=True)
    p.add_argument("--user", required=True)
    p.add_argument("--role", required=True)
    p.add_argument("--channel", default="dashboard")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_token)

    cc.add_agent_commands(sub)
    cc.add_resolve_command(sub, _add_principal)
    cc.add_run_commands(sub, _add_principal)
    cc.add_approval_commands(sub, _add_principal)
    cc.add_ops_commands(sub, _add_principal)
    cc.add_bench_command(sub)
    cc.add_email_command(sub)
    cc.add_eval_command(sub)
    cc.add_jobs_command(sub)
    cc.add_kb_command(sub)
    cli_harness.add_harness_command(sub)
    cli_drafts.add_drafts_command(sub, _add_principal)
    cli_catalogue.add_catalogue_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    for arg in argv:  # bytes that are not UTF-8 arrive as lone surrogates (surrogateescape)
        if any("\ud800" <= ch <= "\udfff" for ch in arg):
            print(f"error: argument {arg.encode('utf-8', 'replace').decode()!r} is not valid "
                  "UTF-8 text", file=sys.stderr)
            return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except OpsgraphError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2 if 400 <= exc.status < 500 else 1
    except KeyboardInterrupt:
        return 130
    return code


def _quiet_stdout() -> None:
    """The reader of stdout has gone (`| head`): what is left to print goes nowhere, so the
    interpreter's last flush raises nothing either."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
