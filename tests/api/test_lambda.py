"""The Lambda entry point: cheap keep-warm, HTTP through mangum, no heavy imports."""

from __future__ import annotations

import json
import subprocess
import sys

from opsgraph.api.lambda_handler import handler


def test_importing_the_handler_pulls_in_nothing_heavy() -> None:
    code = ("import sys, opsgraph.api.lambda_handler; "
            "print([m for m in sys.modules if m.split('.')[0] in "
            "('langgraph', 'langchain_aws', 'langchain_core', 'boto3', 'onnxruntime')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_keep_warm_answers_without_a_store() -> None:
    assert handler({"keep_warm": True}, None) == {"ok": True, "warm": True}


def test_unknown_events_get_a_clear_error() -> None:
    reply = handler({"what": "is this"}, None)
    assert reply["ok"] is False and reply["error"]["code"] == "bad_input"
    assert "keep-warm, job or queue" in reply["error"]["message"]


def test_http_events_go_through_the_app() -> None:
    event = {
        "version": "2.0", "routeKey": "$default", "rawPath": "/health", "rawQueryString": "",
        "headers": {"host": "example.lambda-url.aws"},
        "requestContext": {"http": {"method": "GET", "path": "/health", "sourceIp": "1.2.3.4",
                                    "protocol": "HTTP/1.1", "userAgent": "test"},
                           "domainName": "example.lambda-url.aws", "stage": "$default"},
        "isBase64Encoded": False,
    }
    reply = handler(event, None)
    assert reply["statusCode"] == 200 and json.loads(reply["body"]) == {"ok": True}
