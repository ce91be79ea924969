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
