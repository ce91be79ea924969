"""The process's client, and a block in which a listener hears its commands."""

from __future__ import annotations

from typing import Any

from pymongo import monitoring

from opsgraph.store.client import get_client, get_db, listened_to


class Heard(monitoring.CommandListener):
    def __init__(self) -> None:
        self.names: list[str] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.names.append(f"{event.command_name} {event.command.get(event.command_name)}")

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        return None

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        return None


def test_a_listener_hears_the_commands_of_the_block_only(db: Any) -> None:
    before = get_client()
    heard = Heard()
    get_db()["notes"].insert_one({"n": 1})
    with listened_to(heard):
        assert get_client() is not before
        assert get_db()["notes"].count_documents({}) == 1
    assert get_client() is before
    get_db()["notes"].find_one({})
    assert [n for n in heard.names if n.startswith("aggregate")] == ["aggregate notes"]
    assert not [n for n in heard.names if n.startswith(("insert", "find"))]
