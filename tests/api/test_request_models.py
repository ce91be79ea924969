"""Request bodies meet their route's model in one place (`bodies.parse_body`): bytes that
are not a JSON object are a 400, an object with wrong fields one 422 listing each field."""

from __future__ import annotations

import json
from typing import Any

import pytest

from opsgraph.api.bodies import parse_body
from opsgraph.api.request_models import DecisionRequest, OperationRequest, RunRequest
from opsgraph.errors import BadInput, Unprocessable


def body(value: Any) -> bytes:
    return json.dumps(value).encode()


def test_a_valid_body_becomes_its_model() -> None:
    run = parse_body(body({"message": "When do you open?", "thread_id": "th_1"}), RunRequest)
    assert (run.message, run.thread_id) == ("When do you open?", "th_1")
    assert parse_body(b"", OperationRequest).args == {}
    decision = parse_body(body({"decision": "edit", "values": {"phone": "+44"}}),
                          DecisionRequest)
    assert decision.values == {"phone": "+44"} and decision.feedback is None


@pytest.mark.parametrize(("raw", "says"), [
    (b"[1]", "body: must be a JSON object"),
    (b'{"message": "caf\xe9"}', "not UTF-8"),
    (body({"message": "a" * 8001}), "message: 8,001 characters, the limit is 8,000"),
])
def test_what_is_not_a_json_object_or_over_the_message_cap_is_400(raw: bytes,
                                                                   says: str) -> None:
    with pytest.raises(BadInput) as caught:
        parse_body(raw, RunRequest)
    assert not isinstance(caught.value, Unprocessable) and says in caught.value.message


@pytest.mark.parametrize(("model", "value", "errors"), [
    (RunRequest, {}, [("message", "field required")]),
    (RunRequest, {"message": " \n "}, [("message", "must not be blank")]),
    (RunRequest, {"message": "hi", "thread_id": "a/b", "x": 1},
     [("thread_id", "string should match pattern '^[A-Za-z0-9_.-]{1,128}$'"),
      ("x", "extra inputs are not permitted")]),
    (DecisionRequest, {"decision": "maybe", "feedback": "f" * 2001},
     [("decision", "input should be 'approve', 'edit', 'revise' or 'reject'"),
      ("feedback", "string should have at most 2000 characters")]),
    (OperationRequest, {"args": [1]}, [("args", "input should be a valid dictionary")]),
])
def test_wrong_fields_are_one_422_naming_each(model: Any, value: dict[str, Any],
                                              errors: list[tuple[str, str]]) -> None:
    with pytest.raises(Unprocessable) as caught:
        parse_body(body(value), model)
    listed = [{"field": f, "message": m} for f, m in errors]
    assert caught.value.detail == {"errors": listed}
    assert caught.value.message == "; ".join(f"{f}: {m}" for f, m in errors)
