"""Reading a caller's JSON: whatever the bytes, the answer is a value or a BadInput that
says what is wrong, never another exception (a 500 over HTTP)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opsgraph.api.bodies import MAX_DEPTH, parse_json, parse_json_object
from opsgraph.errors import BadInput

_scalars = st.none() | st.booleans() | st.integers(-(2**63) + 1, 2**63 - 1) | st.floats(
    allow_nan=False, allow_infinity=False) | st.text()
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                       max_leaves=20)


@given(st.binary(max_size=200))
def test_any_bytes_are_a_value_or_bad_input(raw: bytes) -> None:
    try:
        parse_json(raw)
    except BadInput as exc:
        assert exc.message.startswith("body")


@given(_values)
def test_json_a_client_sends_comes_back_unchanged(value: Any) -> None:
    assert parse_json(json.dumps(value).encode()) == value
    assert parse_json(json.dumps(value, ensure_ascii=False).encode()) == value


@pytest.mark.parametrize(("raw", "says"), [
    (b'{"a": "caf\xe9"}', "not UTF-8 (byte 0xe9 at position 10)"),
    (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), f"deeper than {MAX_DEPTH}"),
    (b"[" * 100_000, "deeper than"),
    (b'{"n": ' + b"7" * 5000 + b"}", "out of range"),
    (b'{"n": 9223372036854775808}', "out of range"),
    (b'{"n": -1e999}', "out of range"),
    (b'{"n": Infinity}', "Infinity is not a JSON number"),
    (b'{"message": "x \\udc00"}', "body.message: contains a lone surrogate"),
    (b'{"\\ud800": 1}', "a key contains a lone surrogate"),
    (b'{"a": [1, {"b": ["\\ud83d"]}]}', "body.a[1].b[0]"),
    (b'{"a": 1', "invalid JSON"),
])
def test_what_is_wrong_is_named(raw: bytes, says: str) -> None:
    with pytest.raises(BadInput) as caught:
        parse_json(raw)
    assert says in caught.value.message


def test_a_pair_of_surrogates_is_one_character_and_fine() -> None:
    assert parse_json(b'{"m": "\\ud83d\\ude00"}') == {"m": "\U0001f600"}


def test_an_object_is_required_and_an_empty_body_is_empty() -> None:
    assert parse_json_object(b"") == {}
    with pytest.raises(BadInput, match="record body: must be a JSON object"):
        parse_json_object(b"[1]", "record body")
