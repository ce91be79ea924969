"""Modules: rules and tools a tenant switches on for its agents, whatever harness version
is active.

A module is data shipped with opsgraph (`harness/modules/<name>.json`): `{name,
description, rules: {agent or "*": [rule, ...]}, tools: {agent: [operation id, ...]}}`.
A tenant enables modules by name (its setting `modules`); at run time an enabled module's
rules join the named agents' system prompts, after their own rules, and its tools join
their tool sets — bound like the agents' own, so every gate still holds. One switch per
tenant instead of an edit to every harness version.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from pydantic import ConfigDict, Field

from opsgraph.errors import BadInput
from opsgraph.lazy_build import LazyModel

FOLDER = Path(__file__).with_name("modules")
SETTING = "modules"
"""The tenant setting: the names of its enabled modules."""


class Module(LazyModel):
    """One shipped module."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")
    description: str = Field(min_length=1, max_length=500)
    rules: dict[str, list[str]] = Field(default_factory=dict)
    """Agent name (or `*`, every agent) → rules added to its system prompt."""
    tools: dict[str, list[str]] = Field(default_factory=dict)
    """Agent name → operation ids added to its tools."""


@cache
def shipped() -> dict[str, Module]:
    """Every module shipped with opsgraph, by name (read once per process)."""
    found = {}
    for path in sorted(FOLDER.glob("*.json")):
        module = Module.model_validate(json.loads(path.read_text(encoding="utf-8")))
        if module.name != path.stem:
            raise ValueError(f"{path.name}: the module is named {module.name!r}; the file "
                             "must carry its name")
        found[module.name] = module
    return found


def enabled(names: Sequence[str]) -> list[Module]:
    """The modules a tenant enabled (its setting, read once per run), in the order it named
    them (unknown names, e.g. of a module a later opsgraph removed, are skipped). A tenant
    that enabled none reads none (a run reads no module file and builds no `Module`)."""
    if not names:
        return []
    modules = shipped()
    return [modules[name] for name in names if name in modules]


def extra_rules(names: Sequence[str], agent: str) -> list[str]:
    """The rules the tenant's modules add to `agent`'s system prompt."""
    return [rule for module in enabled(names)
            for key in ("*", agent) for rule in module.rules.get(key, [])]


def extra_tools(names: Sequence[str], agent: str) -> list[str]:
    """The operation ids the tenant's modules add to `agent`'s tools (once each)."""
    return list(dict.fromkeys(op for module in enabled(names)
                              for op in module.tools.get(agent, [])))


def prompt_section(names: Sequence[str], agent: str) -> str:
    """The system prompt's addition for `agent`: a rules section, or "" with none."""
    rules = extra_rules(names, agent)
    if not rules:
        return ""
    return "\n## Rules of this club\n" + "\n".join(f"- {rule}" for rule in rules) + "\n"


def check_names(names: list[str]) -> list[str]:
    """The names, once each, if every one is a shipped module; else BadInput naming the
    unknown ones and the modules there are (the tenant setting's check)."""
    modules = shipped()
    unknown = [name for name in names if name not in modules]
    if unknown:
        raise BadInput(f"modules: no module named {', '.join(map(repr, unknown))} (modules: "
                       f"{', '.join(modules) or 'none'})", unknown=unknown)
    return list(dict.fromkeys(names))
