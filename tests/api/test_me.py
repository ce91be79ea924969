"""`GET /v1/me`: the dashboard's header names the person a token is for (issue 19: a
non-local sign-in showed the user id), on the real store."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from opsgraph.api.app import create_app
from opsgraph.auth import issue_token
from opsgraph.principal import Channel, Principal, Role


def bearer(user: str, role: Role) -> dict[str, str]:
    principal = Principal("demo", user, frozenset({role}), Channel.DASHBOARD)
    return {"Authorization": f"Bearer {issue_token(principal)}"}


def test_me_names_the_staff_record_or_falls_back_to_the_id(demo_db: Any) -> None:
    manager = demo_db["staff"].find_one({"_id": "stf_demo_02"})  # the demo manager
    with TestClient(create_app(check_registry=False)) as http:
        known = http.get("/v1/me", headers=bearer(manager["_id"], Role.MANAGER))
        unknown = http.get("/v1/me", headers=bearer("kim", Role.STAFF))
        visitor = http.get("/v1/me")
    assert known.status_code == 200, known.text
    assert known.json() == {"tenant_id": "demo", "user_id": manager["_id"],
                            "name": manager["name"], "roles": ["manager"]}
    assert unknown.json()["name"] == "kim"
    assert visitor.json()["name"] == "Visitor" and visitor.json()["roles"] == ["visitor"]
