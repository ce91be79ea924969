"""`opsgraph kb add FILE... | rm SLUG | list`: a tenant's knowledge documents
(`knowledge.admin`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from opsgraph.cli.shared import Subcommands, add_json, add_tenant, out, store
from opsgraph.errors import BadInput


def _human_kb(data: dict[str, Any]) -> str:
    if "documents" in data:
        rows = [f"{d['slug']:<32} v{d['version']:<3} {d['kind']:<8} {d['sections']:>3} sections"
                f"  {d['title']}" for d in data["documents"]]
        return "\n".join([*rows, f"knowledge version {data['knowledge_version']}"])
    done = data.get("changes", [data])
    verb = {(True, False): "added", (False, True): "removed", (False, False): "replaced"}
    return "\n".join(f"{verb[bool(c.get('created')), bool(c.get('removed'))]} {c['slug']} "
                     f"(knowledge version {c['knowledge_version']})" for c in done)


def cmd_kb_add(args: argparse.Namespace) -> int:
    """Add or replace documents: every file is checked before anything is written."""
    from opsgraph.knowledge.admin import put_document, read_file, slug_for
    from opsgraph.knowledge.documents import check_slug

    paths = [Path(p) for p in args.paths]
    if len(paths) > 1 and (args.slug or args.title):
        raise BadInput("--slug and --title name one document: pass one FILE with them")
    files = [(read_file(p), check_slug(args.slug) if args.slug else slug_for(p)) for p in paths]
    db = store()
    changes = [put_document(db, args.tenant.strip(), slug, text, kind=kind, title=args.title)
               for (text, kind), slug in files]
    out(args, changes[0] if len(changes) == 1 else {"changes": changes}, _human_kb)
    return 0


def cmd_kb_rm(args: argparse.Namespace) -> int:
    from opsgraph.knowledge.admin import remove_document

    out(args, remove_document(store(), args.tenant.strip(), args.slug), _human_kb)
    return 0


def cmd_kb_list(args: argparse.Namespace) -> int:
    from opsgraph.knowledge.admin import list_documents

    out(args, list_documents(store(), args.tenant.strip()), _human_kb)
    return 0


def add_kb_command(sub: Subcommands) -> None:
    """`opsgraph kb add FILE... [--slug S] [--title T] | rm SLUG | list [--tenant T] [--json]`."""
    kb = sub.add_parser("kb", help="the tenant's knowledge documents").add_subparsers(
        dest="kb_command", required=True)
    p = kb.add_parser("add", help="add or replace documents (.md or .txt, at most 1 MiB)")
    p.add_argument("paths", nargs="+", metavar="FILE")
    p.add_argument("--slug", default=None, help="default: the file name without its suffix")
    p.add_argument("--title", default=None, help="default: the first '# ' heading")
    p.set_defaults(func=cmd_kb_add)
    p = kb.add_parser("rm", help="remove a document")
    p.add_argument("slug", metavar="SLUG")
    p.set_defaults(func=cmd_kb_rm)
    p = kb.add_parser("list", help="the documents with their versions")
    p.set_defaults(func=cmd_kb_list)
    for p in kb.choices.values():
        add_tenant(p)
        add_json(p)
