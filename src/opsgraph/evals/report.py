"""The suite's report: dimensions against thresholds, per split, cost and time, per case.

`build_report` turns case results into the `report.json` / `--json` document:

    {"suite", "model", "datasets", "split", "created_at", "wall_seconds", "passed",
     "dimensions": {name: {"score", "threshold", "passed", "cases", "failed"}},
     "splits": {"dev" | "heldout": {"cases", "passed_cases", "dimensions": {...}}},
     "cost": {"cases", "errored", "seconds_median", "seconds_mean", "model_calls_median",
              "model_calls_mean", "input_tokens", "output_tokens", ...},
     "headline": {"right_cards" | "single_intent_routing": {"cases", "passed"}},
     "cases": [CaseResult.to_json(), ...]}

A dimension no case applies to has score null and passes.
"""

from __future__ import annotations

import json
import statistics
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from opsgraph.errors import BadInput
from opsgraph.evals.cases import SPLITS
from opsgraph.evals.render import render_markdown
from opsgraph.evals.scores import DIMENSIONS

REPORT_VERSION = 1
EPSILON = 1e-9


def _dimension(cases: list[dict[str, Any]], name: str, threshold: float) -> dict[str, Any]:
    scored = [c["scores"][name]["passed"] for c in cases if name in c["scores"]]
    score = sum(scored) / len(scored) if scored else None
    return {"score": score, "threshold": threshold,
            "passed": score is None or score + EPSILON >= threshold,
            "cases": len(scored), "failed": len(scored) - sum(scored)}


def dimensions(cases: list[dict[str, Any]], thresholds: dict[str, float]
               ) -> dict[str, dict[str, Any]]:
    """Every dimension's score over these cases, against its threshold."""
    return {name: _dimension(cases, name, thresholds[name]) for name in DIMENSIONS}


def _stat(values: list[float], how: str) -> float:
    if not values:
        return 0.0
    return float(statistics.median(values) if how == "median" else statistics.fmean(values))


def cost(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Time, model calls and tokens over these cases."""
    seconds = [float(c["seconds"]) for c in cases]
    calls = [float(c["model_calls"]) for c in cases]
    tokens_in = sum(int(c["input_tokens"]) for c in cases)
    tokens_out = sum(int(c["output_tokens"]) for c in cases)
    return {"cases": len(cases), "errored": sum(1 for c in cases if c["errored"]),
            "seconds_median": _stat(seconds, "median"), "seconds_mean": _stat(seconds, "mean"),
            "model_calls_median": _stat(calls, "median"),
            "model_calls_mean": _stat(calls, "mean"),
            "input_tokens": tokens_in, "output_tokens": tokens_out,
            "input_tokens_mean": tokens_in / len(cases) if cases else 0.0,
            "output_tokens_mean": tokens_out / len(cases) if cases else 0.0}


def headline(cases: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """The two figures staff feel: write requests that ended in the right card (the case
    expects cards and `interrupts` passed: the cards raised are the expected operations with
    the expected target and values, times included), and routing over the cases that ask
    for one thing (one expected task)."""
    def expected(case: dict[str, Any], key: str) -> Any:
        return (case.get("expected") or {}).get(key)

    def passed(case: dict[str, Any], name: str) -> bool:
        return bool(case["scores"].get(name, {"passed": True})["passed"])

    writes = [c for c in cases if expected(c, "cards")]
    single = [c for c in cases if expected(c, "tasks") == 1 and "routing" in c["scores"]]
    return {"right_cards": {"cases": len(writes),
                            "passed": sum(passed(c, "interrupts") for c in writes)},
            "single_intent_routing": {"cases": len(single),
                                      "passed": sum(passed(c, "routing") for c in single)}}


def build_report(cases: list[dict[str, Any]], *, thresholds: dict[str, float],
                 model: str, datasets: list[str], split: str,
                 wall_seconds: float) -> dict[str, Any]:
    """The report document of a finished suite (cases as `CaseResult.to_json()`)."""
    dims = dimensions(cases, thresholds)
    splits = {}
    for name in SPLITS:
        part = [c for c in cases if c["split"] == name]
        if part:
            splits[name] = {"cases": len(part),
                            "passed_cases": sum(1 for c in part if c["passed"]),
                            "dimensions": dimensions(part, thresholds)}
    return {"suite": "assistant", "version": REPORT_VERSION, "model": model,
            "datasets": datasets, "split": split,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "wall_seconds": round(wall_seconds, 3),
            "passed": all(d["passed"] for d in dims.values()),
            "dimensions": dims, "splits": splits, "cost": cost(cases),
            "headline": headline(cases), "cases": cases}


def write_report(report: dict[str, Any], directory: Path) -> list[Path]:
    """Write `report.json` and `report.md` into `directory` (created); returns both paths."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"{directory}: --report: cannot create the folder ({exc})") from None
    if not directory.is_dir():
        raise BadInput(f"{directory}: --report: not a folder")
    as_json, as_md = directory / "report.json", directory / "report.md"
    as_json.write_text(json.dumps(report, indent=2, default=str, ensure_ascii=False) + "\n",
                       encoding="utf-8")
    as_md.write_text(render_markdown(report), encoding="utf-8")
    return [as_json, as_md]


def read_report(path: Path) -> dict[str, Any]:
    """A `report.json` written by this suite; BadInput naming the file otherwise."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"{path}: --compare: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInput(f"{path}: --compare: not a readable JSON report ({exc})") from None
    if not isinstance(data, dict) or data.get("suite") != "assistant" \
            or not isinstance(data.get("dimensions"), dict) \
            or not isinstance(data.get("cases"), list):
        raise BadInput(f"{path}: --compare: not a report.json of `opsgraph eval`")
    return data
