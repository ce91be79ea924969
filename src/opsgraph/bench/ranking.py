"""Case 8: the ranker's time per request after warm-up (model loaded, agent vectors built).

Every timed request is different and the request cache is emptied first, so each one is
embedded (the ranker keeps a small cache of request vectors that would otherwise answer).
"""

from __future__ import annotations

import itertools
import time

from opsgraph.bench.drive import median, percentile
from opsgraph.bench.report import Row
from opsgraph.registry.ranker import clear_request_cache, rank_agents, warm

TARGET_MS = 5.0
_ASKS = ("can you find", "please cancel", "what's the status of", "book", "send a note about",
         "how many people came to", "refund", "who is working on", "is there space in",
         "update the details for")
_SUBJECTS = ("Jane Smith's membership", "court 1 on friday evening", "the junior tennis clinic",
             "last month's invoices", "the broken shower in the men's changing room")


def requests(n: int) -> list[str]:
    """`n` different staff requests."""
    combos = itertools.cycle(itertools.product(_ASKS, _SUBJECTS))
    return [f"{ask} {subject}" + (f" #{i // 50}" if i >= 50 else "")
            for i, (ask, subject) in zip(range(n), combos, strict=False)]


def ranker_row(n: int) -> Row:
    """Mean and p95 milliseconds of `rank_agents` over `n` different requests."""
    warm()
    for text in ("warm up the tokenizer", "and the session", "before timing"):
        rank_agents(text, top_k=6)
    clear_request_cache()
    walls, cpus = [], []
    for text in requests(n):
        wall, cpu = time.perf_counter(), time.thread_time()
        rank_agents(text, top_k=6)
        cpus.append((time.thread_time() - cpu) * 1000)
        walls.append((time.perf_counter() - wall) * 1000)
    cpu_ms = sum(cpus) / n
    wall_ms, p95 = median(walls), percentile(walls, 0.95)
    return Row(case="8", name="ranker per request",
               measured={"cpu_ms": round(cpu_ms, 3), "wall_median_ms": round(wall_ms, 3),
                         "wall_mean_ms": round(sum(walls) / n, 3), "wall_p95_ms": round(p95, 3),
                         "requests": n},
               summary=f"{cpu_ms:.2f} ms CPU (wall median {wall_ms:.2f}, p95 {p95:.2f})",
               ratio=cpu_ms / TARGET_MS, limit=1.0, target=f"≤ {TARGET_MS:g} ms",
               note=(f"rank_agents(top_k=6) over {n} different requests, request cache "
                     "cleared; judged on CPU (the embedding runs single-threaded in the "
                     "caller, so on an idle core wall equals CPU)"))
