"""Field types carry their own constraints (issue 8, finding 8): a value is refused where it
enters, under the field's name, whichever operation it reaches."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError
from pymongo.database import Database

from opsgraph.errors import Unprocessable
from opsgraph.operations.base import Day
from opsgraph.operations.catalogue import CATALOGUE
from opsgraph.operations.fields import Email, Moment, Money, Name, Phone, SignedMoney, Text
from opsgraph.principal import Role
from opsgraph.tools.contract import tool_schema

from .support import call

Document = dict[str, Any]


def refusal(adapter: TypeAdapter[Any], value: object) -> str:
    """The message refusing `value`; fails when it is accepted."""
    with pytest.raises(ValidationError) as caught:
        adapter.validate_python(value)
    return str(caught.value.errors()[0]["msg"])


# --- the types --------------------------------------------------------------------------

NAME = TypeAdapter(Name)
TEXT = TypeAdapter(Text)
EMAIL = TypeAdapter(Email)
PHONE = TypeAdapter(Phone)
MONEY = TypeAdapter(Money)
SIGNED = TypeAdapter(SignedMoney)
MOMENT = TypeAdapter(Moment)


@pytest.mark.parametrize(("value", "words"), [
    ("", "at least 1 character"),
    ("   ", "at least 1 character"),
    ("\u0000", "a control character (U+0000 at position 1)"),
    ("Jane\nSmith", "a control character (U+000A at position 5)"),
    ("Jane\x1b[31m", "a control character (U+001B"),
    ("Ja\ud800ne", "a lone surrogate (U+D800 at position 3)"),
    ("Jane\u202eevil", "a bidirectional override (U+202E"),
    ("Jane\u2028Smith", "a line separator"),
    ("Jane\ue000", "a private-use code point"),
    ("x" * 121, "at most 120 characters"),
])
def test_a_name_is_one_printable_bounded_line(value: str, words: str) -> None:
    assert words in refusal(NAME, value)


def test_names_are_trimmed_and_may_be_any_script() -> None:
    assert NAME.validate_python("  Siobhán O'Connor ") == "Siobhán O'Connor"
    assert NAME.validate_python("محمد\u200cرضا") == "محمد\u200cرضا"  # a ZWNJ is part of a name


def test_long_text_keeps_newlines_and_tabs_only() -> None:
    assert TEXT.validate_python("Hi Jane,\r\n\tsee you at 6.\n") == "Hi Jane,\n\tsee you at 6."
    assert "U+0007" in refusal(TEXT, "ring\x07")
    assert "U+000D" in refusal(TEXT, "old\rmac")
    assert "at most 20000 characters" in refusal(TEXT, "x" * 20_001)


@pytest.mark.parametrize("value", [
    "", "jane", "jane@", "@example.com", "jane@example", "jane@@example.com",
    "jane smith@example.com", "jane@exa mple.com", "jane@-example.com", "jane@example..com",
    "jane@example.c0m", ".jane@example.com", "jane.@example.com", f"{'j' * 65}@example.com",
])
def test_an_email_must_be_an_address(value: str) -> None:
    with pytest.raises(ValidationError):
        EMAIL.validate_python(value)


def test_an_email_is_kept_in_lower_case_and_may_have_an_international_domain() -> None:
    assert EMAIL.validate_python(" Jane.Smith+club@Example.COM ") == "jane.smith+club@example.com"
    assert EMAIL.validate_python("anna@bücher.de") == "anna@bücher.de"
    assert "not a valid email address" in refusal(EMAIL, "jane@example")


@pytest.mark.parametrize("value", [
    "", "555", "+44 1", "07700 900123", "+0 7700 900123", "+44  7700 900123",
    "+44 7700 900123 ext 4", "+1234567890123456", "+44 (0) 7700 900123", "tel:+447700900123",
])
def test_a_phone_must_be_e164(value: str) -> None:
    with pytest.raises(ValidationError):
        PHONE.validate_python(value)


@pytest.mark.parametrize("value", ["+447700900123", "+44 7700 900123", "+1-212-555-0123",
                                   "+49 30 9001 0001", "+6834002"])
def test_international_numbers_pass_as_written(value: str) -> None:
    assert PHONE.validate_python(value) == value


@pytest.mark.parametrize("value", [1e-9, 0.001, "10.005", 0.1 + 0.2, 0, -5, "NaN", "Infinity",
                                   100_000.01, True, "ten"])
def test_money_has_whole_cents_and_is_positive_and_bounded(value: object) -> None:
    with pytest.raises(ValidationError):
        MONEY.validate_python(value)


def test_money_is_decimal_and_reads_as_a_json_number() -> None:
    assert MONEY.validate_python(199.99) == Decimal("199.99")
    assert MONEY.validate_python("12.5") == Decimal("12.50")
    assert MONEY.dump_python(Decimal("199.99"), mode="json") == 199.99
    assert SIGNED.validate_python(-10) == Decimal("-10.00")
    assert "2 decimal places" in refusal(SIGNED, -0.001)


def test_a_moment_stays_within_the_days_operations_accept() -> None:
    assert MOMENT.validate_python("2030-01-10T18:00:00+01:00").isoformat() == \
        "2030-01-10T17:00:00+00:00"
    assert MOMENT.validate_python("2030-01-10T18:00").tzinfo is not None
    assert "outside the days accepted" in refusal(MOMENT, "9999-12-31T23:00:00-05:00")


def test_a_day_given_a_moment_is_that_day() -> None:
    """A model asked for a day often sends a timestamp ('bookings made today' came as
    '2026-12-01T10:00:00' in a real-model run and failed the read): the day it names."""
    day = TypeAdapter(Day)
    assert day.validate_python("2026-12-01T10:00:00").isoformat() == "2026-12-01"
    assert day.validate_python("2026-12-01 18:30").isoformat() == "2026-12-01"
    assert day.validate_python(datetime(2026, 12, 1, 9, tzinfo=UTC)).isoformat() == "2026-12-01"
    assert day.validate_python("2026-12-01").isoformat() == "2026-12-01"
    assert "valid date" in refusal(day, "2026-13-01T10:00:00")
    assert "valid date" in refusal(day, "tomorrow")


# --- every operation uses them ----------------------------------------------------------

def _string_fields(model: type[BaseModel], prefix: tuple[str | int, ...] = (),
                   ) -> list[tuple[str | int, ...]]:
    """The path of every free-text field of `model`, into nested models and lists."""
    paths: list[tuple[str | int, ...]] = []
    for name, info in model.model_fields.items():
        here = (*prefix, info.alias or name)
        optional = get_origin(info.annotation) in (Union, UnionType)
        for kind in get_args(info.annotation) if optional else (info.annotation,):
            if get_origin(kind) is Annotated:
                kind = get_args(kind)[0]
            if kind is str:
                paths.append(here)
            elif isinstance(kind, type) and issubclass(kind, BaseModel):
                paths.extend(_string_fields(kind, here))
            elif get_origin(kind) is list and issubclass(get_args(kind)[0], BaseModel):
                paths.extend(_string_fields(get_args(kind)[0], (*here, 0)))
    return paths


def _nested(path: tuple[str | int, ...], value: object) -> Any:
    for key in reversed(path):
        value = [value] if isinstance(key, int) else {key: value}
    return value


def _problems_at(op_id: str, path: tuple[str | int, ...], value: object) -> list[str]:
    try:
        CATALOGUE[op_id].input.model_validate(_nested(path, value))
    except ValidationError as exc:
        return [str(e["type"]) for e in exc.errors() if tuple(e["loc"]) == path]
    return []


OPERATIONS = [op_id for op_id, op in CATALOGUE.items() if _string_fields(op.input)]


@pytest.mark.parametrize("op_id", OPERATIONS)
def test_every_text_field_of_every_operation_refuses_control_characters_and_is_bounded(
        op_id: str) -> None:
    for path in _string_fields(CATALOGUE[op_id].input):
        assert _problems_at(op_id, path, "ok\u0000") == ["unprintable_character"], path
        assert _problems_at(op_id, path, "ok\ud800") == ["unprintable_character"], path
        assert _problems_at(op_id, path, "x" * 100_001) == ["string_too_long"], path


def test_tool_schemas_stay_plain_for_models() -> None:
    """Money reads as a number and no pattern reaches a model (a grammar-constrained server
    compiles what it sees)."""
    refund = tool_schema(CATALOGUE["invoices.refund"], "preview")["parameters"]
    assert refund["properties"]["amount"]["type"] == "number"
    update = tool_schema(CATALOGUE["members.update"], "preview")
    assert "pattern" not in str(update)
    # an optional field reads as its own type (left out when not changed), not "X or null"
    phone = update["parameters"]["$defs"]["MemberChanges"]["properties"]["phone"]
    assert phone["type"] == "string" and "anyOf" not in phone and "default" not in phone


# --- finding 8 as it was found: a direct edit -------------------------------------------

@pytest.mark.parametrize(("changes", "field", "words"), [
    ({"phone": ""}, "changes.phone", "at least 1 character"),
    ({"phone": "555"}, "changes.phone", "not an international phone number"),
    ({"name": "\u0000"}, "changes.name", "control character (U+0000"),
    ({"email": "jane@"}, "changes.email", "not a valid email address"),
    ({"notes": "late\x00"}, "changes.notes", "control character"),
])
def test_a_direct_edit_with_a_bad_value_is_refused_naming_the_field(
        seeded: Database[Document], changes: Document, field: str, words: str) -> None:
    before = seeded["members"].find_one({"tenant_id": "demo", "name": "Jane Smithson"})
    assert before is not None
    with pytest.raises(Unprocessable) as caught:
        call(seeded, Role.MANAGER, "members.update", {"member": "Jane Smithson",
                                                      "changes": changes})
    [problem] = caught.value.detail["errors"]
    assert problem["field"] == field and words in problem["message"]
    assert field in caught.value.message
    assert seeded["members"].find_one({"_id": before["_id"]}) == before


@pytest.mark.parametrize(("op_id", "args", "field"), [
    ("members.create", {"name": "\u0000", "email": "new@example.com"}, "name"),
    ("communications.send_email", {"to": "Jane Smith", "subject": "Hi\r\nBcc: x@evil.example",
                                   "body": "Hello"}, "subject"),
    ("events.create", {"title": "Quiz\u202e", "start": "2030-02-01T18:00",
                       "end": "2030-02-01T19:00", "capacity": 5}, "title"),
    ("facilities.report_issue", {"resource": "Court 1", "description": "\x00\x00\x00\x00\x00"},
     "description"),
    ("invoices.issue", {"member": "Jane Smith", "lines": [
        {"description": "Fee\x07", "amount": 10}]}, "lines.0.description"),
])
def test_direct_calls_refuse_unprintable_text_naming_the_field(
        seeded: Database[Document], op_id: str, args: Document, field: str) -> None:
    with pytest.raises(Unprocessable) as caught:
        call(seeded, Role.ADMIN, op_id, args)
    assert [e["field"] for e in caught.value.detail["errors"]] == [field]


@pytest.mark.parametrize(("op_id", "args", "field"), [
    ("schedules.shifts", {"date": "9999-12-31"}, "date"),
    ("bookings.create", {"member": "Jane Smith", "resource": "Court 1",
                         "start": "9999-12-31T23:00:00-05:00",
                         "end": "9999-12-31T23:30:00-05:00"}, "start"),
    ("events.create", {"title": "Gala", "start": "2030-02-01T18:00",
                       "end": "9999-12-31T23:59:59-12:00", "capacity": 5}, "end"),
])
def test_days_and_times_far_out_are_refused_not_overflowed(
        shared_db: Database[Document], op_id: str, args: Document, field: str) -> None:
    with pytest.raises(Unprocessable) as caught:
        call(shared_db, Role.ADMIN, op_id, args)
    assert field in [e["field"] for e in caught.value.detail["errors"]]
