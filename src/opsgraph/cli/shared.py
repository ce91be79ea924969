"""What every `opsgraph` command shares: printing its answer (`--json` or text), the
principal it acts as, the store, the flags several commands take, and JSON read from a
flag or a file. The leaf of the `cli` package: it imports none of the package's modules."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from opsgraph.errors import BadInput
from opsgraph.principal import Principal, parse_channel, parse_role

if TYPE_CHECKING:
    from pymongo.database import Database

    from opsgraph.store.scope import TenantScope

Handler = Callable[[argparse.Namespace], int]
"""A command: its parsed arguments in, its exit code out."""
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What `add_subparsers()` returns: a command group adds its commands to it."""
Data = TypeVar("Data")


def out(args: argparse.Namespace, data: Data, human: Callable[[Data], str] | None = None,
        ) -> None:
    """Print `data` as JSON with --json, else as text."""
    if getattr(args, "json", False) or human is None:
        print(json.dumps(data, indent=None if getattr(args, "json", False) else 2, default=str))
    else:
        print(human(data))


def store() -> Database[dict[str, Any]]:
    """The store, its indexes made (MONGODB_URI, else the embedded one)."""
    from opsgraph.bootstrap import prepare_store

    return prepare_store()


def principal_from(args: argparse.Namespace, default_role: str) -> Principal:
    """Who the command acts as: --tenant, --user (default `cli`), --role, --channel."""
    role = parse_role(getattr(args, "role", None) or default_role)
    channel = parse_channel(getattr(args, "channel", None) or "dashboard")
    return Principal(args.tenant.strip(), (args.user or "cli").strip(), frozenset({role}), channel)


def tenant_principal(args: argparse.Namespace, default_role: str) -> Principal:
    """`principal_from`, of a tenant that exists (NotFound for one that does not)."""
    from opsgraph.store.scope import TenantScope

    principal = principal_from(args, default_role)
    TenantScope.of(principal, store()).require_tenant()
    return principal


def tenant_scope(args: argparse.Namespace) -> TenantScope:
    """The --tenant's scope (NotFound for a tenant that does not exist)."""
    from opsgraph.store.scope import TenantScope

    scope = TenantScope(store(), args.tenant.strip())
    scope.require_tenant()
    return scope


def add_principal(p: argparse.ArgumentParser, role: str) -> None:
    """--tenant, --user and --role (default `role`), read by `principal_from`."""
    add_tenant(p)
    p.add_argument("--user", default=None)
    p.add_argument("--role", default=None, help=f"default: {role}")


def add_tenant(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tenant", default="demo")


def add_json(p: argparse.ArgumentParser) -> None:
    """--json: machine-readable output (`out`)."""
    p.add_argument("--json", action="store_true")


def json_object(text: str, flag: str) -> dict[str, Any]:
    """A flag's JSON object, or BadInput naming the flag."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{flag}: invalid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise BadInput(f"{flag}: must be a JSON object")
    return value


def read_json_file(path: str) -> object:
    """The JSON document in FILE (`-`: standard input)."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"FILE: cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise BadInput(f"FILE: {path} is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"FILE: {path} is not JSON: {exc.msg} at line {exc.lineno}, column "
                       f"{exc.colno}") from None
