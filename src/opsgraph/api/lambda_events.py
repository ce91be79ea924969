"""Non-HTTP Lambda events: keep-warm pings, scheduled jobs, queue records.

Keep-warm must stay cheap: it imports nothing heavy and touches no store. Queue records
(SQS) carry JSON bodies `{"type": "inbound_email", "tenant": T, "raw": "<RFC 822>"}`;
a record that fails, or whose run failed, is reported in `batchItemFailures`, so SQS
retries only that one (ingesting is idempotent: a message that left a draft runs once).

Events from AWS are trusted to name any tenant: those the mangum handler receives, and
those the Lambda Web Adapter passes through to `POST /events` (the streaming entry marks
them `INTERNAL_EVENT` in the ASGI scope, see `opsgraph.api.lambda_web`). Over HTTP the
caller is an admin of one tenant (`caller_tenant`): a batch naming another tenant is
refused whole, before any record runs.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from opsgraph.api.bodies import parse_json
from opsgraph.errors import BadInput, Forbidden, OpsgraphError
from opsgraph.jobs.inbound_email import ingest_email
from opsgraph.jobs.scheduled import JOBS, job_name, run_job

log = logging.getLogger(__name__)
__all__ = ["JOBS", "handle_event", "handle_records", "is_internal_event", "is_keep_warm"]
RECORD_TYPES = ("inbound_email",)
INTERNAL_EVENT = "opsgraph.internal_event"
"""ASGI scope key: True on a request that is an AWS event the Lambda Web Adapter passed
through (set by the streaming entry only, never from anything a caller sends)."""


def is_internal_event(scope: Mapping[str, Any]) -> bool:
    """Whether the request is an AWS event passed through by the adapter (trusted)."""
    return scope.get(INTERNAL_EVENT) is True


def is_keep_warm(event: dict[str, Any]) -> bool:
    """A warm-up ping (scheduled rule or warmup plugin)."""
    return bool(event.get("keep_warm")) or event.get("source") in (
        "keep-warm", "serverless-plugin-warmup")


def _run_job(name: str, caller_tenant: str | None) -> dict[str, Any]:
    """A scheduled job (`opsgraph.jobs.scheduled`): the nightly ones over every tenant for
    AWS's events and over the caller's own tenant over HTTP; expire_approvals sweeps every
    tenant either way (as it always has)."""
    per_tenant = job_name(name) != "expire_approvals"
    return run_job(name, tenant=caller_tenant if per_tenant else None)


def _record_body(record: dict[str, Any]) -> dict[str, Any]:
    body = parse_json(str(record.get("body") or ""), "record body")
    if not isinstance(body, dict) or body.get("type") not in RECORD_TYPES:
        raise BadInput(f"record body: type must be one of {', '.join(RECORD_TYPES)}")
    if not isinstance(body.get("tenant"), str) or not isinstance(body.get("raw"), str):
        raise BadInput("record body: tenant and raw must be strings")
    return body


class RecordRunFailed(OpsgraphError):
    """The record was read, but its run failed: SQS should deliver it again."""

    code = "record_run_failed"


def _handle_record(record: dict[str, Any]) -> dict[str, Any]:
    body = _record_body(record)

    result = ingest_email(body["tenant"], body["raw"].encode(), source="queue record")
    if result["status"] == "failed":
        errors = "; ".join(str(e.get("message", "")) for e in result.get("errors") or [])
        raise RecordRunFailed(f"run failed on thread {result['thread_id']}: {errors}")
    return {"draft_id": result["draft_id"], "status": result["status"]}


def _own_tenant_only(records: list[Any], caller_tenant: str) -> None:
    """Forbidden when a record names a tenant other than the caller's (a record whose body
    cannot be read is left to fail on its own)."""
    for record in records:
        record = record if isinstance(record, dict) else {}
        try:
            tenant = _record_body(record)["tenant"].strip()
        except OpsgraphError:
            continue
        if tenant != caller_tenant:
            raise Forbidden(f"record {record.get('messageId', '')!r} names tenant {tenant!r}: "
                            "a queue record posted over HTTP may name only your own tenant")


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
        except Exception:  # a fault in one record: logged in full, retried by SQS
            log.exception("queue record %s failed", record.get("messageId"))
            failures.append({"itemIdentifier": record.get("messageId", "")})
    return {"processed": done, "batchItemFailures": failures}


def handle_event(event: dict[str, Any], caller_tenant: str | None = None) -> dict[str, Any]:
    """Route one event by its shape. `caller_tenant`: the HTTP caller's tenant (None for
    events from AWS, which may name any tenant)."""
    if is_keep_warm(event):
        return {"ok": True, "warm": True}
    if "job" in event:
        return {"ok": True, **_run_job(str(event["job"]), caller_tenant)}
    if event.get("source") == "aws.events" and isinstance(event.get("detail"), dict):
        return {"ok": True, **_run_job(str(event["detail"].get("job", "")), caller_tenant)}
    if isinstance(event.get("Records"), list):
        if caller_tenant is not None:
            _own_tenant_only(event["Records"], caller_tenant)
        return {"ok": True, **handle_records(event["Records"])}
    raise BadInput("event: not a keep-warm, job or queue event")
