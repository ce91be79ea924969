"""How the knowledge agents work: pre-search and pre-reads, the answer-stop rule, the step
budget, switching method on an empty search, their prompt rules, and sources from reads
only — through the real graph with scripted models, and the loop with real bound tools."""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from opsgraph.engine.pre_search import MAX_READS, pre_search
from opsgraph.engine.tool_loop import BUDGET_SPENT, NO_ANSWER, run_tool_loop
from opsgraph.operations.base import Context
from opsgraph.principal import Plan
from opsgraph.registry.loader import get_registry
from opsgraph.registry.prompt import RULES_KNOWLEDGE, system_prompt
from opsgraph.store.scope import TenantScope
from opsgraph.tools import bind_agent_tools
from opsgraph.tools.contract import DATA_NOTICE
from tests.engine.helpers import chat, finished, of, person, statuses
from tests.engine.test_tool_loop import Scripted, calls

KNOWLEDGE_TOOLS = ["knowledge.search", "knowledge.grep", "knowledge.get_object",
                   "knowledge.find_objects", "knowledge.outline", "knowledge.file_outline",
                   "knowledge.read", "knowledge.read_section"]
LATE_CANCEL = "Find the rule for late cancellation of court bookings"
POLICY_SECTIONS = {"booking-policy#cancelling-a-booking", "court-hire-prices#late-cancellation"}


def task(tid: str, instruction: str, verb: str = "search") -> dict[str, Any]:
    return {"id": tid, "domain": "knowledge", "operation": verb, "instruction": instruction,
            "depends_on": []}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args}]}


@pytest.fixture
def tools(demo_db: Any) -> Any:
    ctx = Context(TenantScope(demo_db, "demo"), person("staff"))
    return bind_agent_tools(ctx, KNOWLEDGE_TOOLS, Plan.PRO)


def only(events: list[Any], tid: str = "t1") -> dict[str, Any]:
    return next(d for d in of(events, "task_finished") if d["task_id"] == tid)


# ── pre-search ───────────────────────────────────────────────────────────────────────────

@pytest.mark.usefixtures("demo_db")
def test_with_the_answer_pre_read_one_model_call_is_enough(script: Any) -> None:
    model = script({"plan": {"tasks": [task("t1", LATE_CANCEL)]},
                    "turns": {"t1": [{"content": "Cancel at least 24 hours ahead."}]}})
    # asked by a caller with a record of their own ("my" names it), and not as a rule's
    # question ("how late can I ..." is planned by code), so the planner plans it
    events = chat(person("staff", user="stf_demo_04"),
                  "what happens if I cancel my court late?", model)
    assert statuses(events) == {"t1": "completed"}
    # the plan and the agent's one turn: no tool round, and its answer is passed on as it
    # is (no synthesis call: none is scripted, so one would fail the run)
    assert finished(events)["usage"]["model_calls"] == 2
    assert of(events, "answer")[0]["text"] == "Cancel at least 24 hours ahead."
    done = only(events)["calls"]
    assert done[0]["tool"] == "knowledge_search" and done[0]["by"] == "code"
    assert done[0]["args"] == {"query": LATE_CANCEL}  # the task's instruction is searched
    reads = [c for c in done[1:] if c["tool"] == "knowledge_read_section"]
    assert reads and len(reads) <= MAX_READS and all(c["by"] == "code" and c["ok"] for c in done)
    # sources are exactly the sections pre-read: the search's hits are navigation only
    sources = of(events, "answer")[0]["sources"]
    assert {s["id"] for s in sources} == {c["args"]["section"] for c in reads}
    assert {s["kind"] for s in sources} == {"section"}
    assert POLICY_SECTIONS & {s["id"] for s in sources}
    from opsgraph.engine.runner import thread_state

    _, state = thread_state(person("staff"), finished(events)["thread_id"])
    assert state is not None  # what the synthesiser got: the agent's answer, not raw reads
    assert state.results["t1"].content == "Cancel at least 24 hours ahead."
    assert state.results["t1"].findings == []


@pytest.mark.usefixtures("demo_db")
def test_the_pre_read_answer_is_one_call_with_the_passages_and_no_tools(
        script: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from opsgraph.engine.read_answer import PASSAGE_RULES
    from opsgraph.models import scripted
    from tests.engine.helpers import record_prompts

    offered: list[Any] = []
    bind = scripted.ScriptedChatModel.bind_tools

    def bind_tools(self: Any, tools: Any, **kwargs: Any) -> Any:
        offered.append(list(tools))
        return bind(self, tools, **kwargs)

    monkeypatch.setattr(scripted.ScriptedChatModel, "bind_tools", bind_tools)
    prompts = record_prompts(monkeypatch)
    model = script({"turns": {"t1": [{"content": "Assistance dogs are welcome inside."}]}})
    history = [{"role": "user", "content": "can i bring my dog"},
               {"role": "assistant", "content": "Dogs are welcome on the terrace only."}]
    from opsgraph.engine.runner import stream_run

    events = list(stream_run(person("staff"), "and what about guide dogs?", model=model,
                             history=history))
    assert finished(events)["usage"]["model_calls"] == 1
    [(stage, messages)] = prompts.calls
    assert stage == "task" and messages[0].content == PASSAGE_RULES
    shown = str(messages[-1].content)
    assert "Dogs are welcome on the terrace only." in shown  # the exchange it follows
    assert "Question: and what about guide dogs?" in shown
    assert DATA_NOTICE in shown and re.search(r"^\[[\w#-]+\] .+", shown, re.MULTILINE)
    assert all(not tools for tools in offered), offered  # no tool was offered
    assert of(events, "answer")[-1]["text"] == "Assistance dogs are welcome inside."
    assert of(events, "answer")[-1]["sources"]  # what code read, as sources


@pytest.mark.usefixtures("demo_db")
@pytest.mark.parametrize(("turns", "answer"), [
    # a figure no passage states is sent back once, naming it; the second answer holds
    (["Cancel at least 17 hours ahead.", "Cancel at least 24 hours ahead."],
     "Cancel at least 24 hours ahead."),
    # a second guess is not passed on: code says the knowledge base does not say
    (["Cancel at least 17 hours ahead.", "Cancel 37 hours ahead, for £3."],
     "The knowledge base does not say."),
])
def test_an_answer_stating_figures_no_passage_states_is_sent_back_once(
        script: Any, monkeypatch: pytest.MonkeyPatch, turns: list[str], answer: str) -> None:
    from tests.engine.helpers import record_prompts

    prompts = record_prompts(monkeypatch)
    model = script({"turns": {"t1": [{"content": text} for text in turns]}})
    events = chat(person("staff"), "how late can I cancel a court booking for free?", model)
    assert of(events, "plan")[0]["tasks"][0]["domain"] == "knowledge"  # planned by code
    assert finished(events)["usage"]["model_calls"] == 2
    retry = str(prompts.calls[1][1][-1].content)
    assert retry.startswith("No passage states 17:")
    assert of(events, "answer")[-1]["text"] == answer
    assert statuses(events) == {"t1": "completed"}


@pytest.mark.usefixtures("demo_db")
@pytest.mark.parametrize(("turns", "calls", "answer"), [
    # the club's hours read as the sauna's: sent back once, naming the word
    (["The sauna is open 08:00 to 20:00 at weekends.", "The knowledge base does not say."],
     2, "The knowledge base does not say."),
    # the second answer stands, its figures grounded (a word is a weaker sign than a figure)
    (["The sauna is open 08:00 to 20:00 at weekends.", "It keeps the club's hours: 08:00 to "
      "20:00 at weekends."], 2, "It keeps the club's hours: 08:00 to 20:00 at weekends."),
    # an answer that declines may name it: no second call
    (["The sauna's hours are not covered.", "unused"], 1, "The sauna's hours are not covered."),
])
def test_an_answer_about_what_the_knowledge_base_never_mentions_is_sent_back_once(
        script: Any, monkeypatch: pytest.MonkeyPatch, turns: list[str], calls: int,
        answer: str) -> None:
    from tests.engine.helpers import record_prompts

    prompts = record_prompts(monkeypatch)
    model = script({"turns": {"t1": [{"content": text} for text in turns]}})
    events = chat(person("staff"), "what are the sauna opening hours?", model)
    assert of(events, "plan")[0]["tasks"][0]["domain"] == "knowledge"
    assert finished(events)["usage"]["model_calls"] == calls
    if calls == 2:
        retry = str(prompts.calls[1][1][-1].content)
        assert retry.startswith("The knowledge base never mentions sauna:")
    assert of(events, "answer")[-1]["text"] == answer


def test_the_date_line_grounds_no_figure_of_a_knowledge_answer() -> None:
    from opsgraph.engine.read_answer import NOT_SAID, answer_from_passages

    shown = HumanMessage("Today: Saturday 5 December 2026 (2026-12-05), 21:56 UTC.\n\n"
                         "[squash#_top] Squash\nThe squash court is closed for a new floor.\n\n"
                         "Question: on what date will the squash court reopen?")
    made_up = AIMessage("The squash court reopens on Saturday 5 December 2026 at 21:56.")
    ask = Scripted([made_up, made_up])
    result = answer_from_passages(ask, [shown])
    assert result is not None and result.content == NOT_SAID
    assert len(ask.offered) == 2  # sent back once, naming them, then replaced
    ask = Scripted([AIMessage("It is closed for a new floor; no date is given.")])
    result = answer_from_passages(ask, [shown])
    assert result is not None and len(ask.offered) == 1


def test_the_first_message_holds_the_hits_as_data_and_the_sections_read(tools: Any) -> None:
    found = pre_search(tools, LATE_CANCEL, "how late can I cancel?")
    assert found is not None
    block = found.block
    assert DATA_NOTICE in block and "not sources" in block
    assert "Already read for you" in block
    read = [c["args"]["section"] for c in found.calls if c["tool"] == "knowledge_read_section"]
    assert read and all(f"{s} — " in block and "(read below)" in block for s in read)
    assert [s.id for s in found.sources] == read  # the reads, in order; never the search
    assert found.findings[0]["tool"] == "knowledge_search"
    assert len(block) < 6000  # ~1,500 tokens: the small local model's context is short


def test_the_pre_search_stays_small_and_mostly_reads_the_answer(tools: Any) -> None:
    from tests.knowledge.test_pre_search_recall import labelled

    sizes, answered = [], 0
    questions = labelled()
    for question in questions:
        found = pre_search(tools, question["instruction"], question["q"])
        assert found is not None
        sizes.append(len(found.block))
        answered += bool({s.id for s in found.sources} & set(question["sections"]))
    print(f"\npre-search over {len(sizes)} questions: a right section pre-read for "
          f"{answered}; block max {max(sizes)} chars, mean {sum(sizes) // len(sizes)}")
    assert max(sizes) < 6000
    assert answered >= 0.9 * len(questions)


def test_an_agent_without_the_search_tool_gets_no_pre_search(demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    ctx = Context(scope, person("staff"))
    assert pre_search(bind_agent_tools(ctx, ["knowledge.read"], Plan.PRO), LATE_CANCEL,
                      "") is None
    saved = list(demo_db["knowledge"].find({"tenant_id": "demo"}))
    demo_db["knowledge"].delete_many({"tenant_id": "demo"})
    try:  # an empty knowledge base: no knowledge tool is bound, so nothing is searched
        assert pre_search(bind_agent_tools(ctx, KNOWLEDGE_TOOLS, Plan.PRO), LATE_CANCEL,
                          "") is None
    finally:
        demo_db["knowledge"].insert_many(saved)


@pytest.mark.usefixtures("demo_db")
def test_a_read_straight_from_a_pre_search_hit_is_allowed(script: Any) -> None:
    model = script({
        "plan": {"tasks": [task("t1", "Find where the defibrillator is")]},
        "turns": {"t1": [call("knowledge_read_section", document="safety",
                              section="safety#fire"),
                         {"content": "The fire procedure is in the safety policy."}]},
        "synthesis": "See the safety policy."})
    events = chat(person("staff"), "where is the defibrillator", model)
    own = [c for c in only(events)["calls"] if "by" not in c]
    assert [(c["tool"], c["ok"]) for c in own] == [("knowledge_read_section", True)]
    assert "safety#fire" in {s["id"] for s in of(events, "answer")[0]["sources"]}


# ── the stop rule and the step budget ────────────────────────────────────────────────────

@pytest.mark.usefixtures("demo_db")
def test_a_successful_search_round_is_not_the_end_the_answer_is(script: Any) -> None:
    model = script({
        "plan": {"tasks": [task("t1", "Find the dog policy")]},
        "turns": {"t1": [call("knowledge_search", query="dogs"),
                         call("knowledge_read_section", document="dogs-and-pets",
                              section="dogs-and-pets#_top"),
                         {"content": "Only assistance dogs are allowed inside."}]}})
    events = chat(person("staff"), "can I bring my dog", model)
    result = only(events)
    own = [c["tool"] for c in result["calls"] if "by" not in c]
    assert own == ["knowledge_search", "knowledge_read_section"]
    # no planner call (a knowledge question is planned by code); the answer from the
    # pre-read passages came back as a tool call, so the loop ran: that call and three turns
    assert finished(events)["usage"]["model_calls"] == 4


@pytest.mark.usefixtures("demo_db")
def test_an_agent_that_searches_forever_answers_after_its_step_budget(script: Any) -> None:
    budget = get_registry().get("knowledge.policies").round_limit
    model = script({"plan": {"tasks": [task("t1", "Find the trampoline policy")]},
                    "turns": {"t1": [call("knowledge_search", query="trampoline")]
                              * (budget + 1)},
                    "synthesis": "I could not find a trampoline policy."})
    events = chat(person("staff"), "whats the trampoline policy", model)
    assert statuses(events) == {"t1": "completed"} and not of(events, "error")
    assert finished(events)["status"] == "completed"
    own = [c for c in only(events)["calls"] if "by" not in c]
    assert len(own) == budget  # the last turn's calls were not run
    from opsgraph.engine.runner import thread_state

    _, state = thread_state(person("staff"), finished(events)["thread_id"])
    assert state is not None
    result = state.results["t1"]
    assert result.cap == "tool_rounds"  # the task record says why it stopped
    assert result.content == NO_ANSWER.format(rounds=budget)
    assert result.findings == []  # the synthesiser is handed the answer, not the searches


def test_when_the_budget_is_spent_the_model_is_told_and_asked_once(tools: Any) -> None:
    ask = Scripted([calls(("knowledge_search", {"query": "trampoline"}))] * 2
                   + [AIMessage(content="The knowledge base does not say.")])
    messages: list[BaseMessage] = [HumanMessage("trampoline rules?")]
    result = run_tool_loop(ask=ask, tools=tools, requires={}, messages=messages,
                           max_rounds=2, agent="knowledge.policies", answers=True)
    assert ask.offered[2] == []  # no tools on the last call
    assert messages[-2].content == BUDGET_SPENT.format(rounds=2)
    assert result.content == "The knowledge base does not say."
    assert result.stopped == "tool_rounds" and result.rounds == 2


def test_an_answer_within_the_budget_is_no_stop_on_the_budget(tools: Any) -> None:
    ask = Scripted([calls(("knowledge_grep", {"pattern": "defibrillator"})),
                    AIMessage(content="By reception.")])
    result = run_tool_loop(ask=ask, tools=tools, requires={}, messages=[HumanMessage("x")],
                           max_rounds=4, agent="knowledge.faq", answers=True)
    assert result.content == "By reception." and result.stopped is None
    assert [f["tool"] for f in result.findings] == ["knowledge_grep"]
    assert result.sources == []  # grep is navigation


# ── switching method, prompt rules ───────────────────────────────────────────────────────

def test_an_empty_search_names_the_other_ways_to_look(tools: Any) -> None:
    outcome = tools["knowledge_search"].call({"query": "xylophone zeppelin"})
    assert outcome.ok and outcome.content["results"] == []
    hint = outcome.content["hint"]
    for other in ("knowledge_grep", "knowledge_find_objects", "knowledge_outline",
                  "knowledge_file_outline"):
        assert other in hint
    grep = tools["knowledge_grep"].call({"pattern": "xylophone zeppelin"})
    assert grep.ok and grep.content["matches"] == []
    assert "knowledge_search" in grep.content["hint"]
    assert "hint" not in tools["knowledge_grep"].call({"pattern": "defibrillator"}).content
    none = tools["knowledge_find_objects"].call({"type": "spaceship"})
    assert none.ok and none.content["count"] == 0
    assert "knowledge_outline" in none.content["hint"]
    found = pre_search(tools, "xylophone zeppelin", "")
    assert found is not None and found.sources == []
    assert "found nothing" in found.block and "knowledge_grep" in found.block


def test_knowledge_agents_carry_the_reading_rules_and_no_search_first_workaround() -> None:
    registry = get_registry()
    agents = registry.in_domain("knowledge")
    assert agents
    for spec in agents:
        prompt = system_prompt(spec)
        assert all(rule in prompt for rule in RULES_KNOWLEDGE), spec.name
        assert not spec.requires, f"{spec.name}: a read must not wait for a search"
        assert spec.round_limit == 4
    other = system_prompt(registry.get("members.lookup"))
    assert RULES_KNOWLEDGE[1] not in other
    joined = " ".join(RULES_KNOWLEDGE)
    for rule in ("number", "deadline", "condition", "clarifying question", "Never guess"):
        assert rule in joined


@pytest.mark.parametrize(("text", "word", "used"), [
    ("A wedding reception costs £10 a head.", "wedding", True),
    ("We are closed on Wednesday.", "wedding", False),  # "wed", too short a stem to stand
    ("Restringing costs £22.50.", "restring", True),
    ("The padel court's price", "padel", True),
])
def test_an_answer_uses_a_word_in_any_of_its_forms(text: str, word: str, used: bool) -> None:
    from opsgraph.engine.read_answer import _uses

    assert _uses(text, word) is used
