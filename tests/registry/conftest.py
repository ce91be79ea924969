"""Registry fixtures: the real operations catalogue, the real registry, spec-file writers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from opsgraph.registry.loader import load_registry
from opsgraph.registry.operation_index import OperationIndex, operation_index
from opsgraph.registry.registry import Registry

ROOT = Path(__file__).resolve().parents[2]
AGENTS = ROOT / "agents"
ROUTING_DATASET = ROOT / "evals" / "datasets" / "routing.yaml"

SpecWriter = Callable[..., Path]


@pytest.fixture(scope="session")
def operations() -> OperationIndex:
    """The catalogue the registry is checked against."""
    return operation_index()


@pytest.fixture(scope="session")
def registry(operations: OperationIndex) -> Registry:
    """The real registry under agents/."""
    return load_registry(AGENTS, operations=operations)


def valid_action_spec() -> dict[str, Any]:
    """A small valid action agent (members.touch_up), to break one field at a time."""
    return {
        "name": "members.touch_up",
        "description": 'Fix a typo in a member record: "fix her surname".',
        "domain": "members",
        "operations": ["update"],
        "kind": "action",
        "read_only": False,
        "roles": ["staff"],
        "entitlement": "members",
        "tools": ["members.get", "members.update"],
        "requires": {"members.update": ["members.get"]},
        "guidelines": "- Read the record first.",
    }


def valid_query_spec() -> dict[str, Any]:
    """A small valid query agent (members.peek)."""
    return {
        "name": "members.peek",
        "description": 'Show a member: "show me Jane".',
        "domain": "members",
        "operations": ["get"],
        "kind": "query",
        "read_only": True,
        "entitlement": "members",
        "tools": ["members.search", "members.get"],
    }


@pytest.fixture
def write_spec(tmp_path: Path) -> SpecWriter:
    """Write a spec as YAML under tmp_path/<root>/<domain>/<file>.yaml; returns the path."""

    def write(data: dict[str, Any] | str, *, root: str = "agents", domain: str | None = None,
              file: str | None = None) -> Path:
        if isinstance(data, dict):
            name = str(data.get("name", "members.unnamed"))
            domain = domain or name.split(".", 1)[0]
            file = file or name.split(".", 1)[1]
            text = yaml.safe_dump(data, sort_keys=False)
        else:
            domain, file, text = domain or "members", file or "broken", data
        path = tmp_path / root / domain / f"{file}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return write
