"""Figures of the tree's shape, for a review's before/after note (not part of the product).

    python tests/shape_figures.py [SRC]

Module sizes, function-level imports (and how many carry a reason marker), import cycles
between modules inside a package, and `Any` in function signatures.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

MARKER = re.compile(r"#\s*(heavy|cycle):")


def _modules(src: Path) -> dict[str, Path]:
    found = {}
    for path in sorted((src / "opsgraph").rglob("*.py")):
        names = path.relative_to(src).with_suffix("").parts
        if names[-1] == "__init__":
            names = names[:-1]
        found[".".join(names)] = path
    return found


def _target(name: str, known: dict[str, Path]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def main(src: Path) -> None:
    known = _modules(src)
    sizes = sorted(len(p.read_text().splitlines()) for p in known.values())
    local = 0
    local_modules = set()
    marked = 0
    any_sig = 0
    edges: dict[str, set[str]] = defaultdict(set)
    for module, path in known.items():
        text = path.read_text()
        lines = text.splitlines()
        tree = ast.parse(text)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                annotations = [a.annotation for a in
                               [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs,
                                *( [fn.args.vararg] if fn.args.vararg else []),
                                *( [fn.args.kwarg] if fn.args.kwarg else [])]]
                annotations.append(fn.returns)
                for a in annotations:
                    if a is not None and re.search(r"\bAny\b", ast.unparse(a)):
                        any_sig += 1
                for node in ast.walk(fn):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        local += 1
                        local_modules.add(module)
                        near = lines[node.lineno - 1] + (lines[node.lineno - 2]
                                                         if node.lineno > 1 else "")
                        marked += bool(MARKER.search(near))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                         for a in node.names]
            else:
                continue
            for name in names:
                target = _target(name, known) if name.startswith("opsgraph") else None
                if target and target != module and (
                        target.rpartition(".")[0] == module.rpartition(".")[0]):
                    edges[module].add(target)
    cycles = 0
    graph = {m: set(t) for m, t in edges.items()}
    while True:
        try:
            TopologicalSorter(graph).prepare()
            break
        except CycleError as err:
            ring = err.args[1]
            print("  cycle:", " -> ".join(ring))
            cycles += 1
            graph[ring[1]].discard(ring[0])  # graphlib reports [a, ..., a] with edge a <- next
    print(f"modules {len(sizes)}, mean {sum(sizes) / len(sizes):.0f} lines, "
          f"max {sizes[-1]}, over 400: {sum(s > 400 for s in sizes)}")
    print(f"function-level imports {local} in {len(local_modules)} modules, "
          f"{marked} with a reason marker")
    print(f"cycles inside a package (module level): {cycles}")
    print(f"`Any` in function signatures: {any_sig}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[1] / "src")
