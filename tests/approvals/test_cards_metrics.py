"""The expiry job's metric points: how many cards wait for a decision and how long the
oldest has waited (what the oldest-card alarm reads), as embedded-metric lines."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from opsgraph.jobs.expiry_job import expire_and_notify
from opsgraph.settings import get_settings
from tests.approvals.conftest import Propose


def emf_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith('{"_aws"')]


def test_the_expiry_job_writes_the_cards_waiting_and_the_oldest_ones_age(
        propose: Propose, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPSGRAPH_METRICS", "on")
    get_settings.cache_clear()
    now = datetime.now(UTC)
    propose(now=now - timedelta(minutes=40))  # an hour's expiry: still waiting
    propose(now=now - timedelta(minutes=5))
    capsys.readouterr()
    expire_and_notify()
    [line] = [d for d in emf_lines(capsys.readouterr().out) if "CardsWaiting" in d]
    assert line["CardsWaiting"] == [2.0]
    assert 2400 <= line["OldestCardAgeSeconds"][0] < 2400 + 600
    assert line["service"] == "opsgraph"
    assert line["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "opsgraph"


def test_no_metric_lines_locally_by_default(propose: Propose,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    propose(now=datetime.now(UTC))
    expire_and_notify()
    assert emf_lines(capsys.readouterr().out) == []
