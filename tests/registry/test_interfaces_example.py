"""INTERFACES.md's example scripted file, up to its approval card, against the demo tenant.

The engine's part (planning, the tool loop, the pause) is tested in tests/engine; this
checks what the example needs from the registry, the operations and the seeded data: the
task routes to an agent, its first turn may call members_update, "Jane Smith" names one
member, and the call yields a proposal that becomes a card.
"""

from __future__ import annotations

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

# Verbatim from INTERFACES.md, "Scripted model files".
EXAMPLE = """
plan:                 # what the decompose call returns (a TaskPlan)
  tasks:
    - id: t1
      domain: members
      operation: update
      instruction: Change Jane Smith's email to jane@new.example
      depends_on: []
turns:                # per task id: the agent's model turns, consumed in order
  t1:
    - tool_calls: [{name: members_update, args: {member: Jane Smith, changes: {email: jane@new.example}}}]
    - content: I proposed the change.
synthesis: Jane Smith's email change is waiting for approval.
"""  # noqa: E501


def test_the_example_first_turn_proposes_a_change_with_a_card(
        demo_db: Database[Document], registry: Registry) -> None:
    script = yaml.safe_load(EXAMPLE)
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
