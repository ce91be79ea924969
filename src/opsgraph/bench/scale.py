"""Case 10: reads on a large tenant against the demo tenant, side by side in one store.

The bench's scratch database gets a second tenant, `big`: the demo club at `scale` times
`store.seed.LARGE` (10,000 members, 200,000 bookings, 20,000 invoices at 1.0). Each read
below then runs on `demo` and on `big` in turns, the same arguments, the same caller, and
is judged on the ratio of the medians (target ≤ 2: a read costs what its page holds, not
what the tenant holds). The reads run as handlers (name resolution included), without the
HTTP or audit layers around them, which cost the same at any size.

`OPSGRAPH_BENCH_SCALE` overrides the scale (1.0 seeds the full large club: minutes).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from opsgraph.bench.drive import median
from opsgraph.bench.environment import BenchEnv
from opsgraph.bench.report import Row
from opsgraph.operations.base import Context
from opsgraph.operations.catalogue import get_operation
from opsgraph.operations.references import resolve_args
from opsgraph.principal import Principal, Role
from opsgraph.store.scope import TenantScope
from opsgraph.store.seed import LARGE, seed

SCALE_ENV = "OPSGRAPH_BENCH_SCALE"
TARGET = 2.0
LARGE_TENANT = "big"


@dataclass(frozen=True)
class Read:
    """One timed read: what it is called in the report, the operation and its caller."""

    label: str
    op_id: str
    args: dict[str, Any]
    role: str = "staff"
    user: str = "bench"


def reads(tomorrow: str) -> list[Read]:
    """The reads measured: name resolution, lists and availability."""
    return [
        Read("resolve a full name", "members.get", {"member": "Jane Smith"}),
        Read("resolve an email", "members.get", {"member": "emily.chen@example.org"}),
        Read("resolve one word of a name", "members.get", {"member": "smithson"}),
        Read("a member resolves themselves", "members.get", {"member": "Jane Smith"},
             "member", "jane.smith@example.com"),
        Read("members.search a name", "members.search", {"query": "Jane Smith"}),
        Read("members.search a misspelt name", "members.search", {"query": "jane smth"}),
        Read("bookings.list, next 14 days", "bookings.list", {}),
        Read("bookings.list of a member", "bookings.list", {"member": "Jane Smith"}),
        Read("bookings.list of a day", "bookings.list", {"date": tomorrow}),
        Read("bookings.availability", "bookings.availability",
             {"resource": "Court 1", "date": tomorrow}, "visitor", ""),
        Read("invoices.list open", "invoices.list", {"status": "open"}),
        Read("invoices.list of a member", "invoices.list", {"member": "Jane Smith"}),
        Read("events.list, next 60 days", "events.list", {}, "visitor", ""),
        Read("schedules.shifts, next 7 days", "schedules.shifts", {}),
    ]


def scale_factor(default: float) -> float:
    """The scale of this run: `OPSGRAPH_BENCH_SCALE` if set, else `default`."""
    raw = os.environ.get(SCALE_ENV, "").strip()
    return float(raw) if raw else default


def _runner(env: BenchEnv, read: Read, tenant: str, now: datetime) -> Any:
    principal = Principal(tenant, read.user, frozenset({Role(read.role)}))
    ctx = Context(TenantScope(env.db, tenant), principal, now)
    op = get_operation(read.op_id)
    handler = op.run
    assert handler is not None, read.op_id

    def once() -> Any:
        return handler(ctx, resolve_args(ctx, op, op.input.model_validate(read.args)))

    return once


def _rows_of(data: Any) -> int:
    """How many records a read returned (its longest list), 1 for a single record."""
    lists = [v for v in data.values() if isinstance(v, list)] if isinstance(data, dict) else []
    return max((len(v) for v in lists), default=1)


def scale_rows(env: BenchEnv, default_scale: float, repeats: int) -> list[Row]:
    """Seed the large tenant, then one row per read: the large/demo ratio of medians."""
    factor = scale_factor(default_scale)
    scale = LARGE.times(factor)
    started = time.perf_counter()
    counts = seed(env.db, LARGE_TENANT, scale=scale)
    seed_s = time.perf_counter() - started
    records = sum(v for k, v in counts.items() if isinstance(v, int))
    rows = [Row(case="10", name=f"seed the large tenant (×{factor:g})",
                measured={"seconds": round(seed_s, 1), "records": records,
                          "members": counts["members"], "bookings": counts["bookings"],
                          "invoices": counts["invoices"]},
                summary=(f"{seed_s:.1f} s for {records:,} records "
                         f"({records / seed_s:,.0f}/s): {counts['members']:,} members, "
                         f"{counts['bookings']:,} bookings, {counts['invoices']:,} invoices"),
                ratio=None, target="as fast as the store allows",
                note=(f"bulk inserts of 5,000; {SCALE_ENV}=1 seeds the full large club "
                      "(10,000 members, 200,000 bookings, 20,000 invoices)"))]
    now = datetime.now(UTC)
    tomorrow = (now + timedelta(days=1)).date().isoformat()
    for read in reads(tomorrow):
        demo, big = _runner(env, read, "demo", now), _runner(env, read, LARGE_TENANT, now)
        sizes = (_rows_of(demo().data), _rows_of(big().data))  # also warms both up
        times: dict[str, list[float]] = {"demo": [], "big": []}
        for _ in range(repeats):
            for tenant, once in (("demo", demo), ("big", big)):
                start = time.perf_counter()
                once()
                times[tenant].append((time.perf_counter() - start) * 1000)
        demo_ms, big_ms = median(times["demo"]), median(times["big"])
        per_row = (big_ms / max(1, sizes[1])) / (demo_ms / max(1, sizes[0]))
        rows.append(Row(
            case="10", name=f"large/demo: {read.label}",
            measured={"demo_ms": round(demo_ms, 2), "large_ms": round(big_ms, 2),
                      "demo_rows": sizes[0], "large_rows": sizes[1],
                      "per_row_ratio": round(per_row, 2), "repeats": repeats},
            summary=(f"{big_ms:.1f} ms vs {demo_ms:.1f} ms "
                     f"({sizes[1]} vs {sizes[0]} rows; per row {per_row:.2f}×)"),
            ratio=big_ms / demo_ms if demo_ms > 0 else None, target=f"≤ {TARGET:g}×",
            limit=TARGET,
            note="" if sizes[0] == sizes[1] else (
                f"{read.label}: the large tenant's page holds {sizes[1]} rows, the demo's "
                f"{sizes[0]}; each row costs the same lookups (names, headcounts), so the "
                "ratio follows the page, and per row it is the second figure")))
    return rows
