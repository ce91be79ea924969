"""Imports point downward: no cycle between opsgraph's parts, lower layers never import
upper ones.

Every module under src/opsgraph is parsed (not imported) and every import in it counts:
at the top of the module and inside functions alike, so a function-level import cannot
hide a cycle. (Function-level imports stay welcome for cold-start laziness, in api/app.py
and the CLI for instance, but they must point downward too.) A part is a subpackage
(`opsgraph.engine`) or a top-level module (`opsgraph.gates`). Inside the `cli` package too
the imports point one way: `cli.shared` is its leaf, `cli/__init__` its top.

The function-level-import rule (new code follows it now; no test here checks it yet —
the check comes with moving the ~590 function-level imports that predate it). An
import inside a function is allowed only
- in an entry module (the CLI, the Lambda handlers, api/app.py), or
- for a named heavy package, for cold start, with the marker on the import's own line or on
  the line just above it, exactly

      # heavy: PACKAGE (cold start)

  e.g. `# heavy: langchain_aws (cold start)`, where PACKAGE is the top-level package that is
  slow to import (the import itself may name a module that pulls it in), or
- to break a named cycle, with the marker `# cycle: MODULE` naming the module on the other
  side of the cycle.
Every other import stands at the top of its module.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from opsgraph.cycles import find_cycle

ROOT = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "opsgraph"

# Lowest first. A part may import its own modules and parts of lower layers only.
LAYERS: tuple[tuple[str, ...], ...] = (
    (PACKAGE, "errors", "status_words", "cycles"),
    ("secrets",),  # read by settings when a deployment names its secrets by ARN
    ("settings", "faults"),
    ("telemetry",),  # logs, metrics, traces: read settings, used from the store up
    ("principal",),
    ("gates", "auth"),
    ("store",),
    ("knowledge",),
    ("audit",),
    ("operations",),
    ("tools", "registry", "models", "resolve"),
    ("approvals", "harness"),
    ("engine",),
    ("jobs", "bootstrap"),
    ("evals", "bench"),
    ("api",),
    ("cli",),
)
LAYER_OF = {part: n for n, parts in enumerate(LAYERS) for part in parts}


@dataclass(frozen=True, slots=True)
class Import:
    """One import statement naming another opsgraph module."""

    source: str  # the importing module
    target: str  # the imported module
    where: str  # path:line

    @property
    def parts(self) -> tuple[str, str]:
        return part_of(self.source), part_of(self.target)


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Module name → file, for every module of the package (under `root`, another tree's
    `src` for tests/shape_figures.py)."""
    found = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        names = path.relative_to(root).with_suffix("").parts
        if names[-1] == "__init__":
            names = names[:-1]
        found[".".join(names)] = path
    return found


def part_of(module: str) -> str:
    names = module.split(".")
    return names[1] if len(names) > 1 else PACKAGE


def _known(name: str, known: dict[str, Path]) -> str | None:
    """The longest prefix of a dotted name that is a module of the package."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(root: Path = ROOT) -> list[Import]:
    """Every import of one opsgraph module by another, wherever it stands in the file."""
    known = modules(root)
    found = []
    for module, path in known.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                # `from opsgraph import cli` imports the module opsgraph.cli
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                         for a in node.names]
            else:
                continue
            where = f"{path.relative_to(root)}:{node.lineno}"
            for name in dict.fromkeys(names):  # once per statement
                target = _known(name, known) if name.startswith(PACKAGE) else None
                if target is not None and target != module:
                    found.append(Import(module, target, where))
    return found


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one part (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_scan_sees_function_level_and_relative_imports() -> None:
    found = {(i.source, i.target) for i in imports()}
    # api/app.py imports the MCP links inside create_app (cold-start laziness)
    assert ("opsgraph.api.app", "opsgraph.api.mcp_user") in found
    assert ("opsgraph.cli", "opsgraph.cli.harness") in found  # `from opsgraph.cli import ...`
    assert ("opsgraph.operations.invoke", "opsgraph.audit") in found


def test_every_part_has_a_layer() -> None:
    unplaced = sorted({part_of(m) for m in modules()} - set(LAYER_OF))
    assert not unplaced, f"place these parts of opsgraph in LAYERS: {unplaced}"


def test_no_import_cycle_between_parts() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    sites: dict[tuple[str, str], list[str]] = defaultdict(list)
    for imp in imports():
        source, target = imp.parts
        if source != target:
            edges[source].add(target)
            sites[source, target].append(f"{imp.where} imports {imp.target}")
    problems = []
    for component in cycles(edges):
        members = set(component)
        lines = [site for (a, b), found in sorted(sites.items())
                 if a in members and b in members for site in found]
        problems.append(f"cycle between {', '.join(component)}:\n  " + "\n  ".join(lines))
    assert not problems, "\n".join(problems)


def test_imports_point_downward() -> None:
    upward = []
    for imp in imports():
        source, target = imp.parts
        if source != target and LAYER_OF.get(target, -1) >= LAYER_OF.get(source, -1):
            upward.append(f"{imp.where} imports {imp.target}: {target} is not below {source}")
    assert not upward, "\n".join(upward)


def test_the_cli_package_points_one_way() -> None:
    """No cycle among the CLI's modules (a command group may use another's printing, as
    approvals does runs', never the other way round too), and `cli.shared` imports none."""
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in imports():
        if imp.parts == ("cli", "cli"):
            edges[imp.source].add(imp.target)
    assert "opsgraph.cli.harness" in edges["opsgraph.cli"]
    ring = find_cycle(edges)
    assert not ring, "import cycle inside the cli package: " + " -> ".join(ring)
    assert not edges["opsgraph.cli.shared"], "cli.shared is the package's leaf"
