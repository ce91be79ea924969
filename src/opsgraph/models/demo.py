"""Demo mode's example requests, each answered by a scripted model of its own.

`src/opsgraph/demo/examples.yaml` lists the requests the page offers and the script that
answers each; a script is a scripted-model file (docs/reference.md) with `${name}` blanks
filled when the request arrives: dates from today, and for the answers, what the read
operations return for this caller, read with the caller's permissions (a member is told
about their own bookings only). The filled script is written once under
`OPSGRAPH_HOME/demo/`, named by its content, so a run resumed after a decision (even in a
new process) reads the same file: the run keeps its model spec.

`script_for(principal, message)`: in demo mode, the `scripted:` spec of the example the
message is (compared without case, spacing or a final full stop), else None; any other
message then runs on demo mode's placeholder model and ends with a `demo_mode` error before
any model is called.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cache
from pathlib import Path
from string import Template
from typing import Any, Final

from opsgraph.errors import OpsgraphError
from opsgraph.models.auto import DEMO_DIR, model_choice
from opsgraph.operations.direct import call_operation
from opsgraph.principal import Principal
from opsgraph.settings import get_settings
from opsgraph.store.scope import TenantScope
from opsgraph.yaml_text import load_yaml

Document = dict[str, Any]

EVENING: Final = 17
"""The first hour of "tomorrow evening" for the booking example."""
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Example:
    """One example request and the script (a file in `demo/`) that answers it."""

    request: str
    script: str
    done_when: Document | None = None
    """`{collection, match}`: a record that says the example's change is made already..."""
    done_script: str | None = None
    """... and the script that answers then."""

    def script_now(self, principal: Principal) -> str:
        """The script that answers the example now (`done_script` once it is done)."""
        if self.done_when is None or self.done_script is None:
            return self.script

        found = TenantScope.of(principal)[str(self.done_when["collection"])].find_one(
            dict(self.done_when["match"]), projection={"_id": 1})
        return self.done_script if found is not None else self.script

    @property
    def key(self) -> str:
        return normalise(self.request)


def normalise(message: str) -> str:
    """A message as examples are matched: no case, single spaces, no final full stop."""
    return _SPACE.sub(" ", message).strip().rstrip(".").strip().casefold()


@cache
def examples() -> tuple[Example, ...]:
    """The examples, in the order the page offers them."""
    data = load_yaml((DEMO_DIR / "examples.yaml").read_text(encoding="utf-8"))
    return tuple(Example(str(row["request"]), str(row["script"]), row.get("done_when"),
                         row.get("done_script")) for row in data["examples"])


def example_requests() -> list[str]:
    """What `GET /v1/info` offers in demo mode."""
    return [e.request for e in examples()]


def find_example(message: str) -> Example | None:
    """The example `message` is, if it is one."""
    key = normalise(message)
    return next((e for e in examples() if e.key == key), None)


def script_for(principal: Principal, message: str) -> str | None:
    """In demo mode, the model spec that answers `message` when it is an example; None
    otherwise (then the default model answers: a real one, or in demo mode, the refusal)."""
    if model_choice().mode != "demo":
        return None
    example = find_example(message)
    if example is None:
        return None
    script = example.script_now(principal)
    template = Template((DEMO_DIR / script).read_text(encoding="utf-8"))
    blanks = Blanks(principal, datetime.now(UTC))
    text = template.substitute({name: blanks.value(name)
                                for name in template.get_identifiers()})
    return f"scripted:{_written(Path(script).stem, text)}"


def _written(stem: str, text: str) -> Path:
    """The filled script's file under OPSGRAPH_HOME/demo/, named by its content."""
    folder = get_settings().home / "demo"
    path = folder / f"{stem}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.yaml"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    return path


def _day(day: date) -> str:
    return f"{day:%A} {day.day} {day:%B}"


def _hhmm(iso: str) -> str:
    return datetime.fromisoformat(iso).strftime("%H:%M")


def _names(rows: list[str]) -> str:
    return rows[0] if len(rows) == 1 else ", ".join(rows[:-1]) + " and " + rows[-1]


class Blanks:
    """The values of a script's `${name}` blanks for one request."""

    def __init__(self, principal: Principal, now: datetime) -> None:
        self.principal = principal
        self.now = now
        self.today = now.date()
        self.tomorrow = self.today + timedelta(days=1)
        self.saturday = self.today + timedelta(days=(5 - self.today.weekday()) % 7 or 7)
        self.week_end = self.today + timedelta(days=6)
        self._values: dict[str, Callable[[], str]] = {
            "today": self.today.isoformat, "tomorrow": self.tomorrow.isoformat,
            "tomorrow_words": lambda: _day(self.tomorrow),
            "saturday": self.saturday.isoformat, "saturday_words": lambda: _day(self.saturday),
            "week_end": self.week_end.isoformat,
            "slot_start": lambda: self._slot()[0].isoformat(),
            "slot_end": lambda: self._slot()[1].isoformat(),
            "slot_words": lambda: f"{self._slot()[0]:%H:%M} to {self._slot()[1]:%H:%M}",
            "refund_invoice": self._refund_invoice,
            "court1_tomorrow": self._court1_tomorrow,
            "court2_saturday": self._court2_saturday,
            "events_week": self._events_week,
        }

    def value(self, name: str) -> str:
        if name not in self._values:
            raise KeyError(f"demo script blank ${{{name}}} is not one of "
                           f"{', '.join(sorted(self._values))}")
        return self._values[name]()

    def _read(self, op_id: str, args: Document) -> Document | None:
        """A read operation's result for this caller; None when they may not read it."""
        try:
            result: Document = call_operation(self.principal, op_id, args, now=self.now)
        except OpsgraphError:
            return None
        return result["result"]  # type: ignore[no-any-return]

    def _scope(self) -> TenantScope:
        return TenantScope.of(self.principal)

    def _slot(self) -> tuple[datetime, datetime]:
        """Tomorrow's first hour from 17:00 when Court 1 and Jane Smith are both free (the
        booking example must still be proposable after earlier runs were approved)."""
        scope = self._scope()
        court = scope["resources"].find_one({"name": "Court 1"}) or {}
        jane = scope["members"].find_one({"email": "jane.smith@example.com"}) or {}
        start = datetime.combine(self.tomorrow, datetime.min.time(), tzinfo=UTC)
        busy = [(_utc(b["start"]), _utc(b["end"])) for b in scope["bookings"].find({
            "status": "confirmed", "start": {"$lt": start + timedelta(days=1)},
            "end": {"$gt": start},
            "$or": [{"resource_id": court.get("_id")}, {"member_id": jane.get("_id")}]})]
        closes = 20 if self.tomorrow.weekday() >= 5 else 22
        for hour in [*range(EVENING, closes), *range(EVENING - 1, 7, -1)]:
            slot = (start + timedelta(hours=hour), start + timedelta(hours=hour + 1))
            if all(end <= slot[0] or begin >= slot[1] for begin, end in busy):
                return slot
        return start + timedelta(hours=EVENING), start + timedelta(hours=EVENING + 1)

    def _refund_invoice(self) -> str:
        found = self._scope()["invoices"].find_one(
            {"member_name": "Jayne Smith", "lines.description": {"$regex": "duplicate"}})
        return str((found or {}).get("number", "INV-1132"))

    def _court1_tomorrow(self) -> str:
        read = self._read("bookings.list", {"date": self.tomorrow.isoformat()})
        if read is None:
            return "I could not read the bookings."
        rows = [f"{b['member']['name']} ({_hhmm(b['start'])} to {_hhmm(b['end'])})"
                for b in read["bookings"] if b["resource"]["name"] == "Court 1"]
        when = _day(self.tomorrow)
        if not rows:
            return f"Nobody is booked on Court 1 on {when}."
        return f"On {when}, Court 1 is booked for {_names(rows)}."

    def _court2_saturday(self) -> str:
        read = self._read("bookings.availability",
                          {"resource": "Court 2", "date": self.saturday.isoformat()})
        if read is None:
            return "I could not read Court 2's availability."
        when = _day(self.saturday)
        free = read["free"]
        if not free:
            return f"Court 2 has no free hour on {when}."
        return (f"Court 2 has {len(free)} free hour{'s' if len(free) != 1 else ''} on {when}, "
                f"from {_hhmm(free[0]['start'])} at the earliest.")

    def _events_week(self) -> str:
        read = self._read("events.list", {"from": self.today.isoformat(),
                                          "to": self.week_end.isoformat()})
        if read is None:
            return "I could not read the events."
        rows = [f"{e['title']} ({datetime.fromisoformat(e['start']):%a %H:%M})"
                for e in read["events"]]
        if not rows:
            return "No events are on this week."
        return f"This week's events: {_names(rows)}."


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)
