"""Numbers in headers and queries, and the MCP links' limits, on a real server process
(issue 18, findings 8 and 10): a Unicode digit, a raw byte or a number past 64 bits in
`Last-Event-ID`, `?after=` or `?version=` is a 400 naming the parameter
(they were 500s, or a stream aborted mid-body); a chunked MCP body over 1 MiB is our 413;
a GET on a stateless MCP link is 405 at once (it held a stream open for 70 s)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.http_client import bearer
from tests.e2e.test_http_api import assert_error

UNICODE_DIGITS = ["²", "٣", "１"]  # superscript two, Arabic-Indic three, fullwidth one
PAST_64_BITS = str(2**64)
MCP_HEADERS = {"content-type": "application/json",
               "accept": "application/json, text/event-stream"}


def _events(http: httpx.Client, headers: dict[str, str | bytes],
            query: str = "") -> httpx.Response:
    return http.get(f"/v1/threads/th_anything/events{query}", headers=headers)


@pytest.mark.parametrize("raw", [*UNICODE_DIGITS, PAST_64_BITS, "-1", "1e3", " "])
def test_after_and_version_take_ascii_digits_up_to_64_bits(http: httpx.Client,
                                                           raw: str) -> None:
    after = _events(http, bearer("staff"), f"?after={raw}")
    assert_error(after, 400, mentions="after")
    assert after.json()["error"]["code"] == "bad_input"
    version = http.get("/v1/harness", params={"version": raw}, headers=bearer("admin"))
    assert_error(version, 400, mentions="version")


@pytest.mark.parametrize("raw", [b"\xb2", b"\xff", b"\x80", PAST_64_BITS.encode(),
                                 "٣".encode()])
@pytest.mark.parametrize("who", ["staff", None])
def test_last_event_id_with_a_raw_byte_or_a_huge_number_is_400(
        http: httpx.Client, raw: bytes, who: str | None) -> None:
    headers: dict[str, str | bytes] = {"Last-Event-ID": raw}
    if who is not None:
        headers.update(bearer(who))
    response = _events(http, headers)
    # a visitor reads no thread, but the bad number is what is wrong first
    assert_error(response, 400, mentions="Last-Event-ID")


def test_the_largest_event_id_is_read_not_overflowed(http: httpx.Client) -> None:
    largest = str(2**63 - 1)
    response = _events(http, bearer("staff"), f"?after={largest}")
    assert_error(response, 404, mentions="th_anything")  # parsed; the thread is unknown


def test_a_get_on_an_mcp_link_is_405_not_a_stream_held_open(http: httpx.Client) -> None:
    for link, role in (("user", "staff"), ("admin", "admin")):
        response = http.get(f"/mcp/{link}", headers={**bearer(role),
                                                     "accept": "text/event-stream"})
        assert_error(response, 405, mentions="stateless")
        assert response.headers["allow"] == "POST"
        assert response.json()["error"]["code"] == "method_not_allowed"
        assert_error(http.delete(f"/mcp/{link}", headers=bearer(role)), 405)


def test_a_chunked_mcp_body_over_a_mebibyte_is_413_in_our_shape(http: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: the server counts what arrives
        yield b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "'
        for _ in range(20):
            yield b"x" * 65536
        yield b'"}}'

    for link, role in (("user", "staff"), ("admin", "admin")):
        response = http.post(f"/mcp/{link}", content=chunks(),
                             headers={**bearer(role), **MCP_HEADERS})
        assert_error(response, 413, mentions="bytes")
        assert response.json()["error"]["code"] == "payload_too_large"
