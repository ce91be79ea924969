"""Local sign-in hands out tokens only to a caller on the server's own machine."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from opsgraph.api.app import create_app
from opsgraph.settings import get_settings


@pytest.fixture
def local_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """The generated local token secret, as `make run` has it."""
    monkeypatch.delenv("OPSGRAPH_TOKEN_SECRET")
    get_settings.cache_clear()


@pytest.mark.usefixtures("local_secret")
def test_a_caller_from_another_machine_cannot_sign_in_locally() -> None:
    # A server started with --host 0.0.0.0 and no OPSGRAPH_TOKEN_SECRET: someone on the
    # network asks for an admin token.
    with TestClient(create_app(check_registry=False), client=("203.0.113.5", 50000)) as http:
        answer = http.post("/v1/local/sign-in", json={"user_id": "stf_demo_01", "role": "admin"})
    assert answer.status_code == 404
    assert "to this machine" in answer.json()["error"]["message"]


def test_the_open_info_route_names_a_file_backed_model_without_its_path() -> None:
    from opsgraph.models.spec import shown

    assert shown("scripted:/srv/secret/dir/demo.yaml") == "scripted:demo.yaml"
    hosted = "bedrock:us.anthropic.claude-sonnet-4-6"
    assert shown(hosted) == hosted
