"""Promoted few-shot examples as eval cases (`opsgraph jobs run promote_examples
--export-evals PATH`): what managers approved becomes a regression set for `opsgraph eval`.

**A case per example.** A planner example (request → plan) gives a case with the request,
the plan's tasks as `tasks` (capability `members.update` → domain `members`, verb `update`)
and `depends`; the agent examples of the same run (same thread, same task instruction) add
their tool calls: every tool as `tools_contains`, each write call's arguments as `args` and
as an expected approval card (`interrupts` — nothing is applied in a suite). An agent
example no promoted plan covers gives a case of its own: its task instruction as the
request, its calls as expectations.

**Placeholders bound to the demo data set.** Promoted text holds `<member 1>`, `<email 1>`
…, which match nothing the eval sandbox seeds, so each is bound, deterministically, to a
record of the seeded data set of the same kind: `<member N>` to the N-th member that is
active and whose name no other member shares (in id order), `<staff N>` to the N-th staff
record, and `<email N>` / `<phone N>` to the address and number of the N-th staff record.
Not a member's: the most common promoted run changes a member's contact detail, and an
update to the member's own value is refused (nothing to change), one to another member's
address too (addresses are unique among members); a staff record's contact details are
real, reachable and collide with no member's.
Cases run as the principal tenant's data set: the example's tenant when it is a seeded one,
else `demo`.

The role a case runs as is the lowest role from `staff` up that may call every operation of
the example (its plan's capabilities and its calls), so a case never fails on a gate the
promoted run did not meet; never `member` or `visitor`, who may act only for themselves,
while the bound people are anyone. One case in three (by
fingerprint) is `heldout`, as in the hand-written datasets.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from opsgraph.engine.few_shot import COLLECTION, PLANNER
from opsgraph.errors import BadInput
from opsgraph.principal import VERBS, Role
from opsgraph.registry.operation_index import operation_index
from opsgraph.store.scope import Document, TenantScope
from opsgraph.store.search_keys import name_key
from opsgraph.store.seed import TENANTS, DemoData, anchor_monday, load_dataset

_PLACEHOLDER = re.compile(r"<(member|staff|email|phone) (\d+)>")
_ROLES = (Role.STAFF, Role.MANAGER, Role.ADMIN)


class Bindings:
    """Placeholder → a real value of one tenant's seeded data set."""

    def __init__(self, tenant: str) -> None:
        now = datetime.now(UTC)
        data = DemoData(tenant, load_dataset(tenant), anchor_monday(now), now)
        keys = [name_key(m["name"]) for m in data.members]
        self.members = [m for m, key in zip(data.members, keys, strict=True)
                        if m["status"] == "active" and keys.count(key) == 1]
        self.staff = data.staff

    def value(self, kind: str, number: int) -> str:
        """The value `<kind number>` stands for (placeholders beyond the records wrap)."""
        if kind == "member":
            return str(self.members[(number - 1) % len(self.members)]["name"])
        staff = self.staff[(number - 1) % len(self.staff)]
        return str(staff[{"staff": "name", "email": "email", "phone": "phone"}[kind]])

    def __call__(self, value: Any) -> Any:
        """`value` with every placeholder bound (strings, lists, dicts)."""
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, str):
            return _PLACEHOLDER.sub(lambda m: self.value(m.group(1), int(m.group(2))), value)
        return value


def _tool_op(tool: str) -> str:
    return tool.replace("_", ".", 1)


def _lowest_role(operations: list[str]) -> Role:
    index = operation_index()
    ops = [index[op] for op in operations if op in index]
    return next(r for r in _ROLES if all(op.allows(r) for op in ops))


def _is_write(call: Document) -> bool:
    op = operation_index().get(_tool_op(str(call["tool"])))
    return op is not None and op.kind == "write"


def _expect_calls(tasks: list[list[Document]], bind: Bindings) -> dict[str, Any]:
    """tools_contains, args and interrupts from the calls of an example's tasks
    (placeholders bound). A task that proposes a write waits for approval with its reads
    unreported, so only its writes (the cards) are expected of it; a read-only task's
    every tool is."""
    tools: list[str] = []
    writes: list[Document] = []
    for calls in tasks:
        proposed = [c for c in calls if _is_write(c)]
        tools += [str(c["tool"]) for c in proposed or calls]
        writes += proposed
    expect: dict[str, Any] = {"tools_contains": list(dict.fromkeys(tools)),
                              "interrupts": [{"operation": _tool_op(str(c["tool"])),
                                              "args": bind(c.get("args") or {})}
                                             for c in writes]}
    if writes:
        expect["args"] = {str(c["tool"]): bind(c.get("args") or {}) for c in writes}
    return expect


def _case(example: Document, tenant: str, request: str, tasks: list[list[Document]],
          expect: dict[str, Any], domain: str, bind: Bindings) -> Document:
    fingerprint = str(example["fingerprint"])
    operations = [f"{t['domain']}.{t['verb']}" for t in expect.get("tasks") or []]
    operations += [_tool_op(str(c["tool"])) for calls in tasks for c in calls]
    return {
        "id": f"promoted-{example['tenant_id']}-{fingerprint[:12]}",
        "split": "heldout" if int(fingerprint[:8], 16) % 3 == 0 else "dev",
        "domain": domain,
        "principal": {"role": str(_lowest_role(operations)),
                      "tenant": tenant},
        "request": bind(request),
        "expect": {**expect, **_expect_calls(tasks, bind)} if tasks else expect,
    }


def export_cases(scope: TenantScope) -> list[Document]:
    """The tenant's promoted examples as eval cases (the case format of docs/evals.md),
    best score first."""
    tenant = scope.tenant_id if scope.tenant_id in TENANTS else "demo"
    bind = Bindings(tenant)
    examples = list(scope[COLLECTION].find({}, sort=[("score", -1), ("fingerprint", 1)],
                                           projection={"embedding": 0}))
    agents = [e for e in examples if e["agent"] != PLANNER]
    covered: set[str] = set()
    cases: list[Document] = []
    for plan_example in (e for e in examples if e["agent"] == PLANNER):
        plan = list(plan_example.get("plan") or [])
        threads = set(plan_example.get("threads") or [])
        calls: list[list[Document]] = []
        for step in plan:
            for agent in agents:
                if agent["text"] == step["instruction"] and threads & set(agent["threads"]):
                    calls.append(list(agent.get("calls") or []))
                    covered.add(str(agent["_id"]))
        tasks = []
        for step in plan:
            domain, _, verb = str(step["capability"]).partition(".")
            tasks.append({"domain": domain, "verb": verb})
        depends = [[later, earlier - 1] for later, step in enumerate(plan)
                   for earlier in step.get("depends_on") or []]
        cases.append(_case(plan_example, tenant, str(plan_example["text"]), calls,
                           {"tasks": tasks, "depends": depends},
                           tasks[0]["domain"] if tasks else "mixed", bind))
    for agent in agents:
        if str(agent["_id"]) in covered or not agent.get("calls"):
            continue
        domain, _, verb = str(agent["agent"]).partition(".")
        expect: dict[str, Any] = {"tasks": [{"domain": domain, "verb": verb}]} \
            if verb in VERBS else {}
        cases.append(_case(agent, tenant, str(agent["text"]), [list(agent["calls"])], expect,
                           domain, bind))
    return cases


def write_dataset(scopes: list[TenantScope], path: Path) -> dict[str, Any]:
    """Write the tenants' promoted examples to `path` as one dataset file; returns
    `{"path", "cases"}`. A tenant with nothing promoted adds nothing; with no case at all
    nothing is written (an empty dataset would not load) and `cases` is 0."""
    cases = [case for scope in scopes for case in export_cases(scope)]
    if cases:
        text = yaml.safe_dump({"cases": cases}, sort_keys=False, allow_unicode=True)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise BadInput(f"{path}: --export-evals: cannot write ({exc})") from None
    return {"path": str(path), "cases": len(cases)}
