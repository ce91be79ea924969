"""The score each dimension must reach: `evals/thresholds.yaml` of the checkout.

The file maps dimension names to a fraction in [0, 1], either at the top level or under
`thresholds:`; a dimension it leaves out keeps its default. No file: the defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from opsgraph.errors import BadInput
from opsgraph.evals.checkout import repo_root
from opsgraph.evals.scores import DIMENSIONS
from opsgraph.yaml_text import load_yaml

DEFAULT_THRESHOLDS: dict[str, float] = {
    "plan_valid": 0.95, "routing": 0.85, "dependencies": 0.8, "tool_choice": 0.8,
    "interrupts": 0.9, "preview": 0.95, "groundedness": 0.85, "pii": 1.0,
}


def thresholds_path() -> Path:
    """`evals/thresholds.yaml` of the checkout, else of the working directory."""
    return (repo_root() or Path.cwd()) / "evals" / "thresholds.yaml"


def _value(path: Path, name: str, raw: Any) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 <= raw <= 1:
        raise BadInput(f"{path}: {name}: expected a number from 0 to 1, got {raw!r}")
    return float(raw)


def load_thresholds(path: Path | None = None) -> dict[str, float]:
    """Every dimension's threshold: the file's where it names one, else the default."""
    path = path or thresholds_path()
    if not path.is_file():
        return dict(DEFAULT_THRESHOLDS)
    try:
        data = load_yaml(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise BadInput(f"{path}: cannot read the thresholds ({exc})") from None
    if isinstance(data, dict) and set(data) == {"thresholds"}:
        data = data["thresholds"] or {}
    if not isinstance(data, dict):
        raise BadInput(f"{path}: expected a mapping of dimension → threshold")
    unknown = sorted(str(k) for k in set(data) - set(DIMENSIONS))
    if unknown:
        raise BadInput(f"{path}: {unknown[0]}: unknown dimension (known: "
                       f"{', '.join(DIMENSIONS)})")
    return {**DEFAULT_THRESHOLDS,
            **{str(k): _value(path, str(k), v) for k, v in data.items()}}
