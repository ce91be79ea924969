"""Crash points: a misspelt one fails loudly instead of silently never firing."""

from __future__ import annotations

import pytest

from opsgraph.errors import ConfigurationError
from opsgraph.faults import crash_point


def test_a_crash_point_named_in_the_environment_must_exist(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPSGRAPH_CRASH_AT", raising=False)
    crash_point("after_cas")  # unset: nothing happens
    monkeypatch.setenv("OPSGRAPH_CRASH_AT", "after_propose")
    crash_point("after_cas")  # another point: nothing happens here
    monkeypatch.setenv("OPSGRAPH_CRASH_AT", "after_caz")
    with pytest.raises(ConfigurationError, match="'after_caz' is no crash point"):
        crash_point("after_cas")
