"""Test fixtures: one real embedded store (SecantusDB, `:memory:`) per test session.

Every test that touches data gets its own database name, so tests never see each other's
records. Real model calls are impossible: the default model specs point at a scripted file
that does not exist, so a test that forgets to pick a model fails loudly.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from pymongo.database import Database

from opsgraph.settings import get_settings
from opsgraph.store import embedded
from opsgraph.store.client import get_db, new_client, reset_client
from tests.seeded import copy_into

ROOT = Path(__file__).resolve().parents[1]
Document = dict[str, Any]


@pytest.fixture(scope="session")
def mongo_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URI of this test session's embedded store."""
    log = tmp_path_factory.mktemp("store") / "store.log"
    server = embedded.start(":memory:", log_path=log)
    try:
        yield server.uri
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("OPSGRAPH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OPSGRAPH_TOKEN_SECRET", "test-secret-of-thirty-two-bytes!")
    monkeypatch.setenv("OPSGRAPH_MODEL", "scripted:/nonexistent/no-model-chosen.yaml")
    monkeypatch.setenv("OPSGRAPH_LIGHT_MODEL", "scripted:/nonexistent/no-model-chosen.yaml")
    monkeypatch.delenv("MONGODB_URI", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    get_settings.cache_clear()
    yield
    reset_client()
    get_settings.cache_clear()


@pytest.fixture
def store_env(mongo_uri: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Point this test at the session store, in a database of its own; returns the env."""
    dbname = f"t_{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("MONGODB_URI", mongo_uri)
    monkeypatch.setenv("OPSGRAPH_DB", dbname)
    get_settings.cache_clear()
    reset_client()
    from opsgraph.engine.graph import reset_graph

    reset_graph()
    return {k: v for k, v in os.environ.items()}


@pytest.fixture
def db(store_env: dict[str, str]):  # type: ignore[no-untyped-def]
    """The test's own database on the real embedded store."""
    return get_db()


@pytest.fixture(scope="session")
def _demo_template(mongo_uri: str) -> Iterator[Callable[[], Database[Document]]]:
    """The demo data set seeded once per day the session runs on, only ever copied."""
    from opsgraph.store.seed import seed_all

    client = new_client(mongo_uri)
    made: dict[date, Database[Document]] = {}

    def today() -> Database[Document]:
        day = datetime.now(UTC).date()
        if day not in made:
            made[day] = client[f"demo_tpl_{uuid.uuid4().hex[:8]}"]
            seed_all(made[day])
        return made[day]

    try:
        yield today
    finally:
        for template in made.values():
            client.drop_database(template.name)
        client.close()


@pytest.fixture
def demo_db(db, _demo_template):  # type: ignore[no-untyped-def]
    """The test's database with every index and the demo data set (both tenants), as
    `opsgraph seed` would make it today: a copy of the set seeded once today. (Seeding is
    a function of the day; only the newest inbox messages' arrival minutes, always before
    now, are those of the first seed.)"""
    copy_into(_demo_template(), db)
    return db


@pytest.fixture
def script(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Write a scripted-model file; returns its `scripted:` model spec."""
    import yaml

    counter = iter(range(1000))

    def write(content: dict) -> str:  # type: ignore[type-arg]
        path = tmp_path / f"script_{next(counter)}.yaml"
        path.write_text(yaml.safe_dump(content, sort_keys=False))
        return f"scripted:{path}"

    return write


@pytest.fixture
def model_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model writes each change (OPSGRAPH_DIRECT_PROPOSALS off): for tests of the
    model's own turns (its prompts, calls, retries, usage), now that code proposes a change
    said plainly with no model turn."""
    monkeypatch.setenv("OPSGRAPH_DIRECT_PROPOSALS", "off")
    get_settings.cache_clear()
