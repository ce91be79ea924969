"""Non-HTTP Lambda events: keep-warm pings, scheduled jobs, queue records.

Keep-warm must stay cheap: it imports nothing heavy and touches no store.
"""

from __future__ import annotations

import logging
from typing import Any

from opsgraph.errors import BadInput

log = logging.getLogger(__name__)
JOBS = ("expire_approvals",)


def _run_job(name: str) -> dict[str, Any]:
    if name == "expire_approvals":
        from opsgraph.engine.expiry_job import expire_and_notify

        return {"job": name, "expired": expire_and_notify()}
    raise BadInput(f"job: unknown job {name!r} (known: {', '.join(JOBS)})")


def handle_event(event: dict[str, Any]) -> dict[str, Any]:
    """Route one event by its shape."""
    if event.get("keep_warm") or event.get("source") in ("keep-warm", "serverless-plugin-warmup"):
        return {"ok": True, "warm": True}
    if "job" in event:
        return {"ok": True, **_run_job(str(event["job"]))}
    if event.get("source") == "aws.events" and isinstance(event.get("detail"), dict):
        return {"ok": True, **_run_job(str(event["detail"].get("job", "")))}
    raise BadInput("event: not a keep-warm, job or queue event")
