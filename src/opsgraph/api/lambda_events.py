"""Non-HTTP Lambda events: keep-warm pings, scheduled jobs, queue records.

Keep-warm must stay cheap: it imports nothing heavy and touches no store. Queue records
(SQS) carry JSON bodies `{"type": "inbound_email", "tenant": T, "raw": "<RFC 822>"}`;
a record that fails is reported in `batchItemFailures`, so SQS retries only that one.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from opsgraph.errors import BadInput, OpsgraphError

log = logging.getLogger(__name__)
JOBS = ("expire_approvals",)
RECORD_TYPES = ("inbound_email",)


def is_keep_warm(event: dict[str, Any]) -> bool:
    """A warm-up ping (scheduled rule or warmup plugin)."""
    return bool(event.get("keep_warm")) or event.get("source") in (
        "keep-warm", "serverless-plugin-warmup")


def _run_job(name: str) -> dict[str, Any]:
    if name == "expire_approvals":
        from opsgraph.engine.expiry_job import expire_and_notify

        return {"job": name, "expired": expire_and_notify()}
    raise BadInput(f"job: unknown job {name!r} (known: {', '.join(JOBS)})")


def _handle_record(record: dict[str, Any]) -> dict[str, Any]:
    try:
        body = json.loads(record.get("body") or "")
    except json.JSONDecodeError as exc:
        raise BadInput(f"record body: invalid JSON ({exc.msg})") from None
    if not isinstance(body, dict) or body.get("type") not in RECORD_TYPES:
        raise BadInput(f"record body: type must be one of {', '.join(RECORD_TYPES)}")
    if not isinstance(body.get("tenant"), str) or not isinstance(body.get("raw"), str):
        raise BadInput("record body: tenant and raw must be strings")
    from opsgraph.jobs.inbound_email import ingest_email

    result = ingest_email(body["tenant"], body["raw"].encode(), source="queue record")
    return {"draft_id": result["draft_id"], "status": result["status"]}


def handle_records(records: list[Any]) -> dict[str, Any]:
    """Each queue record on its own: one bad record does not fail the batch."""
    done, failures = [], []
    for record in records:
        record = record if isinstance(record, dict) else {}
        try:
            done.append(_handle_record(record))
        except OpsgraphError as exc:
            log.warning("queue record %s: %s", record.get("messageId"), exc.message)
            failures.append({"itemIdentifier": record.get("messageId", "")})
    return {"processed": done, "batchItemFailures": failures}


def handle_event(event: dict[str, Any]) -> dict[str, Any]:
    """Route one event by its shape."""
    if is_keep_warm(event):
        return {"ok": True, "warm": True}
    if "job" in event:
        return {"ok": True, **_run_job(str(event["job"]))}
    if event.get("source") == "aws.events" and isinstance(event.get("detail"), dict):
        return {"ok": True, **_run_job(str(event["detail"].get("job", "")))}
    if isinstance(event.get("Records"), list):
        return {"ok": True, **handle_records(event["Records"])}
    raise BadInput("event: not a keep-warm, job or queue event")
