"""The knowledge base's admin routes over HTTP, against a real server process: admins
list, add, replace and remove documents; every change bumps the knowledge version; other
roles are refused; bad input is refused with nothing written."""

from __future__ import annotations

import httpx

from tests.e2e.http_client import bearer, headers_for
from tests.e2e.test_http_api import assert_error

DOCS = "/v1/knowledge/documents"


def _listing(http: httpx.Client) -> dict[str, object]:
    response = http.get(DOCS, headers=bearer("admin"))
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    return body


def test_admins_add_replace_and_remove_documents(http: httpx.Client) -> None:
    admin = bearer("admin")
    before = _listing(http)
    start = before["knowledge_version"]
    assert isinstance(start, int) and start >= 1
    slugs = [d["slug"] for d in before["documents"]]  # type: ignore[attr-defined]
    assert "booking-policy" in slugs and "locker-rules" not in slugs

    body = "# Locker rules\n\n## Day lockers\nEmptied at 22:30.\n\n## Day lockers\nTwo sizes.\n"
    added = http.put(f"{DOCS}/locker-rules", headers=admin, json={"body": body})
    assert added.status_code == 200, added.text
    assert added.json() == {"slug": "locker-rules", "title": "Locker rules",
                            "kind": "markdown", "version": 1, "bytes": len(body.encode()),
                            "sections": 2, "embedded": 2, "created": True,
                            "knowledge_version": start + 1}

    replaced = http.put(f"{DOCS}/locker-rules", headers=admin,
                        json={"title": "Lockers", "body": "Emptied nightly.", "kind": "text"})
    assert replaced.status_code == 200, replaced.text
    assert {k: replaced.json()[k] for k in ("title", "kind", "version", "sections", "created",
                                            "knowledge_version")} == {
        "title": "Lockers", "kind": "text", "version": 2, "sections": 1, "created": False,
        "knowledge_version": start + 2}
    listed = _listing(http)
    assert listed["knowledge_version"] == start + 2
    row = next(d for d in listed["documents"] if d["slug"] == "locker-rules")  # type: ignore[attr-defined]
    assert (row["title"], row["version"]) == ("Lockers", 2)

    removed = http.delete(f"{DOCS}/locker-rules", headers=admin)
    assert removed.status_code == 200, removed.text
    assert removed.json() == {"slug": "locker-rules", "removed": True,
                              "knowledge_version": start + 3}
    assert_error(http.delete(f"{DOCS}/locker-rules", headers=admin), 404,
                 mentions="document 'locker-rules' not found")
    assert _listing(http)["knowledge_version"] == start + 3


def test_only_admins_may_change_or_list_documents(http: httpx.Client) -> None:
    start = _listing(http)["knowledge_version"]
    for role in (None, "member", "staff", "manager"):
        headers = headers_for(role)
        for response in (http.get(DOCS, headers=headers),
                         http.put(f"{DOCS}/new-doc", headers=headers, json={"body": "x"}),
                         http.delete(f"{DOCS}/faq", headers=headers)):
            assert_error(response, 403, mentions="managing the knowledge base needs the "
                                                 "admin role")
    assert _listing(http)["knowledge_version"] == start
    assert http.get(DOCS, headers=bearer("admin", tenant="nobody")).status_code == 404


def test_bad_input_is_refused_and_writes_nothing(http: httpx.Client) -> None:
    admin = bearer("admin")
    before = _listing(http)
    for slug, body, status, mentions in [
            ("empty", {"body": " \n "}, 400, "empty document"),
            ("binary", {"body": "PNG\x00\x01"}, 400, "binary content"),
            ("Bad_Slug", {"body": "text"}, 400, "slug 'Bad_Slug' is not valid"),
            ("kind", {"body": "text", "kind": "pdf"}, 422, "kind"),
            ("no-body", {"title": "T"}, 422, "body"),
            ("blank-title", {"title": "  ", "body": "text"}, 400, "title")]:
        assert_error(http.put(f"{DOCS}/{slug}", headers=admin, json=body), status,
                     mentions=mentions)
    # A body over 1 MiB cannot arrive in a request under the 1 MiB cap: 413.
    assert_error(http.put(f"{DOCS}/huge", headers=admin, json={"body": "x" * (1 << 20)}), 413)
    assert _listing(http) == before
