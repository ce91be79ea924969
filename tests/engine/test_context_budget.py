"""The context budget's trimming order, on plain messages (the runs are in test_requests)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from opsgraph.engine.context_budget import TRIMMED, context_window, fit_messages, prompt_tokens
from opsgraph.tools.bounds import bound_data


def _prompt(brief: int, first: int, last: int) -> list:  # type: ignore[type-arg]
    def turn(n: int) -> AIMessage:
        return AIMessage(content="", tool_calls=[{"name": "bookings_list", "args": {},
                                                  "id": f"c{n}", "type": "tool_call"}])
    return [SystemMessage("rules " * 50), HumanMessage("Your task: x\n" + "b" * brief),
            turn(1), ToolMessage("r" * first, tool_call_id="c1"),
            turn(2), ToolMessage("s" * last, tool_call_id="c2")]


def test_earlier_tool_results_go_first_then_the_brief_then_the_latest() -> None:
    fitted = fit_messages(_prompt(2000, 8000, 2000), [], 2000)
    assert "was trimmed to fit" in str(fitted[3].content)  # step 1 was enough
    assert fitted[1].content.endswith("b") and fitted[5].content == "s" * 2000
    fitted = fit_messages(_prompt(6000, 8000, 2000), [], 2000)
    assert str(fitted[1].content).endswith(TRIMMED)  # step 2: the brief's data blocks
    assert fitted[5].content == "s" * 2000
    fitted = fit_messages(_prompt(900, 100, 20000), [], 2000)
    assert str(fitted[5].content).endswith(TRIMMED)  # step 3: the latest result
    for case in ((2000, 8000, 2000), (6000, 8000, 2000), (900, 100, 20000)):
        assert prompt_tokens(fit_messages(_prompt(*case), [], 2000), []) <= 2000 - 2000 // 8


def test_a_prompt_within_the_window_is_left_alone() -> None:
    prompt = _prompt(100, 100, 100)
    assert fit_messages(prompt, [], 200_000) == prompt
    assert context_window("bedrock:us.anthropic.claude-sonnet-4-6") == 200_000
    assert context_window("openai:qwen2.5-coder:1.5b") == 8192


def test_a_long_list_keeps_its_first_rows_and_says_how_to_narrow() -> None:
    rows = [{"id": f"bkg_{n:03}", "member": "Jane Smith", "start": "2026-12-02T18:00"}
            for n in range(100)]
    cut = bound_data({"from": "2026-12-01", "bookings": rows}, 1000, ["member", "date"])
    assert cut["bookings"] == rows[:len(cut["bookings"])] and cut["from"] == "2026-12-01"
    assert cut["omitted"] == f"… {100 - len(cut['bookings'])} more bookings; narrow with " \
                             "member/date"
    assert bound_data(rows[:2], 1000) == rows[:2]
