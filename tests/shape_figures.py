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
from pathlib import Path

from opsgraph.cycles import find_cycle
from tests.test_layers import imports, modules

MARKER = re.compile(r"#\s*(heavy|cycle):")


def _in_one_package(src: Path) -> dict[str, set[str]]:
    """Module → the modules of its own package it imports (at the top or in a function)."""
    edges: dict[str, set[str]] = defaultdict(set)
    for found in imports(src):
        if found.source.rpartition(".")[0] == found.target.rpartition(".")[0]:
            edges[found.source].add(found.target)
    return edges


def main(src: Path) -> None:
    known = modules(src)
    sizes = sorted(len(p.read_text().splitlines()) for p in known.values())
    local = 0
    local_modules = set()
    marked = 0
    any_sig = 0
    for module, path in known.items():
        text = path.read_text()
        lines = text.splitlines()
        for fn in ast.walk(ast.parse(text)):
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
    cycles = 0
    graph = _in_one_package(src)
    while ring := find_cycle(graph):  # count each, then break it at its first edge
        print("  cycle:", " -> ".join(ring))
        cycles += 1
        graph[ring[0]].discard(ring[1])
    print(f"modules {len(sizes)}, mean {sum(sizes) / len(sizes):.0f} lines, "
          f"max {sizes[-1]}, over 400: {sum(s > 400 for s in sizes)}")
    print(f"function-level imports {local} in {len(local_modules)} modules, "
          f"{marked} with a reason marker")
    print(f"cycles inside a package (module level): {cycles}")
    print(f"`Any` in function signatures: {any_sig}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[1] / "src")
