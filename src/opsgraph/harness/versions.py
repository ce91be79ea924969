"""A tenant's harness versions and which one is active.

`harness_versions` holds one record per saved version: `{version, doc, note, created_at,
created_by, steps, tests, last_test}`. Versions are numbered from 1 and immutable (only
`last_test`, the latest test report, is updated beside the document). A record's `_id` is
`<tenant>/<version>`, so two saves that race for the same number collide on the key and the
loser takes the next one.

`harness_active` holds one record per tenant (`_id` = the tenant): the active version and a
copy of its document (so that `active`, run at the start of every run, is one read by key),
the stack of versions it replaced (what `rollback` returns to) and the history of
activations. Version 0 is the built-in harness (`spec.BUILTIN`, as a document
`spec.builtin_doc()`): never stored, active when nothing else was activated. Every
activation and rollback moves the pointer by compare-and-set on the version it replaced and
leaves an audit row (operation `harness.activate` or `harness.rollback`, change id
`harness`).

Documents are stored as their JSON text: prompt names and metadata keys are the tenant's
own strings, which a store may refuse as field names (`$`, `.`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pymongo import ASCENDING, IndexModel
from pymongo.database import Database
from pymongo.errors import DuplicateKeyError

from opsgraph import audit
from opsgraph.errors import BadInput, Conflict, NotFound
from opsgraph.harness.changes import diff
from opsgraph.harness.spec import HarnessDoc, builtin_doc
from opsgraph.harness.validate import validate
from opsgraph.store.scope import Document, TenantScope

VERSIONS = "harness_versions"
ACTIVE = "harness_active"
AUDIT_ID = "harness"
"""The audit trail's change id for the harness: `audit.history(scope, "harness")`."""
HISTORY_KEPT = 200
NOTE_MAX = 500
_SAVE_TRIES = 50

Target = Callable[[Document], tuple[int, HarnessDoc]]
"""Where a move goes, decided from the pointer as it is read."""

INDEXES = (IndexModel([("tenant_id", ASCENDING), ("version", ASCENDING)], unique=True,
                      name="tenant_version"),)


class TestsFailing(Conflict):
    """An activation refused because the version's tests fail (and it was not forced)."""

    code = "tests_failing"


def ensure_indexes(db: Database[Document]) -> None:
    """The version index (the listing's order; uniqueness is also held by the key)."""
    db[VERSIONS].create_indexes(list(INDEXES))


def save(scope: TenantScope, doc: object, *, actor: str, note: str = "",
         ) -> tuple[int, list[dict[str, Any]]]:
    """Validate and store a new version; returns its number and its changes from the active
    version. Nothing runs tests and nothing is activated here."""
    parsed = validate(doc)
    note = note.strip()
    if len(note) > NOTE_MAX:
        raise BadInput(f"note: at most {NOTE_MAX} characters ({len(note)} given)")
    record = {"doc": _dump(parsed), "note": note, "created_at": _now(), "created_by": actor,
              "steps": len(parsed.steps), "tests": len(parsed.tests), "last_test": None}
    coll = scope[VERSIONS]
    for _ in range(_SAVE_TRIES):
        version = _latest(scope) + 1
        try:
            coll.insert_one({"_id": _key(scope, version), "version": version, **record})
        except DuplicateKeyError:
            continue  # a concurrent save took this number: take the next one
        return version, diff(active(scope)[1], parsed)
    raise Conflict(f"harness: could not number the new version after {_SAVE_TRIES} tries "
                   "(too many concurrent saves); try again")


def load(scope: TenantScope, version: int) -> HarnessDoc:
    """The document of one version (0: the built-in harness)."""
    if version == 0:
        return builtin_doc()
    return HarnessDoc.model_validate(json.loads(_record(scope, version)["doc"]))


def active(scope: TenantScope) -> tuple[int, HarnessDoc]:
    """The active version and its document: one read by key, at the start of every run."""
    pointer = scope[ACTIVE].find_one({"_id": scope.tenant_id},
                                     projection={"version": 1, "doc": 1})
    if pointer is None or not pointer.get("version"):
        return 0, builtin_doc()
    return int(pointer["version"]), HarnessDoc.model_validate(json.loads(pointer["doc"]))


def get(scope: TenantScope, version: int | None = None) -> dict[str, Any]:
    """`{version, active, created_at, created_by, note, doc}` of a version (the active one
    by default); `doc` is the JSON as saved."""
    current = _pointer(scope).get("version", 0)
    version = current if version is None else version
    if version == 0:
        return {"version": 0, "active": current == 0, "created_at": None,
                "created_by": "opsgraph", "note": "the built-in harness",
                "doc": json.loads(_dump(builtin_doc()))}
    record = _record(scope, version)
    return {"version": version, "active": version == current,
            "created_at": _iso(record["created_at"]), "created_by": record["created_by"],
            "note": record.get("note", ""), "doc": json.loads(record["doc"])}


def list_versions(scope: TenantScope) -> list[dict[str, Any]]:
    """Every version, the built-in (0) first: `{version, active, created_at, created_by,
    note, steps, tests, activated_at, last_test}`."""
    pointer = _pointer(scope)
    current = pointer.get("version", 0)
    activated: dict[int, datetime] = {}
    for entry in pointer.get("history", []):
        activated[entry["version"]] = entry["at"]
    rows = [{"version": 0, "active": current == 0, "created_at": None, "created_by": "opsgraph",
             "note": "the built-in harness", "steps": len(builtin_doc().steps),
             "tests": len(builtin_doc().tests), "activated_at": _iso(activated.get(0)),
             "last_test": _test_json(pointer.get("builtin_test"))}]
    for record in scope[VERSIONS].find({}, sort=[("version", ASCENDING)],
                                       projection={"doc": 0}):
        version = record["version"]
        rows.append({"version": version, "active": version == current,
                     "created_at": _iso(record["created_at"]),
                     "created_by": record["created_by"], "note": record.get("note", ""),
                     "steps": record["steps"], "tests": record["tests"],
                     "activated_at": _iso(activated.get(version)),
                     "last_test": _test_json(record.get("last_test"))})
    return rows


def record_test(scope: TenantScope, version: int, report: Mapping[str, Any]) -> dict[str, Any]:
    """Keep a version's latest test report `{passed, failed, model, at}` beside it (the
    document itself stays as saved); returns what was kept."""
    kept = {"passed": int(report.get("passed", 0)), "failed": int(report.get("failed", 0)),
            "model": report.get("model"), "at": _now()}
    if version == 0:
        _ensure_pointer(scope)
        scope[ACTIVE].update_one({"_id": scope.tenant_id}, {"$set": {"builtin_test": kept}})
    else:
        done = scope[VERSIONS].update_one({"_id": _key(scope, version)},
                                          {"$set": {"last_test": kept}})
        if done.matched_count == 0:
            raise _missing(scope, version)
    return _test_json(kept) or {}


def activate(scope: TenantScope, version: int, *, actor: str, report: Mapping[str, Any],
             force: bool = False, overriding: Sequence[str] | None = None,
             ) -> dict[str, Any]:
    """Make `version` the active one, given the test report the caller just ran on it
    (`{passed, failed, results: [{name, passed, ...}]}`; the caller keeps it with
    `record_test`). Failing tests refuse it (`tests_failing`, naming them) unless `force`;
    a force that names the tests it means to override (`overriding`, as the dashboard's
    second step does) is refused too when the failing tests are no longer those. Every
    activation is audited, a forced one with the tests it overrode."""
    failing = _failing(report)
    if failing and not force:
        raise TestsFailing(
            f"harness version {version}: {len(failing)} test(s) failing, not activated "
            f"(force to activate anyway): {'; '.join(failing)}", failing=failing)
    if failing and overriding is not None and sorted(overriding) != sorted(failing):
        raise TestsFailing(
            f"harness version {version}: the failing tests are now {'; '.join(failing)}, "
            f"not the ones named to override ({'; '.join(overriding) or 'none'}); not "
            "activated", failing=failing)
    doc = load(scope, version)  # NotFound before anything moves
    detail = {"forced": bool(force and failing), "passed": int(report.get("passed", 0)),
              "failed": int(report.get("failed", 0)), "failing": failing}
    return _move(scope, actor, "activate", lambda _: (version, doc), detail)


def rollback(scope: TenantScope, *, actor: str) -> dict[str, Any]:
    """Re-activate the version that was active before the current one (Conflict when the
    current one replaced nothing)."""
    def previous(pointer: Document) -> tuple[int, HarnessDoc]:
        stack = pointer.get("stack", [])
        if not stack:
            raise Conflict(f"harness: nothing to roll back to (version "
                           f"{pointer.get('version', 0)} is the first one activated)")
        return int(stack[-1]), load(scope, int(stack[-1]))

    return _move(scope, actor, "rollback", previous, {})


# --- the pointer ------------------------------------------------------------------------

def _move(scope: TenantScope, actor: str, action: str, target: Target,
          detail: dict[str, Any]) -> dict[str, Any]:
    """Move the active pointer by compare-and-set on the version it replaces (deciding
    again while concurrent moves win), then audit the move."""
    while True:
        pointer = _ensure_pointer(scope)
        current = int(pointer.get("version", 0))
        version, doc = target(pointer)
        now = _now()
        if action == "activate" and version == current:
            return _result(version, current, now, actor, action, detail, changed=False)
        entry = {"version": version, "from": current, "at": now, "actor": actor,
                 "action": action, "forced": detail.get("forced", False)}
        history = {"$each": [entry], "$slice": -HISTORY_KEPT}
        update: Document = {"$set": {"version": version, "doc": _dump(doc) if version else None,
                                     "activated_at": now, "activated_by": actor}}
        if action == "rollback":
            update.update({"$pop": {"stack": 1}, "$push": {"history": history}})
        else:
            update["$push"] = {"history": history,
                               "stack": {"$each": [current], "$slice": -HISTORY_KEPT}}
        if scope[ACTIVE].find_one_and_update({"_id": scope.tenant_id, "version": current},
                                             update) is None:
            continue  # another activation moved it first
        audit.record_transition(scope, AUDIT_ID, str(current), str(version), actor, None,
                                {"action": action, **detail}, operation=f"harness.{action}",
                                now=now)
        return _result(version, current, now, actor, action, detail, changed=True)


def _result(version: int, previous: int, at: datetime, actor: str, action: str,
            detail: dict[str, Any], *, changed: bool) -> dict[str, Any]:
    return {"version": version, "previous": previous, "action": action, "changed": changed,
            "forced": detail.get("forced", False), "activated_at": _iso(at),
            "activated_by": actor}


def _ensure_pointer(scope: TenantScope) -> Document:
    pointer = scope[ACTIVE].find_one({"_id": scope.tenant_id})
    if pointer is not None:
        return pointer
    fresh: Document = {"_id": scope.tenant_id, "version": 0, "doc": None, "stack": [],
                       "history": []}
    try:
        scope[ACTIVE].insert_one(fresh)
    except DuplicateKeyError:  # a concurrent first activation made it
        return scope[ACTIVE].find_one({"_id": scope.tenant_id}) or fresh
    return fresh


def _pointer(scope: TenantScope) -> Document:
    return scope[ACTIVE].find_one({"_id": scope.tenant_id}, projection={"doc": 0}) or {}


# --- helpers ------------------------------------------------------------------------------

def _failing(report: Mapping[str, Any]) -> list[str]:
    """The names of the failing tests of a report (a count alone when results are absent)."""
    names = [str(r.get("name", "?")) for r in report.get("results", [])
             if isinstance(r, Mapping) and not r.get("passed", False)]
    failed = int(report.get("failed", 0))
    if failed > len(names):
        names += [f"{failed - len(names)} more"] if names else [f"{failed} test(s)"]
    return names


def _latest(scope: TenantScope) -> int:
    last = list(scope[VERSIONS].find({}, sort=[("version", -1)], limit=1,
                                     projection={"version": 1}))
    return int(last[0]["version"]) if last else 0


def _record(scope: TenantScope, version: int) -> Document:
    record = scope[VERSIONS].find_one({"_id": _key(scope, version)})
    if record is None:
        raise _missing(scope, version)
    return record


def _missing(scope: TenantScope, version: int) -> NotFound:
    latest = _latest(scope)
    known = f"versions 0–{latest}" if latest else "only version 0, the built-in"
    return NotFound(f"harness version {version} not found ({known})")


def _key(scope: TenantScope, version: int) -> str:
    return f"{scope.tenant_id}/{version}"


def _dump(doc: HarnessDoc) -> str:
    return json.dumps(doc.model_dump(mode="json", by_alias=True, exclude_unset=True),
                      ensure_ascii=False, separators=(",", ":"))


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(at: datetime | None) -> str | None:
    if at is None:
        return None
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).isoformat()


def _test_json(kept: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if kept is None else {**kept, "at": _iso(kept.get("at"))}
