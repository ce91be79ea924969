"""Validation reports every problem of a spec, one `PATH: field: message` line each."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from opsgraph.cli import main
from opsgraph.errors import BadInput
from opsgraph.principal import DOMAINS, FEATURES, VERBS, Role
from opsgraph.registry.loader import load_registry, validate_paths
from opsgraph.registry.operation_index import OperationIndex

from .conftest import AGENTS, SpecWriter, valid_action_spec, valid_query_spec

Spec = dict[str, Any]


def _set(**fields: Any) -> Callable[[Spec], None]:
    return lambda spec: spec.update(fields)


def _drop(field: str) -> Callable[[Spec], None]:
    return lambda spec: spec.pop(field)


ROLES = "visitor, member, staff, manager, admin"
ACTION_CASES: list[tuple[str, Callable[[Spec], None], list[str]]] = [
    ("unknown field", _set(colour="blue"), ["colour: unknown field"]),
    ("unknown domain", _set(domain="spa"),
     [f"domain: unknown domain 'spa' (allowed: {', '.join(DOMAINS)})"]),
    ("unknown verb", _set(operations=["update", "frob"]),
     [f"operations: unknown verb 'frob' (allowed: {', '.join(VERBS)})"]),
    ("unknown role", _set(roles=["staff", "Boss"]),
     [f"roles: unknown role 'Boss' (allowed: {ROLES})"]),
    ("unknown tool", _set(tools=["members.get", "members.update", "members.frobnicate"]),
     ["tools: unknown tool 'members.frobnicate'"]),
    ("unknown entitlement", _set(entitlement="gold"),
     [f"entitlement: unknown feature 'gold' (allowed: {', '.join(sorted(FEATURES))})"]),
    ("action without roles", _set(roles=[]),
     ["roles: an action agent needs at least one role"]),
    ("missing read_only", _drop("read_only"),
     ["read_only: required field is missing (declare read_only: true or false)"]),
    ("write tool on a read-only agent", _set(read_only=True),
     ["tools: write tool 'members.update' on a read-only agent"]),
    ("visitor agent that is not a query agent", _set(visitor=True, read_only=True,
                                                    tools=["members.get"], requires={}),
     ["visitor: a visitor agent must be a query agent"]),
    ("cyclic prerequisites", _set(tools=["members.search", "members.get", "members.update"],
                                  requires={"members.update": ["members.get"],
                                            "members.get": ["members.search"],
                                            "members.search": ["members.update"]}),
     ["requires: cyclic prerequisites: "
      "members.get -> members.search -> members.update -> members.get"]),
    ("requires names a tool not in tools", _set(requires={"members.update": ["members.search"]}),
     ["requires: 'members.search' is not in tools"]),
    ("a role its write tool refuses", _set(roles=["member", "staff", "admin"]),
     ["roles: role 'member' cannot call members.update (staff, manager, admin only)"]),
    ("name outside its domain", _set(name="bookings.touch_up"),
     ["name: 'bookings.touch_up' must start with its domain 'members.'"]),
]


@pytest.mark.parametrize(("mutate", "expected"), [c[1:] for c in ACTION_CASES],
                         ids=[c[0] for c in ACTION_CASES])
def test_each_problem_is_one_line(write_spec: SpecWriter, operations: OperationIndex,
                                  mutate: Callable[[Spec], None], expected: list[str]) -> None:
    spec = valid_action_spec()
    mutate(spec)
    path = write_spec(spec, domain="members", file="touch_up")
    lines = [str(p) for p in validate_paths([path], operations)]
    assert lines == [f"{path}: {line}" for line in expected]


def test_the_valid_specs_are_valid(write_spec: SpecWriter, operations: OperationIndex) -> None:
    paths = [write_spec(valid_action_spec()), write_spec(valid_query_spec())]
    assert validate_paths(paths, operations) == []


def test_every_advertised_role_can_call_the_write_tools(operations: OperationIndex) -> None:
    spec = valid_action_spec() | {"name": "schedules.trade", "domain": "schedules",
                                  "operations": ["assign"], "entitlement": "schedules",
                                  "roles": ["Staff", "member", "manager"],
                                  "tools": ["schedules.shifts", "schedules.assign"],
                                  "requires": {}}
    assert operations["schedules.assign"].roles == {Role.MANAGER}
    problems = _validate_one(spec, operations)
    assert problems == [
        "roles: role 'staff' cannot call schedules.assign (manager, admin only)",
        "roles: role 'member' cannot call schedules.assign (manager, admin only)"]


def _validate_one(spec: Spec, operations: OperationIndex) -> list[str]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "spec.yaml"
        path.write_text(yaml.safe_dump(spec), encoding="utf-8")
        return [str(p).removeprefix(f"{path}: ") for p in validate_paths([path], operations)]


def test_roles_are_normalised(write_spec: SpecWriter, operations: OperationIndex,
                              tmp_path: Path) -> None:
    spec = valid_action_spec() | {"roles": [" Manager ", "STAFF"]}
    write_spec(spec)
    registry = load_registry(tmp_path / "agents", operations)
    assert [r.value for r in registry.get("members.touch_up").roles] == ["manager", "staff"]


QUERY_CASES: list[tuple[str, Callable[[Spec], None], list[str]]] = [
    ("write tool on a query agent",
     _set(read_only=False, tools=["members.get", "members.update"]),
     ["tools: write tool 'members.update' on a query agent"]),
    ("non-read-only visitor agent", _set(visitor=True, read_only=False),
     ["visitor: a visitor agent must be read_only: true"]),
    ("query agent that is not read-only", _set(read_only=False),
     ["read_only: a query agent must be read_only: true"]),
]


@pytest.mark.parametrize(("mutate", "expected"), [c[1:] for c in QUERY_CASES],
                         ids=[c[0] for c in QUERY_CASES])
def test_query_agent_problems(write_spec: SpecWriter, operations: OperationIndex,
                              mutate: Callable[[Spec], None], expected: list[str]) -> None:
    spec = valid_query_spec()
    mutate(spec)
    path = write_spec(spec)
    assert [str(p) for p in validate_paths([path], operations)] == [
        f"{path}: {line}" for line in expected]


def test_every_problem_of_a_file_is_listed(write_spec: SpecWriter,
                                           operations: OperationIndex) -> None:
    spec = valid_action_spec() | {"colour": "red", "entitlement": "gold",
                                  "tools": ["members.get", "members.update", "members.nope"]}
    del spec["read_only"]
    path = write_spec(spec)
    fields = [p.field for p in validate_paths([path], operations)]
    assert sorted(fields) == ["colour", "entitlement", "read_only", "tools"]


def test_a_valid_spec_validates_wherever_it_lives(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.yaml"
    shutil.copy(AGENTS / "members" / "update.yaml", spec)
    assert main(["agents", "validate", str(spec)]) == 0
    assert capsys.readouterr().err.strip() == "valid"


def test_duplicate_names_name_both_files(write_spec: SpecWriter, operations: OperationIndex,
                                         tmp_path: Path) -> None:
    first = write_spec(valid_action_spec(), root="a")
    second = write_spec(valid_action_spec(), root="b")
    problems = validate_paths([tmp_path / "a", tmp_path / "b"], operations)
    assert [str(p) for p in problems] == [
        f"{second}: name: duplicate agent name 'members.touch_up' (also in {first})"]


def test_same_named_files_in_one_folder_are_one_duplicate_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "one.yaml", tmp_path / "two.yaml"
    for path in (first, second):
        path.write_text(yaml.safe_dump(valid_action_spec()), encoding="utf-8")
    assert main(["agents", "validate", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"{second}: name: duplicate agent name 'members.touch_up' (also in {first})"]


def test_a_duplicate_name_is_reported_even_when_the_file_has_other_problems(
        write_spec: SpecWriter, operations: OperationIndex, tmp_path: Path) -> None:
    first = write_spec(valid_action_spec(), file="first")
    second = write_spec(valid_action_spec() | {"colour": "red"}, file="second")
    problems = [str(p) for p in validate_paths([tmp_path / "agents"], operations)]
    assert sorted(problems) == sorted([
        f"{second}: colour: unknown field",
        f"{second}: name: duplicate agent name 'members.touch_up' (also in {first})"])


def test_yaml_syntax_error(write_spec: SpecWriter, operations: OperationIndex) -> None:
    path = write_spec("name: members.broken\ntools: [members.get\nkind: query\n")
    [problem] = validate_paths([path], operations)
    assert (problem.path, problem.field) == (str(path), "yaml")
    assert str(problem).startswith(f"{path}: yaml: syntax error at line 3, column 5: ")


def test_a_file_that_is_not_a_mapping(write_spec: SpecWriter,
                                      operations: OperationIndex) -> None:
    path = write_spec("- just\n- a list\n")
    assert [str(p) for p in validate_paths([path], operations)] == [
        f"{path}: yaml: expected a mapping of fields, got list"]


def test_missing_paths_and_empty_folders(tmp_path: Path, operations: OperationIndex) -> None:
    (tmp_path / "empty").mkdir()
    problems = validate_paths([tmp_path / "nope.yaml", tmp_path / "empty"], operations)
    assert [str(p) for p in problems] == [
        f"{tmp_path / 'nope.yaml'}: path: no such file or directory",
        f"{tmp_path / 'empty'}: path: no agent specs (*.yaml) found"]


def test_load_registry_raises_with_every_problem(write_spec: SpecWriter, tmp_path: Path,
                                                 operations: OperationIndex) -> None:
    write_spec(valid_action_spec() | {"roles": []})
    write_spec(valid_query_spec() | {"entitlement": "gold"})
    with pytest.raises(BadInput) as caught:
        load_registry(tmp_path / "agents", operations)
    assert len(caught.value.detail["problems"]) == 2
    assert "roles: an action agent needs at least one role" in caught.value.message
    assert "entitlement: unknown feature 'gold'" in caught.value.message
