"""The operation contract: a verb on a domain with typed input, a handler and a kind.

REST, the CLI and agents all call operations; a feature without an operation is invisible
to the assistant. A *read* has `run(ctx, args) -> Result`. A *write* has
`preview(ctx, args) -> Preview` (old values, new values, one-line summary; no side effects)
and `apply(ctx, args, change_id) -> dict` which is idempotent by `change_id`: applying the
same change twice leaves the same state as applying it once.

Arguments that name a record (`references`: field → collection) accept an id or a human
name; `resolve_args` (operations.references) turns them into ids before anything else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field

from opsgraph.lazy_build import LazyModel
from opsgraph.principal import Principal, Role
from opsgraph.store.scope import TenantScope

Kind = Literal["read", "write"]


FIRST_DAY = date(1970, 1, 1)
LAST_DAY = date(2199, 12, 31)


def _day_of_moment(value: Any) -> Any:
    """A moment given where a day is asked ('2026-12-01T09:00:00') means its day: the
    date part as written, so a caller (a model, often) that sends a timestamp for a date
    gets that day instead of an error to retry on."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, str) and len(value) > 10 and value[10] in "T ":
        return value[:10]
    return value


Day = Annotated[date, Field(ge=FIRST_DAY, le=LAST_DAY), BeforeValidator(_day_of_moment)]
"""A calendar day an operation accepts: far enough from `date.max` that a range built
from it (a day's end, a default window of weeks) never overflows; a moment is read as
its day."""


class OpInput(LazyModel):
    """Base of every operation input: unknown fields are an error, names are stripped."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


@dataclass(frozen=True, slots=True)
class Context:
    """What a handler may touch: the caller's tenant scope and who is acting."""

    scope: TenantScope
    principal: Principal
    now: datetime = field(default_factory=lambda: datetime.now(UTC))


@dataclass(frozen=True, slots=True)
class Source:
    """A record or document an answer rests on (assembled by code, never by the model)."""

    kind: str  # "member", "booking", "invoice", "document", ...
    id: str
    title: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "id": self.id, "title": self.title}


@dataclass(frozen=True, slots=True)
class Result:
    """What a read returns: JSON-able data plus the sources it actually read.

    A search or a list is navigation: it returns no sources. A `get` of a record, or the
    documents a knowledge search returns, are sources.
    """

    data: Any
    sources: tuple[Source, ...] = ()


@dataclass(frozen=True, slots=True)
class Preview:
    """What a write would do, computed without side effects."""

    summary: str
    old: dict[str, Any]
    new: dict[str, Any]


ReadHandler = Callable[[Context, Any], Result]
PreviewHandler = Callable[[Context, Any], Preview]
ApplyHandler = Callable[[Context, Any, str], dict[str, Any]]
AuthorizeHandler = Callable[[Context, Any], None]


@dataclass(frozen=True, slots=True)
class Operation:
    """One entry of the catalogue."""

    id: str  # "<domain>.<name>", e.g. "members.update"
    kind: Kind
    verb: str  # one of principal.VERBS: the capability verb this operation serves
    input: type[OpInput]
    description: str  # one or two lines, shown to models as the tool description
    roles: frozenset[Role]  # who may call it at all (admin always may)
    feature: str  # the plan feature it needs (principal.PLAN_FEATURES)
    references: dict[str, str] = field(default_factory=dict)  # arg field -> collection
    run: ReadHandler | None = None
    preview: PreviewHandler | None = None
    apply: ApplyHandler | None = None
    authorize: AuthorizeHandler | None = None
    """Value-level permission (raises Forbidden), e.g. refunds above a limit need admin.
    Runs on direct calls, on agent previews and again on a manager's edited values."""

    @property
    def domain(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def tool_name(self) -> str:
        """`members.update` → `members_update`."""
        return self.id.replace(".", "_")

    def __post_init__(self) -> None:
        if self.kind == "read" and self.run is None:
            raise TypeError(f"{self.id}: a read operation needs run")
        if self.kind == "write" and (self.preview is None or self.apply is None):
            raise TypeError(f"{self.id}: a write operation needs preview and apply")
