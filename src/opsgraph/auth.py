"""Bearer tokens: HMAC-SHA256 signed claims (tenant, user, roles, channel, expiry).

Locally the signing secret is generated once and kept in `OPSGRAPH_HOME/token_secret`, so
`opsgraph token` and `opsgraph serve` agree; in the cloud set `OPSGRAPH_TOKEN_SECRET`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from pathlib import Path

from opsgraph.errors import Unauthorized
from opsgraph.principal import Principal, parse_channel, parse_roles
from opsgraph.settings import Settings, get_settings

DEFAULT_TTL_S = 30 * 24 * 3600


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


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


def issue_token(principal: Principal, ttl_s: int = DEFAULT_TTL_S) -> str:
    """A signed bearer token for `principal`."""
    claims = {
        "tenant": principal.tenant_id, "user": principal.user_id,
        "roles": sorted(r.value for r in principal.roles),
        "channel": principal.channel.value, "exp": int(time.time()) + ttl_s,
    }
    body = _b64(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    sig = _b64(hmac.new(token_secret(), body.encode(), hashlib.sha256).digest())
    return f"{body}.{sig}"


def verify_token(token: str) -> Principal:
    """The principal a token names; Unauthorized when forged, malformed or expired."""
    try:
        body, sig = token.strip().split(".")
        expected = _b64(hmac.new(token_secret(), body.encode(), hashlib.sha256).digest())
        if not hmac.compare_digest(sig, expected):
            raise Unauthorized("invalid token signature")
        claims = json.loads(_unb64(body))
    except (ValueError, json.JSONDecodeError) as exc:
        raise Unauthorized("malformed bearer token") from exc
    if not isinstance(claims, dict):
        raise Unauthorized("malformed bearer token")
    exp = claims.get("exp")
    if not isinstance(exp, int | float) or isinstance(exp, bool):
        raise Unauthorized("bearer token: exp must be a number")
    if exp < time.time():
        raise Unauthorized("bearer token expired")
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
