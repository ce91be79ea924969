"""Lambda event fixtures as AWS sends them (tests/deploy/events/*.json): function-URL and
HTTP API v2 payloads, an API Gateway REST (v1) payload, schedule inputs (the template's), an
EventBridge scheduled event and an SQS batch. Placeholders are filled per test."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

EVENTS = Path(__file__).resolve().parent / "events"
RAW_EMAIL = ("From: Emily Chen <emily.chen@example.org>\r\nSubject: hours\r\n"
             "Message-ID: <q-{tenant}@example.org>\r\n\r\nWhen do you open?\r\n")
KNOWLEDGE_SCRIPT: dict[str, Any] = {
    "plan": {"tasks": [{"id": "t1", "domain": "knowledge", "operation": "search",
                        "instruction": "Opening hours", "depends_on": []}]},
    "turns": {"t1": [{"tool_calls": [{"name": "knowledge_search",
                                       "args": {"query": "opening hours"}}]},
                     {"content": "6am."}]},
    "synthesis": "We open at 6am.",
}
"""The scripted model of an inbound email's run: the knowledge agent reads, then answers."""


def event(name: str) -> dict[str, Any]:
    """The fixture `name` (without .json), a fresh copy."""
    data: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text(encoding="utf-8"))
    return copy.deepcopy(data)


def with_token(payload: dict[str, Any], token: str) -> dict[str, Any]:
    """An HTTP payload whose `Bearer TOKEN` placeholder carries `token`."""
    headers = payload["headers"]
    headers["authorization"] = headers["authorization"].replace("TOKEN", token)
    return payload


def sqs_batch(tenant: str) -> dict[str, Any]:
    """The SQS batch: an inbound email for `tenant`, then a record that is not JSON."""
    payload = event("sqs_inbound_email")
    body = {"type": "inbound_email", "tenant": tenant, "raw": RAW_EMAIL.format(tenant=tenant)}
    payload["Records"][0]["body"] = json.dumps(body)
    return payload


def message_ids(payload: dict[str, Any]) -> list[str]:
    """The batch's message ids, in order."""
    return [record["messageId"] for record in payload["Records"]]
