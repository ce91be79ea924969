"""The catalogue holds exactly the contracted operations, with documented, typed inputs."""

from __future__ import annotations

import inspect
import typing
from typing import Any

import pytest
from pydantic import BaseModel

from opsgraph.errors import BadInput, NotFound
from opsgraph.operations.catalogue import CATALOGUE, get_operation, operations_in
from opsgraph.principal import PLAN_FEATURES, Plan, Role

# id: (kind, verb, input fields; "?" marks optional)
CONTRACT: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "members.search": ("read", "search", ("query",)),
    "members.get": ("read", "get", ("member",)),
    "members.update": ("write", "update", ("member", "changes")),
    "members.create": ("write", "create", ("name", "email", "phone?")),
    "bookings.availability": ("read", "check", ("resource", "date")),
    "bookings.list": ("read", "list", ("member?", "date?")),
    "bookings.create": ("write", "create", ("member", "resource", "start", "end")),
    "bookings.cancel": ("write", "cancel", ("booking",)),
    "schedules.shifts": ("read", "list", ("staff?", "date?")),
    "schedules.assign": ("write", "assign", ("staff", "shift")),
    "events.list": ("read", "list", ("from?", "to?")),
    "events.register": ("write", "register", ("member", "event")),
    "events.cancel": ("write", "cancel", ("event", "reason?")),
    "events.create": ("write", "create", ("title", "start", "end", "capacity", "location?")),
    "events.waitlist": ("read", "list", ("event",)),
    "invoices.list": ("read", "list", ("member?", "status?")),
    "invoices.get": ("read", "get", ("invoice",)),
    "invoices.issue": ("write", "issue", ("member", "lines")),
    "invoices.refund": ("write", "refund", ("invoice", "amount", "reason")),
    "communications.send_email": ("write", "send", ("to", "subject", "body")),
    "communications.inbox": ("read", "list", ("status?",)),
    "knowledge.search": ("read", "search", ("query", "filters?")),
    "knowledge.grep": ("read", "search", ("pattern",)),
    "knowledge.get_object": ("read", "get", ("object", "type?")),
    "knowledge.find_objects": ("read", "search", ("type", "where?", "limit?")),
    "knowledge.outline": ("read", "search", ()),
    "knowledge.file_outline": ("read", "get", ("document",)),
    "knowledge.read": ("read", "get", ("document",)),
    "knowledge.read_section": ("read", "get", ("document", "section")),
    "facilities.status": ("read", "check", ("resource?",)),
    "facilities.report_issue": ("write", "create", ("resource", "description")),
    "reports.bookings": ("read", "report", ("from?", "to?")),
    "reports.revenue": ("read", "report", ("from?", "to?")),
    "reports.attendance": ("read", "report", ("from?", "to?")),
}


def test_the_catalogue_is_exactly_the_contract() -> None:
    assert set(CATALOGUE) == set(CONTRACT)


@pytest.mark.parametrize("op_id", sorted(CONTRACT))
def test_kind_verb_and_inputs_match_the_contract(op_id: str) -> None:
    op = get_operation(op_id)
    kind, verb, fields = CONTRACT[op_id]
    assert (op.kind, op.verb) == (kind, verb)
    schema = op.input.model_json_schema(by_alias=True)
    required = set(schema.get("required", []))
    expected = {f.rstrip("?") for f in fields}
    assert set(schema["properties"]) == expected
    assert required == {f for f in fields if not f.endswith("?")}
    assert schema["additionalProperties"] is False
    assert op.tool_name == op_id.replace(".", "_")


def _undocumented(model: type[BaseModel], prefix: str = "") -> list[str]:
    missing = []
    for name, info in model.model_fields.items():
        if not info.description:
            missing.append(prefix + name)
        for arg in _nested_models(info.annotation):
            missing += _undocumented(arg, f"{prefix}{name}.")
    return missing


def _nested_models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in getattr(annotation, "__args__", ()) for m in _nested_models(a)]


@pytest.mark.parametrize("op_id", sorted(CONTRACT))
def test_every_input_field_is_described(op_id: str) -> None:
    op = get_operation(op_id)
    assert _undocumented(op.input) == []
    assert op.description


@pytest.mark.parametrize("op_id", sorted(CONTRACT))
def test_every_handler_takes_the_validated_input_model(op_id: str) -> None:
    # invoke validates the raw arguments once, into op.input; a handler reads that model
    # (or a base of it), never a dict, so its schema and what it reads cannot drift
    op = get_operation(op_id)
    handlers = [h for h in (op.run, op.preview, op.apply, op.authorize) if h is not None]
    assert handlers
    for handler in handlers:
        args = list(inspect.signature(handler).parameters)[1]
        taken = typing.get_type_hints(handler)[args]
        assert isinstance(taken, type) and issubclass(op.input, taken), (handler, taken)


def test_references_point_at_domain_collections() -> None:
    assert get_operation("bookings.create").references == {
        "member": "members", "resource": "resources"}
    assert get_operation("invoices.refund").references == {"invoice": "invoices"}
    assert get_operation("schedules.assign").references == {"staff": "staff", "shift": "shifts"}


def test_visitors_reach_only_knowledge_events_and_availability() -> None:
    visible = {op.id for op in CATALOGUE.values() if Role.VISITOR in op.roles}
    assert visible == {op.id for op in operations_in("knowledge")} | {
        "events.list", "bookings.availability"}
    assert all(CATALOGUE[i].kind == "read" for i in visible)


def test_reports_need_enterprise_and_refunds_need_a_manager() -> None:
    assert all(op.feature == "reports" for op in operations_in("reports"))
    assert "reports" not in PLAN_FEATURES[Plan.PRO]
    assert get_operation("invoices.refund").roles == {Role.MANAGER}


def test_a_tool_name_finds_its_operation() -> None:
    assert get_operation("communications_send_email").id == "communications.send_email"


def test_an_unknown_operation_hints_the_close_ones() -> None:
    with pytest.raises(NotFound) as err:
        get_operation("members.updte")
    assert "members.update" in err.value.message


def test_operations_in_a_domain() -> None:
    assert [op.id for op in operations_in("knowledge")] == [
        "knowledge.file_outline", "knowledge.find_objects", "knowledge.get_object",
        "knowledge.grep", "knowledge.outline", "knowledge.read", "knowledge.read_section",
        "knowledge.search"]
    with pytest.raises(BadInput):
        operations_in("weather")
