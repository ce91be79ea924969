"""Promoted runs as eval cases: a run a manager approved is promoted, exported with its
placeholders bound to seeded records, loads as a dataset and runs through the eval suite
with the scripted model — passing when the run does what the promoted one did, failing
when it does something else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from opsgraph.cli import main
from opsgraph.evals import run_suite
from opsgraph.evals.cases import load_cases
from opsgraph.jobs.few_shot_export import Bindings, export_cases
from opsgraph.store.scope import TenantScope
from tests.engine.test_supervisor import call, task
from tests.jobs.test_few_shot import SECRETS, run_and_decide

pytestmark = pytest.mark.usefixtures("demo_db")

STAFF_PHONE = "+44 7700 800001"
BOUND_REQUEST = f"Change Jane Smith's phone to {STAFF_PHONE}"
"""REQUEST as promoted (`Change <member 1>'s phone to <phone 1>`), bound to the data set's
first active member with a name of her own and the first staff record's number."""


def export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, dict[str, Any]]:
    path = tmp_path / "promoted" / "cases.yaml"
    assert main(["jobs", "run", "promote_examples", "--tenant", "demo", "--export-evals",
                 str(path), "--json"]) == 0
    return path, json.loads(capsys.readouterr().out)


def script_for(script: Any, who: str, phone: str) -> str:
    return script({
        "plan": {"tasks": [task("t1", "members", "update", f"Change {who}'s phone")]},
        "turns": {"t1": [call("members_search", query=who),
                         call("members_update", member=who, changes={"phone": phone}),
                         {"content": "Proposed."}]},
        "synthesis": f"The change of {who}'s phone is waiting for approval.",
    })


@pytest.mark.usefixtures("model_writes")
def test_a_promoted_run_exports_as_a_case_that_runs(script: Any, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    ) -> None:
    run_and_decide(script, "demo", "th-export", "approve")
    path, report = export(tmp_path, capsys)
    assert report["tenants"]["demo"]["promoted"] == 2
    assert report["exported"] == {"path": str(path), "cases": 1}
    assert not [s for s in SECRETS if s in path.read_text(encoding="utf-8")]

    [case] = load_cases([path])
    assert case.id.startswith("promoted-demo-") and case.split in ("dev", "heldout")
    assert case.request == BOUND_REQUEST
    assert (case.domain, case.principal.role, case.principal.tenant) == \
        ("members", "staff", "demo")
    assert [(t.domain, t.verb) for t in case.expect.tasks or []] == [("members", ("update",))]
    assert case.expect.depends == []
    # members_search ran before the proposal: a paused task does not report its reads
    assert case.expect.tools_contains == ["members_update"]
    wanted = {"member": "Jane Smith", "changes": {"phone": STAFF_PHONE}}
    assert case.expect.args == {"members_update": wanted}
    assert [(c.operation, c.args) for c in case.expect.interrupts or []] == \
        [("members.update", wanted)]

    good = run_suite([path], model=script_for(script, "Jane Smith", STAFF_PHONE))
    assert good["passed"] is True, good["cases"][0]["scores"]
    assert good["cases"][0]["status"] == "awaiting_approval"
    # another member's phone changed instead: the exported expectations catch it
    bad = run_suite([path], model=script_for(script, "Fatima Al-Sayed", STAFF_PHONE))
    [scored] = bad["cases"]
    assert not scored["passed"]
    assert not scored["scores"]["tool_choice"]["passed"]
    assert not scored["scores"]["interrupts"]["passed"]


def test_nothing_promoted_writes_nothing_and_a_rejected_run_exports_nothing(
        script: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_and_decide(script, "demo", "th-rejected", "reject")
    path, report = export(tmp_path, capsys)
    assert report["exported"] == {"path": str(path), "cases": 0}
    assert not path.exists()


def test_placeholders_bind_to_active_members_with_names_of_their_own(demo_db: Any) -> None:
    bind = Bindings("demo")
    names = [m["name"] for m in bind.members]
    assert names[:4] == ["Jane Smith", "Jayne Smith", "Jane Smithson", "Siobhán O'Connor"]
    assert "Tom Baker" not in names and "Raj Mehta" not in names  # shared name; paused
    assert bind({"to": ["<email 2>"], "who": "<member 2> and <staff 1>", "n": 3}) == {
        "to": ["daniel.kim@riverside.example"], "who": "Jayne Smith and Sarah Okafor", "n": 3}
    assert bind("<phone 1>") == STAFF_PHONE
    assert bind("<member 1>") == bind(f"<member {len(names) + 1}>")  # wraps, never fails
    assert export_cases(TenantScope(demo_db, "demo")) == []


def test_export_is_refused_for_another_job(store_env: dict[str, str], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["jobs", "run", "share_out_waitlists", "--export-evals",
                 str(tmp_path / "x.yaml")]) == 2
    assert "--export-evals: only promote_examples" in capsys.readouterr().err
    assert not (tmp_path / "x.yaml").exists()
