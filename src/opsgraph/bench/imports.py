"""Case 9: the first chat request's cold imports, in a fresh interpreter, best of N,
against LangGraph's own (the handler's cold start under the image's conditions:
`bench.coldstart`).

Only the import statement is timed (interpreter start-up is not), in wall and CPU time.
opsgraph is imported from the read-only byte-compiled copy the cold-start rows use (as the
image ships it), with `PYTHONDONTWRITEBYTECODE=1`: the libraries are byte-compiled by pip,
and an editable checkout's source is not (with that variable set, as on this machine, every
run compiled opsgraph afresh while LangGraph's import read bytecode: 1.64 × instead of 1.36 ×
in one measurement).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from opsgraph.bench.coldstart import image_like_package
from opsgraph.bench.drive import BenchFailure
from opsgraph.bench.report import Row, cpu_ratio_row

BASELINE = ("langgraph.graph", "langgraph.prebuilt")
FIRST_CHAT = ("opsgraph.engine.runner", "opsgraph.engine.graph", "langchain_aws")
FIRST_CHAT_FULL = (*FIRST_CHAT, "langgraph.checkpoint.mongodb", "opsgraph.models.bedrock",
                   "opsgraph.registry.ranker", "onnxruntime", "tokenizers")
FIRST_CHAT_TARGET = 1.0
_PROGRAM = ("import time; wall, cpu = time.perf_counter(), time.process_time(); "
            "import {modules}; print(time.perf_counter() - wall, time.process_time() - cpu)")


def import_cost(modules: tuple[str, ...], site: Path) -> tuple[float, float]:
    """(wall, CPU) seconds to import `modules` in a fresh interpreter, opsgraph from `site`."""
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", _PROGRAM.format(modules=", ".join(modules))],
                          capture_output=True, text=True, timeout=120, check=False, env=env)
    if done.returncode != 0:
        raise BenchFailure(f"import {', '.join(modules)} failed: "
                           f"{done.stderr.strip().splitlines()[-1:]}")
    wall, cpu = done.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def best_costs(sets: dict[str, tuple[str, ...]], repeats: int) -> dict[str, tuple[float, float]]:
    """Best (wall, CPU) of `repeats` per set; the sets take turns, so load hits all alike."""
    best = {name: (float("inf"), float("inf")) for name in sets}
    with image_like_package() as site:
        for _ in range(repeats):
            for name, modules in sets.items():
                wall, cpu = import_cost(modules, site)
                best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best


def import_rows(repeats: int) -> list[Row]:
    """The first chat request's imports vs LangGraph's and langchain_aws's (the handler
    module's import is measured under the image's conditions: `bench.coldstart`).

    Judged on CPU time, which other processes on the machine disturb far less than wall
    time (an import is single-threaded, so on an idle machine the two agree).
    """
    costs = best_costs({"first": FIRST_CHAT, "full": FIRST_CHAT_FULL,
                        "aws": (*BASELINE, "langchain_aws")}, repeats)
    full, aws = costs["full"], costs["aws"]
    return [
        cpu_ratio_row(
            "9", "cold import: first chat request", costs["first"], aws, FIRST_CHAT_TARGET,
            f"import {', '.join(FIRST_CHAT)} ÷ import {', '.join(BASELINE)}, langchain_aws; "
            "adding what the first request also loads (the checkpointer, the Bedrock model "
            f"module, the ranker runtime): {full[1] * 1000:.0f} ms CPU = "
            f"{full[1] / aws[1]:.2f} ×; opsgraph from the byte-compiled copy"),
    ]
