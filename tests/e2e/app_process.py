"""The app in a process of its own: `uvicorn opsgraph.api.app:app` on a loopback port,
started, killed (SIGKILL) and started again by the tests; stopped by its pid."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from opsgraph.store.embedded import free_port
from tests.e2e.http_client import HTTP_TIMEOUT_S

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 5.0
APPLY_LEASE_S = 1.0
# Environment the server must never inherit from the test process by accident.
_SCRUBBED = ("OPSGRAPH_CRASH_AT", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE",
             "OPENAI_BASE_URL", "OPENAI_API_KEY")


class AppServer:
    """`uvicorn opsgraph.api.app:app` in a child process; stopped by its pid."""

    def __init__(self, env: Mapping[str, str], script: Path, log: Path) -> None:
        self.env = dict(env)
        self.script = script
        self.log = log
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.crash_at: str | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def write_script(self, content: Mapping[str, Any]) -> None:
        """(Re)write the scripted model's file; the server reads it again once it changed."""
        self.script.write_text(yaml.safe_dump(dict(content), sort_keys=False))

    def client(self) -> httpx.Client:
        """A client on this server (the caller closes it)."""
        return httpx.Client(base_url=self.url, timeout=HTTP_TIMEOUT_S)

    def start(self, crash_at: str | None = None) -> None:
        """Start the process (optionally armed with a crash point) and wait for /health."""
        assert self.proc is None or self.proc.poll() is not None, "already running"
        env = {k: v for k, v in self.env.items() if k not in _SCRUBBED}
        if crash_at is not None:
            env["OPSGRAPH_CRASH_AT"] = crash_at
        self.crash_at = crash_at
        cmd = [sys.executable, "-m", "uvicorn", "opsgraph.api.app:app", "--host", "127.0.0.1",
               "--port", str(self.port), "--log-level", "warning"]
        with self.log.open("ab") as log:
            log.write(f"--- start (crash_at={crash_at})\n".encode())
            self.proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        self._wait_healthy()

    def _wait_healthy(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.tail()}")
            try:
                if httpx.get(f"{self.url}/health", timeout=1.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"server not healthy after {START_TIMEOUT_S:.0f} s:\n{self.tail()}")

    def wait_exit(self, timeout_s: float = STOP_TIMEOUT_S) -> int:
        """The exit status once the process has ended (negative: the signal that ended it)."""
        assert self.proc is not None
        return self.proc.wait(timeout_s)

    def kill(self) -> None:
        """SIGKILL: no cleanup, no flush, as a power cut would."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(STOP_TIMEOUT_S)

    def stop(self) -> None:
        """Terminate, then kill if it does not go."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(STOP_TIMEOUT_S)

    def restart(self, crash_at: str | None = None) -> None:
        """Stop (or reap a dead process) and start again on the same port."""
        self.stop()
        self.start(crash_at)

    def tail(self, lines: int = 40) -> str:
        """The end of the server's log."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def server_env(store_env: Mapping[str, str], script: Path) -> dict[str, str]:
    """The server's environment: the test's store and database, the scripted model, a
    one-second apply lease (so the crash tests can wait it out)."""
    spec = f"scripted:{script}"
    return {**store_env, "OPSGRAPH_MODEL": spec, "OPSGRAPH_LIGHT_MODEL": spec,
            "OPSGRAPH_APPLY_LEASE_S": str(APPLY_LEASE_S), "PYTHONUNBUFFERED": "1"}


def share_cache(home: Path, cache: Path) -> None:
    """Make `home/cache` the shared cache folder."""
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "cache").exists():
        (home / "cache").symlink_to(cache, target_is_directory=True)


def armed(point: str, *values: Any) -> Any:
    """A `server` parameter (indirect) that starts the server armed with crash `point`;
    `values` are the test's further parameters."""
    return pytest.param({"OPSGRAPH_CRASH_AT": point}, *values, id=point)
