"""The models a tenant may choose per agent (issue 8, finding 2) on the real store: only
the deployment's list, compared as text (a file named by a spec is never opened), each
able to run here; a stored choice the deployment no longer lists is not in force."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from opsgraph.errors import ConfigurationError, Unprocessable
from opsgraph.models.overrides import (
    allowed_models,
    get_overrides,
    model_settings,
    resolve_model_spec,
    set_overrides,
)
from opsgraph.settings import get_settings
from opsgraph.store.scope import TenantScope

AGENTS = {"members.lookup", "events.list"}


@pytest.fixture
def scope(db: Any) -> TenantScope:
    return TenantScope(db, "demo")


def allow(monkeypatch: pytest.MonkeyPatch, *specs: str) -> None:
    monkeypatch.setenv("OPSGRAPH_ALLOWED_MODELS", ",".join(specs))
    get_settings.cache_clear()


def test_unset_the_list_is_the_tier_models(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPSGRAPH_MODEL", "bedrock:big")
    monkeypatch.setenv("OPSGRAPH_LIGHT_MODEL", " Bedrock:small ")
    get_settings.cache_clear()
    assert [str(m.spec) for m in allowed_models()] == ["bedrock:big", "bedrock:small"]


@pytest.mark.parametrize(("variable", "value"), [("OPSGRAPH_ALLOWED_MODELS", "bedrock:x,gpt4"),
                                                 ("OPSGRAPH_MODEL", "nowhere")])
def test_a_malformed_list_names_its_variable(monkeypatch: pytest.MonkeyPatch, variable: str,
                                             value: str) -> None:
    monkeypatch.setenv(variable, value)
    get_settings.cache_clear()
    with pytest.raises(ConfigurationError, match=variable):
        allowed_models()


def test_only_listed_runnable_choices_are_stored(scope: TenantScope, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    listed = tmp_path / "listed.yaml"
    listed.write_text("synthesis: ok\n")
    unlisted = tmp_path / "unlisted.yaml"
    unlisted.write_text("synthesis: ok\n")
    allow(monkeypatch, f"scripted:{listed}", "openai:m", f"scripted:{tmp_path}/gone.yaml")
    assert model_settings(scope) == {"models": {}, "allowed": [
        {"spec": f"scripted:{listed}", "provider": "scripted", "model": str(listed),
         "name": "scripted model (listed.yaml)"}]}

    refusals = {}
    for spec in (f"scripted:{unlisted}", "scripted:/etc/passwd", "scripted:/nowhere.yaml", 7):
        with pytest.raises(Unprocessable) as caught:
            set_overrides(scope, {"members.lookup": spec}, AGENTS, "admin")
        refusals[str(spec)] = caught.value.message
    assert set(refusals.values()) == {
        f"models.members.lookup: not one of the models this deployment allows (allowed: "
        f"scripted:{listed})"}
    with pytest.raises(Unprocessable, match="openai:m cannot run here: OPENAI_BASE_URL"):
        set_overrides(scope, {"events.list": "openai:m"}, AGENTS, "admin")
    with pytest.raises(Unprocessable, match=r"gone.yaml cannot run here: its file .* does not"):
        set_overrides(scope, {"events.list": f"scripted:{tmp_path}/gone.yaml"}, AGENTS, "a")
    with pytest.raises(Unprocessable) as caught:
        set_overrides(scope, {"members.delete": f"scripted:{listed}", "events.list": "x"},
                      AGENTS, "admin")
    assert [e["field"] for e in caught.value.detail["errors"]] == ["models.members.delete",
                                                                   "models.events.list"]
    assert get_overrides(scope) == {}

    assert set_overrides(scope, {"members.lookup": f" scripted:{listed}"}, AGENTS, "a") == {
        "members.lookup": f"scripted:{listed}"}
    assert resolve_model_spec(scope, "members.lookup", "default", None) == f"scripted:{listed}"
    allow(monkeypatch, "openai:m")  # the deployment takes it off its list
    assert get_overrides(scope) == {}
    assert resolve_model_spec(scope, "members.lookup", "default", "bedrock:run") == "bedrock:run"
