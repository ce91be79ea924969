"""Bearer tokens are JWTs: round trip, rotation by `kid`, forgery, time claims (finite,
checked with a small leeway) and malformed claims are all 401, never another error."""

from __future__ import annotations

import time
from collections.abc import Callable

import jwt
import pytest

from opsgraph.auth import LEEWAY_S, issue_token, key_id, token_secret, verify_token
from opsgraph.errors import Unauthorized
from opsgraph.principal import Channel, Principal, Role
from opsgraph.settings import get_settings


def signed(claims: dict[str, object], secret: bytes | None = None,
           algorithm: str = "HS256") -> str:
    key = secret or token_secret()
    return jwt.encode(claims, key, algorithm=algorithm, headers={"kid": key_id(key)})


def good_claims(**changes: object) -> dict[str, object]:
    now = int(time.time())
    return {"tenant": "demo", "user": "u", "roles": ["manager"], "iat": now,
            "exp": now + 600, **changes}


def test_round_trip_is_a_hs256_jwt_with_a_kid() -> None:
    who = Principal("demo", "alex", frozenset({Role.MANAGER}), Channel.API)
    token = issue_token(who)
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "HS256" and header["kid"] == key_id(token_secret())
    assert verify_token(token) == who


def test_a_rotated_secret_still_verifies_its_tokens_by_kid(
        monkeypatch: pytest.MonkeyPatch) -> None:
    who = Principal("demo", "alex", frozenset({Role.STAFF}))
    old = issue_token(who)
    monkeypatch.setenv("OPSGRAPH_TOKEN_SECRET", "the-new-secret-of-thirty-two-byte")
    get_settings.cache_clear()
    with pytest.raises(Unauthorized, match="unknown key"):
        verify_token(old)
    monkeypatch.setenv("OPSGRAPH_TOKEN_PREVIOUS_SECRETS", "test-secret-of-thirty-two-bytes!")
    get_settings.cache_clear()
    assert verify_token(old) == who
    assert verify_token(issue_token(who)) == who


# Claims are made when the test runs, not when it is collected: under xdist a test may run
# minutes after collection, and "valid in 5 minutes" would have become valid by then.
Claims = Callable[[int], dict[str, object]]


@pytest.mark.parametrize("claims, message", [
    (lambda now: good_claims(exp="soon"), "exp"),
    (lambda now: good_claims(exp=float("inf")), "finite"),
    (lambda now: good_claims(exp=float("nan")), "finite"),
    (lambda now: good_claims(nbf=float("inf")), "finite"),
    (lambda now: good_claims(roles="manager"), "roles"),
    (lambda now: good_claims(roles=["wizard"]), "wizard"),
    (lambda now: good_claims(exp=1), "expired"),
    (lambda now: good_claims(exp=now - 2 * LEEWAY_S), "expired"),
    (lambda now: good_claims(nbf=now + 10 * LEEWAY_S), "not valid yet"),
    (lambda now: good_claims(iat=now + 10 * LEEWAY_S), "not valid yet"),
    (lambda now: {"user": "u", "roles": ["manager"], "iat": 0, "exp": 2**40}, "claim"),
    (lambda now: {"tenant": "demo", "user": "u", "roles": ["manager"], "iat": 0}, "claim"),
])
def test_bad_claims_are_unauthorized(claims: Claims, message: str) -> None:
    with pytest.raises(Unauthorized, match=message):
        verify_token(signed(claims(int(time.time()))))


def test_a_clock_a_little_behind_is_tolerated() -> None:
    now = int(time.time())
    assert verify_token(signed(good_claims(exp=now - LEEWAY_S // 2))).user_id == "u"


def test_forged_malformed_and_foreign_tokens_are_unauthorized() -> None:
    good = issue_token(Principal("demo", "u", frozenset({Role.STAFF})))
    with pytest.raises(Unauthorized, match="signature"):
        verify_token(good[:-2] + ("AA" if not good.endswith("AA") else "BB"))
    with pytest.raises(Unauthorized):  # another algorithm than the configured one
        verify_token(signed(good_claims(), algorithm="HS512"))
    unsigned = jwt.encode(good_claims(), None, algorithm="none",
                          headers={"kid": key_id(token_secret())})
    with pytest.raises(Unauthorized):
        verify_token(unsigned)
    for junk in ("", "abc", "a.b.c", "a.b", "Zm9v.YmFy", "ä.ö.ü", "\u00ff" * 40):
        with pytest.raises(Unauthorized):
            verify_token(junk)
