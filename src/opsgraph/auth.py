"""Bearer tokens: JWTs (PyJWT) naming the tenant, user, roles and channel.

A token is signed with `OPSGRAPH_TOKEN_ALGORITHM` (HS256 by default) and carries a `kid`
header derived from the secret that signed it. Verification picks the key by `kid` among
the current secret and `OPSGRAPH_TOKEN_PREVIOUS_SECRETS`, so a secret is rotated by
moving it to the previous list: tokens it signed keep working until they expire. `exp`,
`iat` and `nbf` are checked with a small leeway for clock skew; a time claim that is not a
finite number is refused before any arithmetic on it.

Locally the signing secret is generated once and kept in `OPSGRAPH_HOME/token_secret`, so
`opsgraph token` and `opsgraph serve` agree; in the cloud set `OPSGRAPH_TOKEN_SECRET`.
"""

from __future__ import annotations

import hashlib
import math
import os
import secrets
import time
from pathlib import Path
from typing import Any

import jwt

from opsgraph.errors import Unauthorized
from opsgraph.principal import Principal, parse_channel, parse_roles
from opsgraph.settings import Settings, get_settings

DEFAULT_TTL_S = 30 * 24 * 3600
LEEWAY_S = 30
"""Clock skew tolerated on `exp`, `iat` and `nbf`."""
_REQUIRED = ("exp", "iat", "tenant", "user", "roles")
_TIME_CLAIMS = ("exp", "iat", "nbf")


def token_secret(settings: Settings | None = None) -> bytes:
    """The signing secret: the env var, else a local one created once (mode 0600)."""
    settings = settings or get_settings()
    if settings.token_secret:
        return settings.token_secret.encode()
    path: Path = settings.home / "token_secret"
    if not path.exists():
        settings.home.mkdir(parents=True, exist_ok=True)
        fd = os.open(path.with_suffix(".tmp"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32))
        # Atomic publish; if another process won the race, its secret stands.
        if not path.exists():
            path.with_suffix(".tmp").replace(path)
    return path.read_text().strip().encode()


def key_id(secret: bytes) -> str:
    """The `kid` of a secret: a short digest that names it without revealing it."""
    return hashlib.sha256(b"opsgraph-kid:" + secret).hexdigest()[:16]


def verification_keys(settings: Settings | None = None) -> dict[str, bytes]:
    """Every key a token may be signed with, by `kid`: the current secret and the previous."""
    settings = settings or get_settings()
    keys = {key_id(s.encode()): s.encode() for s in settings.token_previous_secrets}
    current = token_secret(settings)
    keys[key_id(current)] = current
    return keys


def issue_token(principal: Principal, ttl_s: int = DEFAULT_TTL_S) -> str:
    """A signed bearer token for `principal`, valid for `ttl_s` seconds."""
    settings = get_settings()
    secret = token_secret(settings)
    now = int(time.time())
    claims = {
        "tenant": principal.tenant_id, "user": principal.user_id,
        "roles": sorted(r.value for r in principal.roles),
        "channel": principal.channel.value, "iat": now, "exp": now + ttl_s,
    }
    return jwt.encode(claims, secret, algorithm=settings.token_algorithm,
                      headers={"kid": key_id(secret)})


def _claims(token: str) -> dict[str, Any]:
    """The verified claims; Unauthorized for anything else (never another exception)."""
    settings = get_settings()
    algorithms = [settings.token_algorithm]
    try:
        header = jwt.get_unverified_header(token)
        key = verification_keys(settings).get(str(header.get("kid")))
        if key is None:
            raise Unauthorized("bearer token: signed with an unknown key (kid)")
        # Signature first; the time claims are checked to be finite before PyJWT compares
        # them (int(inf) would raise OverflowError inside the library).
        signed: dict[str, Any] = jwt.decode(token, key, algorithms=algorithms, options={
            "verify_exp": False, "verify_iat": False, "verify_nbf": False})
        for name in _TIME_CLAIMS:
            value = signed.get(name)
            if name in signed and (not isinstance(value, int | float)
                                   or isinstance(value, bool) or not math.isfinite(value)):
                raise Unauthorized(f"bearer token: {name} must be a finite number")
        claims: dict[str, Any] = jwt.decode(token, key, algorithms=algorithms,
                                            leeway=LEEWAY_S,
                                            options={"require": list(_REQUIRED)})
    except jwt.ExpiredSignatureError:
        raise Unauthorized("bearer token expired") from None
    except jwt.ImmatureSignatureError:
        raise Unauthorized("bearer token not valid yet (iat or nbf in the future)") from None
    except jwt.InvalidSignatureError:
        raise Unauthorized("invalid token signature") from None
    except jwt.MissingRequiredClaimError as exc:
        raise Unauthorized(f"bearer token is missing a claim ({exc.claim})") from None
    except jwt.InvalidTokenError as exc:
        raise Unauthorized(f"malformed bearer token ({exc})") from None
    except (ValueError, TypeError, OverflowError, UnicodeError):
        raise Unauthorized("malformed bearer token") from None
    return claims


def verify_token(token: str) -> Principal:
    """The principal a token names; Unauthorized when forged, malformed or expired."""
    claims = _claims(token.strip())
    if not isinstance(claims.get("roles"), list):
        raise Unauthorized("bearer token: roles must be a list")
    try:
        return Principal(
            tenant_id=str(claims["tenant"]), user_id=str(claims["user"]),
            roles=parse_roles(claims["roles"]),
            channel=parse_channel(str(claims.get("channel", "dashboard"))),
        )
    except (KeyError, TypeError) as exc:
        raise Unauthorized("bearer token is missing a claim") from exc
    except Exception as exc:  # unknown role/channel in a token is an auth error, not a 400
        raise Unauthorized(f"bearer token: {exc}") from exc
