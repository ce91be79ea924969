"""A decider process killed (SIGKILL) mid-decision: the next decision finishes it, once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from opsgraph.approvals import claim_resume, decide, get_change, history
from opsgraph.principal import Principal
from opsgraph.store.scope import TenantScope

from .conftest import ProposeOp

DECIDER = """
import sys
from opsgraph.approvals import decide
from opsgraph.principal import Principal, Role
from opsgraph.store.client import get_db
from opsgraph.store.scope import TenantScope

decide(TenantScope(get_db(), "demo"), sys.argv[1], "approve",
       Principal("demo", "mgr-crash", frozenset({Role.MANAGER})))
print("survived")
"""


@pytest.mark.parametrize("point", ["after_cas", "after_apply"])
def test_a_killed_decider_is_taken_over_and_the_change_applies_once(
        scope: TenantScope, propose_op: ProposeOp, manager: Principal, jane: str,
        store_env: dict[str, str], point: str) -> None:
    change = propose_op("invoices.issue", {"member": jane, "lines": [
        {"description": "Ball machine hire", "amount": 15}]}, now=datetime.now(UTC))
    child = subprocess.run([sys.executable, "-c", DECIDER, change.change_id],
                           env={**os.environ, "OPSGRAPH_CRASH_AT": point},
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr
    crashed = get_change(scope, change.change_id)
    assert crashed.status == "executing" and crashed.decided_by == "mgr-crash"
    applied_before = scope["invoices"].count({"change_id": change.change_id})
    assert applied_before == (1 if point == "after_apply" else 0)

    later = datetime.now(UTC) + timedelta(seconds=31)  # the dead decider's lease ran out
    out = decide(scope, change.change_id, "approve", manager, now=later)
    assert out.outcome == "applied" and out.must_resume
    assert claim_resume(scope, change.change_id, now=later)
    assert scope["invoices"].count({"change_id": change.change_id}) == 1
    assert [(r["from"], r["to"], r["actor"]) for r in history(scope, change.change_id)] == [
        (None, "pending", "staff-bo"), ("pending", "executing", "mgr-crash"),
        ("executing", "executing", "mgr-ada"), ("executing", "applied", "mgr-ada")]
