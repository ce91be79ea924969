"""Case 11: the request resolver (opsgraph.resolve) per request, on the demo tenant and on
the large one that case 10 seeds, side by side in turns, the same requests and caller.

Targets: ≤ 10 ms per request at the demo tenant (median), and ≤ 2× that at the large
tenant: the resolver asks the store only indexed queries, so what it costs follows what
the request names, not how many members the club has.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from opsgraph.bench.drive import median
from opsgraph.bench.environment import BenchEnv
from opsgraph.bench.report import Row
from opsgraph.bench.scale import LARGE_TENANT
from opsgraph.operations.base import Context
from opsgraph.principal import Principal, Role
from opsgraph.resolve.resolver import resolve_request
from opsgraph.store.scope import TenantScope

TARGET_MS = 10.0
TARGET_RATIO = 2.0
REQUESTS = (
    "book Jane Smith on court one tmrw at 6pm for an hour",
    "can you book court 2 for Tom Baker thurs 6.30",
    "refund £15 to Jayne Smtih on INV-1132",
    "register emily_chen for the wine and tennis night",
    "what's on this weekend",
    "change Raj Mehta's phone to 07700 900123 and email raj@new.example",
    "who's covering Mia's shift on friday morning",
    "is the squash court free from 6 to 8 next tuesday",
    "cancel her booking on sunday",
    "how many are coming to the social night",
)
HISTORY = ("pull up Jane Smith", "Jane Smith - premium member, three upcoming bookings.")


def _resolver(env: BenchEnv, tenant: str, now: datetime) -> Callable[[str], int]:
    principal = Principal(tenant, "bench", frozenset({Role.STAFF}))
    settings = TenantScope(env.db, tenant).require_tenant()

    def once(text: str) -> int:
        history = HISTORY if "her " in text else ()
        ctx = Context(TenantScope(env.db, tenant), principal, now)  # on the current client
        found = resolve_request(ctx, text, timezone="UTC", now=now, history=history,
                                tenant=settings)
        return len(found.mentions)

    return once


def resolver_rows(env: BenchEnv, repeats: int) -> list[Row]:
    """The resolver's median milliseconds per request at demo, and large/demo."""
    now = datetime.now(UTC)
    demo, big = _resolver(env, "demo", now), _resolver(env, LARGE_TENANT, now)
    with env.commands.counting() as sent:  # the warm-up pass, counted
        found = {"demo": sum(demo(t) for t in REQUESTS)}
    queries = sum(sent.values()) / len(REQUESTS)
    found["big"] = sum(big(t) for t in REQUESTS)
    times: dict[str, list[float]] = {"demo": [], "big": []}
    for _ in range(repeats):
        for text in REQUESTS:
            for tenant, once in (("demo", demo), ("big", big)):
                start = time.perf_counter()
                once(text)
                times[tenant].append((time.perf_counter() - start) * 1000)
    demo_ms, big_ms = median(times["demo"]), median(times["big"])
    ratio = big_ms / demo_ms if demo_ms > 0 else None
    note = (f"{len(REQUESTS)} staff requests × {repeats}, names, dates, money, contacts and "
            f"an earlier turn, the tenant's settings at hand (as the engine has them); "
            f"mentions found: {found['demo']} demo, {found['big']} large")
    return [
        Row(case="11", name="resolver per request (demo)",
            measured={"median_ms": round(demo_ms, 2), "max_ms": round(max(times["demo"]), 2),
                      "store_queries": round(queries, 1), "requests": len(times["demo"])},
            summary=(f"{demo_ms:.2f} ms median (max {max(times['demo']):.1f}), "
                     f"{queries:.1f} store queries a request"),
            ratio=demo_ms / TARGET_MS, limit=1.0, target=f"≤ {TARGET_MS:g} ms", note=note),
        Row(case="11", name="resolver large/demo",
            measured={"demo_ms": round(demo_ms, 2), "large_ms": round(big_ms, 2),
                      "requests": len(times["big"])},
            summary=f"{big_ms:.2f} ms vs {demo_ms:.2f} ms",
            ratio=ratio, limit=TARGET_RATIO, target=f"≤ {TARGET_RATIO:g}×",
            note="the large tenant of case 10, at its scale"),
    ]
