"""Deployment secrets: the MongoDB URI and the token-signing secret from AWS Secrets Manager.

A deployment names the two secrets by ARN (`OPSGRAPH_MONGODB_SECRET_ARN`,
`OPSGRAPH_TOKEN_SECRET_ARN`) instead of putting their values in its environment. Each
secret is read once per process, the first time settings are read (in Lambda: at init),
and kept; boto3 is imported only when an ARN is set. A secret holds the value itself as
its `SecretString` (the URI; the token secret).

A URI read from Secrets Manager is the cloud deployment's: the client options it needs in
Lambda (a small pool for one request per instance, bounded timeouts, TLS) are added unless
the URI names them, and a URI that turns TLS off is refused.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any, Final, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from opsgraph.errors import ConfigurationError

SECRET_ARN: Final = re.compile(
    r"arn:aws[a-z-]*:secretsmanager:(?P<region>[a-z0-9-]+):\d{12}:secret:[\w/+=.@-]+")
MONGODB_OPTIONS: Final = {
    "tls": "true",
    "maxPoolSize": "10",  # one request per instance; its parallel tasks share the pool
    "minPoolSize": "0",
    "maxIdleTimeMS": "60000",  # a frozen instance's sockets are not trusted for long
    "connectTimeoutMS": "5000",
    "socketTimeoutMS": "30000",
    "serverSelectionTimeoutMS": "5000",
    "retryWrites": "true",
}
"""pymongo URI options of the Lambda deployment (kept when the URI already names one)."""


class SecretsClient(Protocol):
    """The one call of a boto3 `secretsmanager` client that is used."""

    def get_secret_value(self, *, SecretId: str) -> Mapping[str, Any]:
        """The secret's current version."""


_lock = threading.Lock()
_values: dict[str, str] = {}


def _region(arn: str, variable: str) -> str:
    match = SECRET_ARN.fullmatch(arn)
    if match is None:
        raise ConfigurationError(f"{variable}: {arn!r} is not a Secrets Manager secret ARN "
                                 "(arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME)")
    return match["region"]


def _boto3_client(region: str) -> SecretsClient:
    import boto3  # heavy: boto3 (cold start)

    client: SecretsClient = boto3.session.Session().client("secretsmanager",
                                                           region_name=region)
    return client


def secret_value(arn: str, variable: str, client: SecretsClient | None = None) -> str:
    """The secret's `SecretString`, read once per process; `variable` names the setting in
    errors. `client`: a Secrets Manager client (default: boto3's, in the ARN's region)."""
    region = _region(arn, variable)
    with _lock:
        if arn not in _values:
            client = client or _boto3_client(region)
            try:
                reply = client.get_secret_value(SecretId=arn)
            except Exception as exc:  # any failure to read stops the start, named
                raise ConfigurationError(f"{variable}: cannot read secret {arn}: "
                                         f"{type(exc).__name__}") from exc
            value = reply.get("SecretString")
            if not isinstance(value, str) or not value.strip():
                raise ConfigurationError(f"{variable}: secret {arn} has no SecretString")
            _values[arn] = value.strip()
        return _values[arn]


def forget_secrets() -> None:
    """Forget the values read (tests)."""
    with _lock:
        _values.clear()


def deployment_mongodb_uri(uri: str, variable: str) -> str:
    """`uri` with the Lambda client options it does not name; TLS may not be turned off."""
    parts = urlsplit(uri)
    if parts.scheme not in ("mongodb", "mongodb+srv"):
        raise ConfigurationError(f"{variable}: the secret is not a mongodb:// or "
                                 "mongodb+srv:// URI")
    query = parse_qsl(parts.query, keep_blank_values=True)
    named = {key.lower(): value.lower() for key, value in query}
    if named.get("tls") == "false" or named.get("ssl") == "false":
        raise ConfigurationError(f"{variable}: the URI turns TLS off; a deployment's "
                                 "MongoDB connection must use TLS")
    missing = [(key, value) for key, value in MONGODB_OPTIONS.items()
               if key.lower() not in named and not (key == "tls" and "ssl" in named)]
    return urlunsplit(parts._replace(query=urlencode(query + missing)))
