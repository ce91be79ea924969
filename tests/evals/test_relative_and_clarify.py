"""Expected times relative to the run's day, and expected clarifying questions: each passes
a good run and catches its seeded failure, through the real graph with scripted models."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml

from opsgraph.evals import run_suite
from opsgraph.evals.actions import interrupts
from opsgraph.evals.relative import absolute, case_at
from tests.evals.builders import fails, make_case, make_run, passes

pytestmark = pytest.mark.usefixtures("demo_db")


def dataset(tmp_path: Path, cases: list[dict[str, Any]]) -> Path:
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump({"cases": cases}, sort_keys=False))
    return path


def test_relative_times_read_against_the_runs_day_and_the_seeded_week() -> None:
    zone = ZoneInfo("Europe/London")
    today, week = date(2026, 12, 1), date(2026, 11, 30)
    assert absolute("+1d 18:00", today, week, zone) == "2026-12-02T18:00:00+00:00"
    assert absolute("-1d", today, week, zone) == "2026-11-30"
    assert absolute("week+3d 19:30", today, week, zone) == "2026-12-03T19:30:00+00:00"
    # weekdays, from a Tuesday: the coming one (today on the day itself), or next week's
    assert absolute("thu 19:00", today, week, zone) == "2026-12-03T19:00:00+00:00"
    assert absolute("tue", today, week, zone) == "2026-12-01"
    assert absolute("mon", today, week, zone) == "2026-12-07"
    assert absolute("next-week wed 17:00", today, week, zone) == "2026-12-09T17:00:00+00:00"
    assert absolute("next-week mon", date(2026, 12, 6), week, zone) == "2026-12-07"
    assert absolute("someday", today, week, zone) == "someday"
    case = make_case(args={"bookings_create": {"start": "+1d 18:00", "member": "Emily Chen"}},
                     interrupts=[{"operation": "bookings.create", "args": {"start": "+0d"}}])
    now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    fixed = case_at(case, now, "UTC", None).expect
    assert fixed.args["bookings_create"] == {"start": "2026-12-02T18:00:00+00:00",
                                             "member": "Emily Chen"}
    assert fixed.interrupts is not None and fixed.interrupts[0].args == {"start": "2026-12-01"}


def _booking_script(script: Any, start: datetime) -> str:
    args = {"member": "Emily Chen", "resource": "Court 2", "start": start.isoformat(),
            "end": (start + timedelta(hours=1)).isoformat()}
    return script({
        "plan": {"tasks": [{"id": "t1", "domain": "bookings", "operation": "create",
                            "instruction": "Book Court 2 for Emily Chen tomorrow 18:00",
                            "depends_on": []}]},
        "turns": {"t1": [{"tool_calls": [{"name": "bookings_create", "args": args}]},
                         {"content": "Proposed."}, {"content": "Proposed."}]},
        "synthesis": "Proposed.",
    })


def test_an_invented_date_fails_tool_choice(tmp_path: Path, script: Any,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from opsgraph.settings import get_settings

    # the model writes the call (a direct proposal from the resolved slots would have the
    # right time whatever the script says)
    monkeypatch.setenv("OPSGRAPH_DIRECT_PROPOSALS", "off")
    get_settings.cache_clear()
    cases = dataset(tmp_path, [{
        "id": "bookings-tomorrow", "split": "dev", "domain": "bookings",
        "principal": {"role": "staff"}, "request": "book court 2 for emily chen tmrw 6pm",
        "expect": {"tools_contains": ["bookings_create"],
                   "args": {"bookings_create": {"start": "+1d 18:00"}}}}])
    today = datetime.now(UTC).replace(hour=18, minute=0, second=0, microsecond=0)
    good = run_suite([cases], model=_booking_script(script, today + timedelta(days=1)))
    assert good["dimensions"]["tool_choice"]["score"] == 1.0, good["cases"][0]["scores"]
    # "tomorrow" read as today: the same time a day early
    bad = run_suite([cases], model=_booking_script(script, today))
    assert bad["dimensions"]["tool_choice"]["score"] == 0.0
    assert "bookings_create: no call with" in bad["cases"][0]["scores"]["tool_choice"]["reason"]


def test_an_expected_clarifying_question_passes_when_asked(tmp_path: Path,
                                                           script: Any) -> None:
    cases = dataset(tmp_path, [{
        "id": "members-which-tom", "split": "dev", "domain": "members",
        "principal": {"role": "staff"},
        "request": "change tom baker's phone to +44 7700 900999",
        "expect": {"clarify": {"options_contain": ["tbaker@mail.example",
                                                   "tom.baker@example.com"]},
                   "interrupts": []}}])
    model = script({"plan": {"tasks": [{"id": "t1", "domain": "members",
                                        "operation": "update",
                                        "instruction": "Change Tom Baker's phone",
                                        "depends_on": []}]}})
    report = run_suite([cases], model=model)
    assert report["dimensions"]["interrupts"]["score"] == 1.0, report["cases"][0]["scores"]


def test_the_clarify_check_catches_a_guess_and_a_missing_question() -> None:
    case = make_case(request="change tom baker's phone", clarify={"options_contain": [
        "tbaker@mail.example"]})
    guessed = make_run(cards=[{"change_id": "chg_1", "operation": "members.update",
                               "task_id": "t1", "summary": "Update Tom Baker",
                               "old": {}, "new": {"phone": "+447700900999"},
                               "args": {"member": "mem_demo_004"},
                               "expires_at": "2030-01-01T00:00:00+00:00"}],
                       answer="Waiting for approval.")
    assert fails(interrupts(case, guessed), "asked no clarifying question")
    asked = make_run(answer="Which member do you mean?")
    asked.options = ["Tom Baker (tom.baker@example.com)"]
    assert fails(interrupts(case, asked), "no option holds 'tbaker@mail.example'")
    asked.options.append("Tom Baker (tbaker@mail.example)")
    assert passes(interrupts(case, asked))
