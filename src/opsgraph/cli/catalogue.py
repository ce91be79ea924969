"""`opsgraph catalogue ...`: a tenant's catalogue of objects (resources, classes, events,
plans, products, price lists) from the command line, through the same functions as the
HTTP routes and the admin MCP link (`operations.catalogue_admin`): checked whole before
anything is written, audited under `--user`.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from opsgraph.cli.shared import Subcommands, add_json, add_tenant, out, read_json_file, store
from opsgraph.errors import BadInput


def _human(data: dict[str, Any]) -> str:
    if "objects" in data:
        return "\n".join(f"{o['type']:<10} {o['key']:<28} v{o.get('version', 1):<3} {o['name']}"
                         for o in data["objects"]) or "(no catalogue objects)"
    if "removed" in data:
        return f"removed {data['key']} (knowledge version {data['knowledge_version']})"
    if "object" in data:
        obj = data["object"]
        return (f"{'added' if data['created'] else 'replaced'} {obj['type']} {obj['key']} "
                f"(version {obj['version']}, change {data['change_id']})")
    return json.dumps(data, indent=2, ensure_ascii=False)


def cmd_list(args: argparse.Namespace) -> int:
    from opsgraph.operations.catalogue_admin import list_objects

    out(args, list_objects(store(), args.tenant.strip(), args.type), _human)
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    from opsgraph.operations.catalogue_admin import get_object

    out(args, get_object(store(), args.tenant.strip(), args.key), _human)
    return 0


def cmd_put(args: argparse.Namespace) -> int:
    from opsgraph.operations.catalogue_admin import put_object

    fields = read_json_file(args.file)
    if not isinstance(fields, dict):
        raise BadInput(f"FILE: {args.file} holds no JSON object (the object's fields)")
    out(args, put_object(store(), args.tenant.strip(), args.key, fields, actor=args.user,
                         if_version=args.if_version), _human)
    return 0


def cmd_rm(args: argparse.Namespace) -> int:
    from opsgraph.operations.catalogue_admin import remove_object

    out(args, remove_object(store(), args.tenant.strip(), args.key, actor=args.user), _human)
    return 0


def add_catalogue_command(sub: Subcommands) -> None:
    """`opsgraph catalogue list [--type T] | get KEY | put KEY FILE [--if-version N] | rm KEY`."""
    cat = sub.add_parser("catalogue", help="the tenant's catalogue: resources, classes, "
                         "events, plans, products, price lists").add_subparsers(
        dest="catalogue_command", required=True)
    p = cat.add_parser("list", help="every object (by type, then key)")
    p.add_argument("--type", default=None, help="only this type")
    p.set_defaults(func=cmd_list)
    p = cat.add_parser("get", help="one object's fields")
    p.add_argument("key", metavar="KEY")
    p.set_defaults(func=cmd_get)
    p = cat.add_parser("put", help="add or replace object KEY with the JSON fields in FILE")
    p.add_argument("key", metavar="KEY")
    p.add_argument("file", metavar="FILE", help="a JSON object ('-': standard input)")
    p.add_argument("--if-version", type=int, default=None, help="refuse (exit 2) unless "
                   "version N is the stored one (0: it must be new)")
    p.set_defaults(func=cmd_put)
    p = cat.add_parser("rm", help="remove object KEY")
    p.add_argument("key", metavar="KEY")
    p.set_defaults(func=cmd_rm)
    for name, p in cat.choices.items():
        add_tenant(p)
        if name in ("put", "rm"):
            p.add_argument("--user", default="cli", help="who is acting (in the audit trail)")
        add_json(p)
