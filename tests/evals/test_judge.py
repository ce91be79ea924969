"""The blind pairwise judge, with a scripted judge model that always prefers the first
answer shown: alternating the order cancels that bias."""

from __future__ import annotations

from typing import Any

from opsgraph.evals.judge import CRITERIA, judge_reports, pair_prompt, render_judgement

HIGH = dict.fromkeys(CRITERIA, 5)
LOW = dict.fromkeys(CRITERIA, 3)
FIRST_WINS = {"plan": {"first": HIGH, "second": LOW, "verdict": "first",
                       "reason": "The first answer is better."}}


def reports(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    def case(i: int, side: str) -> dict[str, Any]:
        return {"id": f"case-{i}", "request": f"question {i}", "history": [],
                "principal": {"role": "staff", "channel": "dashboard"},
                "answer": f"answer {side}{i}", "evidence": f"tool output {side}{i}"}

    a = {"model": "model-a", "cases": [case(i, "A") for i in range(n)]}
    b = {"model": "model-b", "cases": [case(i, "B") for i in range(n)]}
    b["cases"].append({**case(n, "B"), "answer": None})  # B's extra case: not judged
    return a, b


def test_the_prompt_is_blind_and_alternates_the_order() -> None:
    a, b = reports(1)
    shown = pair_prompt(a["cases"][0], b["cases"][0], a_first=True)
    assert shown.index("answer A0") < shown.index("answer B0")
    assert "tool output A0" in shown and "question 0" in shown
    assert "model-a" not in shown and "model-b" not in shown
    swapped = pair_prompt(a["cases"][0], b["cases"][0], a_first=False)
    assert swapped.index("answer B0") < swapped.index("answer A0")


def test_a_first_position_bias_cancels_out(script: Any) -> None:
    a, b = reports(4)
    summary = judge_reports(a, b, script(FIRST_WINS))
    assert summary["cases"] == 4 and summary["errors"] == 0
    assert summary["wins"] == {"a": 2, "b": 2, "tie": 0}
    assert summary["means"]["a"] == dict.fromkeys(CRITERIA, 4.0)
    assert summary["means"]["b"] == dict.fromkeys(CRITERIA, 4.0)
    first = summary["per_case"][0]
    assert first["a_first"] and first["verdict"] == "a" and first["a"] == HIGH
    second = summary["per_case"][1]
    assert not second["a_first"] and second["verdict"] == "b" and second["b"] == HIGH
    text = render_judgement(summary)
    assert "A wins 2, B wins 2, ties 0" in text and "correctness" in text


def test_a_reply_that_breaks_the_schema_costs_one_case_not_the_comparison(script: Any
                                                                          ) -> None:
    a, b = reports(2)
    broken = {"plan": {"first": HIGH, "second": {**LOW, "clarity": 9}, "verdict": "first"}}
    summary = judge_reports(a, b, script(broken))
    assert (summary["cases"], summary["errors"]) == (0, 2)
    assert "error" in summary["per_case"][0]
