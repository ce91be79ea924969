"""Case 9, with the cold imports: cold start under the image's conditions, as ratios to
`import langgraph.graph`.

Each stage runs in a fresh interpreter on a read-only, byte-compiled copy of the installed
package with `PYTHONDONTWRITEBYTECODE=1` (Lambda's /var/task is read-only: code runs from
the .pyc files the image build wrote, and nothing can write more):

- the handler module: `import opsgraph.api.lambda_web` (the image's primary entry);
- the first `/health`: that, plus uvicorn, the init work (settings, client, indexes), the
  app's startup and one `GET /health` — the adapter's readiness check;
- the first full request: that, plus one `POST /v1/runs` (one scripted task) streamed to
  its end.

The ASGI calls are made in-process (no sockets), timed from before the first import; the
baseline is timed the same way in the same kind of interpreter, best of N each, the stages
taking turns. Judged on CPU time, which other work on the machine disturbs far less.
"""

from __future__ import annotations

import asyncio
import compileall
import json
import os
import py_compile
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn  # noqa: F401  (first_requests stands for the entry's main(), which imports it)

import opsgraph
from opsgraph.auth import issue_token
from opsgraph.bench.drive import BenchFailure
from opsgraph.bench.environment import BenchEnv
from opsgraph.bench.report import Row, cpu_ratio_row
from opsgraph.bench.scripts import fanout_script
from opsgraph.knowledge import quantized_model
from opsgraph.settings import environment_variable, get_settings

STAGES = ("baseline", "import", "health", "request")
HANDLER_TARGET = 0.5
HEALTH_TARGET = 1.0
_PROGRAM = """\
import sys, time
wall, cpu = time.perf_counter(), time.process_time()
stage = sys.argv[1]
if stage == "baseline":
    import langgraph.graph
else:
    import opsgraph.api.lambda_web as entry
    if stage != "import":
        from opsgraph.bench.coldstart import first_requests
        first_requests(entry, stage)
print(time.perf_counter() - wall, time.process_time() - cpu)
"""


# --- in the child: the app driven as uvicorn would, without a socket ---------------------

async def _lifespan_startup(app: Any) -> None:
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await inbox.put({"type": "lifespan.startup"})
    asyncio.get_running_loop().create_task(
        app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, inbox.get,
            outbox.put))
    reply = await outbox.get()
    if reply["type"] != "lifespan.startup.complete":
        raise BenchFailure(f"app startup failed: {reply.get('message', reply['type'])}")


async def _request(app: Any, method: str, path: str, headers: dict[str, str],
                   body: bytes = b"") -> tuple[int, bytes]:
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the client never goes away
        return {"type": "http.disconnect"}

    status, chunks = 0, []

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 40000),
             "server": ("127.0.0.1", 8080), "state": {},
             "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]}
    await app(scope, receive, send)
    return status, b"".join(chunks)


def first_requests(entry: Any, stage: str) -> None:
    """In the child: init, startup and `/health`; for `request`, one streamed run too."""

    async def drive() -> None:
        entry.prepare()
        await _lifespan_startup(entry.app)
        status, _ = await _request(entry.app, "GET", "/health", {})
        if status != 200:
            raise BenchFailure(f"/health answered {status}")
        if stage == "request":
            headers = {"authorization": f"Bearer {os.environ['OPSGRAPH_BENCH_TOKEN']}",
                       "content-type": "application/json"}
            body = json.dumps({"message": "Find the member Jane Smith"}).encode()
            status, stream = await _request(entry.app, "POST", "/v1/runs", headers, body)
            if status != 200 or not re.search(rb'"status": ?"completed"', stream):
                raise BenchFailure(f"first request: {status} {stream[-300:]!r}")

    asyncio.run(drive())


# --- in the bench: the read-only, byte-compiled copy and the timings ---------------------

@contextmanager
def image_like_package() -> Iterator[Path]:
    """A read-only copy of the installed opsgraph package, byte-compiled as the image is;
    yields the folder to put first on PYTHONPATH."""
    root = Path(tempfile.mkdtemp(prefix="opsgraph-coldstart-"))
    site = root / "site"
    shutil.copytree(Path(opsgraph.__file__).parent, site / "opsgraph",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if not compileall.compile_dir(site, quiet=1, workers=0,
                                  invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH):
        raise BenchFailure("byte-compiling the package copy failed")
    for path in [*site.rglob("*"), site]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        yield site
    finally:
        for path in [site, *site.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        shutil.rmtree(root, ignore_errors=True)


def stage_cost(stage: str, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one stage in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", _PROGRAM, stage], env=env, cwd=env["HOME"],
                          capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise BenchFailure(f"cold start, {stage}: {done.stderr.strip().splitlines()[-1:]}")
    wall, cpu = done.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def _environment(env: BenchEnv, site: Path) -> dict[str, str]:
    spec = env.write_script("coldstart", fanout_script(1, 0))
    home = env.root / "coldstart-home"
    home.mkdir(exist_ok=True)
    models = quantized_model.model_path().parent  # derived ahead, as the image build does
    return {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": str(home), "OPSGRAPH_MODELS": str(models),
            "OPSGRAPH_MODEL": spec, "OPSGRAPH_LIGHT_MODEL": spec,
            "OPSGRAPH_AGENTS": str(get_settings().agents_dir),
            "OPSGRAPH_TOKEN_SECRET": "coldstart-bench-secret-of-32-bytes",
            "OPSGRAPH_BENCH_TOKEN": _token(issue_token, env)}


def _token(issue: Any, env: BenchEnv) -> str:
    with environment_variable("OPSGRAPH_TOKEN_SECRET", "coldstart-bench-secret-of-32-bytes"):
        get_settings.cache_clear()
        token: str = issue(env.principal)
    get_settings.cache_clear()
    return token


def coldstart_rows(env: BenchEnv, repeats: int) -> list[Row]:
    """The three stages against `import langgraph.graph`, best of `repeats` each."""
    best = {stage: (float("inf"), float("inf")) for stage in STAGES}
    with image_like_package() as site:
        child_env = _environment(env, site)
        for _ in range(repeats):
            for stage in STAGES:
                wall, cpu = stage_cost(stage, child_env)
                best[stage] = (min(best[stage][0], wall), min(best[stage][1], cpu))
    base = best["baseline"]
    conditions = (f"fresh interpreter, read-only byte-compiled package, "
                  f"PYTHONDONTWRITEBYTECODE=1, best of {repeats}")
    return [
        cpu_ratio_row(
            "9", "cold start: handler module import", best["import"], base, HANDLER_TARGET,
            f"import opsgraph.api.lambda_web ÷ import langgraph.graph; {conditions}"),
        cpu_ratio_row(
            "9", "cold start: first /health", best["health"], base, HEALTH_TARGET,
            "import, uvicorn, init (settings, client, indexes), app startup, GET /health "
            f"÷ import langgraph.graph; {conditions}"),
        cpu_ratio_row(
            "9", "cold start: first full request", best["request"], base, None,
            "all of the above + POST /v1/runs (one scripted task) streamed to its end ÷ "
            f"import langgraph.graph; {conditions}"),
    ]
