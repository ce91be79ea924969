"""Scoring the resolver on a labelled set of requests (`evals/datasets/resolve/*.yaml`).

A set names its tenant and lists cases: `id`, `now` (an offset from the seed's anchor
Monday, "+2d 10:00", in the tenant's time zone), `role` (default staff), `history`
(earlier turns), `text`, and the `mentions` expected: `{kind, value}` (datetimes and dates
as offsets: "+3d 18:00", "+5d"), `end` when a range closes, `candidates` (ids) when the
request is ambiguous, neither when nothing should be found.

An expected mention is right when some mention found has its kind and value (instants
compared as instants, `end` when given, candidates as sets). Accuracy is right over
expected plus spurious: mentions found whose kind and value nobody expected.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import yaml
from pymongo.database import Database

from opsgraph.errors import BadInput
from opsgraph.operations.base import Context
from opsgraph.principal import Principal, parse_channel, parse_role
from opsgraph.resolve.mentions import Mention
from opsgraph.resolve.resolver import resolve_request, zone_of
from opsgraph.store.scope import TenantScope
from opsgraph.yaml_text import load_yaml

Document = dict[str, Any]
TARGET = 0.95
"""The accuracy the resolver must reach on a labelled set (`opsgraph eval` exits 1 below)."""
OFFSET = re.compile(r"^(?P<sign>[+-])(?P<days>\d+)d(?:\s+(?P<h>\d{1,2}):(?P<m>\d{2}))?$")
"""A day offset, "+3d" or "-1d", optionally at a time of day: "+3d 18:00"."""


def at_offset(offset: str, base: date, zone: ZoneInfo) -> datetime | str | None:
    """"+3d 18:00" → that instant in `zone`, N days after `base`; "+5d" → that date (ISO);
    None when `offset` is not of that form. The labelled resolver sets and the eval cases'
    expected times (`evals.relative`) both write times so."""
    m = OFFSET.match(offset.strip())
    if not m:
        return None
    day = base + timedelta(days=int(m.group("days")) * (1 if m.group("sign") == "+" else -1))
    if m.group("h") is None:
        return day.isoformat()
    return datetime(day.year, day.month, day.day, int(m.group("h")), int(m.group("m")),
                    tzinfo=zone)


def anchor_of(scope: TenantScope) -> datetime:
    """The seed's anchor Monday of a tenant (offsets in a labelled set count from it)."""
    tenant = scope.require_tenant()
    anchor = tenant.get("seed_anchor")
    if not isinstance(anchor, datetime):
        raise BadInput(f"tenant {scope.tenant_id!r} has no seed anchor ('opsgraph seed')")
    return anchor if anchor.tzinfo else anchor.replace(tzinfo=UTC)


def from_offset(offset: str, anchor: datetime, zone: ZoneInfo) -> datetime | str:
    """`at_offset` from the anchor's day in `zone`; BadInput when it is not an offset."""
    when = at_offset(offset, anchor.astimezone(zone).date(), zone)
    if when is None:
        raise BadInput(f"offset {offset!r}: expected '+Nd' or '+Nd HH:MM'")
    return when


def clock_at(scope: TenantScope, offset: str) -> datetime:
    """The clock a case runs at: its `now` offset from the tenant's anchor."""
    zone = zone_of(str(scope.require_tenant().get("timezone") or "UTC"))
    when = from_offset(offset, anchor_of(scope), zone)
    if not isinstance(when, datetime):
        raise BadInput(f"now {offset!r}: needs a time of day ('+2d 10:00')")
    return when


@dataclass(frozen=True, slots=True)
class Expected:
    """One labelled mention, its offsets turned into values."""

    kind: str
    value: str | None
    end: str | None
    candidates: frozenset[str] | None

    def to_json(self) -> Document:
        out: Document = {"kind": self.kind}
        if self.value is not None:
            out["value"] = self.value
        if self.end is not None:
            out["end"] = self.end
        if self.candidates is not None:
            out["candidates"] = sorted(self.candidates)
        return out


def _value(kind: str, raw: object, anchor: datetime, zone: ZoneInfo) -> str | None:
    if raw is None:
        return None
    text = str(raw)
    if kind in ("datetime", "date") and OFFSET.match(text.strip()):
        when = from_offset(text, anchor, zone)
        return when.isoformat() if isinstance(when, datetime) else when
    return text


def expected_of(item: Document, anchor: datetime, zone: ZoneInfo) -> Expected:
    """A labelled mention as an `Expected`."""
    kind = str(item.get("kind") or "")
    cands = item.get("candidates")
    return Expected(kind, _value(kind, item.get("value"), anchor, zone),
                    _value(kind, item.get("end"), anchor, zone),
                    frozenset(str(c) for c in cands) if cands is not None else None)


def _same_value(kind: str, want: str | None, got: str | None) -> bool:
    if want is None or got is None:
        return want is got
    if kind == "datetime":
        try:
            return datetime.fromisoformat(want) == datetime.fromisoformat(got)
        except ValueError:
            return False
    if kind == "money":
        try:
            return Decimal(want) == Decimal(got)
        except InvalidOperation:
            return False
    if kind == "email":
        return want.lower() == got.lower()
    return want == got


def _named(e: Expected, m: Mention) -> bool:
    """The mention has the expected kind and value (or candidates), whatever its end."""
    if e.kind != m.kind:
        return False
    if e.candidates is not None:
        return m.value is None and e.candidates == {c.value for c in m.candidates}
    if e.value is None:
        return m.value is None and not m.candidates
    return _same_value(e.kind, e.value, m.value)


def right(e: Expected, m: Mention) -> bool:
    """The mention is what `e` expects, its end included when `e` gives one."""
    return _named(e, m) and (e.end is None or _same_value(e.kind, e.end, m.end))


def score_case(expected: list[Expected], found: Iterable[Mention]) -> Document:
    """Right and spurious mentions of one case, with what was missed."""
    found = list(found)
    ok = [e for e in expected if any(right(e, m) for m in found)]
    spurious = [m for m in found if not any(_named(e, m) for e in expected)]
    return {"expected": len(expected), "right": len(ok),
            "missed": [e.to_json() for e in expected if e not in ok],
            "spurious": [m.to_json() for m in spurious], "kinds": _kinds(expected, ok, spurious)}


def _kinds(expected: list[Expected], ok: list[Expected], spurious: list[Mention]
           ) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for e in expected:
        out.setdefault(e.kind, [0, 0, 0])[0] += 1
    for e in ok:
        out[e.kind][1] += 1
    for m in spurious:
        out.setdefault(m.kind, [0, 0, 0])[2] += 1
    return out


def load_set(path: Path) -> Document:
    """A labelled set, checked for its shape; BadInput naming the path otherwise."""
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise BadInput(f"{path}: cannot read a labelled set ({exc})") from None
    if not is_labelled_set(data):
        raise BadInput(f"{path}: expected 'tenant' and 'cases' with 'text' and 'mentions'")
    return dict(data)


def is_labelled_set(data: object) -> bool:
    """True when `data` is a resolver set: a tenant and cases with text and mentions."""
    return (isinstance(data, dict) and isinstance(data.get("cases"), list)
            and all(isinstance(c, dict) and "text" in c and "mentions" in c
                    for c in data["cases"]))


def is_resolve_set(path: Path) -> bool:
    """True when the file at `path` is a resolver set (for `opsgraph eval --dataset`)."""
    try:
        return is_labelled_set(load_yaml(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError):
        return False


def run_set(db: Database[Document], path: Path) -> Document:
    """Resolve every case of the set at `path` against `db` and score it."""
    data = load_set(path)
    tenant = str(data.get("tenant") or "demo")
    scope = TenantScope(db, tenant)
    settings = scope.require_tenant()
    zone_name = str(settings.get("timezone") or "UTC")
    zone, anchor = zone_of(zone_name), anchor_of(scope)
    cases = []
    for case in data["cases"]:
        principal = Principal(tenant, str(case.get("user") or "cli"),
                              frozenset({parse_role(str(case.get("role") or "staff"))}),
                              parse_channel("dashboard"))
        now = clock_at(scope, str(case.get("now") or "+0d 10:00"))
        found = resolve_request(Context(scope, principal, now), str(case["text"]),
                                timezone=zone_name, now=now, tenant=settings,
                                history=[str(t) for t in case.get("history") or ()])
        expected = [expected_of(m, anchor, zone) for m in case["mentions"] or ()]
        cases.append({"id": case.get("id"), "text": case["text"],
                      **score_case(expected, found.mentions)})
    return summarise(str(path), cases)


def summarise(name: str, cases: list[Document]) -> Document:
    """Totals, accuracy and the figures per kind of a scored set."""
    kinds: dict[str, list[int]] = {}
    for case in cases:
        for kind, (e, r, s) in case.pop("kinds").items():
            row = kinds.setdefault(kind, [0, 0, 0])
            row[0], row[1], row[2] = row[0] + e, row[1] + r, row[2] + s
    expected = sum(c["expected"] for c in cases)
    ok = sum(c["right"] for c in cases)
    spurious = sum(len(c["spurious"]) for c in cases)
    return {"dataset": name, "cases": len(cases), "expected": expected, "right": ok,
            "spurious": spurious, "accuracy": _ratio(ok, expected + spurious),
            "by_kind": {k: {"expected": e, "right": r, "spurious": s,
                            "accuracy": _ratio(r, e + s)}
                        for k, (e, r, s) in sorted(kinds.items())},
            "failures": [c for c in cases if c["missed"] or c["spurious"]]}


def _ratio(a: int, b: int) -> float:
    return round(a / b, 4) if b else 1.0


def render(report: Document) -> str:
    """The report as text: the accuracy, per kind, then every case with a miss."""
    lines = [f"{report['dataset']}: {report['right']}/{report['expected']} right, "
             f"{report['spurious']} spurious, accuracy {report['accuracy']:.3f} "
             f"({report['cases']} cases)"]
    for kind, row in report["by_kind"].items():
        lines.append(f"  {kind:<9} {row['right']}/{row['expected']} right, "
                     f"{row['spurious']} spurious, accuracy {row['accuracy']:.3f}")
    for case in report["failures"]:
        lines.append(f"- {case['id']}: {case['text']}")
        lines += [f"    missed   {m}" for m in case["missed"]]
        lines += [f"    spurious {m}" for m in case["spurious"]]
    return "\n".join(lines)
