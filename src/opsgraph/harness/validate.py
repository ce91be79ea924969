"""Validate a harness document: every problem, each named by its path, before anything is
saved.

The pydantic models (`spec.py`) check the shape; this module checks what a shape cannot:
references (steps, prompts, agents, operations, variables), regular expressions (that RE2
can run them in linear time: `patterns.py`), templates, the output schemas of `llm` steps,
and the graph (reachable from the first step, no cycle without an explicit step budget, no
step that falls off the end of the list). A document
with a broken shape is still checked for references, step by step, so one answer lists all
of what is wrong rather than the first thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import ValidationError

from opsgraph.cycles import find_cycle
from opsgraph.errors import BadInput
from opsgraph.harness import patterns, templates
from opsgraph.harness.spec import (
    FINAL_TYPES,
    STEP_TYPES,
    Agent,
    Answer,
    Check,
    Clarify,
    Condition,
    Guard,
    HarnessDoc,
    HarnessTest,
    Llm,
    Search,
    Set,
    Step,
    Stop,
    Strict,
    Supervisor,
    Switch,
    Tool,
)
from opsgraph.operations.catalogue import CATALOGUE
from opsgraph.registry.loader import get_registry

Problem = dict[str, str]
USER_FIELDS = frozenset({"name", "role"})


class _OneStep(Strict):
    """One step alone (a malformed document's well-formed steps); a lazy model, as the
    format's are: validating a document whose shape is wrong is the only use."""

    step: Step


class HarnessInvalid(BadInput):
    """A harness document that cannot be saved; `problems` lists every `{path, message}`."""

    code = "invalid"

    def __init__(self, problems: list[Problem]) -> None:
        lines = "\n".join(f"{p['path']}: {p['message']}" for p in problems)
        super().__init__(f"invalid harness ({len(problems)} problem(s)):\n{lines}",
                         problems=problems)
        self.problems = problems


def validate(doc: object) -> HarnessDoc:
    """The document as a `HarnessDoc`; `HarnessInvalid` listing every problem otherwise."""
    if isinstance(doc, HarnessDoc):
        doc = doc.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if not isinstance(doc, dict):
        raise HarnessInvalid([{"path": "$", "message": "a harness is a JSON object with "
                               "steps, prompts, tests, budget and metadata"}])
    try:
        parsed = HarnessDoc.model_validate(doc)
    except ValidationError as exc:
        problems = [_shape_problem(err) for err in exc.errors()]
        problems += _Checker.of_raw(doc).reference_problems()
        raise HarnessInvalid(_unique(problems)) from None
    checker = _Checker.of(parsed)
    problems = checker.reference_problems() + checker.graph_problems()
    if problems:
        raise HarnessInvalid(_unique(problems))
    return parsed


def successors(step: Step, following: str | None) -> list[tuple[str, str]]:
    """Where a step can go next, as `(label, step id)`; `following` is the step after it in
    the list. Empty for a step that ends the run (and a guard's block ends it too)."""
    if isinstance(step, Check):
        return [("then", step.then), ("else", step.else_)]
    if isinstance(step, Switch):
        return [(f"case {n + 1}", case.goto) for n, case in enumerate(step.cases)] + [
            ("default", step.default)]
    if is_final(step):
        return []
    target = step.goes_on_to(following)
    return [("next", target)] if target else []


def is_final(step: Step) -> bool:
    """True when the step ends the run (answer, clarify, stop, a final agent or supervisor)."""
    if isinstance(step, Agent | Supervisor):
        return step.final
    return step.type in FINAL_TYPES


# --- shape ------------------------------------------------------------------------------

def _shape_problem(err: Any) -> Problem:
    loc = list(err["loc"])
    # A step's loc names its union tag after the index (steps, 1, "guard", ...): drop it.
    if len(loc) >= 3 and loc[0] == "steps" and isinstance(loc[1], int):
        del loc[2]
    kind, msg = err["type"], str(err["msg"])
    if kind == "extra_forbidden":
        msg = "unknown field"
    elif kind == "missing":
        msg = "required field is missing"
    elif kind in ("union_tag_invalid", "union_tag_not_found"):
        tag = err.get("ctx", {}).get("tag")
        loc.append("type")
        msg = (f"unknown step type {tag!r}" if kind == "union_tag_invalid"
               else "required field is missing") + (
            f" (types: {', '.join(STEP_TYPES)})")
    return {"path": _path(loc), "message": msg.removeprefix("Value error, ")}


def _path(loc: Iterable[object]) -> str:
    out = ""
    for part in loc:
        if part == "[key]":
            continue
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "$"


def _unique(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[str, str]] = set()
    out = []
    for p in problems:
        key = (p["path"], p["message"])
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


# --- references and graph ---------------------------------------------------------------

class _Checker:
    """The checks beyond the shape, over the steps and tests that parsed."""

    def __init__(self, steps: list[tuple[int, Step]], ids: list[str], prompts: dict[str, str],
                 tests: list[tuple[int, HarnessTest]], cycle_budget: bool,
                 variables: set[str]) -> None:
        self.steps = steps
        self.ids = ids
        self.prompts = prompts
        self.tests = tests
        self.cycle_budget = cycle_budget
        self.variables = variables
        self.problems: list[Problem] = []

    @classmethod
    def of(cls, doc: HarnessDoc) -> _Checker:
        return cls(list(enumerate(doc.steps)), [s.id for s in doc.steps], dict(doc.prompts),
                   list(enumerate(doc.tests)), "steps" in doc.budget.model_fields_set,
                   {var for step in doc.steps for var in _defined(step.model_dump())})

    @classmethod
    def of_raw(cls, doc: dict[str, Any]) -> _Checker:
        """What parsed of a document whose shape is wrong: the steps and tests that are
        well-formed on their own; ids of every step that names one (so a transition to a
        malformed step is not reported missing as well), and likewise the variables any
        step sets."""
        raw_steps = _list(doc.get("steps"))
        steps, ids = [], []
        for n, raw in enumerate(raw_steps):
            if isinstance(raw, dict) and isinstance(raw.get("id"), str):
                ids.append(raw["id"])
            try:
                steps.append((n, _OneStep.model_validate({"step": raw}).step))
            except ValidationError:
                pass
        raw_prompts = doc.get("prompts")
        prompts = ({k: v for k, v in raw_prompts.items() if isinstance(v, str)}
                   if isinstance(raw_prompts, dict) else {})
        raw_tests = _list(doc.get("tests"))
        tests = []
        for n, raw in enumerate(raw_tests):
            try:
                tests.append((n, HarnessTest.model_validate(raw)))
            except ValidationError:
                pass
        variables = {var for raw in raw_steps if isinstance(raw, dict) for var in _defined(raw)}
        return cls(steps, ids, prompts, tests, cycle_budget=True, variables=variables)

    def add(self, path: str, message: str) -> None:
        self.problems.append({"path": path, "message": message})

    def reference_problems(self) -> list[Problem]:
        self._duplicates()
        for n, step in self.steps:
            self._step(f"steps[{n}]", step)
        for name, text in self.prompts.items():
            self._template(f"prompts.{name}", text, prompt_ref=False)
        self._tests()
        return self.problems

    def graph_problems(self) -> list[Problem]:
        self.problems = []
        index = {step.id: n for n, step in self.steps}
        edges = {step.id: [target for _, target in successors(
            step, self.steps[n + 1][1].id if n + 1 < len(self.steps) else None)]
            for n, step in self.steps}
        for n, step in self.steps:
            if not is_final(step) and not isinstance(step, Check | Switch) and not edges[step.id]:
                self.add(f"steps[{n}]", f"step '{step.id}' can fall off the end of the list: "
                         "the last step must end the run (answer, clarify, stop, a final "
                         "supervisor or agent) or name next")
        reached = _reachable(self.steps[0][1].id, edges)
        for n, step in self.steps:
            if step.id not in reached:
                self.add(f"steps[{n}]", f"step '{step.id}' is unreachable from the first "
                         f"step '{self.steps[0][1].id}'")
        cycle = find_cycle({step: [t for t in to if t in edges] for step, to in edges.items()},
                           [s.id for _, s in self.steps])
        if cycle and not self.cycle_budget:
            first = index[cycle[0]]
            self.add(f"steps[{first}]", "a cycle without a budget: "
                     f"{' → '.join(cycle)}; set budget.steps to bound it")
        return self.problems

    def _duplicates(self) -> None:
        seen: set[str] = set()
        for n, step in self.steps:
            if step.id in seen:
                self.add(f"steps[{n}].id", f"duplicate step id '{step.id}'")
            seen.add(step.id)
        names: set[str] = set()
        for n, test in self.tests:
            if test.name in names:
                self.add(f"tests[{n}].name", f"duplicate test name '{test.name}'")
            names.add(test.name)

    def _goto(self, path: str, target: str | None) -> None:
        if target is not None and target not in self.ids:
            self.add(path, f"no step '{target}' (steps: {', '.join(self.ids)})")

    def _step(self, at: str, step: Step) -> None:
        if isinstance(step, Check):
            self._goto(f"{at}.then", step.then)
            self._goto(f"{at}.else", step.else_)
            self._condition(f"{at}.if", step.if_)
        elif isinstance(step, Switch):
            for i, case in enumerate(step.cases):
                self._goto(f"{at}.cases[{i}].goto", case.goto)
                self._condition(f"{at}.cases[{i}].if", case.if_)
            self._goto(f"{at}.default", step.default)
        if step.next is not None and (is_final(step) or isinstance(step, Check | Switch)):
            self.add(f"{at}.next", "a step that ends the run or branches cannot name next")
        else:
            self._goto(f"{at}.next", step.next)
        for path, text, is_text in _texts(at, step):
            self._template(path, text, prompt_ref=is_text)
        if isinstance(step, Guard):
            for i, rule in enumerate(step.rules):
                for j, pattern in enumerate(rule.patterns):
                    self._regex(f"{at}.rules[{i}].patterns[{j}]", pattern)
        elif isinstance(step, Tool):
            self._operation(at, step)
        elif isinstance(step, Llm):
            self._prompt(f"{at}.prompt", step.prompt[1:])
            self._output_schema(f"{at}.output_schema", step.output_schema)
        elif isinstance(step, Agent):
            self._agent(f"{at}.agent", step.agent)

    def _template(self, path: str, text: str, *, prompt_ref: bool) -> None:
        """A template; in a text field (`Text`: a reply, a question, an answer) a value that
        is exactly `@name` is the prompt of that name instead."""
        ref = templates.PROMPT_REF.match(text.strip()) if prompt_ref else None
        if ref:
            self._prompt(path, ref[1])
            return
        try:
            reads = templates.check(text)
        except BadInput as exc:
            self.add(path, exc.message)
            return
        for read in reads:
            self._variable(path, read)

    def _variable(self, path: str, read: str) -> None:
        root, _, rest = read.partition(".")
        if root == "user":
            if rest.split(".")[0] not in USER_FIELDS:
                self.add(path, f"'{read}': a template reads only user.name and user.role")
        elif root not in templates.RESERVED_ROOTS and root not in self.variables:
            known = sorted(templates.RESERVED_ROOTS | self.variables)
            self.add(path, f"'{read}': no variable '{root}' (no step sets it; known: "
                     f"{', '.join(known)})")

    def _prompt(self, path: str, name: str) -> None:
        if name not in self.prompts:
            self.add(path, f"no prompt '@{name}' (prompts: {', '.join(self.prompts) or 'none'})")

    def _condition(self, path: str, cond: Condition) -> None:
        for key, sub in (("all", cond.all), ("any", cond.any)):
            for i, c in enumerate(sub or []):
                self._condition(f"{path}.{key}[{i}]", c)
        if cond.not_ is not None:
            self._condition(f"{path}.not", cond.not_)
        if cond.var is not None:
            self._variable(f"{path}.var", cond.var)
        if cond.matches is not None:
            self._regex(f"{path}.matches", cond.matches)

    def _regex(self, path: str, pattern: str) -> None:
        why = patterns.problem(pattern)
        if why:
            self.add(path, why)

    def _operation(self, at: str, step: Tool) -> None:
        op = CATALOGUE.get(step.operation)
        if op is None:
            reads = [k for k, o in CATALOGUE.items() if o.kind == "read"]
            self.add(f"{at}.operation", f"no operation '{step.operation}' (read operations: "
                     f"{', '.join(reads)})")
            return
        if op.kind != "read":
            self.add(f"{at}.operation", f"'{step.operation}' is a {op.kind} operation: a tool "
                     "step runs reads only (a change goes through an agent or the supervisor, "
                     "and an approval)")
        fields = [f.alias or name for name, f in op.input.model_fields.items()]
        for name in step.args:
            if name not in fields:
                self.add(f"{at}.args.{name}", f"'{step.operation}' takes no argument "
                         f"'{name}' (arguments: {', '.join(fields) or 'none'})")

    def _agent(self, path: str, name: str) -> None:
        if name not in get_registry():
            self.add(path, f"no agent '{name}' in the registry ('opsgraph agents list')")

    def _output_schema(self, path: str, schema: dict[str, Any]) -> None:
        from jsonschema import Draft202012Validator  # heavy: jsonschema (cold start)
        from jsonschema.exceptions import SchemaError  # heavy: jsonschema (cold start)

        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            self.add(path, f"not a JSON Schema: {exc.message}")
            return
        if schema.get("type") != "object":
            self.add(path, 'the output schema must describe an object ("type": "object")')

    def _tests(self) -> None:
        for n, test in self.tests:
            for key in ("steps_ran", "steps_not_ran"):
                for j, name in enumerate(getattr(test.expect, key)):
                    self._goto(f"tests[{n}].expect.{key}[{j}]", name)
            if test.expect.regex:
                self._regex(f"tests[{n}].expect.regex", test.expect.regex)


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _defined(step: dict[str, Any]) -> Iterator[str]:
    """The variables a step sets (read from its JSON, so a malformed step counts too)."""
    if isinstance(step.get("save_as"), str):
        yield step["save_as"]
    if step.get("type") == "set" and isinstance(step.get("values"), dict):
        yield from step["values"]
    if step.get("type") == "guard":
        for rule in _list(step.get("rules")):
            if isinstance(rule, dict) and isinstance(rule.get("set"), dict):
                yield from rule["set"]


def _texts(at: str, step: Step) -> Iterator[tuple[str, str, bool]]:
    """Every template of a step with its path, and whether it is a text field (where
    `@name` is a prompt) or a plain template."""
    def text(path: str, value: str | list[str] | None) -> Iterator[tuple[str, str, bool]]:
        if isinstance(value, str):
            yield path, value, True
        elif isinstance(value, list):
            for i, part in enumerate(value):
                yield f"{path}[{i}]", part, True

    def plain(path: str, value: str) -> Iterator[tuple[str, str, bool]]:
        yield path, value, False

    def nested(path: str, value: Any) -> Iterator[tuple[str, str, bool]]:
        if isinstance(value, str):
            yield path, value, False
        elif isinstance(value, dict):
            for key, item in value.items():
                yield from nested(f"{path}.{key}", item)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                yield from nested(f"{path}[{i}]", item)

    if isinstance(step, Guard):
        for i, rule in enumerate(step.rules):
            yield from text(f"{at}.rules[{i}].text", rule.text)
            yield from nested(f"{at}.rules[{i}].set", rule.set)
    elif isinstance(step, Set):
        yield from nested(f"{at}.values", step.values)
    elif isinstance(step, Search):
        yield from plain(f"{at}.query", step.query)
        yield from nested(f"{at}.filters", step.filters)
    elif isinstance(step, Tool):
        yield from nested(f"{at}.args", step.args)
    elif isinstance(step, Llm):
        yield from plain(f"{at}.input", step.input)
    elif isinstance(step, Agent):
        yield from plain(f"{at}.instruction", step.instruction)
    elif isinstance(step, Supervisor):
        yield from plain(f"{at}.message", step.message)
    elif isinstance(step, Clarify):
        yield from text(f"{at}.question", step.question)
        for i, option in enumerate(step.options):
            yield from plain(f"{at}.options[{i}]", option)
    elif isinstance(step, Answer | Stop):
        yield from text(f"{at}.text", step.text)


def _reachable(start: str, edges: dict[str, list[str]]) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in edges.get(todo.pop(), []):
            if nxt in edges and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen
