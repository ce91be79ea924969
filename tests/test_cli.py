"""The `opsgraph` command line as a user runs it: a real process, the real store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_approval_resume import update_turns
from tests.engine.test_supervisor import task

ROOT = Path(__file__).resolve().parents[1]


def opsgraph(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "opsgraph.cli", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_agents_list_json_has_the_contract_fields(store_env: dict[str, str]) -> None:
    done = opsgraph(store_env, "agents", "list", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert len(rows) >= 40
    assert set(rows[0]) == {"name", "domain", "kind", "operations", "read_only", "roles",
                            "entitlement", "visitor", "tools"}
    assert sum(r["visitor"] for r in rows) == 4


def test_agents_validate_reports_one_line_per_problem(store_env: dict[str, str],
                                                      tmp_path: Path) -> None:
    assert opsgraph(store_env, "agents", "validate", str(ROOT / "agents")).returncode == 0
    bad = tmp_path / "members" / "bad.yaml"
    bad.parent.mkdir()
    bad.write_text("name: members.bad\ndomain: members\nkind: action\ndescription: x\n"
                   "operations: [update]\ntools: [members.update]\nentitlement: members\n"
                   "roles: [wizard]\ncolour: blue\n")
    done = opsgraph(store_env, "agents", "validate", str(tmp_path))
    assert done.returncode == 2
    problems = done.stderr.strip().splitlines()
    assert all(p.startswith(f"{bad}: ") for p in problems)
    text = "\n".join(problems)
    assert "colour" in text and "read_only" in text and "wizard" in text


def test_rank_json_is_best_first(store_env: dict[str, str]) -> None:
    done = opsgraph(store_env, "rank", "refund the overdue invoice for Tom", "--top", "3",
                    "--json")
    assert done.returncode == 0, done.stderr
    ranked = json.loads(done.stdout)
    assert len(ranked) == 3 and ranked[0]["domain"] == "invoices"
    assert ranked[0]["score"] >= ranked[1]["score"] >= ranked[2]["score"]
    assert set(ranked[0]) == {"agent", "domain", "operations", "score"}


def test_bad_input_exits_2_with_a_clear_message(store_env: dict[str, str]) -> None:
    done = opsgraph(store_env, "ops", "call", "members.get", "--args", "{not json")
    assert done.returncode == 2 and "--args: invalid JSON" in done.stderr
    done = opsgraph(store_env, "token", "--tenant", "demo", "--user", "u", "--role", "wizard")
    assert done.returncode == 2 and "unknown role 'wizard'" in done.stderr
    done = opsgraph(store_env, "chat", "hi", "--model", "gpt:whatever")
    assert done.returncode == 2 and "gpt:whatever" in done.stderr


@pytest.mark.usefixtures("demo_db")
def test_chat_then_decide_from_the_command_line(store_env: dict[str, str], script: Any) -> None:
    model = script({
        "plan": {"tasks": [task("t1", "members", "update", "Change Emily Chen's phone")]},
        "turns": {"t1": [*update_turns("+44 7700 900444"), {"content": "Changed."}]},
        "synthesis": "Emily Chen's phone is changed.",
    })
    done = opsgraph(store_env, "chat", "change emily's phone", "--model", model, "--json")
    assert done.returncode == 0, done.stderr
    events = lines(done.stdout)
    assert events[0]["event"] == "run_started" and events[-1]["event"] == "run_finished"
    assert events[-1]["data"]["status"] == "awaiting_approval"
    listed = json.loads(opsgraph(store_env, "approvals", "list", "--json").stdout)
    assert [c["operation"] for c in listed] == ["members.update"]
    change = listed[0]["change_id"]
    done = opsgraph(store_env, "approvals", "decide", change, "--decision", "approve", "--json")
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout)[-1]["data"]["status"] == "completed"
    again = opsgraph(store_env, "approvals", "decide", change, "--decision", "approve")
    assert again.returncode == 2 and "applied" in again.stderr
    got = json.loads(opsgraph(store_env, "ops", "call", "members.get", "--args",
                              '{"member": "mem_demo_008"}', "--json").stdout)
    assert got["result"]["phone"] == "+44 7700 900444"


def test_help_names_no_file_a_user_does_not_have(store_env: dict[str, str]) -> None:
    done = opsgraph(store_env, "--help")
    assert done.returncode == 0
    assert ".md" not in done.stdout and "INTERFACES" not in done.stdout
    assert "scripted:<path.yaml|json>" in done.stdout  # what a --model takes, said here


def test_a_reader_that_stops_early_ends_it_quietly(store_env: dict[str, str]) -> None:
    # `head -n 0` has gone before the listing is written: the write always meets a closed pipe
    for reader, shown in (("head -n 0", 0), ("head -n 1", 1)):
        piped = subprocess.run(f"'{sys.executable}' -m opsgraph.cli agents list | {reader}",
                               shell=True, env=store_env, cwd=ROOT, capture_output=True,
                               text=True, timeout=120)
        assert piped.returncode == 0 and len(piped.stdout.splitlines()) == shown
        assert piped.stderr == "", piped.stderr


@pytest.mark.usefixtures("demo_db")
def test_no_token_for_a_tenant_that_does_not_exist(store_env: dict[str, str]) -> None:
    done = opsgraph(store_env, "token", "--tenant", "ghost", "--user", "u", "--role", "staff")
    assert done.returncode == 2 and "ghost" in done.stderr and done.stdout == ""
    done = opsgraph(store_env, "token", "--tenant", "acme", "--user", "u", "--role", "staff")
    assert done.returncode == 0 and done.stdout.count(".") == 2  # a JWT


def test_an_argument_that_is_not_utf8_is_bad_input(store_env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-m", "opsgraph.cli", "chat", b"caf\xe9 hours"],
                          env=store_env, cwd=ROOT, capture_output=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert b"not valid UTF-8" in done.stderr and b"Traceback" not in done.stderr
