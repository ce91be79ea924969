"""The labelled-set scorer, and the resolver's accuracy on its own dev set."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml
from pymongo.database import Database

from opsgraph.errors import BadInput
from opsgraph.resolve import Candidate, Mention
from opsgraph.resolve.score import TARGET, expected_of, from_offset, run_set, score_case

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT / "evals" / "datasets" / "resolve" / "dev.yaml"
ANCHOR = datetime(2030, 1, 7, tzinfo=UTC)
UTC_ZONE = ZoneInfo("UTC")


def test_the_dev_set_is_resolved_at_the_target(club: Database[dict]) -> None:  # type: ignore[type-arg]
    report = run_set(club, DEV)
    assert report["cases"] >= 80
    assert report["accuracy"] >= TARGET, [(f["id"], f["missed"], f["spurious"])
                                          for f in report["failures"]]


def test_offsets_become_instants_and_dates() -> None:
    assert from_offset("+3d 18:00", ANCHOR, UTC_ZONE) == datetime(2030, 1, 10, 18, tzinfo=UTC)
    assert from_offset("-1d", ANCHOR, UTC_ZONE) == "2030-01-06"
    with pytest.raises(BadInput, match="offset"):
        from_offset("tomorrow", ANCHOR, UTC_ZONE)


def _expect(**item: object) -> list:  # type: ignore[type-arg]
    return [expected_of(dict(item), ANCHOR, UTC_ZONE)]


def test_a_wrong_end_misses_and_an_unexpected_mention_is_spurious() -> None:
    want = _expect(kind="datetime", value="+3d 18:00", end="+3d 19:00")
    wrong_end = Mention("6pm", "datetime", "2030-01-10T18:00:00+00:00",
                        end="2030-01-10T20:00:00+00:00", start=0)
    extra = Mention("Jane", "member", "mem_demo_001", start=10)
    scored = score_case(want, [wrong_end, extra])
    assert (scored["right"], len(scored["spurious"])) == (0, 1)
    same_instant = Mention("6pm", "datetime", "2030-01-10T19:00:00+01:00",
                           end="2030-01-10T19:00:00+00:00", start=0)
    assert score_case(want, [same_instant])["right"] == 1


def test_candidates_compare_as_sets_and_a_value_is_not_candidates() -> None:
    want = _expect(kind="member", candidates=["mem_demo_005", "mem_demo_004"])
    both = Mention("Tom Baker", "member", candidates=(Candidate("mem_demo_004", "a"),
                                                      Candidate("mem_demo_005", "b")))
    one = Mention("Tom Baker", "member", "mem_demo_004")
    assert score_case(want, [both])["right"] == 1
    assert score_case(want, [one]) | {"kinds": None} == {
        "expected": 1, "right": 0, "missed": [want[0].to_json()],
        "spurious": [one.to_json()], "kinds": None}


def test_a_file_that_is_not_a_labelled_set_is_refused(tmp_path: Path,
                                                      club: Database[dict]) -> None:  # type: ignore[type-arg]
    path = tmp_path / "set.yaml"
    path.write_text(yaml.safe_dump({"tenant": "demo", "cases": [{"text": "hi"}]}))
    with pytest.raises(BadInput, match="mentions"):
        run_set(club, path)
