"""Per-tenant model overrides on the real store: validation first, then one write. The
choices a deployment allows, and the probe of finding 2: tests/api/test_tenant_model_choices.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from opsgraph.errors import Unprocessable
from opsgraph.models import get_overrides, resolve_model_spec, set_overrides
from opsgraph.settings import get_settings
from opsgraph.store.scope import TenantScope

AGENTS = {"members.update", "bookings.list", "events.list"}


@pytest.fixture
def scope(db: Any) -> TenantScope:
    return TenantScope(db, "demo")


@pytest.fixture
def script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A scripted model on the deployment's list, beside a hosted one of each provider."""
    path = tmp_path / "members.yaml"
    path.write_text("synthesis: ok\n")
    monkeypatch.setenv("OPSGRAPH_ALLOWED_MODELS",
                       f"scripted:{path},bedrock:model-x,openai:llama3.1,bedrock:x")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    get_settings.cache_clear()
    return f"scripted:{path}"


def test_round_trip_and_replace(scope: TenantScope, script: str, db: Any) -> None:
    assert get_overrides(scope) == {}
    stored = set_overrides(scope, {"members.update": script,
                                   "bookings.list": "bedrock:model-x"}, AGENTS, "admin-1")
    assert stored == {"members.update": script, "bookings.list": "bedrock:model-x"}
    assert get_overrides(scope) == stored

    doc = db["tenant_models"].find_one({"_id": "demo"})
    assert doc["tenant_id"] == "demo" and doc["updated_by"] == "admin-1"
    assert doc["updated_at"] is not None

    set_overrides(scope, {"events.list": " openai:llama3.1 "}, AGENTS, "admin-2")
    assert get_overrides(scope) == {"events.list": "openai:llama3.1"}
    assert get_overrides(TenantScope(db, "other")) == {}


@pytest.mark.parametrize(("models", "needle"), [
    ({"members.update": "bedrock:x", "members.delete": "bedrock:x"},
     "models.members.delete: unknown agent"),
    ({"members.update": "bedrock:x", "bookings.list": "gpt4"},
     "models.bookings.list: not one of the models this deployment allows"),
    ({"events.list": "scripted:/nowhere/plan.yaml"}, "not one of the models"),
    ({"events.list": 7}, "not one of the models"),
])
def test_invalid_input_writes_nothing(scope: TenantScope, script: str,
                                      models: dict[str, Any], needle: str) -> None:
    before = set_overrides(scope, {"members.update": script}, AGENTS, "admin")
    with pytest.raises(Unprocessable) as err:
        set_overrides(scope, models, AGENTS, "admin")
    assert needle in err.value.message
    assert get_overrides(scope) == before


def test_resolution_precedence(scope: TenantScope, script: str) -> None:
    set_overrides(scope, {"members.update": script}, AGENTS, "admin")
    run_model = "bedrock:run-model"
    assert resolve_model_spec(scope, "members.update", "default", run_model) == script
    assert resolve_model_spec(scope, "bookings.list", "default", run_model) == run_model
    default = "scripted:/nonexistent/no-model-chosen.yaml"
    assert resolve_model_spec(scope, "bookings.list", "light", None) == default
    assert resolve_model_spec(scope, "bookings.list", "default", None,
                              overrides={"bookings.list": "openai:m"}) == "openai:m"
