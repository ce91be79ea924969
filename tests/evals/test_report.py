"""The report: dimensions against thresholds, splits, cost, the files; and --compare."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from opsgraph.errors import BadInput
from opsgraph.evals.cases import Case
from opsgraph.evals.compare import compare_reports, render_compare
from opsgraph.evals.evaluators import score_case
from opsgraph.evals.records import RunRecord
from opsgraph.evals.render import render_markdown, render_text
from opsgraph.evals.report import build_report, read_report, write_report
from opsgraph.evals.run import CaseResult
from opsgraph.evals.scores import DIMENSIONS
from opsgraph.evals.thresholds import DEFAULT_THRESHOLDS, load_thresholds
from tests.evals.builders import PHONE_CARD, make_case, make_run, task

UPDATE = {"tasks": [{"domain": "members", "verb": "update"}],
          "interrupts": [{"operation": "members.update"}]}


def result(case_id: str, split: str, good: bool, seconds: float = 1.0) -> dict[str, Any]:
    """One scored case as report.json holds it: good proposes the card, bad plans bookings."""
    case = Case.model_validate({**make_case(**UPDATE).model_dump(), "id": case_id,
                                "split": split})
    run: RunRecord = (make_run(plan=[task("t1", "members", "update")], cards=[PHONE_CARD])
                      if good else make_run(plan=[task("t1", "bookings", "list")],
                                            answer="Emily has 2 bookings."))
    run.seconds = seconds
    return CaseResult(case, run, score_case(case, run)).to_json()


def report(*cases: dict[str, Any], **thresholds: float) -> dict[str, Any]:
    return build_report(list(cases), thresholds={**DEFAULT_THRESHOLDS, **thresholds},
                        model="scripted:x.yaml", datasets=["d"], split="all",
                        wall_seconds=2.0)


def test_dimensions_score_the_cases_they_apply_to_against_thresholds() -> None:
    rep = report(result("a", "dev", True), result("b", "dev", True),
                 result("c", "heldout", False, seconds=3.0), routing=0.6)
    dims = rep["dimensions"]
    assert set(dims) == set(DIMENSIONS)
    assert dims["routing"] == {"score": pytest.approx(2 / 3), "threshold": 0.6,
                               "passed": True, "cases": 3, "failed": 1}
    assert not dims["interrupts"]["passed"] and dims["interrupts"]["failed"] == 1
    assert dims["dependencies"] == {"score": None, "threshold": 0.8, "passed": True,
                                    "cases": 0, "failed": 0}
    assert dims["preview"]["cases"] == 2 and dims["groundedness"]["cases"] == 1
    assert rep["passed"] is False
    assert rep["splits"]["dev"]["dimensions"]["routing"]["score"] == 1.0
    assert rep["splits"]["heldout"]["dimensions"]["routing"]["score"] == 0.0
    assert (rep["splits"]["dev"]["cases"], rep["splits"]["heldout"]["passed_cases"]) == (2, 0)
    cost = rep["cost"]
    assert (cost["seconds_median"], cost["seconds_mean"]) == (1.0, pytest.approx(5 / 3))
    assert (cost["model_calls_median"], cost["input_tokens"], cost["errored"]) == (3, 300, 0)
    bad = rep["cases"][2]
    assert (bad["split"], bad["passed"], bad["plan"]) == ("heldout", False, ["bookings.list"])
    assert bad["scores"]["routing"]["reason"].startswith("expected members.update")


def test_the_headline_counts_right_cards_and_single_intent_routing() -> None:
    rep = report(result("a", "dev", True), result("b", "dev", True),
                 result("c", "heldout", False))
    # a question (no cards expected, two tasks) counts in neither figure
    question = Case.model_validate({**make_case(tasks=[
        {"domain": "members", "verb": "get"}, {"domain": "bookings", "verb": "list"}]
    ).model_dump(), "id": "q"})
    asked = CaseResult(question, make_run(plan=[task("t1", "bookings", "list")]),
                       score_case(question, make_run(plan=[task("t1", "bookings", "list")])))
    rep = report(*rep["cases"], asked.to_json())
    assert rep["cases"][0]["expected"] == {"tasks": 1, "cards": ["members.update"]}
    assert rep["cases"][3]["expected"] == {"tasks": 2, "cards": None}
    assert rep["headline"] == {"right_cards": {"cases": 3, "passed": 2},
                               "single_intent_routing": {"cases": 3, "passed": 2}}
    lines = ["write requests ending in the right card (operation, target, values): "
             "2 of 3 (66.7%)", "routing of requests that ask for one thing: 2 of 3 (66.7%)"]
    assert all(f"- {line}" in render_markdown(rep) for line in lines)
    assert all(line in render_text(rep) for line in lines)
    # a report written before the headline renders without it
    older = {**rep, "headline": None}
    assert "right card" not in render_markdown(older) + render_text(older)


def test_report_files_and_the_human_forms(tmp_path: Path) -> None:
    rep = report(result("a", "dev", True), result("c", "heldout", False))
    written = write_report(rep, tmp_path / "out" / "run1")
    assert [p.name for p in written] == ["report.json", "report.md"]
    assert read_report(written[0]) == json.loads(json.dumps(rep))
    md = written[1].read_text(encoding="utf-8")
    assert "Result: **missed thresholds**" in md
    assert "| routing | 50.0% | 85.0% | 2 | 1 | 100.0% | 0.0% | **missed** |" in md
    assert "## Failed cases (1)" in md and "**routing**: expected members.update" in md
    assert "answer: 'Emily has 2 bookings.'" in md
    assert md == render_markdown(rep)
    text = render_text(rep)
    assert text.startswith("eval: MISSED THRESHOLDS") and "FAIL c [routing]" in text


def test_thresholds_come_from_the_file_or_the_defaults(tmp_path: Path) -> None:
    assert load_thresholds(tmp_path / "none.yaml") == DEFAULT_THRESHOLDS
    flat = tmp_path / "flat.yaml"
    flat.write_text("routing: 0.5\npii: 1\n")
    assert load_thresholds(flat) == {**DEFAULT_THRESHOLDS, "routing": 0.5, "pii": 1.0}
    nested = tmp_path / "nested.yaml"
    nested.write_text("thresholds:\n  preview: 0.25\n")
    assert load_thresholds(nested)["preview"] == 0.25
    for content, problem in (("routng: 0.5\n", "routng: unknown dimension"),
                             ("routing: 2\n", "routing: expected a number from 0 to 1"),
                             ("- 1\n", "expected a mapping")):
        flat.write_text(content)
        with pytest.raises(BadInput, match=problem):
            load_thresholds(flat)


def test_compare_shows_deltas_per_split_and_the_flips(tmp_path: Path) -> None:
    a = report(result("a", "dev", True), result("c", "heldout", True), result("x", "dev", True))
    b = report(result("a", "dev", True), result("c", "heldout", False), result("y", "dev", True))
    cmp = compare_reports(a, b)
    assert cmp["dimensions"]["routing"] == {"a": 1.0, "b": pytest.approx(2 / 3),
                                            "delta": pytest.approx(-1 / 3)}
    assert cmp["splits"]["heldout"]["routing"] == {"a": 1.0, "b": 0.0, "delta": -1.0}
    assert cmp["splits"]["dev"]["routing"]["delta"] == 0.0
    flipped = {(f["id"], f["dimension"]) for f in cmp["flips"]}
    assert flipped == {("c", "case"), ("c", "routing"), ("c", "interrupts")}
    assert (cmp["only_a"], cmp["only_b"]) == (["x"], ["y"])
    text = render_compare(cmp)
    assert "routing" in text and "-33.3 pt" in text and "heldout" in text
    assert "c [heldout] routing: pass → fail (expected members.update" in text


def test_read_report_refuses_what_is_not_a_report(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such file"):
        read_report(tmp_path / "missing.json")
    other = tmp_path / "other.json"
    other.write_text('{"suite": "routing"}')
    with pytest.raises(BadInput, match=r"not a report\.json of `opsgraph eval`"):
        read_report(other)
    other.write_text("{not json")
    with pytest.raises(BadInput, match="not a readable JSON report"):
        read_report(other)
