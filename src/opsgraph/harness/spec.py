"""The harness format: a tenant's logic as a JSON document of steps, prompts and tests.

A version is `{"steps": [...], "prompts": {...}, "tests": [...], "budget": {...},
"metadata": {...}}`. Steps run in order from the first unless a step names its successor
(`next`, or a `check`/`switch` branch); a final step (`answer`, `clarify`, `stop`, a
`supervisor` or `agent` step with `final: true`) ends the run. Text fields are templates
(`{{message}}`, `{{var.path}}`, `{{user.name}}`, `{{tenant.name}}`, `{{client.name}}`, with
filters) and a text that is exactly `@name` is the prompt of that name.

This module holds only the shape; `validate.py` checks what the shape cannot (references,
reachability, cycles), and the engine executes it.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, model_validator

from opsgraph.lazy_build import LazyModel
from opsgraph.principal import Role

STEP_ID = r"^[a-z][a-z0-9_]{0,39}$"
VAR_NAME = r"^[a-z][a-z0-9_]{0,39}$"
STEP_TYPES: tuple[str, ...] = ("guard", "check", "switch", "set", "search", "tool", "llm",
                               "agent", "supervisor", "clarify", "answer", "stop")
LAYERS: tuple[str, ...] = ("safety", "policy", "routing", "knowledge", "core", "presentation")

Text = str | list[str]
"""A template, or a list of templates joined by blank lines (`["{{draft.answer}}",
"@disclaimer"]`)."""


class Strict(LazyModel):
    """The format's models: unknown fields refused, values frozen; built on first use (a
    run on the built-in harness builds none of them: `builtin_doc`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Condition(Strict):
    """A test on a variable (exactly one operator), or `all` / `any` / `not` of others.

    `var` is a path (`risk`, `draft.status`, `user.role`, `message`); a missing variable is
    `None`."""

    var: str | None = None
    eq: Any = None
    ne: Any = None
    in_: list[Any] | None = Field(default=None, alias="in")
    contains: str | None = None
    matches: str | None = None
    exists: bool | None = None
    gt: float | None = None
    lt: float | None = None
    all: list[Condition] | None = None
    any: list[Condition] | None = None
    not_: Condition | None = Field(default=None, alias="not")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="after")
    def _one_operator(self) -> Condition:
        ops = [name for name in ("eq", "ne", "in_", "contains", "matches", "exists", "gt", "lt")
               if name in self.model_fields_set]
        groups = [name for name in ("all", "any", "not_") if name in self.model_fields_set]
        if groups:
            if self.var is not None or ops or len(groups) > 1:
                raise ValueError("a condition is either one of all/any/not, or var with one "
                                 "operator")
            return self
        if self.var is None:
            raise ValueError("a condition needs var (and one operator), or all/any/not")
        if len(ops) != 1:
            raise ValueError("var needs exactly one operator of eq, ne, in, contains, matches, "
                             "exists, gt, lt")
        return self


class StepBase(Strict):
    id: str = Field(pattern=STEP_ID)
    title: str = Field(min_length=1, max_length=80)
    description: str = Field(min_length=1, max_length=500)
    layer: Literal["safety", "policy", "routing", "knowledge", "core", "presentation"]
    next: str | None = Field(default=None, pattern=STEP_ID)
    """The step after this one; by default the next in the list."""

    def goes_on_to(self, following: str | None) -> str | None:
        """Where this step goes when it neither branches nor ends the run: its `next`, else
        `following` (the step after it in the list; None: the list's end)."""
        return self.next or following


class GuardRule(Strict):
    patterns: list[str] = Field(min_length=1, max_length=50)
    """Regular expressions (Python syntax, case-insensitive) searched in the message."""
    action: Literal["block", "flag"]
    text: Text | None = None
    """`block`: the reply that ends the run."""
    set: dict[str, Any] | None = None
    """`flag`: the variables set when a pattern matches."""

    @model_validator(mode="after")
    def _action_fields(self) -> GuardRule:
        if self.action == "block" and (self.text is None or self.set is not None):
            raise ValueError("a block rule needs text (its reply) and no set")
        if self.action == "flag" and (not self.set or self.text is not None):
            raise ValueError("a flag rule needs set (the variables) and no text")
        return self


class Guard(StepBase):
    """Regular-expression rules on the message; no model call."""

    type: Literal["guard"]
    rules: list[GuardRule] = Field(min_length=1, max_length=50)


class Check(StepBase):
    """A condition on variables: `then` when it holds, else `else`."""

    type: Literal["check"]
    if_: Condition = Field(alias="if")
    then: str = Field(pattern=STEP_ID)
    else_: str = Field(alias="else", pattern=STEP_ID)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Case(Strict):
    if_: Condition = Field(alias="if")
    goto: str = Field(pattern=STEP_ID)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Switch(StepBase):
    """Several branches: the first case whose condition holds, else `default`."""

    type: Literal["switch"]
    cases: list[Case] = Field(min_length=1, max_length=20)
    default: str = Field(pattern=STEP_ID)


class Set(StepBase):
    """Sets variables (string values are templates)."""

    type: Literal["set"]
    values: dict[str, Any] = Field(min_length=1)


class Search(StepBase):
    """A knowledge search (the `knowledge.search` operation) into a variable:
    `{hits: [...], count}`."""

    type: Literal["search"]
    query: str = "{{message}}"
    filters: dict[str, Any] = Field(default_factory=dict)
    limit: int = Field(default=5, ge=1, le=20)
    save_as: str = Field(pattern=VAR_NAME)


class Tool(StepBase):
    """One read operation with templated arguments, into a variable."""

    type: Literal["tool"]
    operation: str = Field(pattern=r"^[a-z]+\.[a-z_]+$")
    args: dict[str, Any] = Field(default_factory=dict)
    save_as: str = Field(pattern=VAR_NAME)


class Llm(StepBase):
    """One model call with a named prompt; the output is held to `output_schema` (a JSON
    Schema of an object) and saved as a variable."""

    type: Literal["llm"]
    prompt: str = Field(pattern=r"^@[a-z][a-z0-9_]{0,39}$")
    input: str = "{{message}}"
    output_schema: dict[str, Any]
    model_tier: Literal["default", "light"] = "light"
    save_as: str = Field(pattern=VAR_NAME)


class Agent(StepBase):
    """One registry agent with its own tool set; `{answer, sources, status}` saved."""

    type: Literal["agent"]
    agent: str = Field(min_length=1, max_length=60)
    instruction: str = "{{message}}"
    save_as: str | None = Field(default=None, pattern=VAR_NAME)
    final: bool = True


class Supervisor(StepBase):
    """The whole decompose → execute → synthesise graph; `{answer, sources, status}` saved.
    With `final: false` its answer is not sent: a later step uses it."""

    type: Literal["supervisor"]
    message: str = "{{message}}"
    save_as: str | None = Field(default=None, pattern=VAR_NAME)
    final: bool = True


class Clarify(StepBase):
    """A question with options (buttons in the dashboard); ends the run."""

    type: Literal["clarify"]
    question: Text
    options: list[str] = Field(min_length=2, max_length=6)


class Answer(StepBase):
    """Templated text; ends the run with it."""

    type: Literal["answer"]
    text: Text


class Stop(StepBase):
    """Ends the run; `text`, when given, is its answer."""

    type: Literal["stop"]
    text: Text | None = None


Step = Annotated[Guard | Check | Switch | Set | Search | Tool | Llm | Agent | Supervisor
                 | Clarify | Answer | Stop, Field(discriminator="type")]
FINAL_TYPES = frozenset({"clarify", "answer", "stop"})


class Expect(Strict):
    """What a test expects; every field is optional and each given one must hold."""

    steps_ran: list[str] = Field(default_factory=list)
    steps_not_ran: list[str] = Field(default_factory=list)
    contains: list[str] = Field(default_factory=list)
    absent: list[str] = Field(default_factory=list)
    regex: str = ""
    max_model_calls: int | None = Field(default=None, ge=0)
    sources: int | None = Field(default=None, ge=0)
    tools_contains: list[str] = Field(default_factory=list)


class HarnessTest(Strict):
    """A message (and who sends it) with expectations. `script` is a scripted-model
    document (plan, turns, synthesis, prompts) used when the tests run with the scripted
    model."""

    name: str = Field(min_length=1, max_length=120)
    message: str = Field(min_length=1, max_length=8000)
    role: Role = Role.STAFF
    user: str = Field(default="harness-test", min_length=1, max_length=64)
    expect: Expect = Field(default_factory=Expect)
    script: dict[str, Any] | None = None


class Budget(Strict):
    steps: int = Field(default=20, ge=1, le=200)
    model_calls: int = Field(default=10, ge=0, le=100)
    seconds: int = Field(default=120, ge=1, le=900)


class HarnessDoc(Strict):
    """One version of a tenant's harness, as saved (without its number)."""

    steps: list[Step] = Field(min_length=1, max_length=100)
    prompts: dict[str, str] = Field(default_factory=dict)
    tests: list[HarnessTest] = Field(default_factory=list, max_length=100)
    budget: Budget = Field(default_factory=Budget)
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form: `title`, `description`, `author`, notes."""

    def following(self, step_id: str) -> str | None:
        """The id of the step after `step_id` in the list (None after the last)."""
        ids = [s.id for s in self.steps]
        at = ids.index(step_id)
        return ids[at + 1] if at + 1 < len(ids) else None


BUILTIN: dict[str, Any] = {
    "steps": [{"id": "main", "type": "supervisor", "title": "Answer",
               "description": "Plan the request, run the agents in parallel, answer.",
               "layer": "core"}],
    "metadata": {"title": "Built-in", "description": "The supervisor graph, unchanged."},
}
"""The built-in harness: one `supervisor` step (version 0 of every tenant)."""


@cache
def builtin_doc() -> HarnessDoc:
    """`BUILTIN` as a document, the same as `HarnessDoc.model_validate(BUILTIN)`
    (tests/harness/test_versions.py holds them equal), made without validating: it is this
    module's constant, and so a run on the built-in harness (every tenant's, until one
    activates a version) builds none of the format's models (HarnessDoc's build, which
    builds the steps' schemas with it: 35-38 ms of CPU in a fresh interpreter)."""
    steps = [Supervisor.model_construct(**step) for step in BUILTIN["steps"]]
    return HarnessDoc.model_construct({"steps", "metadata"}, steps=steps,
                                      metadata=dict(BUILTIN["metadata"]),
                                      budget=Budget.model_construct())
