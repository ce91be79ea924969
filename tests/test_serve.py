"""`opsgraph serve` with no MONGODB_URI: embedded store, demo seed, clean shutdown."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from opsgraph.store.embedded import free_port


def wait_health(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, "server exited early"
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise AssertionError("server did not become healthy")


def test_serve_starts_its_own_store_seeds_demo_and_stops_it(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "MONGODB_URI"}
    env["OPSGRAPH_HOME"] = str(tmp_path / "home")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "opsgraph.cli", "serve", "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_health(f"http://127.0.0.1:{port}/health", proc)
        marker = tmp_path / "home" / "store.json"
        store_uri = json.loads(marker.read_text())["uri"]
        agents = httpx.get(f"http://127.0.0.1:{port}/v1/agents").json()["agents"]
        assert len(agents) == 4  # a visitor of the seeded demo tenant
        # the seeded knowledge base answers: a search finds the section (navigation, no
        # sources), reading it makes it a source
        # the first search builds the tenant's index (MiniLM over ~250 sections and
        # objects: ~4 s on an idle core, more on a loaded one), hence the longer timeout
        found = httpx.post(f"http://127.0.0.1:{port}/v1/operations/knowledge.search",
                           json={"args": {"query": "opening hours"}}, timeout=60).json()
        top = found["result"]["results"][0]
        assert top["id"].startswith("opening-hours#") and found["sources"] == [], found
        read = httpx.post(f"http://127.0.0.1:{port}/v1/operations/knowledge.read_section",
                          json={"args": {"document": "opening-hours",
                                         "section": top["id"]}}).json()
        assert read["sources"], read
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert not marker.exists()
    from opsgraph.store.embedded import ping

    assert not ping(store_uri)
