"""Imports point downward: no cycle between opsgraph's parts, lower layers never import
upper ones.

Every module under src/opsgraph is parsed (not imported) and every import in it counts:
at the top of the module and inside functions alike, so a function-level import cannot
hide a cycle. (Function-level imports stay welcome for cold-start laziness, in api/app.py
and the CLI for instance, but they must point downward too.) A part is a subpackage
(`opsgraph.engine`) or a top-level module (`opsgraph.gates`). Inside the `cli` package too
the imports point one way: `cli.shared` is its leaf, `cli/__init__` its top.

The function-level-import rule (test_function_level_imports_are_explained checks it). An
import inside a function (of anything: opsgraph's modules or another package) is allowed only
- in an entry module (ENTRY_MODULES, and the CLI package: `opsgraph.cli`, `opsgraph.cli.*`),
  or
- for a named heavy package, for cold start, with the marker on the import's own line or on
  the line just above it, exactly

      # heavy: PACKAGE (cold start)

  e.g. `# heavy: langchain_aws (cold start)`, where PACKAGE is one of HEAVY (top-level
  packages, or parts of opsgraph itself such as `opsgraph.evals`, measured slow to import)
  and the import pulls it in: it names PACKAGE (or a module of it), or an opsgraph module
  whose module-level imports reach it, or
- to break a named cycle, with the marker `# cycle: MODULE` naming the opsgraph module on the
  other side: the import reaches MODULE and MODULE's module-level imports reach the importing
  module back, so the import at the top would close a cycle.
Every other import stands at the top of its module. An `if TYPE_CHECKING:` block at module
level is a top-level import.

Inside one package, the modules' imports have no cycle either (module-level imports and the
function-level ones without a `# cycle:` marker; test_no_import_cycle_inside_a_package).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from opsgraph.cycles import find_cycle

ROOT = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "opsgraph"

# Lowest first. A part may import its own modules and parts of lower layers only.
LAYERS: tuple[tuple[str, ...], ...] = (
    (PACKAGE, "errors", "status_words", "cycles", "yaml_text", "lazy_build"),
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

# Where a function-level import needs no reason: the entry points, whose imports wait for the
# command or the event that needs them (and the CLI package, `opsgraph.cli`, `opsgraph.cli.*`:
# see is_entry).
ENTRY_MODULES = frozenset({
    "opsgraph.api.app",  # the ASGI app: its routes and the MCP links it builds
    "opsgraph.api.lambda_handler",  # the mangum entry
    "opsgraph.api.lambda_web",  # the Lambda Web Adapter entry (uvicorn)
})
# The packages a `# heavy:` marker may name: each adds at least 20 ms of CPU to an interpreter
# that has already imported the Lambda handler (whose own import is about 450 ms), so keeping it
# off the handler's import, the first /health or the first chat request is worth a
# function-level import. Measured on 2026-12-02 (ms of CPU, best of 5, runs under load ranged
# as shown) with
#     python -c "import opsgraph.api.lambda_handler, time; c = time.process_time();
#                import X; print(time.process_time() - c)"
# and located with `python -X importtime`. Below the bar, so imported at the top: uvicorn
# 18-19, phonenumbers 12-17, yaml 9-11, aws_lambda_powertools 8-12, rapidfuzz 7-13, asyncio 0
# (starlette loads it already), pymongo 0 (the handler loads it already).
# opsgraph's own parts (a subpackage or a module; the marker names it as it is imported,
# `opsgraph.X`) are measured the same way, after a handler whose route modules import none of
# them at the top (best of 5-7, 2026-12-02). Below the bar, so imported at the top:
# opsgraph.registry 17-23 (its yaml 8 included), opsgraph.models 3-4 (models.demo 13-16),
# engine.state 11, knowledge.catalogue 10-12, operations.catalogue_admin 10-12.
HEAVY = {
    "langchain_aws": "920-1020",
    "langchain_openai": "1000-1300; the `openai` extra, absent unless installed",
    "langchain_community": "the `llamacpp` extra, absent unless installed (not measured here)",
    "langgraph": "600-730 (langgraph.graph, .runtime, .prebuilt); .checkpoint.mongodb 113-120",
    "langgraph_supervisor": "870-890; a dev dependency (the bench's baseline)",
    "langchain_core": "44-58 (langchain_core.messages); 145 in a fresh interpreter",
    "mcp": "505-580 (mcp.server)",
    "mcp_types": "92-112",
    "ag_ui": "74-125 (ag_ui.core, ag_ui.encoder)",
    "onnxruntime": "120-122",
    "onnx": "1310-1690 (2026-12-07): only to derive the embedder's model "
            "(knowledge.quantized_model, knowledge.graph_fusion)",
    "tokenizers": "7 (18 fresh): under the bar, but the embedder's runtime with onnxruntime, "
                  "which tests/registry keeps off the registry's import",
    "bm25s": "96-110",
    "boto3": "64-77",
    "botocore": "48-86 (botocore.session, botocore.config)",
    "numpy": "52-76",
    "jsonschema": "28-37 (67-91 fresh)",
    "dateparser": "26-36 (54-110 fresh)",
    "sse_starlette": "23-32 (96-137 fresh)",
    "amazon": "45 (ADOT's OTLP-over-UDP exporter); the `lambda` extra",
    "opentelemetry": "20 (the SDK; the API alone 5); the `lambda` extra: with traces off "
                     "nothing of it is imported (telemetry.traces)",
    "opsgraph.evals": "105-122 (evals.harness_tests, which reaches resolve, registry and "
                      "models); the package 117-167",
    "opsgraph.harness": "7-12 since its format's models are lazy (2026-12-05: harness.spec "
                        "7, .changes 7, .validate 11, .diagram 12, .versions 12; 20-27 "
                        "before): under the bar now, kept off the handler's import all the "
                        "same, whose row (0.49 of langgraph.graph) is at its 0.5 target",
    "opsgraph.resolve.resolver": "36-38 (with phonenumbers and rapidfuzz; 2026-12-05, from the "
                                 "byte-compiled copy); the package alone, its mentions, 2",
    "opsgraph.api.response_models": "20-23 (api.inbox_models with it 25-43)",
}
HEAVY_MARK = re.compile(r"#\s*heavy:\s*(\S+)\s*\(cold start\)")
CYCLE_MARK = re.compile(r"#\s*cycle:\s*([\w.]+)")


@dataclass(frozen=True, slots=True)
class Import:
    """One import statement naming another opsgraph module."""

    source: str  # the importing module
    target: str  # the imported module
    where: str  # path:line
    kind: str = "module"  # "module" (runs on import), "function" or "type_checking"

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


@dataclass(frozen=True, slots=True)
class Statement:
    """One import statement of a module, where it stands and the names it imports."""

    module: str
    path: Path
    node: ast.Import | ast.ImportFrom
    kind: str  # "module", "function" or "type_checking"
    names: tuple[str, ...]  # dotted, relative imports resolved


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _walk(node: ast.AST, kind: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, kind
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _walk(child, "function")
        elif kind == "module" and _is_type_checking(child):
            for stmt in child.body:  # the else branch runs
                yield from _walk(ast.Module([stmt], []), "type_checking")
            for stmt in getattr(child, "orelse", []):
                yield from _walk(ast.Module([stmt], []), kind)
        else:
            yield from _walk(child, kind)


def statements(root: Path = ROOT) -> Iterator[Statement]:
    """Every import statement of the package, with where it stands."""
    known = modules(root)
    for module, path in known.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node, kind in _walk(ast.parse(path.read_text(encoding="utf-8"), str(path)), "module"):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                # `from opsgraph import cli` imports the module opsgraph.cli
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                         for a in node.names]
            yield Statement(module, path, node, kind, tuple(dict.fromkeys(names)))


def imports(root: Path = ROOT) -> list[Import]:
    """Every import of one opsgraph module by another, wherever it stands in the file."""
    known = modules(root)
    found = []
    for stmt in statements(root):
        where = f"{stmt.path.relative_to(root)}:{stmt.node.lineno}"
        for name in stmt.names:  # once per statement
            target = _known(name, known) if name.startswith(PACKAGE) else None
            if target is not None and target != stmt.module:
                found.append(Import(stmt.module, target, where, stmt.kind))
    return found


def is_entry(module: str) -> bool:
    return (module in ENTRY_MODULES or module == f"{PACKAGE}.cli"
            or module.startswith(f"{PACKAGE}.cli."))


def _pulled(stmt: Statement, known: dict[str, Path]) -> set[str]:
    """What importing the statement's names runs: the opsgraph modules (each with the
    packages above it, whose `__init__` runs first) and other packages' top-level names."""
    found = set()
    for name in stmt.names:
        if not name.startswith(PACKAGE):
            found.add(name.split(".")[0])
            continue
        target = _known(name, known)
        while target:
            if target in known and target != stmt.module:
                found.add(target)
            target = target.rpartition(".")[0]
    return found


def module_level_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module → what its module-level imports run (opsgraph modules and top-level names)."""
    known = modules(root)
    edges: dict[str, set[str]] = {module: set() for module in known}
    for stmt in statements(root):
        if stmt.kind == "module":
            edges[stmt.module] |= _pulled(stmt, known)
    return edges


def _reach(edges: dict[str, set[str]], start: set[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(start)
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(edges.get(node, ()))
    return seen


def _marker(stmt: Statement, pattern: re.Pattern[str]) -> str | None:
    """The marker on the statement's lines or on a comment line just above it (not another
    import's own)."""
    lines = stmt.path.read_text(encoding="utf-8").splitlines()
    first = stmt.node.lineno - 1
    own = lines[first:stmt.node.end_lineno or stmt.node.lineno]
    above = [lines[first - 1]] if first and lines[first - 1].lstrip().startswith("#") else []
    for line in [*own, *above]:
        if found := pattern.search(line):
            return found.group(1)
    return None


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
def _unexplained(stmt: Statement, known: dict[str, Path], graph: dict[str, set[str]],
                 heavy: Collection[str] = HEAVY.keys()) -> str | None:
    """Why a function-level import breaks the rule (None when it keeps it)."""
    pulled = _reach(graph, _pulled(stmt, known))
    if (package := _marker(stmt, HEAVY_MARK)) is not None:
        if package not in heavy:
            return f"`# heavy: {package}` names no package of test_layers.HEAVY"
        if package not in pulled:
            return f"`# heavy: {package}`, but the import does not pull {package} in"
        return None
    if (other := _marker(stmt, CYCLE_MARK)) is not None:
        if other not in known:
            return f"`# cycle: {other}` names no module of opsgraph"
        if other not in pulled:
            return f"`# cycle: {other}`, but the import does not reach {other}"
        if stmt.module not in _reach(graph, {other}):
            return (f"`# cycle: {other}`, but {other} does not import {stmt.module} back: "
                    "the import belongs at the top")
        return None
    return ("a function-level import outside an entry module, without `# heavy: PACKAGE "
            "(cold start)` or `# cycle: MODULE`: move it to the top of the module")


def test_function_level_imports_are_explained() -> None:
    known = modules()
    graph = module_level_graph()
    problems = []
    for stmt in statements():
        if stmt.kind != "function" or is_entry(stmt.module):
            continue
        if (why := _unexplained(stmt, known, graph)) is not None:
            problems.append(f"{stmt.path.relative_to(ROOT)}:{stmt.node.lineno}: {why}")
    assert not problems, "\n".join(problems)


def test_the_markers_are_checked(tmp_path: Path) -> None:
    """A marker that names nothing heavy, or a cycle that is not there, does not pass."""
    src = tmp_path / "src" / PACKAGE
    (src / "low").mkdir(parents=True)
    for name in ("__init__.py", "low/__init__.py"):
        (src / name).write_text("")
    (src / "low" / "a.py").write_text(
        "def f():\n"
        "    import json  # heavy: json (cold start)\n"
        "    import yaml  # heavy: numpy (cold start)\n"
        "    import numpy  # heavy: numpy (cold start)\n"
        "    from opsgraph.low import b  # cycle: opsgraph.low.b\n"
        "    from opsgraph.low import c  # cycle: opsgraph.low.c\n"
        "    from opsgraph.low import b\n"
        "    from opsgraph.low import b  # heavy: opsgraph.low.d (cold start)\n"
        "    from opsgraph.low import c  # heavy: opsgraph.low.d (cold start)\n")
    (src / "low" / "b.py").write_text("import numpy\n")
    (src / "low" / "c.py").write_text("from opsgraph.low import a, d\n")
    (src / "low" / "d.py").write_text("")
    root = tmp_path / "src"
    known, graph = modules(root), module_level_graph(root)
    heavy = {*HEAVY, "opsgraph.low.d"}  # a part of the package, measured slow
    found = [_unexplained(s, known, graph, heavy) for s in statements(root)
             if s.module == "opsgraph.low.a"]
    assert found[0] is not None and "names no package" in found[0]
    assert found[1] is not None and "does not pull numpy" in found[1]
    assert found[2] is None
    assert found[3] is not None and "does not import opsgraph.low.a back" in found[3]
    assert found[4] is None
    assert found[5] is not None and "move it to the top" in found[5]
    assert found[6] is not None and "does not pull opsgraph.low.d" in found[6]
    assert found[7] is None


def _package(module: str, known: dict[str, Path]) -> str:
    return module if known[module].name == "__init__.py" else module.rpartition(".")[0]


def test_no_import_cycle_inside_a_package() -> None:
    known = modules()
    edges: dict[str, set[str]] = defaultdict(set)
    sites: dict[tuple[str, str], str] = {}
    for stmt in statements():
        if stmt.kind == "type_checking" or (
                stmt.kind == "function" and _marker(stmt, CYCLE_MARK) is not None):
            continue
        for name in stmt.names:
            target = _known(name, known) if name.startswith(PACKAGE) else None
            if (target is None or target == stmt.module
                    or _package(target, known) != _package(stmt.module, known)):
                continue
            edges[stmt.module].add(target)
            sites.setdefault((stmt.module, target),
                             f"{stmt.path.relative_to(ROOT)}:{stmt.node.lineno}")
    ring = find_cycle(edges)
    assert not ring, "cycle inside a package: " + " -> ".join(ring) + "\n  " + "\n  ".join(
        f"{sites[a, b]} imports {b}" for a, b in pairwise(ring))
