"""The change list between two harness versions: what a person (or an agent editing the
harness) reads before any test runs.

Steps are matched by id, never by position, so inserting a step reports one `added` and not
a cascade of `changed`. A step whose place in the list moved is `moved` (the order matters:
a step without `next` goes on to the one after it). Tests are matched by name, prompts and
metadata by key. Each entry is `{op, path, old, new}` with `op` one of added, removed,
changed, moved and `path` like `steps.guard`, `steps.main.final`, `prompts.disclaimer`,
`tests.<name>`, `budget.steps`, `metadata.title`.
"""

from __future__ import annotations

from typing import Any

from opsgraph.harness.spec import HarnessDoc

Change = dict[str, Any]


def diff(old: HarnessDoc, new: HarnessDoc) -> list[Change]:
    """Every difference from `old` to `new`: steps, prompts, tests, budget, metadata."""
    out = _steps(old, new)
    out += _keyed("prompts", old.prompts, new.prompts)
    out += _keyed("tests", {t.name: _json(t) for t in old.tests},
                  {t.name: _json(t) for t in new.tests})
    out += _fields("budget", _json(old.budget), _json(new.budget))
    out += _keyed("metadata", old.metadata, new.metadata)
    return out


def _json(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(mode="json", by_alias=True)
    return dumped


def _entry(op: str, path: str, old: Any = None, new: Any = None) -> Change:
    return {"op": op, "path": path, "old": old, "new": new}


def _steps(old: HarnessDoc, new: HarnessDoc) -> list[Change]:
    before = {s.id: _json(s) for s in old.steps}
    after = {s.id: _json(s) for s in new.steps}
    out = [_entry("removed", f"steps.{sid}", old=step) for sid, step in before.items()
           if sid not in after]
    old_order = [sid for sid in before if sid in after]
    new_order = [sid for sid in after if sid in before]
    kept = _lcs(old_order, new_order)
    positions = {sid: n for n, sid in enumerate(before)}
    for n, (sid, step) in enumerate(after.items()):
        if sid not in before:
            out.append(_entry("added", f"steps.{sid}", new=step))
            continue
        if sid not in kept:
            out.append(_entry("moved", f"steps.{sid}", old=positions[sid], new=n))
        if before[sid]["type"] != step["type"]:
            out.append(_entry("changed", f"steps.{sid}", old=before[sid], new=step))
        else:
            out += _fields(f"steps.{sid}", before[sid], step)
    return out


def _fields(prefix: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Field by field, for two objects of the same kind."""
    return [_entry("changed", f"{prefix}.{key}", old=old.get(key), new=new.get(key))
            for key in [*old, *(k for k in new if k not in old)]
            if old.get(key) != new.get(key)]


def _keyed(prefix: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Entries matched by key: added, removed or changed as a whole."""
    out = [_entry("removed", f"{prefix}.{key}", old=value) for key, value in old.items()
           if key not in new]
    for key, value in new.items():
        if key not in old:
            out.append(_entry("added", f"{prefix}.{key}", new=value))
        elif old[key] != value:
            out.append(_entry("changed", f"{prefix}.{key}", old=old[key], new=value))
    return out


def _lcs(a: list[str], b: list[str]) -> set[str]:
    """The ids of a longest common subsequence of two orders (the steps that kept their
    relative place; the others moved)."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            table[i][j] = (table[i + 1][j + 1] + 1 if a[i] == b[j]
                           else max(table[i + 1][j], table[i][j + 1]))
    kept, i, j = set(), 0, 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            kept.add(a[i])
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return kept
