"""Bearer tokens: round trip, forgery, expiry and malformed claims are all 401."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from opsgraph.auth import _b64, issue_token, token_secret, verify_token
from opsgraph.errors import Unauthorized
from opsgraph.principal import Channel, Principal, Role


def signed(claims: dict[str, object]) -> str:
    body = _b64(json.dumps(claims).encode())
    return body + "." + _b64(hmac.new(token_secret(), body.encode(), hashlib.sha256).digest())


def test_round_trip() -> None:
    who = Principal("demo", "alex", frozenset({Role.MANAGER}), Channel.API)
    assert verify_token(issue_token(who)) == who


@pytest.mark.parametrize("claims, message", [
    ({"tenant": "demo", "user": "u", "roles": ["manager"], "exp": "soon"}, "exp"),
    ({"tenant": "demo", "user": "u", "roles": "manager", "exp": 2**40}, "roles"),
    ({"tenant": "demo", "user": "u", "roles": ["wizard"], "exp": 2**40}, "wizard"),
    ({"tenant": "demo", "user": "u", "roles": ["manager"], "exp": 1}, "expired"),
    ({"user": "u", "roles": ["manager"], "exp": 2**40}, "claim"),
])
def test_bad_claims_are_unauthorized(claims: dict[str, object], message: str) -> None:
    with pytest.raises(Unauthorized, match=message):
        verify_token(signed(claims))


def test_forged_and_malformed_tokens_are_unauthorized() -> None:
    good = issue_token(Principal("demo", "u", frozenset({Role.STAFF})))
    with pytest.raises(Unauthorized, match="signature"):
        verify_token(good[:-2] + ("AA" if not good.endswith("AA") else "BB"))
    for junk in ("", "abc", "a.b.c"):
        with pytest.raises(Unauthorized):
            verify_token(junk)
