"""The harness validator: each kind of problem is reported with its path, and all of them
at once; the shipped examples and the built-in harness are valid."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from opsgraph.errors import BadInput
from opsgraph.harness.spec import BUILTIN, HarnessDoc
from opsgraph.harness.validate import HarnessInvalid, validate

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "opsgraph" / "harness" / "examples"
Doc = dict[str, Any]


def step(id: str, type: str, **fields: Any) -> Doc:
    return {"id": id, "type": type, "title": id.title(), "description": f"the {id} step",
            "layer": "core", **fields}


def base() -> Doc:
    """A valid document that uses most step types."""
    return {
        "steps": [
            step("guard", "guard", rules=[
                {"patterns": ["^\\W*$"], "action": "block", "text": "@spam"},
                {"patterns": ["\\binjur"], "action": "flag", "set": {"risk": "medium"}}]),
            step("route", "switch", cases=[{"if": {"var": "message", "matches": "hours?"},
                                            "goto": "find"}], default="main"),
            step("find", "search", save_as="hits", next="draft"),
            step("draft", "llm", prompt="@summary", input="{{hits.count}} {{message}}",
                 output_schema={"type": "object", "properties": {"answer": {"type": "string"}}},
                 save_as="reply"),
            step("say", "answer", text="{{reply.answer | trim}}"),
            step("main", "supervisor", final=False, save_as="draft_answer"),
            step("look", "tool", operation="members.search", args={"query": "{{user.name}}"},
                 save_as="who"),
            step("risky", "check", **{"if": {"var": "risk", "eq": "medium"}, "then": "careful",
                                      "else": "plain"}),
            step("careful", "answer", text=["{{draft_answer.answer}}", "@disclaimer"]),
            step("plain", "agent", agent="members.lookup", instruction="{{message}}"),
        ],
        "prompts": {"spam": "No spam, {{user.name}}.", "summary": "Answer for {{tenant.name}}.",
                    "disclaimer": "No medical advice."},
        "tests": [{"name": "spam", "message": "!!!",
                   "expect": {"steps_ran": ["guard"], "steps_not_ran": ["main"],
                              "regex": "spam", "max_model_calls": 0}}],
    }


def problems_of(doc: object) -> list[dict[str, str]]:
    with pytest.raises(HarnessInvalid) as caught:
        validate(doc)
    return caught.value.problems


def at(problems: list[dict[str, str]], path: str) -> str:
    """The messages reported at `path`, joined (an assertion names them all otherwise)."""
    found = [p["message"] for p in problems if p["path"] == path]
    assert found, f"nothing reported at {path}: {problems}"
    return " | ".join(found)


def test_the_base_document_is_valid() -> None:
    doc = validate(base())
    assert isinstance(doc, HarnessDoc) and [s.id for s in doc.steps][:2] == ["guard", "route"]


@pytest.mark.parametrize("name", ["classic_pipeline", "club_rules"])
def test_shipped_examples_are_valid(name: str) -> None:
    doc = validate(json.loads((EXAMPLES / f"{name}.json").read_text()))
    assert doc.tests, "an example carries its tests"


def test_the_builtin_harness_is_valid() -> None:
    assert [s.type for s in validate(BUILTIN).steps] == ["supervisor"]


def _set(path: str, value: Any) -> Callable[[Doc], None]:
    """A mutation setting `steps[3].prompt`-style paths."""
    def apply(doc: Doc) -> None:
        target: Any = doc
        keys: list[str | int] = []
        for part in path.replace("]", "").replace("[", ".").split("."):
            keys.append(int(part) if part.isdigit() else part)
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return apply


def _append_step(new: Doc, *, at: int | None = None) -> Callable[[Doc], None]:
    def apply(doc: Doc) -> None:
        doc["steps"].insert(len(doc["steps"]) if at is None else at, new)
    return apply


def _loop(doc: Doc) -> None:
    """plain (an agent) no longer ends the run: it goes back to main."""
    doc["steps"][9].update(final=False, next="main")


CASES: list[tuple[str, Callable[[Doc], None], str, str]] = [
    ("unknown field", _set("steps[2].colour", "blue"), "steps[2].colour", "unknown field"),
    ("unknown top-level field", _set("owner", "me"), "owner", "unknown field"),
    ("unknown step type", _set("steps[4].type", "email"), "steps[4].type",
     "unknown step type 'email'"),
    ("wrong type", _set("steps[2].limit", "many"), "steps[2].limit", "integer"),
    ("bad rule action", _set("steps[0].rules[1].action", "delete"),
     "steps[0].rules[1].action", "'block' or 'flag'"),
    ("duplicate step id", _set("steps[4].id", "find"), "steps[4].id", "duplicate step id 'find'"),
    ("missing next", _set("steps[2].next", "nowhere"), "steps[2].next", "no step 'nowhere'"),
    ("missing then", _set("steps[7].then", "nowhere"), "steps[7].then", "no step 'nowhere'"),
    ("missing else", _set("steps[7].else", "nowhere"), "steps[7].else", "no step 'nowhere'"),
    ("missing case goto", _set("steps[1].cases[0].goto", "nowhere"), "steps[1].cases[0].goto",
     "no step 'nowhere'"),
    ("missing default", _set("steps[1].default", "nowhere"), "steps[1].default",
     "no step 'nowhere'"),
    ("missing prompt in a text", _set("steps[8].text", ["{{draft_answer.answer}}", "@legal"]),
     "steps[8].text[1]", "no prompt '@legal'"),
    ("missing llm prompt", _set("steps[3].prompt", "@nothing"), "steps[3].prompt",
     "no prompt '@nothing'"),
    ("missing agent", _set("steps[9].agent", "members.wizard"), "steps[9].agent",
     "no agent 'members.wizard'"),
    ("missing operation", _set("steps[6].operation", "members.teleport"), "steps[6].operation",
     "no operation 'members.teleport'"),
    ("write operation", _set("steps[6].operation", "members.update"), "steps[6].operation",
     "write operation"),
    ("unknown operation argument", _set("steps[6].args", {"q": "x"}), "steps[6].args.q",
     "takes no argument 'q'"),
    ("template that does not parse", _set("steps[4].text", "{{reply.answer | shout}}"),
     "steps[4].text", "unknown filter 'shout'"),
    ("template in a prompt", _set("prompts.summary", "Hi {{tenant.name | truncate}}"),
     "prompts.summary", "needs an argument"),
    ("undefined variable", _set("steps[4].text", "{{answer.text}}"), "steps[4].text",
     "no variable 'answer'"),
    ("undefined variable in a condition", _set("steps[7].if", {"var": "danger", "eq": 1}),
     "steps[7].if.var", "no variable 'danger'"),
    ("user id read", _set("steps[6].args", {"query": "{{user.id}}"}), "steps[6].args.query",
     "only user.name and user.role"),
    ("bad guard regex", _set("steps[0].rules[1].patterns", ["(unclosed"]),
     "steps[0].rules[1].patterns[0]", "not a regular expression"),
    ("bad matches regex", _set("steps[1].cases[0].if", {"var": "message", "matches": "[a-"}),
     "steps[1].cases[0].if.matches", "not a regular expression"),
    ("bad test regex", _set("tests[0].expect.regex", "*spam"), "tests[0].expect.regex",
     "not a regular expression"),
    ("backreference in a guard", _set("steps[0].rules[1].patterns", ["x", r"(\w)\1"]),
     "steps[0].rules[1].patterns[1]", "RE2 cannot run it (patterns run in linear time"),
    ("lookbehind in matches", _set("steps[1].cases[0].if",
                                   {"var": "message", "matches": "(?<!no )hours"}),
     "steps[1].cases[0].if.matches", "it uses a negative lookbehind"),
    ("lookahead in a test regex", _set("tests[0].expect.regex", "spam(?=!)"),
     "tests[0].expect.regex", "it uses a lookahead"),
    ("a filter argument in other digits", _set("steps[4].text", "{{reply.answer | truncate:٣}}"),
     "steps[4].text", "'٣' is not a whole number (the digits 0-9"),
    ("a superscript digit", _set("prompts.summary", "Hi {{tenant.name | truncate:²}}"),
     "prompts.summary", "'²' is not a whole number"),
    ("a text where truncate wants a number",
     _set("steps[4].text", '{{reply.answer | truncate:"5"}}'), "steps[4].text",
     "truncate needs a number"),
    ("a bad escape in a quoted argument",
     _set("steps[4].text", '{{reply.answer | default:"\\q"}}'), "steps[4].text",
     "not a valid quoted text"),
    ("unreachable step", _append_step(step("orphan", "stop"), at=5), "steps[5]",
     "'orphan' is unreachable"),
    ("cycle without a budget", _loop, "steps[5]",
     "a cycle without a budget: main → look → risky → plain → main"),
    ("falls off the end", _set("steps[9].final", False), "steps[9]", "fall off the end"),
    ("final step naming next", _set("steps[4].next", "main"), "steps[4].next",
     "cannot name next"),
    ("test names a missing step (ran)", _set("tests[0].expect.steps_ran", ["guard", "gaurd"]),
     "tests[0].expect.steps_ran[1]", "no step 'gaurd'"),
    ("test names a missing step (not ran)", _set("tests[0].expect.steps_not_ran", ["x"]),
     "tests[0].expect.steps_not_ran[0]", "no step 'x'"),
    ("duplicate test name", lambda d: d["tests"].append(copy.deepcopy(d["tests"][0])),
     "tests[1].name", "duplicate test name 'spam'"),
    ("output schema not a schema", _set("steps[3].output_schema", {"type": "thing"}),
     "steps[3].output_schema", "not a JSON Schema"),
    ("output schema not an object", _set("steps[3].output_schema", {"type": "string"}),
     "steps[3].output_schema", "must describe an object"),
]


@pytest.mark.parametrize(("mutate", "path", "message"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_problem_is_named_by_path(mutate: Callable[[Doc], None], path: str,
                                       message: str) -> None:
    doc = base()
    mutate(doc)
    problems = problems_of(doc)
    assert message in at(problems, path)


def test_tool_arguments_are_named_as_a_user_writes_them() -> None:
    doc = base()
    doc["steps"][6].update(operation="reports.bookings", args={"from": "2026-01-01"})
    assert validate(doc).steps[6].type == "tool"
    doc["steps"][6]["args"] = {"from_": "2026-01-01"}
    assert "takes no argument 'from_'" in at(problems_of(doc), "steps[6].args.from_")


def test_at_name_is_a_prompt_only_in_text_fields() -> None:
    doc = base()
    doc["steps"][2]["query"] = "@nothing"  # a search query is a plain template: literal text
    validate(doc)
    doc["steps"][4]["text"] = "@nothing"  # an answer's text is a text field: a prompt
    assert "no prompt '@nothing'" in at(problems_of(doc), "steps[4].text")


def test_a_budget_allows_a_cycle() -> None:
    doc = base()
    _loop(doc)
    doc["budget"] = {"steps": 12}
    assert validate(doc).budget.steps == 12


def test_every_problem_is_reported_at_once_and_the_message_lists_them() -> None:
    doc = base()
    doc["steps"][2]["colour"] = "blue"          # shape
    doc["steps"][7]["then"] = "nowhere"          # reference, in a step that parsed
    doc["steps"][3]["prompt"] = "@nothing"
    doc["tests"][0]["expect"]["steps_ran"] = ["gaurd"]
    with pytest.raises(HarnessInvalid) as caught:
        validate(doc)
    err = caught.value
    paths = {p["path"] for p in err.problems}
    assert {"steps[2].colour", "steps[7].then", "steps[3].prompt",
            "tests[0].expect.steps_ran[0]"} <= paths
    assert isinstance(err, BadInput) and err.code == "invalid" and err.status == 400
    lines = err.message.splitlines()
    assert "4 problem(s)" in lines[0] and len(lines) == 1 + len(err.problems)
    assert err.to_json()["error"]["detail"]["problems"] == err.problems


def test_a_transition_to_a_malformed_step_is_not_reported_missing_too() -> None:
    doc = base()
    doc["steps"][8]["colour"] = "red"  # 'careful' is malformed, but it exists
    paths = {p["path"] for p in problems_of(doc)}
    assert paths == {"steps[8].colour"}


@pytest.mark.parametrize("doc", [[], "steps", None, 3])
def test_not_an_object(doc: object) -> None:
    assert problems_of(doc)[0]["path"] == "$"


def test_a_parsed_document_is_revalidated() -> None:
    parsed = HarnessDoc.model_validate({**base(), "steps": [
        *base()["steps"][:4], step("say", "answer", text="{{nothing.here}}"),
        *base()["steps"][5:]]})
    assert "no variable 'nothing'" in at(problems_of(parsed), "steps[4].text")
