"""The flowchart follows the JSON: every step a node, every transition an edge, a new step
appears and a removed branch disappears, in Mermaid and in SVG alike."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from opsgraph.harness.diagram import mermaid, svg
from opsgraph.harness.spec import HarnessDoc
from opsgraph.harness.validate import validate

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "opsgraph" / "harness" / "examples"
SVG_NS = "{http://www.w3.org/2000/svg}"


def example(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / f"{name}.json").read_text())
    return data


def mermaid_edges(text: str) -> set[tuple[str, str, str]]:
    found = set()
    for line in text.splitlines():
        m = re.match(r'^\s+(\w+)(?: -- "(.*)" -->| -->) (\w+)$', line)
        if m:
            found.add((m[1], m[3], m[2] or ""))
    return found


def svg_graph(text: str) -> tuple[dict[str, str], set[tuple[str, str, str]]]:
    root = ET.fromstring(text)  # well-formed, or this raises
    steps = {g.get("data-step", ""): g.get("data-type", "")
             for g in root.iter(f"{SVG_NS}g") if g.get("class", "").startswith("step")}
    edges = set()
    for g in root.iter(f"{SVG_NS}g"):
        if g.get("class") == "edge":
            label = g.find(f"{SVG_NS}text")
            edges.add((g.get("data-from", ""), g.get("data-to", ""),
                       label.text or "" if label is not None else ""))
    return steps, edges


def test_mermaid_draws_every_step_and_transition() -> None:
    text = mermaid(HarnessDoc.model_validate(example("club_rules")))
    assert text.startswith("flowchart TD\n")
    assert 's_refunds{"Refund?<br/><small>check</small>"}' in text
    assert 's_guard{{"Cut spam, flag risks<br/><small>guard</small>"}}' in text
    assert "subgraph layer_policy [policy]" in text
    assert mermaid_edges(text) == {
        ("run_start", "s_guard", ""), ("s_guard", "run_end", "block"),
        ("s_guard", "s_refunds", ""), ("s_refunds", "s_to_person", "then"),
        ("s_refunds", "s_main", "else"), ("s_to_person", "run_end", ""),
        ("s_main", "s_risky", ""), ("s_risky", "s_careful", "then"),
        ("s_risky", "s_plain", "else"), ("s_careful", "run_end", ""),
        ("s_plain", "run_end", "")}


def test_svg_draws_the_same_graph() -> None:
    doc = HarnessDoc.model_validate(example("club_rules"))
    steps, edges = svg_graph(svg(doc))
    assert steps == {s.id: s.type for s in doc.steps}
    unprefixed = {(a.removeprefix("s_"), b.removeprefix("s_"), label)
                  for a, b, label in mermaid_edges(mermaid(doc))}
    assert edges == unprefixed


def test_a_new_step_appears_and_a_removed_branch_disappears() -> None:
    data = example("classic_pipeline")
    before_steps, before_edges = svg_graph(svg(validate(data)))
    # the switch's knowledge branch removed: every message goes to the agents
    data["steps"][1] = {**data["steps"][1], "type": "check",
                        "if": {"var": "message", "matches": "^$"}, "then": "main",
                        "else": "main"}
    del data["steps"][1]["cases"], data["steps"][1]["default"]
    for name in ("retrieve", "draft", "reply"):
        data["steps"] = [s for s in data["steps"] if s["id"] != name]
    data["tests"] = []
    doc = validate(data)
    after_steps, after_edges = svg_graph(svg(doc))
    assert "retrieve" in before_steps and "retrieve" not in after_steps
    assert not any(e[1] == "retrieve" for e in after_edges)
    assert ("route", "retrieve", "message ~ (?i)\\b(?:opening hours|open|c…") in before_edges
    assert "s_retrieve" not in mermaid(doc)

    # a new step between the search and the model call
    grown = example("classic_pipeline")
    grown["steps"].insert(3, {"id": "trim", "type": "set", "title": "Keep the best hit",
                              "layer": "knowledge", "description": "d",
                              "values": {"best": "{{hits.hits.0.title}}"}})
    steps, edges = svg_graph(svg(validate(grown)))
    assert steps["trim"] == "set" and ("retrieve", "trim", "") in edges
    assert ("trim", "draft", "") in edges and ("retrieve", "draft", "") not in edges
    assert 's_trim[/"Keep the best hit<br/><small>set</small>"/]' in mermaid(validate(grown))


def test_text_is_escaped_and_the_picture_is_deterministic() -> None:
    data = example("club_rules")
    data["steps"][2]["title"] = 'Refund <script>alert("x")</script> & co'
    doc = validate(data)
    picture = svg(doc)
    assert "<script>" not in picture and "&lt;script&gt;" in picture
    ET.fromstring(picture)
    text = mermaid(doc)
    assert '"Refund #lt;script#gt;alert(#quot;x#quot;)#lt;/script#gt; #amp; co' in text
    assert svg(doc) == picture and mermaid(doc) == text


def test_a_cycle_is_drawn_as_a_back_edge() -> None:
    data = example("club_rules")
    data["steps"][6] = {"id": "plain", "type": "set", "title": "Again", "layer": "core",
                        "description": "d", "values": {"risk": "low"}, "next": "risky"}
    data["budget"] = {"steps": 12}
    _, edges = svg_graph(svg(validate(data)))
    assert ("plain", "risky", "") in edges
    assert ("risky", "plain", "else") in edges
