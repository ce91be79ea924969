"""The change list: by step id and test name, never by position; short and exact."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from opsgraph.harness.changes import diff
from opsgraph.harness.spec import BUILTIN, HarnessDoc

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "opsgraph" / "harness" / "examples"


def club() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / "club_rules.json").read_text())
    return data


def changes(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["op"], c["path"]) for c in diff(HarnessDoc.model_validate(old),
                                                 HarnessDoc.model_validate(new))]


def test_same_document_no_changes() -> None:
    assert changes(club(), club()) == []


def test_inserting_a_step_is_one_addition_not_a_cascade() -> None:
    new = club()
    new["steps"].insert(1, {"id": "tidy", "type": "set", "title": "Tidy", "layer": "core",
                            "description": "d", "values": {"tone": "warm"}})
    assert changes(club(), new) == [("added", "steps.tidy")]


def test_field_changes_are_named_by_step_id() -> None:
    new = club()
    new["steps"][3]["final"] = True
    new["prompts"]["disclaimer"] = "See a doctor."
    out = diff(HarnessDoc.model_validate(club()), HarnessDoc.model_validate(new))
    assert {"op": "changed", "path": "steps.main.final", "old": False, "new": True} in out
    assert {"op": "changed", "path": "prompts.disclaimer", "old": club()["prompts"]["disclaimer"],
            "new": "See a doctor."} in out
    assert len(out) == 2


def test_removed_added_and_changed_everywhere() -> None:
    new = club()
    del new["steps"][6]  # plain
    new["steps"][4]["else"] = "careful"
    del new["prompts"]["spam_reply"]
    new["steps"][0]["rules"] = new["steps"][0]["rules"][1:]
    new["prompts"]["welcome"] = "Hello"
    new["tests"][0]["message"] = "buy crypto"
    new["tests"].append({"name": "new one", "message": "hi"})
    del new["tests"][3]
    new["budget"] = {"steps": 8}
    new["metadata"]["author"] = "ops"
    got = changes(club(), new)
    assert sorted(got) == sorted([
        ("removed", "steps.plain"), ("changed", "steps.risky.else"),
        ("changed", "steps.guard.rules"), ("removed", "prompts.spam_reply"),
        ("added", "prompts.welcome"), ("changed", "tests.spam is blocked"),
        ("added", "tests.new one"), ("removed", "tests.an ordinary question has no disclaimer"),
        ("changed", "budget.steps"), ("added", "metadata.author")])


def test_a_moved_step_is_reported_as_moved() -> None:
    new = club()
    steps = new["steps"]
    steps.insert(1, steps.pop(3))  # main before refunds
    got = diff(HarnessDoc.model_validate(club()), HarnessDoc.model_validate(new))
    assert [(c["op"], c["path"], c["old"], c["new"]) for c in got] == [
        ("moved", "steps.main", 3, 1)]


def test_a_type_change_is_one_entry_with_both_steps() -> None:
    new = copy.deepcopy(BUILTIN)
    new["steps"][0] = {"id": "main", "type": "answer", "title": "Closed", "layer": "core",
                       "description": "d", "text": "We are closed."}
    got = diff(HarnessDoc.model_validate(BUILTIN), HarnessDoc.model_validate(new))
    assert [(c["op"], c["path"]) for c in got] == [("changed", "steps.main")]
    assert got[0]["old"]["type"] == "supervisor" and got[0]["new"]["type"] == "answer"
