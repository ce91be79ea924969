"""A command listener for tests: the commands a client sent, as `aggregate members`."""

from __future__ import annotations

from pymongo import monitoring


class Heard(monitoring.CommandListener):
    """Each command started, as its name and the collection it names (if any)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        target = event.command.get(event.command_name)
        self.names.append(f"{event.command_name} {target}" if isinstance(target, str)
                          else event.command_name)

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        return None

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        return None
