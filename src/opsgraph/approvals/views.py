"""The API's views of a pending change: the response models of `GET /openapi.json` that
describe a change (`api.response_models.Change`, `Card`, `api.inbox_models.DecidedChange`).

A view names fields of `PendingChange` and never re-declares them: each field's type is
the stored model's (its field's, or its computed field's), written as the JSON writes it
(`PendingChange.to_json`, `card`) — a time is an ISO 8601 string, a status a string (a
client must allow statuses added later). Every field a view names is always present in
what it describes, and it allows more. `served` types the fields the stored change does
not hold as they are sent: the card's `requested_by` as a person, the history's
`decided_by` by name, its field rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from types import NoneType, UnionType
from typing import Any, Literal, Optional, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, Field, create_model

from opsgraph.approvals.pending import PendingChange

M = TypeVar("M", bound=BaseModel)


def _as_json(annotation: object) -> object:
    """The type of a stored field's value once written as JSON."""
    if annotation is datetime or get_origin(annotation) is Literal:
        return str
    if get_origin(annotation) in (Union, UnionType) and NoneType in get_args(annotation):
        (value,) = (a for a in get_args(annotation) if a is not NoneType)
        return Optional[_as_json(value)]  # noqa: UP045 (a type made at run time)
    return annotation


def _stored(name: str) -> tuple[object, str | None]:
    """The type and description of the stored change's field or computed field `name`."""
    if name in PendingChange.model_fields:
        field = PendingChange.model_fields[name]
        return field.annotation, field.description
    if name in PendingChange.model_computed_fields:
        computed = PendingChange.model_computed_fields[name]
        return computed.return_type, computed.description
    raise ValueError(f"{name!r} is not a field of a pending change")


def change_view(name: str, fields: Sequence[str], *, base: type[M], doc: str | None,
                served: Mapping[str, object] | None = None) -> type[M]:
    """A response model named `name` (`base`'s config) of these fields of a pending change,
    in this order, every one required; `served`: field → type for those sent otherwise
    than stored (an `Annotated` type may carry the field's description)."""
    served = served or {}
    declared: dict[str, Any] = {}  # create_model's keywords: field → (type, FieldInfo)
    for field in fields:
        if field in served:
            declared[field] = (served[field], ...)
        else:
            annotation, description = _stored(field)
            declared[field] = (_as_json(annotation), Field(description=description))
    return create_model(name, __base__=base, __doc__=doc, **declared)
