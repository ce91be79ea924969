"""docs/harness.md cannot drift from the code: every JSON example in it is valid (a step
as a step, a test as a test, a document as a document), the two examples it shows are the
shipped files, and the flowchart it shows is what `mermaid()` draws."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from opsgraph.harness.diagram import mermaid
from opsgraph.harness.spec import STEP_TYPES, HarnessTest, Step
from opsgraph.harness.validate import validate

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "harness.md").read_text()
EXAMPLES = ROOT / "src" / "opsgraph" / "harness" / "examples"
BLOCK = re.compile(r"(?:<!-- example: (?P<file>[\w.]+) -->\n)?```(?P<lang>\w+)\n(?P<body>.*?)```",
                   re.DOTALL)
BLOCKS = [(m["file"], m["lang"], m["body"]) for m in BLOCK.finditer(DOC)]
JSON_BLOCKS = [json.loads(body) for _, lang, body in BLOCKS if lang == "json"]


def test_every_step_type_has_an_example() -> None:
    steps = [b for b in JSON_BLOCKS if "type" in b]
    assert sorted({s["type"] for s in steps}) == sorted(STEP_TYPES)


@pytest.mark.parametrize("block", JSON_BLOCKS, ids=lambda b: b.get("id") or b.get("name")
                         or (b.get("metadata") or {}).get("title") or "doc")
def test_every_json_example_is_valid(block: dict[str, Any]) -> None:
    if "steps" in block:
        validate(block)
    elif "type" in block:
        TypeAdapter(Step).validate_python(block)
    else:
        HarnessTest.model_validate(block)


@pytest.mark.parametrize("name", ["classic_pipeline.json", "club_rules.json"])
def test_the_examples_shown_are_the_shipped_files(name: str) -> None:
    [shown] = [body for file, _, body in BLOCKS if file == name]
    assert json.loads(shown) == json.loads((EXAMPLES / name).read_text())


def test_the_flowchart_shown_is_the_one_drawn() -> None:
    [shown] = [body for _, lang, body in BLOCKS if lang == "mermaid"]
    doc = validate(json.loads((EXAMPLES / "classic_pipeline.json").read_text()))
    assert shown == mermaid(doc)
