"""`opsgraph agents list | validate PATH...` and `opsgraph rank REQUEST`: the agent
registry, and which agents a request would go to."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from opsgraph.cli.shared import Subcommands, add_json, out
from opsgraph.errors import BadInput


def cmd_agents_list(args: argparse.Namespace) -> int:
    from opsgraph.api.catalog import agent_row
    from opsgraph.registry.loader import get_registry

    rows = [agent_row(a) for a in get_registry().agents.values()]
    for row in rows:
        row.pop("description")
    out(args, rows, lambda rs: "\n".join(
        f"{r['name']:<36} {r['kind']:<7} {'ro' if r['read_only'] else 'rw'} "
        f"{','.join(r['operations'])}" for r in rs))
    return 0


def cmd_agents_validate(args: argparse.Namespace) -> int:
    from opsgraph.registry.loader import validate_paths

    problems = validate_paths([Path(p) for p in args.paths])
    for problem in problems:
        print(str(problem), file=sys.stderr)
    if problems:
        return 2
    print("valid", file=sys.stderr)
    return 0


def cmd_rank(args: argparse.Namespace) -> int:
    from opsgraph.registry.ranker import rank_agents

    if not args.request.strip():
        raise BadInput("REQUEST: must not be empty")
    if args.top < 1:
        raise BadInput("--top: must be at least 1")
    ranked = [r.to_json() for r in rank_agents(args.request, top_k=args.top)]
    out(args, ranked, lambda rs: "\n".join(
        f"{r['score']:.3f}  {r['agent']:<36} {r['domain']}" for r in rs))
    return 0


def add_agent_commands(sub: Subcommands) -> None:
    agents = sub.add_parser("agents", help="the agent registry").add_subparsers(
        dest="agents_command", required=True)
    p = agents.add_parser("list", help="list the agents")
    add_json(p)
    p.set_defaults(func=cmd_agents_list)
    p = agents.add_parser("validate", help="validate spec files or directories")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.set_defaults(func=cmd_agents_validate)
    p = sub.add_parser("rank", help="rank agents for a request")
    p.add_argument("request", metavar="REQUEST")
    p.add_argument("--top", type=int, default=5)
    add_json(p)
    p.set_defaults(func=cmd_rank)
