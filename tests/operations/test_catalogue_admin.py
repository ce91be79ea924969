"""The catalogue's admin changes (operations.catalogue_admin): checked whole before any
write, audited, racing replaces never both winning, and what the knowledge tools read."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from pymongo.database import Database

from opsgraph import cli
from opsgraph.errors import BadInput, Conflict, NotFound
from opsgraph.operations import catalogue_admin as admin
from opsgraph.store.scope import TenantScope

from .support import call

Document = dict[str, Any]
PADEL = {"type": "resource", "name": "Padel Court", "kind": "court", "capacity": 4,
         "surface": "artificial grass", "indoor": False, "price_peak": 20.0,
         "price_off_peak": 14.0, "hours": {"weekday": ["07:00", "22:00"],
                                           "weekend": ["08:00", "20:00"]},
         "location": "Outdoor courts", "bookable": False}


def _audit(db: Database[Document], operation: str) -> list[Document]:
    return list(TenantScope(db, "demo")["audit"].find({"operation": operation}, sort=[("at", 1)]))


def test_an_object_is_added_replaced_and_removed_audited_and_found(
        seeded: Database[Document]) -> None:
    before = admin.list_objects(seeded, "demo")["objects"]
    added = admin.put_object(seeded, "demo", "padel-court", PADEL, actor="ada")
    assert added["created"] and added["object"]["version"] == 1
    assert added["object"]["key"] == "padel-court" and "name_key" not in added["object"]
    found = call(seeded, "staff", "knowledge.get_object", {"object": "padel"})
    assert found["result"]["name"] == "Padel Court"

    replaced = admin.put_object(seeded, "demo", "padel-court", {**PADEL, "capacity": 6},
                                actor="ada", if_version=1)
    assert not replaced["created"] and replaced["object"]["version"] == 2
    assert replaced["knowledge_version"] == added["knowledge_version"] + 1
    with pytest.raises(Conflict, match="version 2 is stored, not 1"):
        admin.put_object(seeded, "demo", "padel-court", PADEL, actor="ada", if_version=1)

    removed = admin.remove_object(seeded, "demo", "padel-court", actor="ada")
    assert removed["removed"] and admin.list_objects(seeded, "demo")["objects"] == before
    with pytest.raises(NotFound, match="'padel-court' not found"):
        admin.remove_object(seeded, "demo", "padel-court", actor="ada")
    rows = _audit(seeded, admin.PUT) + _audit(seeded, admin.REMOVE)
    assert [(r["actor"], r["from"], r["to"], r["detail"]["via"]) for r in rows] == [
        ("ada", None, "applied", "direct")] * 3
    assert rows[0]["detail"]["summary"] == ("Added resource 'Padel Court' (padel-court) in "
                                            "the catalogue")


def test_bad_fields_are_named_and_nothing_is_written(seeded: Database[Document]) -> None:
    snapshot = admin.list_objects(seeded, "demo")
    with pytest.raises(BadInput) as bad:
        admin.put_object(seeded, "demo", "padel-court",
                         {**PADEL, "capacity": 0, "hours": {"weekday": ["7am", "22:00"]}},
                         actor="ada")
    fields = {e["field"] for e in bad.value.detail["errors"]}
    assert {"capacity", "hours.weekday.0", "hours.weekend"} <= fields
    with pytest.raises(BadInput, match="'court-1' is a resource, not a plan"):
        admin.put_object(seeded, "demo", "court-1", {**PADEL, "type": "plan"}, actor="ada")
    with pytest.raises(BadInput, match="type: 'courts' is not one of"):
        admin.list_objects(seeded, "demo", "courts")
    with pytest.raises(BadInput, match="differs from the key in the path"):
        admin.put_object(seeded, "demo", "padel", {**PADEL, "key": "other"}, actor="ada")
    assert admin.list_objects(seeded, "demo") == snapshot
    assert _audit(seeded, admin.PUT) == []


def test_two_racing_replaces_do_not_both_win(seeded: Database[Document]) -> None:
    court = admin.get_object(seeded, "demo", "court-1")
    fields = {k: v for k, v in court.items() if k not in ("key", "version")}

    def replace(capacity: int) -> str:
        try:
            admin.put_object(seeded, "demo", "court-1", {**fields, "capacity": capacity},
                             actor="ada", if_version=court["version"])
        except Conflict:
            return "conflict"
        return "ok"

    with ThreadPoolExecutor(4) as pool:
        outcomes = sorted(pool.map(replace, [5, 6, 7, 8]))
    assert outcomes == ["conflict"] * 3 + ["ok"]
    assert admin.get_object(seeded, "demo", "court-1")["version"] == court["version"] + 1


def test_the_cli_puts_lists_and_removes(seeded: Database[Document], tmp_path: Any,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "padel.json"
    path.write_text(json.dumps(PADEL), encoding="utf-8")
    assert cli.main(["catalogue", "put", "padel-court", str(path), "--user", "ada"]) == 0
    assert "added resource padel-court (version 1" in capsys.readouterr().out
    assert cli.main(["catalogue", "list", "--type", "resource", "--json"]) == 0
    keys = [o["key"] for o in json.loads(capsys.readouterr().out)["objects"]]
    assert "padel-court" in keys and "morning-yoga" not in keys
    assert cli.main(["catalogue", "put", "padel-court", str(path), "--if-version", "0"]) == 2
    assert "version 1 is stored, not 0" in capsys.readouterr().err
    assert cli.main(["catalogue", "rm", "padel-court", "--user", "ada"]) == 0
    assert _audit(seeded, admin.REMOVE)[0]["actor"] == "ada"
