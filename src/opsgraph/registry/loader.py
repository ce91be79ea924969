"""Load and validate `agents/**/*.yaml` into a `Registry`.

Every problem is reported, one `Problem` each, as `PATH: field: message`: YAML syntax,
schema (unknown fields, vocabularies, a missing `read_only`), rules within a spec (see
`spec.structural_problems`), rules against the operations catalogue (unknown tools, a write
tool on a read-only or query agent, a role the agent offers that one of its write operations
refuses) and rules across files (duplicate names). Where a file lives is not a rule:
`agents/<domain>/<name>.yaml` is the convention of the shipped registry, and a spec
anywhere else validates the same.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from opsgraph.errors import BadInput
from opsgraph.principal import Role, parse_role
from opsgraph.registry.operation_index import OperationIndex, OperationInfo, operation_index
from opsgraph.registry.registry import Registry
from opsgraph.registry.spec import NAME_RE, AgentSpec
from opsgraph.settings import get_settings
from opsgraph.yaml_text import load_yaml

SPEC_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with one spec file."""

    path: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.field}: {self.message}"


def validate_paths(
    paths: Sequence[Path | str], operations: OperationIndex | None = None
) -> list[Problem]:
    """Every problem in the spec files at `paths` (files or folders), cross-file included."""
    return _load(paths, operations)[1]


def load_registry(path: Path | str, operations: OperationIndex | None = None) -> Registry:
    """The registry at `path`; raises `BadInput` listing every problem when it is invalid."""
    specs, problems = _load([path], operations)
    if problems:
        lines = "\n".join(str(p) for p in problems)
        raise BadInput(
            f"invalid agent registry ({len(problems)} problem(s)):\n{lines}",
            problems=[str(p) for p in problems],
        )
    return Registry({spec.name: spec for spec in specs}, root=Path(path))


_cache: dict[Path, Registry] = {}
_cache_lock = threading.Lock()


def get_registry() -> Registry:
    """The process-wide registry of `settings.agents_dir`, loaded once per folder.

    Called many times per request, so a hit is a dict lookup keyed by the folder as
    configured (made absolute against the working directory, no `realpath`); only a
    miss resolves it and reuses a registry already loaded for the same real folder.
    """
    configured = get_settings().agents_dir
    key = configured if configured.is_absolute() else Path.cwd() / configured
    hit = _cache.get(key)
    if hit is not None:
        return hit
    root = key.resolve()
    with _cache_lock:
        if root not in _cache:
            _cache[root] = load_registry(root)
        _cache[key] = _cache[root]
        return _cache[root]


def clear_registry_cache() -> None:
    """Forget loaded registries (tests, or after editing specs in a long-lived process)."""
    with _cache_lock:
        _cache.clear()


def _load(
    paths: Sequence[Path | str], operations: OperationIndex | None
) -> tuple[list[AgentSpec], list[Problem]]:
    index = operations if operations is not None else operation_index()
    files, problems = _spec_files(Path(p) for p in paths)
    specs: list[AgentSpec] = []
    named: list[tuple[Path, str]] = []
    for file in files:
        read = _read_spec(file, index)
        problems.extend(read.problems)
        if read.name is not None:
            named.append((file, read.name))
        if read.spec is not None:
            specs.append(read.spec)
    problems.extend(_duplicate_names(named))
    return [spec.bind(index) for spec in specs], problems


def _spec_files(paths: Iterable[Path]) -> tuple[list[Path], list[Problem]]:
    files: dict[Path, Path] = {}  # resolved → as given, so a file named twice is read once
    problems: list[Problem] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in SPEC_SUFFIXES)
            if not found:
                problems.append(Problem(str(path), "path", "no agent specs (*.yaml) found"))
        elif path.is_file():
            found = [path]
        else:
            found = []
            problems.append(Problem(str(path), "path", "no such file or directory"))
        for file in found:
            files.setdefault(file.resolve(), file)
    return list(files.values()), problems


@dataclass(frozen=True, slots=True)
class _Read:
    """One file read: the spec when it has no problem, and its name whenever that parsed."""

    spec: AgentSpec | None
    name: str | None
    problems: list[Problem]


def _read_spec(path: Path, index: OperationIndex) -> _Read:
    where = str(path)
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        return _Read(None, None, [Problem(where, "yaml", _yaml_message(exc))])
    except (OSError, UnicodeDecodeError) as exc:
        return _Read(None, None, [Problem(where, "path", f"cannot read: {exc}")])
    if not isinstance(data, dict):
        got = "an empty file" if data is None else type(data).__name__
        return _Read(None, None,
                     [Problem(where, "yaml", f"expected a mapping of fields, got {got}")])
    sink: list[tuple[str, str]] = []
    problems: list[Problem] = []
    spec: AgentSpec | None = None
    try:
        spec = AgentSpec.model_validate(data, context={"problems": sink})
    except ValidationError as exc:
        problems.extend(Problem(where, *_pydantic_problem(err)) for err in exc.errors())
    problems.extend(Problem(where, field, msg) for field, msg in sink)
    problems.extend(Problem(where, field, msg) for field, msg in _catalogue_problems(data, index))
    return _Read(spec if not problems else None, _parsed_name(data), problems)


def _parsed_name(data: dict[str, Any]) -> str | None:
    """The spec's `name` when it is a valid agent name, whatever else is wrong with it."""
    name = data.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name.strip()):
        return None
    return name.strip()


def _yaml_message(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is None:
        return f"syntax error: {problem}"
    return f"syntax error at line {mark.line + 1}, column {mark.column + 1}: {problem}"


def _pydantic_problem(err: Any) -> tuple[str, str]:
    loc: tuple[str | int, ...] = tuple(err["loc"])
    field = ""
    for part in loc:
        if part == "[key]":  # pydantic's marker for "the key itself was invalid"
            continue
        field += f"[{part}]" if isinstance(part, int) else (f".{part}" if field else str(part))
    kind, msg = err["type"], str(err["msg"])
    if kind == "extra_forbidden":
        return field, "unknown field"
    if kind == "missing":
        hint = " (declare read_only: true or false)" if field == "read_only" else ""
        return field, f"required field is missing{hint}"
    return field or "spec", msg.removeprefix("Value error, ")


def _catalogue_problems(data: dict[str, Any], index: OperationIndex) -> list[tuple[str, str]]:
    """Checks against the operations catalogue, run on the raw data so they always run."""
    tools = data.get("tools")
    if not isinstance(tools, list):
        return []
    ids = [t for t in tools if isinstance(t, str) and NAME_RE.match(t)]
    problems = [("tools", f"unknown tool {t!r}") for t in ids if t not in index]
    writes = [t for t in ids if t in index and index[t].kind == "write"]
    read_only, kind = data.get("read_only"), data.get("kind")
    for tool in writes:
        if read_only is True:
            problems.append(("tools", f"write tool {tool!r} on a read-only agent"))
        elif kind == "query":
            problems.append(("tools", f"write tool {tool!r} on a query agent"))
    if kind == "query" and read_only is False and not writes and not data.get("visitor"):
        problems.append(("read_only", "a query agent must be read_only: true"))
    if kind == "action":
        problems.extend(_role_problems(data.get("roles"), [index[t] for t in writes]))
    return problems


def _role_problems(roles: Any, writes: list[OperationInfo]) -> list[tuple[str, str]]:
    """A role the agent advertises but one of its write operations refuses (one per role)."""
    if not isinstance(roles, list):
        return []
    problems: list[tuple[str, str]] = []
    for raw in roles:
        try:
            role = parse_role(raw) if isinstance(raw, str) else None
        except BadInput:
            continue  # the schema reports unknown roles
        refused = [op for op in writes if role is not None and not op.allows(role)]
        if role is None or not refused:
            continue
        listing = "; ".join(f"{op.id} ({_role_list(op)} only)" for op in refused)
        problems.append(("roles", f"role {role.value!r} cannot call {listing}"))
    return problems


def _role_list(op: OperationInfo) -> str:
    allowed = {*(op.roles or ()), Role.ADMIN}
    return ", ".join(r.value for r in Role if r in allowed)


def _duplicate_names(named: list[tuple[Path, str]]) -> list[Problem]:
    """One problem per file that repeats an earlier file's agent name, naming both files."""
    first: dict[str, Path] = {}
    problems: list[Problem] = []
    for path, name in named:
        if name in first:
            message = f"duplicate agent name {name!r} (also in {first[name]})"
            problems.append(Problem(str(path), "name", message))
        else:
            first[name] = path
    return problems
