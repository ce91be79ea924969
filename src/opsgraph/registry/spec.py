"""`AgentSpec`: one agent of the registry, as declared in `agents/<domain>/<name>.yaml`.

The model checks what a spec can know on its own: vocabularies (domain, verbs, roles,
feature), the name, and the rules between its own fields (an action agent names roles, a
visitor agent is a read-only query agent, tool prerequisites name listed tools and form a
DAG). What needs the operations catalogue (do the tools exist, are they reads) and what
needs other files (duplicate names) is checked by `opsgraph.registry.loader`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    model_validator,
)

from opsgraph.cycles import find_cycle
from opsgraph.errors import BadInput
from opsgraph.principal import DOMAINS, FEATURES, VERBS, Role, parse_role
from opsgraph.registry.operation_index import (
    OperationIndex,
    OperationInfo,
    OperationKind,
    operation_index,
)

NAME_PATTERN = r"^[a-z0-9_]+\.[a-z0-9_]+$"
TOOL_PATTERN = r"^[a-z0-9_]+\.[a-z0-9_]+$"
NAME_RE = re.compile(NAME_PATTERN)
DEFAULT_ROUNDS: dict[str, int] = {"query": 2, "action": 5}

AgentKind = Literal["query", "action"]
ModelTier = Literal["default", "light"]
SlotKind = Literal["member", "staff", "resource", "event", "booking", "invoice", "shift",
                   "datetime", "date", "datetime_range", "money", "email", "phone", "changes",
                   "text"]
"""What a slot holds: a record of one kind (a shift named by its day, role and time), a
moment, a range of them, an amount, an address, a phone number, a member's new values
(resolve.changes), or free text (what the request resolver finds, opsgraph.resolve)."""


def _one_of(what: str, allowed: Collection[str]) -> Callable[[str], str]:
    listing = ", ".join(allowed if isinstance(allowed, tuple) else sorted(allowed))

    def check(value: str) -> str:
        if value not in allowed:
            raise ValueError(f"unknown {what} {value!r} (allowed: {listing})")
        return value

    return check


def _verbs(values: list[str]) -> list[str]:
    bad = [v for v in values if v not in VERBS]
    if bad:
        raise ValueError(
            f"unknown verb {', '.join(map(repr, bad))} (allowed: {', '.join(VERBS)})"
        )
    return values


def _roles(values: Any) -> Any:
    """Normalise with `.strip().lower()`; an unknown role is an error, never dropped."""
    if not isinstance(values, list):
        return values
    roles: list[Role] = []
    bad: list[str] = []
    for value in values:
        if not isinstance(value, str):
            return values  # let pydantic report the type
        try:
            roles.append(parse_role(value))
        except BadInput:
            bad.append(value)
    if bad:
        allowed = ", ".join(r.value for r in Role)
        raise ValueError(f"unknown role {', '.join(map(repr, bad))} (allowed: {allowed})")
    return roles


def _name(value: str) -> str:
    if not NAME_RE.match(value):
        raise ValueError(f"{value!r} must be <domain>.<name> in lowercase [a-z0-9_]")
    return value


def _tools(values: list[str]) -> list[str]:
    bad = [t for t in values if not NAME_RE.match(t)]
    if bad:
        raise ValueError(f"{', '.join(map(repr, bad))} is not an operation id like members.get")
    twice = [t for t, n in Counter(values).items() if n > 1]
    if twice:
        raise ValueError(f"{', '.join(map(repr, twice))} listed twice")
    return values


Domain = Annotated[
    str,
    AfterValidator(_one_of("domain", DOMAINS)),
    Field(json_schema_extra={"enum": list(DOMAINS)}),
]
Feature = Annotated[
    str,
    AfterValidator(_one_of("feature", FEATURES)),
    Field(json_schema_extra={"enum": sorted(FEATURES)}),
]
Verb = Annotated[str, Field(json_schema_extra={"enum": list(VERBS)})]
ToolId = Annotated[str, Field(pattern=TOOL_PATTERN)]
MAX_EXAMPLES = 20
MAX_EXAMPLE_LENGTH = 200
Example = Annotated[str, Field(min_length=1, max_length=MAX_EXAMPLE_LENGTH)]


class Slot(BaseModel):
    """A piece of information the agent needs from the request (`member`, `date`, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
    description: str
    required: bool = False
    kind: SlotKind = Field(
        default="text", description="What the slot holds; the resolver fills record, time, "
        "amount and contact slots from the request before the model runs (default text).")
    each: bool = Field(
        default=False, description="A record slot the request may fill several times, one "
        "write for each record it names: \"add Charlie and Kai to the finals\" registers "
        "each of them.")


class AgentSpec(BaseModel):
    """One agent: what it serves, who may use it, its tools and how it should behave."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    name: Annotated[str, AfterValidator(_name), Field(
        json_schema_extra={"pattern": NAME_PATTERN},
        description="`<domain>.<name>`, lowercase [a-z0-9_]; unique in the registry.")]
    description: Annotated[str, Field(
        min_length=1,
        description="What the agent does, in the words staff and members use (ranked).")]
    domain: Domain
    operations: Annotated[list[Verb], AfterValidator(_verbs), Field(
        min_length=1, description="The capability verbs this agent serves.")]
    kind: AgentKind
    read_only: bool = Field(description="Required: true when the agent never proposes writes.")
    roles: Annotated[list[Role], BeforeValidator(_roles), Field(
        default_factory=list,
        description="Who may use the agent; empty (query agents only) means every role.")]
    entitlement: Feature
    visitor: bool = Field(
        default=False, description="Reachable by anonymous visitors (the allowlist of four).")
    examples: list[Example] = Field(
        default_factory=list, max_length=MAX_EXAMPLES,
        description="Requests as people type them, each ranked as a text of its own "
                    f"(at most {MAX_EXAMPLES}, each 1 to {MAX_EXAMPLE_LENGTH} characters).")
    slots: list[Slot] = Field(default_factory=list)
    tools: Annotated[list[ToolId], AfterValidator(_tools), Field(
        min_length=1, description="Operation ids the agent may call.")]
    requires: dict[ToolId, list[ToolId]] = Field(
        default_factory=dict,
        description="Tool → tools that must have completed first; must form a DAG.")
    guidelines: str = Field(default="", description="Markdown: how the agent should work.")
    model_tier: ModelTier = "default"
    max_rounds: int | None = Field(
        default=None, ge=1, le=20,
        description="Tool rounds; default 2 for query agents and 5 for action agents.")

    _index: OperationIndex | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> Self:
        problems = structural_problems(self)
        sink = info.context.get("problems") if isinstance(info.context, dict) else None
        if isinstance(sink, list):
            sink.extend(problems)
        elif problems:
            raise ValueError("; ".join(f"{field}: {msg}" for field, msg in problems))
        return self

    def bind(self, index: OperationIndex) -> Self:
        """Resolve tool kinds against `index` (the loader binds the catalogue it checked)."""
        self._index = index
        return self

    @property
    def round_limit(self) -> int:
        """Tool rounds this agent gets: `max_rounds`, or 2 for query and 5 for action."""
        return self.max_rounds if self.max_rounds is not None else DEFAULT_ROUNDS[self.kind]

    @property
    def short_name(self) -> str:
        """`members.update` → `update`."""
        return self.name.split(".", 1)[1]

    @property
    def tool_names(self) -> list[str]:
        """Tool names as models see them: `members.update` → `members_update`."""
        return [t.replace(".", "_") for t in self.tools]

    def operation(self, tool: str) -> OperationInfo:
        """The catalogue entry of one of this agent's tools (kind, verb, domain)."""
        index = self._index if self._index is not None else operation_index()
        return index[tool]

    def tool_kind(self, tool: str) -> OperationKind:
        """`read` or `write`, from the operations catalogue."""
        return self.operation(tool).kind

    @property
    def write_tools(self) -> list[str]:
        """Tools that propose changes (each becomes a pending change for a manager)."""
        return [t for t in self.tools if self.tool_kind(t) == "write"]


def structural_problems(spec: AgentSpec) -> list[tuple[str, str]]:
    """`(field, message)` for every rule between the spec's own fields that it breaks."""
    problems: list[tuple[str, str]] = []
    if not spec.name.startswith(spec.domain + "."):
        problems.append(("name", f"{spec.name!r} must start with its domain '{spec.domain}.'"))
    if spec.kind == "action" and not spec.roles:
        problems.append(("roles", "an action agent needs at least one role"))
    if spec.visitor and not spec.read_only:
        problems.append(("visitor", "a visitor agent must be read_only: true"))
    if spec.visitor and spec.kind != "query":
        problems.append(("visitor", "a visitor agent must be a query agent"))
    problems.extend(_prerequisite_problems(spec.tools, spec.requires))
    return problems


def _prerequisite_problems(
    tools: list[str], requires: Mapping[str, list[str]]
) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    listed = set(tools)
    for tool, before in requires.items():
        for name in [tool, *before]:
            if name not in listed:
                problems.append(("requires", f"{name!r} is not in tools"))
    cycle = find_cycle(requires)
    if cycle:
        problems.append(("requires", f"cyclic prerequisites: {' -> '.join(cycle)}"))
    return problems
