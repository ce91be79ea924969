"""Limits of the HTTP surface (docs/reference.md): request bodies over 1 MiB are 413; a
`message` over 8,000 characters is 400 before any model call; runs in flight per tenant and
per user, and a tenant's model calls per UTC day, are 429 with `Retry-After`.

Runs in flight are counted in the store, across every process on it
(`OPSGRAPH_TENANT_RUNS`, `OPSGRAPH_USER_RUNS`; `store.run_slots`): a slot is taken before
the run starts and given back when its event stream ends, whatever ends it; a dead
process's slots lapse. The daily budget (`OPSGRAPH_TENANT_DAILY_MODEL_CALLS`) is counted
in the store too, one document per tenant and UTC day, so every process sees the same
figure; a run that starts under the budget finishes even if it ends above it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from opsgraph.api.error_responses import error_response
from opsgraph.api.lambda_events import INTERNAL_EVENT
from opsgraph.api.numbers import ascii_number
from opsgraph.errors import BadInput, PayloadTooLarge, TooManyRequests
from opsgraph.principal import Principal
from opsgraph.settings import get_settings
from opsgraph.store.run_slots import RunSlots
from opsgraph.store.scope import TenantScope

if TYPE_CHECKING:
    from opsgraph.engine.events import Event

log = logging.getLogger(__name__)
MAX_BODY_BYTES = 1 << 20
LAMBDA_PAYLOAD_BYTES = 6 * (1 << 20)
"""What Lambda itself accepts in one synchronous invocation: the bound of an AWS event."""
MAX_MESSAGE_CHARS = 8_000
MODEL_BUDGET = "model_budget"
"""Collection: `{_id: "<tenant>:<YYYY-MM-DD>", tenant_id, day, model_calls}`."""


def check_message(message: str) -> None:
    """BadInput when a run's message is over the cap (checked before any model call)."""
    if len(message) > MAX_MESSAGE_CHARS:
        raise BadInput(f"message: {len(message):,} characters, the limit is "
                       f"{MAX_MESSAGE_CHARS:,}")


class BodyCap:
    """ASGI middleware: a body over `max_bytes` is 413, whether declared or streamed."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    @staticmethod
    def _too_large(cap: int) -> PayloadTooLarge:
        return PayloadTooLarge(f"request body over {cap:,} bytes")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # AWS's own events (an SQS batch of e-mails) are bounded by Lambda's payload limit,
        # not by the cap on what a caller may send.
        cap = LAMBDA_PAYLOAD_BYTES if scope.get(INTERNAL_EVENT) else self.max_bytes
        declared = dict(scope["headers"]).get(b"content-length", b"").decode("latin-1")
        size = ascii_number(declared)
        if declared.strip() and (size is None or size > cap):
            error = self._too_large(cap) if size is not None else BadInput(
                "content-length: must be a number of bytes (ASCII digits)")
            await error_response(error)(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:
                    raise self._too_large(cap)  # the route's handler answers it as JSON
            return message

        await self.app(scope, counted, send)


RUN_SLOTS = RunSlots()
"""The run slots this process holds (taken in the store)."""


def _today() -> tuple[str, int]:
    """Today's UTC date and the seconds until it ends."""
    now = datetime.now(UTC)
    midnight = datetime(now.year, now.month, now.day, tzinfo=UTC) + timedelta(days=1)
    return now.date().isoformat(), max(1, int((midnight - now).total_seconds()) + 1)


def check_budget(principal: Principal) -> None:
    """TooManyRequests when the tenant has spent today's model calls."""
    budget = get_settings().tenant_daily_model_calls
    day, left_s = _today()
    scope = TenantScope.of(principal)
    doc = scope[MODEL_BUDGET].find_one({"_id": f"{principal.tenant_id}:{day}"})
    spent = int(doc.get("model_calls", 0)) if doc else 0
    if spent >= budget:
        raise TooManyRequests(f"tenant {principal.tenant_id!r} has used its {budget:,} model "
                              "calls for today (UTC)", retry_after_s=left_s, limit="budget")


def record_model_calls(principal: Principal, calls: int) -> None:
    """Add a run's model calls to the tenant's count for today."""
    if calls <= 0:
        return

    day, _ = _today()
    TenantScope.of(principal)[MODEL_BUDGET].update_one(
        {"_id": f"{principal.tenant_id}:{day}"},
        {"$inc": {"model_calls": calls}, "$setOnInsert": {"day": day}}, upsert=True)


def metered(events: Iterator[Event], principal: Principal, *,
            slot: bool) -> Iterator[Event]:
    """`events`, counting the run's model calls toward the budget and (with `slot`) giving
    the caller's run slot back when the stream ends, however it ends. Both happen before
    `run_finished` goes out, so a caller who sends the next run on seeing it finds the
    place free and the calls counted."""
    holding = slot
    try:
        for event in events:
            if event.event == "run_finished":
                usage = event.data.get("usage") or {}
                try:
                    record_model_calls(principal, int(usage.get("model_calls", 0)))
                except Exception:  # counting must not fail a run that did its work
                    log.exception("counting model calls of tenant %s", principal.tenant_id)
                if holding:
                    holding = False
                    RUN_SLOTS.give_back(principal)
            yield event
    finally:
        if holding:
            RUN_SLOTS.give_back(principal)
