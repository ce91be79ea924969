"""The page and its assets as the app serves them: every file the page loads is there,
with its content type, revalidated by ETag, under a policy that loads nothing from
elsewhere. (No browser needed.)"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from opsgraph.api.app import create_app


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(check_registry=False)) as test_client:
        yield test_client


def referenced(client: TestClient) -> set[str]:
    """Every /static/ path the page loads, following the modules' imports."""
    page = client.get("/").text
    todo = re.findall(r'(?:src|href)="(/static/[^"]+)"', page)
    seen: set[str] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        if path.endswith(".js"):
            folder = path.rsplit("/", 1)[0]
            for name in re.findall(r'from "\./([\w.-]+\.js)"', client.get(path).text):
                todo.append(f"{folder}/{name}")
    return seen


def test_the_page_and_every_file_it_loads_are_served_with_their_types(
        client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    policy = page.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy
    paths = referenced(client)
    assert {"/static/app.css", "/static/js/app.js", "/static/js/api.js",
            "/static/js/chat.js", "/static/js/inbox.js"} <= paths
    kinds = {".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml"}
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, path
        expected = kinds[path[path.rindex("."):]]
        assert response.headers["content-type"].startswith(expected), path
        assert response.headers["x-content-type-options"] == "nosniff"


def test_nothing_is_loaded_from_another_origin(client: TestClient) -> None:
    for path in referenced(client) | {"/"}:
        text = re.sub(r'xmlns="[^"]*"', "", client.get(path).text)  # a name, not a load
        assert not re.search(r"https?://|//[\w-]+\.[\w.-]+/", text), path


def test_an_unchanged_file_is_revalidated_not_sent_again(client: TestClient) -> None:
    first = client.get("/static/js/app.js")
    assert first.headers["cache-control"] == "no-cache"
    again = client.get("/static/js/app.js", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    changed = client.get("/static/js/app.js", headers={"If-None-Match": '"another"'})
    assert changed.status_code == 200 and changed.content == first.content


@pytest.mark.parametrize("path", ["/static/nope.js", "/static/../dashboard.py",
                                  "/static/%2e%2e/app.py", "/static/js", "/static/"])
def test_a_file_that_is_not_part_of_the_page_is_a_json_404(client: TestClient,
                                                          path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
