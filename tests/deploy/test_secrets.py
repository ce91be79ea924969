"""Deployment secrets from Secrets Manager. No AWS here: the resolution is tested with a
client object injected at the boundary (the one call boto3's client makes)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from opsgraph.errors import ConfigurationError
from opsgraph.secrets import deployment_mongodb_uri, forget_secrets, secret_value
from opsgraph.settings import load_settings

URI_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:opsgraph/mongodb-AbCdEf"
TOKEN_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:opsgraph/token-GhIjKl"


class FakeSecrets:
    """A Secrets Manager client answering from a dict, counting calls."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = dict(values)
        self.calls: list[str] = []

    def get_secret_value(self, *, SecretId: str) -> Mapping[str, Any]:
        self.calls.append(SecretId)
        if SecretId not in self.values:
            raise LookupError(f"ResourceNotFoundException: {SecretId}")
        return {"ARN": SecretId, "SecretString": self.values[SecretId]}


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_secrets()
    yield
    forget_secrets()


def test_a_secret_is_read_once_per_process() -> None:
    client = FakeSecrets({TOKEN_ARN: " s3cret \n"})
    assert secret_value(TOKEN_ARN, "OPSGRAPH_TOKEN_SECRET_ARN", client) == "s3cret"
    assert secret_value(TOKEN_ARN, "OPSGRAPH_TOKEN_SECRET_ARN", client) == "s3cret"
    assert client.calls == [TOKEN_ARN]


@pytest.mark.parametrize(("arn", "values", "words"), [
    ("not-an-arn", {}, "not a Secrets Manager secret ARN"),
    (TOKEN_ARN, {}, "cannot read secret"),
    (TOKEN_ARN, {TOKEN_ARN: "  "}, "has no SecretString"),
])
def test_unreadable_secrets_stop_the_start_with_the_setting_named(
        arn: str, values: dict[str, str], words: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        secret_value(arn, "OPSGRAPH_TOKEN_SECRET_ARN", FakeSecrets(values))
    assert caught.value.message.startswith("OPSGRAPH_TOKEN_SECRET_ARN: ")
    assert words in caught.value.message


def test_settings_take_both_values_from_their_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    client = FakeSecrets({URI_ARN: "mongodb+srv://app:pw@cluster0.example.net/?appName=og",
                          TOKEN_ARN: "signing-key"})
    secret_value(URI_ARN, "OPSGRAPH_MONGODB_SECRET_ARN", client)  # init read them once
    secret_value(TOKEN_ARN, "OPSGRAPH_TOKEN_SECRET_ARN", client)
    monkeypatch.delenv("OPSGRAPH_TOKEN_SECRET", raising=False)
    monkeypatch.setenv("OPSGRAPH_MONGODB_SECRET_ARN", URI_ARN)
    monkeypatch.setenv("OPSGRAPH_TOKEN_SECRET_ARN", TOKEN_ARN)
    settings = load_settings()
    assert settings.token_secret == "signing-key"
    assert settings.mongodb_uri is not None
    options = parse_qs(urlsplit(settings.mongodb_uri).query)
    assert options["appName"] == ["og"] and options["tls"] == ["true"]
    assert options["maxPoolSize"] == ["10"]
    assert len(client.calls) == 2  # settings read again, secrets not


def test_a_plain_value_and_an_arn_together_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPSGRAPH_TOKEN_SECRET_ARN", TOKEN_ARN)  # conftest sets the plain one
    with pytest.raises(ConfigurationError, match="OPSGRAPH_TOKEN_SECRET and "
                                                 "OPSGRAPH_TOKEN_SECRET_ARN are both set"):
        load_settings()


def test_the_deployment_uri_keeps_what_it_names_and_must_use_tls() -> None:
    uri = deployment_mongodb_uri("mongodb://h1,h2/?replicaSet=rs0&maxPoolSize=50&ssl=true",
                                 "X")
    options = parse_qs(urlsplit(uri).query)
    assert options["maxPoolSize"] == ["50"] and options["replicaSet"] == ["rs0"]
    assert "tls" not in options and options["socketTimeoutMS"] == ["30000"]
    with pytest.raises(ConfigurationError, match="TLS off"):
        deployment_mongodb_uri("mongodb+srv://c.example.net/?tls=false", "X")
    with pytest.raises(ConfigurationError, match="not a mongodb"):
        deployment_mongodb_uri("postgres://c.example.net/", "X")
