"""What a run leaves in the logs and metrics when it ends: one line with its outcome and
figures (seconds, model calls, tokens, tasks, cards), an error line when it failed, and the
run's metric points (`telemetry.metrics`). The line carries the run's ids (tenant, thread,
run, and the request that started it), so a request id finds its run."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from opsgraph.engine.context import RunContext
from opsgraph.telemetry import metrics

log = logging.getLogger("opsgraph.runs")


@dataclass
class RunTally:
    """What a run did, counted as its events go by."""

    tasks: int = 0
    failed_tasks: int = 0
    broken_tasks: int = 0
    """Tasks that failed or read only part of what they tried: the run answered, with
    errors (`completed_with_errors`)."""
    cards: int = 0

    def saw(self, event: str, data: dict[str, object]) -> None:
        """Count one of the run's events."""
        if event == "task_finished":
            self.tasks += 1
            self.failed_tasks += data.get("status") == "failed"
            self.broken_tasks += data.get("status") in ("failed", "partial")


def report_run(ctx: RunContext, status: str, tally: RunTally,
               error: tuple[str, str] | None) -> None:
    """The run's line (and its error line), and its metric points."""
    seconds = round((datetime.now(UTC) - ctx.started_at).total_seconds(), 3)
    usage = ctx.usage
    if error is not None:
        code, message = error
        log.error("run failed: %s", message, extra={"code": code, "status": status})
        if code == "lease_lost":
            metrics.count("LeaseLost")
    log.info("run finished",
             extra={"outcome": status, "seconds": seconds, "model_calls": usage.calls,
                    "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                    "tasks": tally.tasks, "failed_tasks": tally.failed_tasks,
                    "cards": tally.cards})
    metrics.emit({"RunSeconds": (seconds, "Seconds"), "Runs": (1, "Count")},
                 {"Outcome": status}, run_id=ctx.run_id, thread_id=ctx.thread_id,
                 tenant_id=ctx.principal.tenant_id)
