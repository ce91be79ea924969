"""`opsgraph eval`: routing datasets, the report files, the targets and the exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from opsgraph.errors import BadInput
from opsgraph.evaluation import MODEL_NOTE, default_dataset, run_eval, write_report
from tests.test_cli import opsgraph

ROOT = Path(__file__).resolve().parents[1]

GOOD = [
    {"domain": "bookings", "verb": "check", "request": "is there any free court sunday afternoon?"},
    {"domain": "members", "verb": "update",
     "request": "change Jane Smith's email to jane@new.example"},
    {"domain": "bookings", "verb": "cancel",
     "request": "need to cancel my tennis booking on friday, sorry!"},
]
# Labelled wrong on purpose: the ranker is right, so every case is a miss.
WRONG = [{**case, "domain": "facilities", "verb": "report"} for case in GOOD]


def dataset(tmp_path: Path, cases: Any, name: str = "routing.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"cases": cases}, sort_keys=False), encoding="utf-8")
    return path


def test_the_default_dataset_is_the_checkouts_routing_yaml() -> None:
    assert default_dataset() == ROOT / "evals" / "datasets" / "routing.yaml"


def test_a_good_dataset_passes_and_writes_both_reports(tmp_path: Path) -> None:
    report = run_eval([dataset(tmp_path, GOOD)], model="bedrock:some-model")
    assert report.passed
    data = report.to_json()
    assert (data["cases"], data["top1"], data["top3"], data["misses"]) == (3, 1.0, 1.0, [])
    assert data["ms_per_request"] > 0
    assert data["model"] == "bedrock:some-model" and data["model_evaluated"] is False
    written = write_report(report, tmp_path / "out" / "run1")
    assert [p.name for p in written] == ["report.json", "report.md"]
    assert json.loads(written[0].read_text())["passed"] is True
    markdown = written[1].read_text()
    assert "| dataset | cases | top-1 | top-3 | ms/request | result |" in markdown
    assert "| **all** | 3 | 100.0% | 100.0% |" in markdown
    assert MODEL_NOTE in markdown and "Misses (0)" in markdown


def test_misses_are_reported_and_fail_the_targets(tmp_path: Path) -> None:
    good, wrong = dataset(tmp_path, GOOD, "good.yaml"), dataset(tmp_path, WRONG, "wrong.yaml")
    report = run_eval([good, wrong])
    assert not report.passed
    by_name = {Path(d.dataset).name: d for d in report.datasets}
    assert by_name["good.yaml"].passed and not by_name["wrong.yaml"].passed
    data = report.to_json()
    assert data["cases"] == 6 and data["top1"] == pytest.approx(0.5)
    assert len(data["misses"]) == 3
    assert {Path(m["dataset"]).name for m in data["misses"]} == {"wrong.yaml"}
    miss = data["misses"][0]
    assert miss["domain"] == "facilities" and len(miss["top"]) == 3 and not miss["in_top3"]
    write_report(report, tmp_path / "out")
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "Misses (3)" in markdown and "is there any free court sunday afternoon?" in markdown


def test_a_folder_runs_every_yaml_in_it(tmp_path: Path) -> None:
    folder = tmp_path / "sets"
    folder.mkdir()
    dataset(folder, GOOD, "a.yaml")
    dataset(folder, GOOD[:1], "b.yml")
    (folder / "notes.txt").write_text("not a dataset")
    report = run_eval([folder])
    assert [Path(d.dataset).name for d in report.datasets] == ["a.yaml", "b.yml"]
    assert report.cases == 4


@pytest.mark.parametrize(("content", "problem"), [
    ("cases:\n  - {domain: members\n  - {verb: list}\n", "invalid YAML: line 3"),
    ("cases: []\n", "cases: expected a non-empty list"),
    ("other: 1\n", "cases: expected a non-empty list"),
    ("cases:\n  - {domain: members, verb: update}\n", "cases[0]: RoutingCase.__init__() missing 1 "
     "required positional argument: 'request'"),
    ("cases:\n  - {domain: members, verb: update, request: x, colour: red}\n", "'colour'"),
    ("cases:\n  - {domain: spaceships, verb: launch, request: go}\n", "cases[0]: unknown"),
])
def test_invalid_datasets_are_bad_input_naming_file_and_field(
        tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BadInput) as err:
        run_eval([dataset(tmp_path, GOOD, "fine.yaml"), path])
    assert err.value.message.startswith(f"{path}: ") and problem in err.value.message


def test_a_missing_dataset_or_bad_model_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such file or folder"):
        run_eval([tmp_path / "missing.yaml"])
    with pytest.raises(BadInput, match=r"no \.yaml files"):
        run_eval([tmp_path])
    with pytest.raises(BadInput, match="unknown provider 'gpt'"):
        run_eval([dataset(tmp_path, GOOD)], model="gpt:4")


def test_cli_exit_codes_and_outputs(store_env: dict[str, str], tmp_path: Path) -> None:
    good, wrong = dataset(tmp_path, GOOD, "good.yaml"), dataset(tmp_path, WRONG, "wrong.yaml")
    done = opsgraph(store_env, "eval", "--dataset", str(good), "--json",
                    "--report", str(tmp_path / "rep"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["passed"] is True
    assert (tmp_path / "rep" / "report.json").is_file()
    assert (tmp_path / "rep" / "report.md").is_file()
    done = opsgraph(store_env, "eval", "--dataset", str(good), "--dataset", str(wrong))
    assert done.returncode == 1
    assert "MISSED TARGETS" in done.stdout and "free court sunday" in done.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("cases: [", encoding="utf-8")
    for args in (["--dataset", str(bad)], ["--dataset", str(tmp_path / "nope.yaml")],
                 ["--dataset", str(good), "--model", "gpt:4"]):
        done = opsgraph(store_env, "eval", *args)
        assert done.returncode == 2 and done.stderr.startswith("error: "), args
        assert done.stdout == ""
