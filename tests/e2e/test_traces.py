"""Traces as X-Ray receives them on Lambda: with `OPSGRAPH_TRACES=xray` the server sends
its spans through the OpenTelemetry SDK and ADOT's OTLP-over-UDP exporter to
`AWS_XRAY_DAEMON_ADDRESS` — here a UDP socket of the test on loopback standing where
Lambda's X-Ray endpoint listens. Each datagram is read as X-Ray's endpoint reads it: the
protocol header, the `T1S` prefix, then an OTLP `ExportTraceServiceRequest` in base64."""

from __future__ import annotations

import base64
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)

from tests.e2e.app_process import AppServer, server_env, share_cache
from tests.e2e.http_client import bearer, stream
from tests.e2e.scripts import opening_hours

HEADER = b'{"format":"json","version":1}\n'
LAMBDA_TRACE = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"


@pytest.fixture
def xray() -> Iterator[socket.socket]:
    """A UDP socket on a free loopback port, where the server is told X-Ray listens."""
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(0.2)
    try:
        yield udp
    finally:
        udp.close()


@pytest.fixture
def traced(xray: socket.socket, demo_db: Any, store_env: dict[str, str], tmp_path: Path,
           ranker_cache: Path) -> Iterator[AppServer]:
    share_cache(Path(store_env["OPSGRAPH_HOME"]), ranker_cache)
    script = tmp_path / "model.yaml"
    port = xray.getsockname()[1]
    app = AppServer({**server_env(store_env, script), "OPSGRAPH_TRACES": "xray",
                     "AWS_XRAY_DAEMON_ADDRESS": f"127.0.0.1:{port}"},
                    script, tmp_path / "server.log")
    app.start(None)
    try:
        yield app
    finally:
        app.stop()


def received(udp: socket.socket, request_id: str, until: float) -> list[Any]:
    """Every span in the datagrams that reach `udp` until the span of request `request_id`
    (it ends last, and its end flushes the rest), or `until` (monotonic seconds)."""
    spans: list[Any] = []
    while time.monotonic() < until and not any(
            s.name == "request" and attributes(s).get("opsgraph.request_id") == request_id
            for s in spans):
        try:
            datagram = udp.recv(65536)
        except TimeoutError:
            continue
        assert datagram.startswith(HEADER + b"T1S"), datagram[:60]
        request = ExportTraceServiceRequest.FromString(
            base64.b64decode(datagram[len(HEADER) + 3:]))
        spans += [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    return spans


def attributes(span: Any) -> dict[str, Any]:
    return {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in span.attributes}


def test_a_runs_spans_reach_xray_as_one_tree_under_lambdas_segment(
        traced: AppServer, xray: socket.socket) -> None:
    traced.write_script(opening_hours())
    with traced.client() as http:
        done = stream(http, "/v1/runs", {"message": "When do you open?"},
                      {**bearer("staff", user="ana"), "X-Request-Id": "req-traced-1",
                       "X-Amzn-Trace-Id": LAMBDA_TRACE})
    assert done.finished["status"] == "completed"
    run_id = done.of("run_started")[0]["run_id"]
    spans = received(xray, "req-traced-1", time.monotonic() + 10)
    by_name: dict[str, list[Any]] = {}
    for span in spans:
        by_name.setdefault(span.name, []).append(span)
    requests = [s for s in by_name.get("request", [])
                if attributes(s).get("opsgraph.request_id") == "req-traced-1"]
    assert len(requests) == 1, sorted(by_name)
    request = requests[0]
    # the request continues Lambda's trace: X-Ray's root id and the segment as parent
    assert request.trace_id.hex() == "5759e988bd862e3fe1be46a994272793"
    assert request.parent_span_id.hex() == "53995c3f42cd8ad8"
    assert attributes(request)["opsgraph.path"] == "/v1/runs"
    ids = {s.span_id: s for s in spans if s.trace_id == request.trace_id}
    run = next(s for s in ids.values() if s.name == "run")
    assert attributes(run)["opsgraph.run_id"] == run_id
    assert attributes(run)["opsgraph.tenant_id"] == "demo"

    def chain(span: Any) -> list[str]:
        names = []
        while span is not None:
            names.append(span.name)
            span = ids.get(span.parent_span_id)
        return names

    # request → run → node → task → model call, and store commands inside them
    calls = [s for s in ids.values() if s.name == "model call"]
    assert calls and all(chain(c)[-2:] == ["run", "request"] for c in calls)
    assert any("task" in chain(c) and any(n.startswith("node ") for n in chain(c))
               for c in calls)
    stores = [s for s in ids.values() if s.name.startswith("store ")]
    assert stores and all(chain(s)[-1] == "request" for s in stores)
    assert attributes(stores[0])["db.system"] == "mongodb"
