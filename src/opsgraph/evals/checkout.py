"""Where the eval suite's files live: the checkout this package runs from."""

from __future__ import annotations

from pathlib import Path


def repo_root() -> Path | None:
    """The checkout this module runs from (a parent with `pyproject.toml` and `evals/`)."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "evals").is_dir() and (parent / "pyproject.toml").exists():
            return parent
    return None
