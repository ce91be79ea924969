"""The catalogue: the demo club's seeded objects validate against their models and agree
with the demo data set's resources, events and membership prices."""

from __future__ import annotations

from typing import Any

import pytest

from opsgraph.errors import BadInput
from opsgraph.knowledge.catalogue import (
    ClassOrEvent,
    MembershipPlan,
    Product,
    Resource,
    validate,
)
from opsgraph.store.seed import load_dataset

Db = Any


def _objects(db: Db, tenant: str = "demo") -> dict[str, Any]:
    return {d["key"]: validate(d) for d in db["catalogue"].find({"tenant_id": tenant})}


def test_every_seeded_object_validates(demo_db: Db) -> None:
    objects = _objects(demo_db)
    kinds = {o.type for o in objects.values()}
    assert kinds == {"resource", "class", "event", "plan", "product", "price_list"}
    assert len(objects) >= 35
    assert _objects(demo_db, "acme") == {}  # the coworking space has no catalogue


def test_resources_match_the_bookable_resources(demo_db: Db) -> None:
    spec = load_dataset("demo")
    cards = [o for o in _objects(demo_db).values() if isinstance(o, Resource)]
    linked = {o.resource: o for o in cards if o.resource}
    for res in spec["resources"]:
        card = linked[res["key"]]
        assert (card.name, card.capacity) == (res["name"], res["capacity"])
        assert card.status == res.get("status", "open")
        stored = demo_db["resources"].find_one({"tenant_id": "demo", "code": res["code"]})
        assert [card.hours.weekday, card.hours.weekend] == [
            tuple(stored["hours"]["weekday"]), tuple(stored["hours"]["weekend"])]
    assert all(not o.bookable for o in cards if not o.resource)


def test_classes_and_events_match_the_events(demo_db: Db) -> None:
    spec = load_dataset("demo")
    cards = {o.event: o for o in _objects(demo_db).values() if isinstance(o, ClassOrEvent)}
    for event in spec["events"]:
        card = cards[event["title"]]
        assert card.capacity == event["capacity"], event["title"]
        assert card.location == event["location"], event["title"]
        start, end = (int(t[:2]) * 60 + int(t[3:]) for t in (event["start"], event["end"]))
        assert card.duration_min == end - start, event["title"]
    staff = {s["name"] for s in spec["staff"]}
    assert {c.instructor for c in cards.values()} <= staff


def test_plans_and_prices_match_the_data_set_and_the_documents(demo_db: Db) -> None:
    prices = load_dataset("demo")["membership_prices"]
    objects = _objects(demo_db)
    monthly = {o.membership: o.monthly_price for o in objects.values()
               if isinstance(o, MembershipPlan) and o.term_months == 1}
    assert monthly == prices
    plans = demo_db["knowledge"].find_one({"tenant_id": "demo", "slug": "membership-plans"})
    for price in prices.values():
        assert f"£{price:.0f}" in plans["body"]
    skus = [o.sku for o in objects.values() if isinstance(o, Product)]
    assert len(set(skus)) == len(skus)
    faq = demo_db["knowledge"].find_one({"tenant_id": "demo", "slug": "faq"})["body"]
    assert "tennis balls cost £4 a tube" in faq
    assert objects["tennis-balls"].price == 4.0


def test_seeding_changes_the_knowledge_version_only_when_something_changed(
        demo_db: Db) -> None:
    from opsgraph.store.seed import seed

    version = demo_db["tenants"].find_one({"_id": "demo"})["knowledge_version"]
    assert version >= 1
    seed(demo_db, tenant="demo")
    assert demo_db["tenants"].find_one({"_id": "demo"})["knowledge_version"] == version
    demo_db["catalogue"].update_one({"_id": "cat_demo_tennis-balls"}, {"$set": {"price": 9.0}})
    seed(demo_db, tenant="demo")
    assert demo_db["tenants"].find_one({"_id": "demo"})["knowledge_version"] == version + 1
    ball = demo_db["catalogue"].find_one({"_id": "cat_demo_tennis-balls"})
    assert (ball["price"], ball["version"]) == (4.0, 2)


@pytest.mark.parametrize(("record", "message"), [
    ({"type": "gadget", "key": "x", "name": "X"}, "type 'gadget' is not one of"),
    ({"type": "product", "key": "balls", "name": "Balls", "sku": "bad sku",
      "category": "shop", "price": 4.0, "vat_rate": 0.2}, "'balls' \\(product\\): sku"),
    ({"type": "product", "key": "balls", "name": "Balls", "sku": "BAL-1",
      "category": "shop", "price": -1, "vat_rate": 0.2}, "price"),
    ({"type": "plan", "key": "p", "name": "P"}, "monthly_price: Field required"),
])
def test_bad_objects_are_refused_naming_object_and_field(record: dict[str, Any],
                                                        message: str) -> None:
    with pytest.raises(BadInput, match=message):
        validate(record)


def test_the_documents_the_catalogue_names_exist(demo_db: Db) -> None:
    slugs = {d["slug"] for d in demo_db["knowledge"].find({"tenant_id": "demo"})}
    assert len(slugs) >= 60
    for card in _objects(demo_db).values():
        assert set(card.documents) <= slugs, (card.key, set(card.documents) - slugs)


def test_object_names_are_searchable_by_their_keys(demo_db: Db) -> None:
    from opsgraph.errors import AmbiguousReference, NotFound
    from opsgraph.operations.base import Context
    from opsgraph.operations.catalogue import get_operation
    from opsgraph.operations.invoke import invoke
    from opsgraph.store.scope import TenantScope
    from opsgraph.store.search_keys import KEY_FIELDS
    from tests.engine.helpers import person

    court = demo_db["catalogue"].find_one({"_id": "cat_demo_court-1"})
    assert court is not None and set(KEY_FIELDS[:3]) <= set(court)  # seeded with its keys
    ctx = Context(TenantScope(demo_db, "demo"), person("visitor"))

    def get(name: str, kind: str | None = None) -> Any:
        args = {"object": name, **({"type": kind} if kind else {})}
        return invoke(get_operation("knowledge.get_object"), ctx, args, "read").result

    for loose in ("court1", "COURT 1", "cat_demo_court-1", "court-1"):
        read = get(loose)
        assert read.data["id"] == "cat_demo_court-1" and not set(read.data) & set(KEY_FIELDS)
        assert [s.id for s in read.sources] == ["cat_demo_court-1"]
    assert get("squash co").data["name"] == "Squash Court"  # words the name's words start
    assert get("bal-ten-3").data["name"] == "Tennis balls (tube of 3)"  # an SKU
    with pytest.raises(AmbiguousReference):
        get("squash")  # the court, the balls and the ladder
    assert get("squash", "resource").data["name"] == "Squash Court"
    with pytest.raises(NotFound, match="knowledge_find_objects"):
        get("helipad")
