"""Harness conditions (`check`, `switch`): whether one holds over the run's variables."""

from __future__ import annotations

import json
from typing import Any

from opsgraph.harness import patterns
from opsgraph.harness.spec import Condition
from opsgraph.harness.templates import lookup


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def holds(cond: Condition, env: dict[str, Any]) -> bool:
    """Whether the condition holds in `env` (a missing variable is None)."""
    if cond.all is not None:
        return all(holds(c, env) for c in cond.all)
    if cond.any is not None:
        return any(holds(c, env) for c in cond.any)
    if cond.not_ is not None:
        return not holds(cond.not_, env)
    value = lookup(env, cond.var or "")
    given = cond.model_fields_set
    if "eq" in given:
        return bool(value == cond.eq)
    if "ne" in given:
        return bool(value != cond.ne)
    if "in_" in given:
        return value in (cond.in_ or [])
    if "contains" in given:
        needle = (cond.contains or "").lower()
        if isinstance(value, str):
            return needle in value.lower()
        return isinstance(value, list) and any(str(v).lower() == needle for v in value)
    if "matches" in given:
        text = value if isinstance(value, str) else "" if value is None else json.dumps(value)
        return patterns.search(cond.matches or "", text, ignore_case=True)
    if "exists" in given:
        return (value is not None) == bool(cond.exists)
    number = _number(value)
    if number is None:
        return False
    if "gt" in given:
        return number > float(cond.gt or 0)
    return number < float(cond.lt or 0)
