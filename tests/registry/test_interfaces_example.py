"""The contract's example scripted file (docs/reference.md, "Scripted model files"), up to
its approval card, against the demo tenant.

The engine's part (planning, the tool loop, the pause) is tested in tests/engine; this
checks what the example needs from the registry, the operations and the seeded data: the
task routes to an agent, its first turn may call members_update, "Jane Smith" names one
member, and the call yields a proposal that becomes a card.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pymongo.database import Database

from opsgraph.approvals.pending import record_pending
from opsgraph.operations.base import Context
from opsgraph.operations.invoke import plan_of
from opsgraph.principal import Principal, Role
from opsgraph.registry.matrix import route
from opsgraph.registry.registry import Registry
from opsgraph.store.scope import TenantScope
from opsgraph.tools.binding import bind_agent_tools
from opsgraph.tools.prerequisites import frontier

Document = dict[str, Any]

# The example of docs/reference.md, "Scripted model files" (one copy, shared with tests/engine).
EXAMPLE = Path(__file__).parents[1] / "engine" / "interfaces_example.yaml"


def test_the_example_first_turn_proposes_a_change_with_a_card(
        demo_db: Database[Document], registry: Registry) -> None:
    script = yaml.safe_load(EXAMPLE.read_text())
    [task] = script["plan"]["tasks"]
    agent = route(task["domain"], task["operation"], registry)
    assert agent is not None and agent.name == "members.update"
    [call] = script["turns"]["t1"][0]["tool_calls"]
    assert call["name"] == "members_update"
    # offered on the first turn: nothing has to run before it
    assert "members.update" in frontier(agent.tools, agent.requires, set())

    manager = Principal("demo", "mgr-ada", frozenset({Role.MANAGER}))
    scope = TenantScope(demo_db, "demo")
    tools = bind_agent_tools(Context(scope, manager), agent.tools, plan_of(scope))
    outcome = tools[call["name"]].call(call["args"])
    assert outcome.ok, outcome.content
    assert outcome.proposal is not None
    assert outcome.proposal.args["member"] == "mem_demo_001"  # the one Jane Smith

    change = record_pending(scope, thread_id="th_example", task_id=task["id"],
                            agent=agent.name, operation=outcome.proposal.operation,
                            args=outcome.proposal.args, preview=outcome.proposal.preview,
                            proposed_by=manager)
    card = change.card()
    assert (card["operation"], card["old"], card["new"]) == (
        "members.update", {"email": "jane.smith@example.com"}, {"email": "jane@new.example"})
    assert "Jane Smith" in card["summary"]
