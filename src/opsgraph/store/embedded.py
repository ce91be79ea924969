"""The embedded MongoDB-wire server (SecantusDB), run as a child process on loopback.

SecantusDB is GPL-2.0: it is a local/dev extra and only ever runs as a separate process
(`secantusd-py`); nothing here imports it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from pymongo import MongoClient
from pymongo.errors import PyMongoError

from opsgraph.errors import OpsgraphError


class StoreUnavailable(OpsgraphError):
    """The store could not be reached or started."""

    status = 503
    code = "store_unavailable"


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _executable() -> str:
    beside = Path(sys.executable).with_name("secantusd-py")
    found = str(beside) if beside.exists() else shutil.which("secantusd-py")
    if not found:
        raise StoreUnavailable(
            "MONGODB_URI is unset and the embedded server is not installed: "
            "pip install 'opsgraph[local]' (secantusdb) or set MONGODB_URI"
        )
    return found


def _uri(port: int) -> str:
    return f"mongodb://127.0.0.1:{port}/?directConnection=true"


def ping(uri: str, timeout_ms: int = 500) -> bool:
    """True when a MongoDB at `uri` answers `ping`."""
    client: MongoClient[dict[str, object]] = MongoClient(uri, serverSelectionTimeoutMS=timeout_ms)
    try:
        client.admin.command("ping")
        return True
    except PyMongoError:
        return False
    finally:
        client.close()


@dataclass
class EmbeddedServer:
    """A running `secantusd-py` child: its URI and process."""

    uri: str
    process: subprocess.Popen[bytes] | None
    storage: str

    def stop(self) -> None:
        """Stop the child if this process started it (and only then)."""
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def start(storage: str, log_path: Path | None = None, timeout_s: float = 30.0) -> EmbeddedServer:
    """Start a server on a free loopback port with data at `storage` (or ':memory:')."""
    port = free_port()
    log = open(log_path, "ab") if log_path else subprocess.DEVNULL
    cmd = [_executable(), "--host", "127.0.0.1", "--port", str(port),
           "--storage-path", storage, "--log-level", "WARNING"]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    server = EmbeddedServer(_uri(port), proc, storage)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise StoreUnavailable(f"embedded store exited with code {proc.returncode}"
                                   + (f"; see {log_path}" if log_path else ""))
        if ping(server.uri, timeout_ms=200):
            return server
        time.sleep(0.05)
    server.stop()
    raise StoreUnavailable(f"embedded store did not answer ping within {timeout_s:.0f}s")


def start_for_home(home: Path) -> EmbeddedServer:
    """Reuse the embedded server another local process runs under `home`, or start one.

    The server's address is kept in `home/store.json`; whoever starts the server stops it
    when it exits, so a CLI command next to a running `opsgraph serve` shares its store.
    """
    home.mkdir(parents=True, exist_ok=True)
    marker = home / "store.json"
    with contextlib.suppress(OSError, ValueError, KeyError):
        info = json.loads(marker.read_text())
        if ping(info["uri"]):
            return EmbeddedServer(info["uri"], None, info["storage"])
    storage = str(home / "store")
    Path(storage).mkdir(parents=True, exist_ok=True)
    server = start(storage, log_path=home / "store.log")
    tmp = marker.with_suffix(".tmp")
    tmp.write_text(json.dumps({"uri": server.uri, "storage": storage, "pid": os.getpid()}))
    tmp.replace(marker)

    def _stop() -> None:
        server.stop()
        with contextlib.suppress(OSError):
            if json.loads(marker.read_text()).get("uri") == server.uri:
                marker.unlink()

    atexit.register(_stop)
    return server
