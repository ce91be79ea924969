"""Modules: shipped rules and tools a tenant switches on for its agents."""

from __future__ import annotations

from typing import Any

import pytest

from opsgraph.errors import BadInput
from opsgraph.harness import modules
from opsgraph.operations.catalogue import get_operation
from opsgraph.registry.loader import get_registry
from tests.engine.helpers import chat, finished, person
from tests.engine.test_approval_resume import update_turns
from tests.engine.test_supervisor import task


def test_every_shipped_module_names_real_agents_and_operations() -> None:
    shipped = modules.shipped()
    assert "safeguarding" in shipped
    agents = get_registry().agents
    for module in shipped.values():
        assert module.rules or module.tools, module.name
        for agent in [*module.rules, *module.tools]:
            assert agent == "*" or agent in agents, (module.name, agent)
        for ops in module.tools.values():
            for op in ops:
                assert get_operation(op).kind == "read", (module.name, op)  # gated as usual


def test_an_enabled_module_adds_its_rules_and_tools_and_a_disabled_one_nothing() -> None:
    assert modules.extra_rules([], "bookings.create") == []
    assert modules.prompt_section([], "bookings.create") == ""
    assert modules.extra_rules(["retired_module"], "bookings.create") == []  # skipped
    rules = modules.extra_rules(["safeguarding"], "bookings.create")
    assert any("open court" in rule for rule in rules)
    assert any("Welfare Officer" in rule for rule in rules)  # the rules for every agent
    assert modules.extra_tools(["safeguarding"], "bookings.create") == [
        "knowledge.search", "knowledge.read_section"]
    assert modules.extra_tools(["safeguarding"], "reports.finance") == []
    section = modules.prompt_section(["safeguarding"], "members.update")
    assert section.startswith("\n## Rules of this club\n- ") and "guardian" in section
    assert "open court" not in section  # another agent's rule


def test_only_shipped_modules_can_be_enabled() -> None:
    assert modules.check_names(["safeguarding", "safeguarding"]) == ["safeguarding"]
    with pytest.raises(BadInput, match=r"no module named 'astrology' \(modules: .*safeguarding"):
        modules.check_names(["safeguarding", "astrology"])


@pytest.mark.usefixtures("model_writes")
def test_a_module_rule_reaches_the_agent_prompt_and_leaves_with_the_module(
        script: Any, demo_db: Any) -> None:
    model = script({"plan": {"tasks": [task("t1", "members", "update", "Emily's phone")]},
                    "turns": {"t1": [*update_turns("+44 7700 900606"), {"content": "ok"}]}})

    def prompt_tokens() -> int:
        # the scripted model counts the tokens of the messages it is sent: the agent's
        # system prompt is among them
        events = chat(person("staff"), "change Emily Chen's phone to +44 7700 900606", model)
        return int(finished(events)["usage"]["input_tokens"])

    without = prompt_tokens()
    demo_db["tenants"].update_one({"_id": "demo"}, {"$set": {"modules": ["safeguarding"]}})
    section = modules.prompt_section(["safeguarding"], "members.update")
    with_module = prompt_tokens()
    assert with_module - without >= len(section) // 4  # in each of the agent's calls
    demo_db["tenants"].update_one({"_id": "demo"}, {"$set": {"modules": []}})
    assert prompt_tokens() == without
