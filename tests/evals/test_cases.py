"""The case loader: files and folders, splits, and errors that name file, case and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from opsgraph.errors import BadInput
from opsgraph.evals.cases import default_dataset, load_cases
from opsgraph.principal import Channel, Role

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).with_name("data")

GOOD: dict[str, Any] = {"id": "m-01", "split": "dev", "domain": "members",
                        "principal": {"role": "staff"}, "request": "find jane smith",
                        "expect": {"tasks": [{"domain": "members", "verb": ["get", "search"]}]}}


def write(folder: Path, name: str, cases: Any) -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump({"cases": cases}, sort_keys=False), encoding="utf-8")
    return path


def test_a_case_gets_its_defaults_and_its_file(tmp_path: Path) -> None:
    path = write(tmp_path, "m.yaml", [GOOD])
    [case] = load_cases([path])
    assert case.file == str(path)
    assert (case.principal.role, case.principal.user, case.principal.tenant,
            case.principal.channel) == (Role.STAFF, "alex", "demo", Channel.DASHBOARD)
    assert case.expect.tasks is not None and case.expect.tasks[0].verb == ("get", "search")
    assert case.expect.interrupts is None and case.expect.depends is None


def test_tool_and_operation_names_are_one_spelling(tmp_path: Path) -> None:
    raw = {**GOOD, "expect": {"tools_contains": ["members.get"],
                              "args": {"members.get": {"member": "Jane Smith"}},
                              "interrupts": [{"operation": "members_update"}]}}
    [case] = load_cases([write(tmp_path, "m.yaml", [raw])])
    assert case.expect.tools_contains == ["members_get"]
    assert list(case.expect.args) == ["members_get"]
    assert case.expect.interrupts is not None
    assert case.expect.interrupts[0].operation == "members.update"


def test_a_folder_loads_every_yaml_and_splits_filter(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", [GOOD])
    write(tmp_path, "b.yml", [{**GOOD, "id": "m-02", "split": "heldout"}])
    (tmp_path / "notes.txt").write_text("not a dataset")
    assert [c.id for c in load_cases([tmp_path])] == ["m-01", "m-02"]
    assert [c.id for c in load_cases([tmp_path], "heldout")] == ["m-02"]
    assert [c.id for c in load_cases([tmp_path], "dev")] == ["m-01"]
    with pytest.raises(BadInput, match="--split: unknown split 'test'"):
        load_cases([tmp_path], "test")


@pytest.mark.parametrize(("change", "problem"), [
    ({"colour": "red"}, "case 'm-01': colour: Extra inputs are not permitted"),
    ({"split": "train"}, "case 'm-01': split: Input should be 'dev' or 'heldout'"),
    ({"request": ""}, "case 'm-01': request: String should have at least 1 character"),
    ({"principal": {"role": "wizard"}}, "case 'm-01': principal.role: Input should be"),
    ({"principal": {"role": "staff", "tenant": "nowhere"}}, "unknown tenant 'nowhere'"),
    ({"expect": {"tasks": [{"domain": "spaceships", "verb": "get"}]}},
     "case 'm-01': expect.tasks[0].domain: unknown domain 'spaceships'"),
    ({"expect": {"tasks": [{"domain": "members", "verb": "launch"}]}}, "unknown verb 'launch'"),
    ({"expect": {"tools_absent": ["members_delete"]}},
     "expect.tools_absent: unknown tool or operation 'members_delete'"),
    ({"expect": {"args": {"members_nope": {}}}}, "unknown tool or operation 'members_nope'"),
    ({"expect": {"tasks": [{"domain": "members", "verb": "get"}], "depends": [[1, 0]]}},
     "depends: edge [1, 0] is not an index pair into tasks (0..0)"),
    ({"expect": {"depends": []}}, "depends: needs `tasks`"),
    ({"id": None}, "cases[0]: id: Input should be a valid string"),
])
def test_invalid_cases_are_bad_input_naming_file_case_and_field(
        tmp_path: Path, change: dict[str, Any], problem: str) -> None:
    fine = write(tmp_path, "fine.yaml", [{**GOOD, "id": "other"}])
    bad = write(tmp_path, "bad.yaml", [{**GOOD, **change}])
    with pytest.raises(BadInput) as err:
        load_cases([fine, bad])
    assert err.value.message.startswith(f"{bad}: ")
    assert problem in err.value.message


@pytest.mark.parametrize(("content", "problem"), [
    ("cases:\n  - {id: x\n  - {id: y}\n", "invalid YAML: line 3"),
    ("cases: []\n", "cases: expected a non-empty list"),
    ("other: 1\n", "cases: expected a non-empty list"),
])
def test_broken_files_are_bad_input(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BadInput, match=problem):
        load_cases([path])


def test_ids_are_unique_across_files_and_paths_must_exist(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", [GOOD])
    second = write(tmp_path, "b.yaml", [GOOD])
    with pytest.raises(BadInput, match=f"{second}: case 'm-01': id: already used in "):
        load_cases([tmp_path])
    with pytest.raises(BadInput, match="no such file or folder"):
        load_cases([tmp_path / "missing.yaml"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput, match=r"no \.yaml files"):
        load_cases([tmp_path / "empty"])


def test_the_checked_in_datasets_load() -> None:
    assert default_dataset() == ROOT / "evals" / "datasets" / "assistant"
    cases = load_cases()
    assert {c.split for c in cases} == {"dev", "heldout"}
    assert len(load_cases([DATA / "phone_update.yaml"])) == 2
