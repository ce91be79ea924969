"""Eval cases: the YAML format of docs/evals.md as pydantic models, and their loader.

A dataset is a file (`cases: [...]`) or a folder of such files. Anything malformed is
`BadInput` naming the file, the case id (or index) and the field; tool and operation names
are checked against the catalogue so that a typo cannot pass `tools_absent` silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from opsgraph.errors import BadInput
from opsgraph.evals.checkout import repo_root
from opsgraph.operations.catalogue import CATALOGUE
from opsgraph.principal import DOMAINS, VERBS, Channel, Role
from opsgraph.store.seed import TENANTS
from opsgraph.yaml_text import load_yaml

Split = Literal["dev", "heldout"]
SPLITS: tuple[str, ...] = ("dev", "heldout")


def tool_name(name: str) -> str:
    """`members.update` or `members_update` → the tool name `members_update`."""
    return name.strip().replace(".", "_", 1)


def _known_tool(name: str) -> str:
    tool = tool_name(name)
    if tool.replace("_", ".", 1) not in CATALOGUE:
        raise ValueError(f"unknown tool or operation {name!r}")
    return tool


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CasePrincipal(_Strict):
    """Who asks: role is required; user, tenant and channel have defaults."""

    role: Role
    user: str = Field(default="alex", min_length=1)
    tenant: str = Field(default="demo", min_length=1)
    channel: Channel = Channel.DASHBOARD

    @field_validator("tenant")
    @classmethod
    def _seeded(cls, value: str) -> str:
        if value not in TENANTS:
            raise ValueError(f"unknown tenant {value!r} (the suite seeds {', '.join(TENANTS)})")
        return value


class Turn(_Strict):
    """An earlier turn of the thread."""

    role: Literal["user", "assistant"]
    content: str = Field(min_length=1)


class ExpectedTask(_Strict):
    """A task the plan must contain: its domain and the verb (or verbs) allowed."""

    domain: str
    verb: tuple[str, ...]

    @field_validator("domain")
    @classmethod
    def _domain(cls, value: str) -> str:
        if value not in DOMAINS:
            raise ValueError(f"unknown domain {value!r} (known: {', '.join(DOMAINS)})")
        return value

    @field_validator("verb", mode="before")
    @classmethod
    def _verbs(cls, value: Any) -> Any:
        verbs = [value] if isinstance(value, str) else value
        if not isinstance(verbs, list | tuple) or not verbs:
            raise ValueError("a verb or a non-empty list of verbs")
        for verb in verbs:
            if verb not in VERBS:
                raise ValueError(f"unknown verb {verb!r} (known: {', '.join(VERBS)})")
        return tuple(verbs)


class ExpectedCard(_Strict):
    """An approval card the run must raise: its operation and a subset of its arguments."""

    operation: str
    args: dict[str, Any] = Field(default_factory=dict)

    @field_validator("operation")
    @classmethod
    def _operation(cls, value: str) -> str:
        return _known_tool(value).replace("_", ".", 1)


class ExpectedClarify(_Strict):
    """A clarifying question the run must ask instead of proposing: its options hold each
    of these phrases (case-insensitively)."""

    options_contain: list[str] = Field(min_length=1)


class Expect(_Strict):
    """What a good run does; every field is optional (docs/evals.md)."""

    tasks: list[ExpectedTask] | None = None
    depends: list[tuple[int, int]] | None = None
    tools_contains: list[str] = Field(default_factory=list)
    tools_absent: list[str] = Field(default_factory=list)
    args: dict[str, dict[str, Any]] = Field(default_factory=dict)
    interrupts: list[ExpectedCard] | None = None
    denied: bool | None = None
    clarify: ExpectedClarify | None = None
    answer_contains: list[str] = Field(default_factory=list)
    answer_absent: list[str] = Field(default_factory=list)
    pii_absent: list[str] = Field(default_factory=list)

    @field_validator("tools_contains", "tools_absent")
    @classmethod
    def _tools(cls, value: list[str]) -> list[str]:
        return [_known_tool(v) for v in value]

    @field_validator("args")
    @classmethod
    def _arg_tools(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {_known_tool(k): v for k, v in value.items()}

    @model_validator(mode="after")
    def _edges(self) -> Expect:
        if self.depends is None:
            return self
        if self.tasks is None:
            raise ValueError("depends: needs `tasks` to index into")
        for later, earlier in self.depends:
            if not (0 <= later < len(self.tasks) and 0 <= earlier < len(self.tasks)):
                raise ValueError(f"depends: edge [{later}, {earlier}] is not an index pair "
                                 f"into tasks (0..{len(self.tasks) - 1})")
            if later == earlier:
                raise ValueError(f"depends: edge [{later}, {earlier}] joins a task to itself")
        return self


class Case(_Strict):
    """One request as a person writes it, and what a good run does with it."""

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.:-]+$")
    split: Split
    domain: str = Field(min_length=1)
    principal: CasePrincipal
    history: list[Turn] = Field(default_factory=list)
    request: str = Field(min_length=1)
    expect: Expect = Field(default_factory=Expect)
    _file: str = PrivateAttr(default="")

    @property
    def file(self) -> str:
        """The dataset file the case came from."""
        return self._file


def default_dataset() -> Path:
    """`evals/datasets/assistant` of the checkout, else of the working directory."""
    return (repo_root() or Path.cwd()) / "evals" / "datasets" / "assistant"


def dataset_files(paths: list[Path]) -> list[Path]:
    """The files named: a file as given, a folder as its `*.yaml` / `*.yml` files (sorted)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
            if not found:
                raise BadInput(f"{path}: dataset: no .yaml files in this folder")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise BadInput(f"{path}: dataset: no such file or folder")
    return files


def _read_yaml(path: Path) -> Any:
    try:
        return load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: dataset: cannot read ({exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise BadInput(f"{path}: invalid YAML: {where}{problem}") from None


def _field(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "case"


def _case(path: Path, index: int, raw: Any) -> Case:
    label = f"case {raw.get('id')!r}" if isinstance(raw, dict) and raw.get("id") else \
        f"cases[{index}]"
    try:
        case = Case.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        msg = str(err["msg"]).removeprefix("Value error, ")
        raise BadInput(f"{path}: {label}: {_field(tuple(err['loc']))}: {msg}{more}",
                       file=str(path)) from None
    case._file = str(path)
    return case


def load_file(path: Path) -> list[Case]:
    """The cases of one file; BadInput naming file, case and field when one is invalid."""
    data = _read_yaml(path)
    raw = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(raw, list) or not raw:
        raise BadInput(f"{path}: cases: expected a non-empty list", file=str(path))
    return [_case(path, i, item) for i, item in enumerate(raw)]


def load_cases(paths: list[Path] | None = None, split: str = "all") -> list[Case]:
    """Every case of the datasets (default: the checkout's), filtered to `split`."""
    if split not in ("all", *SPLITS):
        raise BadInput(f"--split: unknown split {split!r} (allowed: all, dev, heldout)")
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for path in dataset_files(paths or [default_dataset()]):
        for case in load_file(path):
            if case.id in seen:
                raise BadInput(f"{path}: case {case.id!r}: id: already used in {seen[case.id]}")
            seen[case.id] = str(path)
            cases.append(case)
    return [c for c in cases if split == "all" or c.split == split]
