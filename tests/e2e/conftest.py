"""End to end: the real app in its own uvicorn process, on a loopback port.

The server process talks to this test session's embedded store, in the test's own
database (seeded here, in-process, before it starts), with a scripted model whose file the
test writes. Tests talk to it only over HTTP and read runs as SSE with httpx-sse; the crash
tests kill it with SIGKILL and start it again on the same port.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.app_process import AppServer, server_env, share_cache


@pytest.fixture(scope="session")
def ranker_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One agent-embedding cache for every server of this worker: the ranker embeds the
    registry once, not once per test (its files are written atomically)."""
    return tmp_path_factory.mktemp("ranker-cache")


@pytest.fixture
def server(request: pytest.FixtureRequest, demo_db: Any, store_env: dict[str, str],
           tmp_path: Path, ranker_cache: Path) -> Iterator[AppServer]:
    """The app in its own process, on the test's freshly seeded database (demo and acme).

    Parametrized indirectly with a mapping, the mapping is extra environment for the
    process; `OPSGRAPH_CRASH_AT` in it arms the first start only (see `armed`).
    """
    share_cache(Path(store_env["OPSGRAPH_HOME"]), ranker_cache)
    extra = dict(getattr(request, "param", {}))
    crash_at = extra.pop("OPSGRAPH_CRASH_AT", None)
    script = tmp_path / "model.yaml"
    app = AppServer({**server_env(store_env, script), **extra}, script,
                    tmp_path / "server.log")
    app.start(crash_at)
    try:
        yield app
    finally:
        app.stop()


@pytest.fixture
def http(server: AppServer) -> Iterator[httpx.Client]:
    """A client on the test's server."""
    with server.client() as client:
        yield client
