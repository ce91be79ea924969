"""The suite end to end: tiny datasets through the real graph and the embedded store, with
scripted models; in process and through the `opsgraph eval` command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from opsgraph.errors import BadInput
from opsgraph.evals import run_suite
from opsgraph.evals.cases import load_cases
from opsgraph.evals.lookups import StoreLookups
from opsgraph.evals.run import run_case
from opsgraph.store.client import get_client
from tests.test_cli import opsgraph

DATA = Path(__file__).with_name("data")
UPDATE_CASES = DATA / "phone_update.yaml"
LOOKUP_CASES = DATA / "member_lookup.yaml"


def scripted(name: str) -> str:
    return f"scripted:{DATA / name}"


def scores(report: dict[str, Any]) -> dict[str, float | None]:
    return {name: d["score"] for name, d in report["dimensions"].items()}


def no_scratch_databases() -> bool:
    return not any("_eval_" in name for name in get_client().list_database_names())


@pytest.mark.usefixtures("model_writes")
def test_a_good_script_scores_full_marks_and_leaves_nothing_behind(demo_db: Any) -> None:
    report = run_suite([UPDATE_CASES], model=scripted("update_script.yaml"))
    assert report["passed"] is True
    assert scores(report) == {"plan_valid": 1.0, "routing": 1.0, "dependencies": 1.0,
                              "tool_choice": 1.0, "interrupts": 1.0, "preview": 1.0,
                              "groundedness": 1.0, "pii": 1.0}  # the paused run's answer
    assert [(c["id"], c["split"], c["status"]) for c in report["cases"]] == [
        ("members-update-phone", "dev", "awaiting_approval"),
        ("members-update-phone-followup", "heldout", "awaiting_approval")]
    assert set(report["splits"]) == {"dev", "heldout"}
    assert all(c["model_calls"] > 0 and c["input_tokens"] > 0 for c in report["cases"])
    assert report["cost"]["errored"] == 0
    # the cards were raised in a scratch database, which is gone; the user's has none
    assert demo_db["pending_changes"].count_documents({}) == 0
    assert no_scratch_databases()


def test_answers_are_scored_for_groundedness(demo_db: Any) -> None:
    good = run_suite([LOOKUP_CASES], model=scripted("lookup_script.yaml"))
    assert good["passed"] is True, good["cases"][0]["scores"]
    assert scores(good)["groundedness"] == 1.0 and scores(good)["preview"] is None
    bad = run_suite([LOOKUP_CASES], model=scripted("invented_phone_script.yaml"))
    assert scores(bad)["groundedness"] == 0.0 and bad["passed"] is False
    reason = bad["cases"][0]["scores"]["groundedness"]["reason"]
    assert "phone '+44 7700 900999' is in no tool result" in reason


@pytest.mark.usefixtures("model_writes")
def test_failing_runs_are_scored_and_the_suite_goes_on(demo_db: Any, script: Any) -> None:
    # The script has no turns for t1: each run fails inside, every case still reports.
    broken = script({"plan": {"tasks": [{"id": "t1", "domain": "members", "operation": "get",
                                         "instruction": "x", "depends_on": []}]},
                     "synthesis": "x"})
    report = run_suite([UPDATE_CASES, LOOKUP_CASES], model=broken, concurrency=3)
    assert len(report["cases"]) == 3
    assert all(c["status"] == "failed" and not c["passed"] for c in report["cases"])
    assert no_scratch_databases()


def test_a_case_that_raises_is_recorded_as_errored(db: Any) -> None:
    # An unseeded database: the run cannot find the tenant and raises.
    [case] = load_cases([LOOKUP_CASES])
    result = run_case(case, scripted("lookup_script.yaml"), StoreLookups(db))
    data = result.to_json()
    assert data["errored"] and data["error"].startswith("NotFound: tenant 'demo' not found")
    assert not result.passed
    assert data["scores"]["plan_valid"] == {"passed": False,
                                            "reason": f"the case errored: {data['error']}"}


def test_bad_input_is_refused_before_any_case_runs(store_env: dict[str, str],
                                                   tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="does not exist"):
        run_suite([UPDATE_CASES], model=f"scripted:{tmp_path / 'none.yaml'}")
    with pytest.raises(BadInput, match="the dataset has no heldout cases"):
        run_suite([LOOKUP_CASES], model=scripted("lookup_script.yaml"), split="heldout")
    with pytest.raises(BadInput, match="openai"):  # no OPENAI_BASE_URL: one error up front
        run_suite([UPDATE_CASES], model="openai:local")
    with pytest.raises(BadInput, match="--concurrency"):
        run_suite([UPDATE_CASES], model=scripted("lookup_script.yaml"), concurrency=0)


@pytest.mark.usefixtures("demo_db")
def test_cli_exit_codes_reports_and_compare(store_env: dict[str, str], tmp_path: Path,
                                            script: Any) -> None:
    good_dir, bad_dir = tmp_path / "good", tmp_path / "bad"
    done = opsgraph(store_env, "eval", "--model", scripted("update_script.yaml"),
                    "--dataset", str(UPDATE_CASES), "--json", "--report", str(good_dir))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {n: d["passed"] for n, d in data["dimensions"].items()} == dict.fromkeys(
        data["dimensions"], True)
    assert set(data["dimensions"]["routing"]) >= {"score", "threshold", "passed"}
    assert [c["split"] for c in data["cases"]] == ["dev", "heldout"]
    assert (good_dir / "report.json").is_file() and (good_dir / "report.md").is_file()
    # each case was journaled as it finished, so a run stopped halfway keeps its cases
    journal = (good_dir / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line)["id"] for line in journal) == [
        "members-update-phone", "members-update-phone-followup"]
    assert "[2/2]" in done.stderr  # progress lines (stderr is not a terminal here)

    done = opsgraph(store_env, "eval", "--model", scripted("wrong_domain_script.yaml"),
                    "--dataset", str(UPDATE_CASES), "--split", "dev", "--report", str(bad_dir))
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("eval: MISSED THRESHOLDS")
    assert "FAIL members-update-phone [routing] expected members.update; planned " \
           "bookings.list" in done.stdout

    judge = script({"plan": {"first": dict.fromkeys(("correctness", "groundedness",
                                                     "completeness", "clarity", "safety"), 4),
                             "second": dict.fromkeys(("correctness", "groundedness",
                                                      "completeness", "clarity", "safety"), 2),
                             "verdict": "first"}})
    done = opsgraph(store_env, "eval", "--compare", str(good_dir / "report.json"),
                    str(bad_dir / "report.json"), "--judge", judge)
    assert done.returncode == 0, done.stderr
    assert "members-update-phone [dev] routing: pass → fail" in done.stdout
    assert "only in A: members-update-phone-followup" in done.stdout
    # the one case both reports hold: its answers (the paused runs' own) are judged
    assert "judge scripted:" in done.stdout and "1 cases judged" in done.stdout


def test_cli_bad_input_exits_2(store_env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("cases: [", encoding="utf-8")
    model = scripted("update_script.yaml")
    for args in (["--dataset", str(bad), "--model", model],
                 ["--dataset", str(tmp_path / "nope.yaml"), "--model", model],
                 ["--dataset", str(UPDATE_CASES), "--model", "gpt:4"],
                 ["--dataset", str(UPDATE_CASES), "--model", model, "--judge", model],
                 ["--compare", str(bad), str(bad)],
                 ["--dataset", str(UPDATE_CASES), "--model", model, "--concurrency", "0"]):
        done = opsgraph(store_env, "eval", *args)
        assert done.returncode == 2 and done.stderr.startswith("error: "), (args, done.stderr)
        assert done.stdout == ""
