"""`opsgraph harness ...`: a tenant's harness from the command line (docs/harness.md).

Invalid documents exit 2 with one `path: message` line per problem on stderr, so a script
(or an agent) can fix them all in one pass.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from opsgraph.cli.shared import (
    Handler,
    Subcommands,
    add_json,
    add_tenant,
    out,
    read_json_file,
    tenant_scope,
)

if TYPE_CHECKING:
    from opsgraph.harness.validate import HarnessInvalid


def _problems(exc: HarnessInvalid) -> int:
    for problem in exc.problems:
        print(f"{problem['path']}: {problem['message']}", file=sys.stderr)
    return 2


def cmd_schema(args: argparse.Namespace) -> int:
    from opsgraph.harness.spec import HarnessDoc

    print(json.dumps(HarnessDoc.model_json_schema(by_alias=True), indent=None if args.json
                     else 2))
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    from opsgraph.harness import versions

    got = versions.get(tenant_scope(args), args.version)
    if args.json:
        out(args, got)
    else:
        state = "active" if got["active"] else "not active"
        print(f"# version {got['version']} ({state})", file=sys.stderr)
        print(json.dumps(got["doc"], indent=2, ensure_ascii=False))
    return 0


def cmd_versions(args: argparse.Namespace) -> int:
    from opsgraph.harness import versions

    def human(rows: list[dict[str, Any]]) -> str:
        lines = []
        for r in rows:
            test = r["last_test"]
            tested = f"tests {test['passed']}/{test['passed'] + test['failed']}" if test else ""
            lines.append(f"{'*' if r['active'] else ' '} v{r['version']:<4} "
                         f"{r['steps']:>3} steps {r['tests']:>3} tests  "
                         f"{(r['created_at'] or '')[:19]:<19} {r['created_by']:<16} {tested:<12}"
                         f" {r['note']}".rstrip())
        return "\n".join(lines)

    out(args, versions.list_versions(tenant_scope(args)), human)
    return 0


def cmd_set(args: argparse.Namespace) -> int:
    from opsgraph.harness import versions
    from opsgraph.harness.validate import HarnessInvalid

    doc = read_json_file(args.file)
    try:
        number, changes = versions.save(tenant_scope(args), doc, actor=args.user, note=args.note)
    except HarnessInvalid as exc:
        return _problems(exc)
    out(args, {"version": number, "changes": changes}, lambda _: "\n".join(
        [f"saved version {number} (not active; {len(changes)} change(s) from the active "
         "version)", *(f"  {c['op']:<8} {c['path']}" for c in changes)]))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from opsgraph.harness.validate import HarnessInvalid, validate

    try:
        doc = validate(read_json_file(args.file))
    except HarnessInvalid as exc:
        return _problems(exc)
    out(args, {"valid": True, "steps": len(doc.steps), "tests": len(doc.tests)},
               lambda d: f"valid: {d['steps']} step(s), {d['tests']} test(s)")
    return 0


def _report_lines(report: dict[str, Any]) -> list[str]:
    lines = [f"version {report['version']}: {report['passed']} passed, {report['failed']} "
             f"failed (model {report['model']})"]
    for result in report["results"]:
        lines.append(f"  {'ok  ' if result['passed'] else 'FAIL'} {result['name']}")
        lines += [f"       {failure}" for failure in result.get("failures", [])]
    return lines


def cmd_test(args: argparse.Namespace) -> int:
    """Run a version's tests and keep the report beside it; exit 1 when any fails."""
    from opsgraph.evals.harness_tests import run_tests
    from opsgraph.harness import versions

    scope = tenant_scope(args)
    number = versions.active(scope)[0] if args.version is None else args.version
    report = run_tests(scope, number, versions.load(scope, number), model=args.model)
    versions.record_test(scope, number, report)
    out(args, report, lambda r: "\n".join(_report_lines(r)))
    return 1 if report["failed"] else 0


def cmd_activate(args: argparse.Namespace) -> int:
    from opsgraph.evals.harness_tests import activate_checked

    done = activate_checked(tenant_scope(args), args.version, actor=args.user, force=args.force,
                            model=args.model)
    out(args, done, lambda d: "\n".join([
        *_report_lines(d["tests"]),
        f"version {d['version']} is active (was version {d['previous']})"
        + (" — forced past failing tests" if d["forced"] else "")]))
    return 0


def cmd_rollback(args: argparse.Namespace) -> int:
    from opsgraph.harness import versions

    done = versions.rollback(tenant_scope(args), actor=args.user)
    out(args, done, lambda d: f"version {d['version']} is active again "
               f"(was version {d['previous']})")
    return 0


def cmd_diagram(args: argparse.Namespace) -> int:
    from opsgraph.harness import diagram, versions

    scope = tenant_scope(args)
    number = versions.active(scope)[0] if args.version is None else args.version
    doc = versions.load(scope, number)
    text = diagram.svg(doc) if args.format == "svg" else diagram.mermaid(doc)
    if args.json:
        out(args, {"version": number, "format": args.format, "diagram": text})
    else:
        print(text, end="")
    return 0


def add_harness_command(sub: Subcommands) -> None:
    """`opsgraph harness schema|get|versions|set|validate|test|activate|rollback|diagram`."""
    harness = sub.add_parser(
        "harness", help="the tenant's harness: versioned, tested logic around the supervisor"
    ).add_subparsers(dest="harness_command", required=True)

    def command(name: str, func: Handler, help: str, *, actor: bool = False,
                ) -> argparse.ArgumentParser:
        p = harness.add_parser(name, help=help)
        add_tenant(p)
        if actor:
            p.add_argument("--user", default="cli", help="who is acting (kept with the "
                           "version and in the audit trail)")
        add_json(p)
        p.set_defaults(func=func)
        return p

    command("schema", cmd_schema, "print the JSON Schema of a harness version")
    p = command("get", cmd_get, "print a version (the active one by default)")
    p.add_argument("--version", type=int, default=None)
    command("versions", cmd_versions, "list the versions (* marks the active one)")
    p = command("set", cmd_set, "validate and save FILE as a new version (not activated)",
                actor=True)
    p.add_argument("file", metavar="FILE", help="a JSON document ('-': standard input)")
    p.add_argument("--note", default="", help="a note kept with the version")
    p = command("validate", cmd_validate, "check FILE without saving it")
    p.add_argument("file", metavar="FILE")
    p = command("test", cmd_test, "run a version's tests (the active one by default)")
    p.add_argument("--version", type=int, default=None)
    p.add_argument("--model", default=None, help="a model spec; default: each test's own "
                   "script with the scripted model")
    p = command("activate", cmd_activate, "run version N's tests and activate it when they "
                "pass", actor=True)
    p.add_argument("version", type=int, metavar="N")
    p.add_argument("--force", action="store_true", help="activate even with failing tests "
                   "(audited)")
    p.add_argument("--model", default=None)
    command("rollback", cmd_rollback, "re-activate the version active before this one",
            actor=True)
    p = command("diagram", cmd_diagram, "draw a version (the active one by default)")
    p.add_argument("--version", type=int, default=None)
    p.add_argument("--format", choices=("mermaid", "svg"), default="mermaid")
