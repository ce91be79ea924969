"""The catalogue: a tenant's typed objects — resources, classes and events, membership
plans, products and price lists — kept in the store (collection `catalogue`).

Stored object: `{_id: cat_<tenant>_<key>, tenant_id, type, key, name, ...its fields}`,
`type` one of `TYPES`, with its name's search keys (store.search_keys), so that
`knowledge.get_object` finds "court1" or "squash co" by index. The demo club's
catalogue is seeded from store/demo/catalogue.yaml (store.seed, which stores its entries
as they are: the store layer sits below this one); `validate` checks a stored object
against its type's model, so a bad field is found with the object and field named.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator

from opsgraph.errors import BadInput
from opsgraph.lazy_build import LazyModel
from opsgraph.store.search_keys import KEY_FIELDS

Document = dict[str, Any]
Hhmm = Annotated[str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")]
Money = Annotated[float, Field(ge=0)]
Key = Annotated[str, Field(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$", max_length=80)]


class Hours(LazyModel):
    """Opening hours: [opens, closes] on weekdays and at weekends."""

    model_config = ConfigDict(extra="forbid")
    weekday: tuple[Hhmm, Hhmm]
    weekend: tuple[Hhmm, Hhmm]


class CatalogueObject(LazyModel):
    """What every catalogue object has."""

    model_config = ConfigDict(extra="forbid")
    type: str
    key: Key
    name: str = Field(min_length=1)
    documents: list[str] = Field(default_factory=list,
                                 description="Slugs of the documents about this object.")
    version: int = Field(1, ge=1, description="Goes up by one with every change.")


class Resource(CatalogueObject):
    """A court, studio, room, pool or gym."""

    type: Literal["resource"] = "resource"
    kind: Literal["court", "studio", "room", "pool", "gym"]
    resource: str | None = Field(None, description="The bookable resource's key, if any.")
    capacity: int = Field(gt=0)
    surface: str
    indoor: bool
    floodlit: bool = False
    price_peak: Money = Field(description="Hourly price at peak times (GBP, VAT included).")
    price_off_peak: Money
    hours: Hours
    location: str
    bookable: bool
    status: Literal["open", "maintenance", "closed"] = "open"


class ClassOrEvent(CatalogueObject):
    """A class or event (its dated sessions are `events` records named `event`)."""

    type: Literal["class", "event"]
    event: str | None = Field(None, description="The title its dated sessions carry.")
    level: str
    duration_min: int = Field(gt=0)
    instructor: str
    capacity: int = Field(gt=0)
    price: Money = Field(description="Member price per session (GBP); 0 when included.")
    guest_price: Money
    location: str


class MembershipPlan(CatalogueObject):
    """A membership plan."""

    type: Literal["plan"] = "plan"
    membership: str = Field(description="The plan's code on member records.")
    monthly_price: Money
    term_months: int = Field(ge=1)
    notice_months: int = Field(ge=0)
    booking_window_days: int = Field(ge=1)
    guest_passes_per_month: int = Field(ge=0)
    hours: str
    perks: list[str]


class Product(CatalogueObject):
    """Something the club sells, by SKU."""

    type: Literal["product"] = "product"
    sku: str = Field(pattern=r"^[A-Z0-9]+(?:-[A-Z0-9]+)+$")
    category: str
    price: Money = Field(description="Price including VAT (GBP).")
    vat_rate: float = Field(ge=0, le=1)


class PriceItem(LazyModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    price: Money


class PriceList(CatalogueObject):
    """A dated list of prices."""

    type: Literal["price_list"] = "price_list"
    valid_from: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    items: list[PriceItem] = Field(min_length=1)

    @field_validator("items")
    @classmethod
    def _distinct(cls, items: list[PriceItem]) -> list[PriceItem]:
        names = [i.name for i in items]
        if len(set(names)) != len(names):
            raise ValueError("item names repeat")
        return items


MODELS: dict[str, type[CatalogueObject]] = {
    "resource": Resource, "class": ClassOrEvent, "event": ClassOrEvent,
    "plan": MembershipPlan, "product": Product, "price_list": PriceList}
TYPES = tuple(MODELS)


_BOOKKEEPING = frozenset({"_id", "tenant_id", *KEY_FIELDS})
"""Stored beside an object's own fields: its ids and its name's search keys."""


def validate(record: Document) -> CatalogueObject:
    """The typed object of a stored (or YAML) record; BadInput names the object and the
    fields that are wrong."""
    fields = {k: v for k, v in record.items() if k not in _BOOKKEEPING}
    kind = fields.get("type")
    model = MODELS.get(str(kind))
    name = fields.get("key") or record.get("_id")
    if model is None:
        raise BadInput(f"catalogue object {name!r}: type {kind!r} is not one of "
                       f"{', '.join(TYPES)}", field="type")
    try:
        return model.model_validate(fields)
    except ValidationError as exc:
        errors = [{"field": ".".join(str(p) for p in e["loc"]), "message": e["msg"]}
                  for e in exc.errors()]
        problems = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
        raise BadInput(f"catalogue object {name!r} ({kind}): {problems}",
                       field="catalogue", errors=errors) from exc
