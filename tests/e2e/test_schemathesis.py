"""Schemathesis against a live server: the app in its own process (real embedded store,
seeded demo and acme tenants, a scripted model), its own `GET /openapi.json` as the
contract, requests generated from it (valid and invalid), sent over loopback with an
admin's bearer token.

Every response must be: no 5xx; a status the document lists; the content type it lists;
its headers (`X-Request-Id`, `Retry-After` on a 429); and a body valid against the
response schema — for the SSE routes (runs, decisions), every event against the schema of
its name. No operation is excluded (schemathesis itself leaves out `GET /openapi.json`, the
document it reads; tests/e2e/test_openapi.py covers that one). Not run: schemathesis's
`negative_data_rejection`, because the admin token sent with every case fills in the
`Authorization` a negative case removed, and the app ignores by design what it does not
read (unknown query parameters, the visitor's tenant header next to a token). The run is
bounded (`MAX_EXAMPLES` per operation and mode, no shrinking) so it stays a few hundred
cases; the test prints what it sent, per operation and status.
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from opsgraph.auth import issue_token
from opsgraph.principal import Principal, Role
from opsgraph.settings import get_settings
from opsgraph.store.client import get_db, reset_client
from tests.e2e.app_process import AppServer, server_env, share_cache
from tests.e2e.scripts import call, task

MAX_EXAMPLES = 15
SECRET = "schemathesis-secret-of-32-bytes!"
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance]


def lookup_and_update() -> dict[str, Any]:
    """A run with every event: a read task and a proposed write (approval_required)."""
    return {"plan": {"tasks": [
        task("t1", "knowledge", "search", "Find the opening hours"),
        task("t2", "members", "update", "Change Emily Chen's phone")]},
        "turns": {
            "t1": [call("knowledge_search", query="opening hours"),
                   {"content": "We open at 6am."}],
            "t2": [call("members_update", member="Emily Chen",
                        changes={"phone": "+44 7700 900123"}),
                   {"content": "Proposed."}]},
        "synthesis": "We open at 6am."}


@pytest.fixture(scope="module")
def live(mongo_uri: str, ranker_cache: Path,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AppServer, str]]:
    """The server on a freshly seeded database of its own, and an admin's token."""
    from opsgraph.bootstrap import prepare_store
    from opsgraph.store.seed import seed

    folder = tmp_path_factory.mktemp("schemathesis")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MONGODB_URI", mongo_uri)
        env.setenv("OPSGRAPH_DB", f"t_{uuid.uuid4().hex[:12]}")
        env.setenv("OPSGRAPH_HOME", str(folder / "home"))
        env.setenv("OPSGRAPH_TOKEN_SECRET", SECRET)
        get_settings.cache_clear()
        reset_client()
        db = get_db()
        prepare_store(db)
        seed(db, tenant="demo")
        seed(db, tenant="acme")
        token = issue_token(Principal("demo", "schemathesis", frozenset({Role.ADMIN})))
        store_env = dict(os.environ)
    get_settings.cache_clear()
    reset_client()
    share_cache(folder / "home", ranker_cache)
    script = folder / "model.yaml"
    server = AppServer(server_env(store_env, script), script, folder / "server.log")
    server.write_script(lookup_and_update())
    server.start()
    try:
        yield server, token
    finally:
        server.stop()


def test_the_live_server_keeps_its_openapi_contract(live: tuple[AppServer, str]) -> None:
    server, token = live
    api = schemathesis.openapi.from_url(f"{server.url}/openapi.json")
    auth = {"Authorization": f"Bearer {token}"}
    cases: Counter[str] = Counter()
    failures: list[str] = []
    operations = [result.ok() for result in api.get_all_operations()]
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True,
                      phases=[Phase.explicit, Phase.generate], database=None,
                      suppress_health_check=list(HealthCheck))
            def send(case: Any) -> None:
                response = case.call(headers=auth, timeout=60)
                cases[f"{case.operation.label} {response.status_code}"] += 1
                case.validate_response(response, checks=CHECKS, headers=auth)

            try:
                send()
            except Unsatisfiable:  # nothing to make invalid: no parameters and no body
                assert mode is GenerationMode.NEGATIVE, operation.label
            except (Exception, BaseExceptionGroup) as exc:  # every operation runs; listed together
                failures.append(f"{operation.label} ({mode.value}): {exc}")
    print(f"\nschemathesis: {sum(cases.values())} cases on {len(operations)} operations, "
          f"{len(failures)} failing")
    for key, count in sorted(cases.items()):
        print(f"  {key}: {count}")
    assert not failures, "\n\n".join(failures)
    assert "Traceback" not in server.log.read_text(errors="replace"), server.tail()
