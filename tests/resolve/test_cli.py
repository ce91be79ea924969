"""`opsgraph resolve` as a user runs it: a real process, the real store."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.engine.test_supervisor import task
from tests.test_cli import lines, opsgraph

pytestmark = pytest.mark.usefixtures("demo_db")


def test_resolve_json_is_the_contract(store_env: dict[str, str]) -> None:
    done = opsgraph(store_env, "resolve", "book Jane Smith on court one tmrw at 6pm, £15",
                    "--now", "2030-01-09T10:00:00+00:00", "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert (found["now"], found["timezone"]) == ("2030-01-09T10:00:00+00:00", "UTC")
    by_kind = {m["kind"]: m for m in found["mentions"]}
    assert by_kind["member"]["value"] == "mem_demo_001"
    assert by_kind["member"]["label"] == "Jane Smith"
    assert by_kind["resource"]["value"] == "res_demo_court1"
    assert by_kind["datetime"]["value"] == "2030-01-10T18:00:00+00:00"
    assert by_kind["money"]["value"] == "15.00"
    assert by_kind["member"]["text"] == "Jane Smith"


def test_resolve_reads_as_text_without_json(store_env: dict[str, str]) -> None:
    done = opsgraph(store_env, "resolve", "is Tom Baker paid up", "--now", "2030-01-09T10:00")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("now 2030-01-09T10:00:00+00:00 (UTC)")
    assert "one of:" in done.stdout and "mem_demo_004" in done.stdout


def test_a_bad_clock_or_an_empty_request_exits_2_naming_it(store_env: dict[str, str]) -> None:
    done = opsgraph(store_env, "resolve", "book court 1", "--now", "next tuesday")
    assert done.returncode == 2 and "--now" in done.stderr
    done = opsgraph(store_env, "resolve", "  ")
    assert done.returncode == 2 and "TEXT" in done.stderr
    done = opsgraph(store_env, "resolve", "email her", "--thread", "no-such-thread")
    assert done.returncode == 2 and "no-such-thread" in done.stderr


def test_thread_turns_resolve_her(store_env: dict[str, str], script: Any) -> None:
    model = script({
        "plan": {"tasks": [task("t1", "members", "get", "Look up Jane Smith")]},
        "turns": {"t1": [{"content": "Jane Smith is a premium member."}]},
        "synthesis": "Jane Smith is a premium member.",
    })
    done = opsgraph(store_env, "chat", "pull up Jane Smith", "--model", model, "--json")
    assert done.returncode == 0, done.stderr
    thread = lines(done.stdout)[0]["data"]["thread_id"]
    done = opsgraph(store_env, "resolve", "email her the receipt", "--thread", thread, "--json")
    assert done.returncode == 0, done.stderr
    (her,) = json.loads(done.stdout)["mentions"]
    assert (her["text"], her["kind"], her["value"]) == ("her", "member", "mem_demo_001")


def test_eval_scores_a_resolver_set(store_env: dict[str, str]) -> None:
    from tests.resolve.test_score import DEV

    done = opsgraph(store_env, "eval", "--dataset", str(DEV), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["cases"] >= 80 and report["accuracy"] >= 0.95
    assert set(report["by_kind"]) >= {"member", "resource", "datetime", "money", "phone"}
    text = opsgraph(store_env, "eval", "--dataset", str(DEV))
    assert text.returncode == 0 and "accuracy" in text.stdout.splitlines()[0]
