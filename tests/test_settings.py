"""Settings: every knob read once, typed; a malformed value names its variable."""

from __future__ import annotations

import pytest

from opsgraph.errors import ConfigurationError
from opsgraph.settings import cors_origins, load_settings


def test_defaults() -> None:
    settings = load_settings()
    assert (settings.run_model_calls, settings.model_concurrency) == (60, 4)
    assert (settings.apply_lease_s, settings.thread_lease_s) == (30.0, 30.0)
    assert settings.agents_dir.name == "agents" and settings.agents_dir.is_dir()


@pytest.mark.parametrize("name", ["OPSGRAPH_APPLY_LEASE_S", "OPSGRAPH_THREAD_LEASE_S",
                                  "OPSGRAPH_RUN_MODEL_CALLS", "OPSGRAPH_MODEL_CONCURRENCY"])
@pytest.mark.parametrize("value", ["soon", "0", "-3"])
def test_a_malformed_number_names_its_variable(name: str, value: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigurationError, match=name):
        load_settings()


def test_the_models_tenants_may_choose_are_a_list(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().allowed_models == ()  # unset: the tier models (models.overrides)
    monkeypatch.setenv("OPSGRAPH_ALLOWED_MODELS", " bedrock:a, openai:b ,")
    assert load_settings().allowed_models == ("bedrock:a", "openai:b")


def test_token_and_limit_knobs(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings()
    assert settings.token_algorithm == "HS256" and settings.token_previous_secrets == ()
    assert (settings.tenant_runs, settings.user_runs) == (8, 2)
    monkeypatch.setenv("OPSGRAPH_TOKEN_PREVIOUS_SECRETS", "old-1, old-2,")
    monkeypatch.setenv("OPSGRAPH_TENANT_DAILY_MODEL_CALLS", "300")
    settings = load_settings()
    assert settings.token_previous_secrets == ("old-1", "old-2")
    assert settings.tenant_daily_model_calls == 300
    monkeypatch.setenv("OPSGRAPH_TOKEN_ALGORITHM", "none")
    with pytest.raises(ConfigurationError, match="OPSGRAPH_TOKEN_ALGORITHM"):
        load_settings()


def test_cors_origins_are_origins_or_none() -> None:
    assert cors_origins({}) == ()
    assert cors_origins({"OPSGRAPH_CORS_ORIGINS": "http://localhost:3000/, https://x.example"}
                        ) == ("http://localhost:3000", "https://x.example")
    for bad in ("localhost:3000", "https://x.example/path", "ftp://x"):
        with pytest.raises(ConfigurationError, match="OPSGRAPH_CORS_ORIGINS"):
            cors_origins({"OPSGRAPH_CORS_ORIGINS": bad})


def test_traces_are_off_locally_on_with_xray_on_lambda(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().traces == "off"
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "opsgraph-api")
    assert load_settings().traces == "xray"
    monkeypatch.setenv("OPSGRAPH_TRACES", "Off")
    assert load_settings().traces == "off"
    monkeypatch.setenv("OPSGRAPH_TRACES", "jaeger")
    with pytest.raises(ConfigurationError, match="OPSGRAPH_TRACES: must be one of off, xray"):
        load_settings()
