"""`opsgraph harness ...` on the real store, through the command line's own entry point."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from opsgraph.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "opsgraph" / "harness" / "examples"


@pytest.fixture
def tenant(db: Any) -> str:
    db["tenants"].insert_one({"_id": "demo", "name": "Demo club"})
    return "demo"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["harness", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_schema_is_the_documents_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "schema", "--json")
    schema = json.loads(out)
    assert code == 0 and set(schema["properties"]) == {"steps", "prompts", "tests", "budget",
                                                       "metadata"}
    assert "if" in schema["$defs"]["Check"]["properties"], "by alias, as a user writes it"


def test_validate_lists_every_problem_one_line_each(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path, tenant: str) -> None:
    good = EXAMPLES / "club_rules.json"
    assert run(capsys, "validate", str(good))[0] == 0
    doc = json.loads(good.read_text())
    doc["steps"][1]["then"] = "nowhere"
    doc["steps"][0]["colour"] = "red"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    code, out, err = run(capsys, "validate", str(bad))
    assert code == 2 and out == ""
    assert sorted(err.splitlines()) == [
        "steps[0].colour: unknown field",
        "steps[1].then: no step 'nowhere' (steps: guard, refunds, to_person, main, risky, "
        "careful, plain)"]
    bad.write_text("{not json")
    code, _, err = run(capsys, "validate", str(bad))
    assert code == 2 and "is not JSON" in err and "line 1" in err


def test_a_filter_argument_in_other_digits_is_exit_2_naming_its_path(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, tenant: str) -> None:
    # issue 18, finding 8: "٣".isdigit() is true; it crashed validation with a traceback
    doc = json.loads((EXAMPLES / "club_rules.json").read_text())
    doc["prompts"]["disclaimer"] = "{{message | truncate:٣}}"
    bad = tmp_path / "digits.json"
    bad.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    for command in ("validate", "set"):
        code, out, err = run(capsys, command, str(bad))
        assert code == 2 and out == "", (command, err)
        assert "prompts.disclaimer: {{message | truncate:٣}}: filter 'truncate': '٣' is not " \
            "a whole number" in err
        assert "Traceback" not in err


def test_set_versions_get_diagram_rollback(capsys: pytest.CaptureFixture[str],
                                           tenant: str) -> None:
    code, out, _ = run(capsys, "set", str(EXAMPLES / "club_rules.json"), "--json",
                       "--note", "club rules", "--user", "ann")
    saved = json.loads(out)
    assert code == 0 and saved["version"] == 1
    assert {"op": "changed", "path": "steps.main.final", "old": True, "new": False} in (
        saved["changes"])

    code, out, _ = run(capsys, "versions", "--json")
    rows = json.loads(out)
    assert [(r["version"], r["active"]) for r in rows] == [(0, True), (1, False)]
    assert rows[1]["created_by"] == "ann" and rows[1]["note"] == "club rules"
    code, out, _ = run(capsys, "versions")
    assert out.splitlines()[0].startswith("* v0") and "club rules" in out

    code, out, _ = run(capsys, "get", "--version", "1", "--json")
    assert json.loads(out)["doc"] == json.loads((EXAMPLES / "club_rules.json").read_text())
    code, out, _ = run(capsys, "get")
    assert json.loads(out)["steps"][0]["type"] == "supervisor"

    code, out, _ = run(capsys, "diagram", "--version", "1")
    assert code == 0 and out.startswith("flowchart TD") and "s_refunds" in out
    code, out, _ = run(capsys, "diagram", "--version", "1", "--format", "svg")
    assert ET.fromstring(out).tag.endswith("svg")
    code, out, _ = run(capsys, "diagram", "--json")
    assert json.loads(out)["version"] == 0

    code, _, err = run(capsys, "rollback")
    assert code == 2 and "nothing to roll back" in err
    code, _, err = run(capsys, "get", "--version", "5")
    assert code == 2 and "harness version 5 not found" in err


def test_set_refuses_an_invalid_document_and_stores_nothing(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, tenant: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"steps": [{"id": "a", "type": "answer", "title": "A",
                                          "description": "d", "layer": "core",
                                          "text": "@missing"}]}))
    code, out, err = run(capsys, "set", str(bad), "--json")
    assert (code, out, err) == (2, "", "steps[0].text: no prompt '@missing' (prompts: none)\n")
    code, out, _ = run(capsys, "versions", "--json")
    assert [r["version"] for r in json.loads(out)] == [0]


def test_an_unknown_tenant_is_named(capsys: pytest.CaptureFixture[str], db: Any) -> None:
    code, _, err = run(capsys, "versions", "--tenant", "nosuch")
    assert code == 2 and "tenant 'nosuch' not found" in err


def no_model_harness(expected: str) -> dict[str, Any]:
    """A harness that answers without a model: a guard, then a fixed answer; its one test
    expects `expected` in the answer."""
    return {
        "steps": [
            {"id": "guard", "type": "guard", "title": "Cut spam", "layer": "safety",
             "description": "d", "rules": [{"patterns": ["casino"], "action": "block",
                                            "text": "No spam here."}]},
            {"id": "closed", "type": "answer", "title": "Closed", "layer": "core",
             "description": "d", "text": "We are closed today, {{user.role}}."}],
        "tests": [{"name": "spam is blocked", "message": "casino!",
                   "expect": {"steps_ran": ["guard"], "steps_not_ran": ["closed"],
                              "contains": [expected], "max_model_calls": 0}}]}


def test_test_and_activate_gate_on_the_tests(capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path, tenant: str) -> None:
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(no_model_harness("No spam")))
    bad.write_text(json.dumps(no_model_harness("Welcome")))
    assert run(capsys, "set", str(good))[0] == 0
    assert run(capsys, "set", str(bad))[0] == 0

    code, out, _ = run(capsys, "test", "--version", "2")
    assert code == 1 and "FAIL spam is blocked" in out
    code, out, _ = run(capsys, "test", "--version", "1", "--json")
    report = json.loads(out)
    assert code == 0 and (report["passed"], report["failed"]) == (1, 0)

    code, _, err = run(capsys, "activate", "2")
    assert code == 2 and "spam is blocked" in err
    code, out, _ = run(capsys, "versions", "--json")
    rows = {r["version"]: r for r in json.loads(out)}
    assert rows[0]["active"] and rows[2]["last_test"]["failed"] == 1
    assert rows[1]["last_test"]["passed"] == 1

    code, out, _ = run(capsys, "activate", "1", "--json")
    assert code == 0 and json.loads(out)["version"] == 1
    code, out, _ = run(capsys, "activate", "2", "--force")
    assert code == 0 and "forced past failing tests" in out
    code, out, _ = run(capsys, "rollback", "--json")
    assert json.loads(out)["version"] == 1
