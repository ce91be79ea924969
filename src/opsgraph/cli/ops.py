"""`opsgraph ops call OP_ID --args JSON`: one operation run directly, as a principal."""

from __future__ import annotations

import argparse

from opsgraph.cli.shared import (
    Subcommands,
    add_json,
    add_principal,
    json_object,
    out,
    principal_from,
    store,
)


def cmd_ops_call(args: argparse.Namespace) -> int:
    from opsgraph.operations.direct import call_operation

    op_args = json_object(args.args, "--args")
    store()
    result = call_operation(principal_from(args, "staff"), args.op_id, op_args)
    out(args, result)
    return 0


def add_ops_commands(sub: Subcommands) -> None:
    ops = sub.add_parser("ops", help="operations").add_subparsers(dest="ops_command",
                                                                  required=True)
    p = ops.add_parser("call", help="run one operation directly")
    p.add_argument("op_id", metavar="OP_ID")
    p.add_argument("--args", required=True, metavar="JSON")
    add_principal(p, "staff")
    add_json(p)
    p.set_defaults(func=cmd_ops_call)
