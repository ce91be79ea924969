"""invoke: one order of checks for every caller, one error mapping, one audit row per
direct write; the guard and direct calls only present what it decides."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pymongo.database import Database

from opsgraph.errors import BadInput, Forbidden, NotFound, OpsgraphError, Unprocessable
from opsgraph.operations.catalogue import get_operation
from opsgraph.operations.invoke import invoke, new_change_id, plan_of
from opsgraph.principal import Plan, Role
from opsgraph.store.scope import TenantScope
from opsgraph.tools.guard import guard

from .support import NOW, call, context, person, snapshot

Document = dict[str, Any]
UPDATE = get_operation("members.update")
PHONE = "+44 7700 900123"


@pytest.mark.parametrize("args", [
    {"member": "Jane Smith", "changes": {"phone": PHONE}},  # exists
    {"member": "Nobody Atall", "changes": {"phone": PHONE}},  # does not exist
    {"member": "tom baker", "changes": {"phone": PHONE}},  # two of them
    {"member": "Jane Smith", "changes": {"colour": "red"}},  # not a field
    ["not", "an", "object"],
])
def test_the_gate_refuses_before_the_arguments_are_read(shared_db: Database[Document],
                                                        args: Any) -> None:
    # A member may not update member records at all: every caller is refused by the role
    # gate in the same words, whatever the arguments name, so a refusal tells nothing
    # about who exists. (The guard used to validate and resolve first: an unknown name was
    # "not found", two Tom Bakers listed both, a bad field asked for a retry.)
    ctx = context(shared_db, Role.MEMBER)
    with pytest.raises(Forbidden) as err:
        invoke(UPDATE, ctx, args, "preview")
    assert err.value.detail == {"gate": "role"}
    assert err.value.message.startswith("members.update needs one of: ")
    outcome = guard(UPDATE, ctx, "preview", Plan.PRO)(args)
    assert not outcome.ok and outcome.content == err.value.message


def test_an_unknown_field_is_answered_with_the_fields_that_exist(
        shared_db: Database[Document]) -> None:
    args = {"member": "Jane Smith", "changes": {"surname": "B"}}
    with pytest.raises(Unprocessable) as err:
        invoke(UPDATE, context(shared_db, Role.STAFF), args, "preview")
    [problem] = err.value.detail["errors"]
    assert problem["field"] == "changes.surname"
    assert problem["message"].startswith("Extra inputs are not permitted (allowed: name, email")
    assert err.value.message == f"members.update: changes.surname: {problem['message']}"
    # A direct call answers the same (it used to leave the allowed fields out) ...
    with pytest.raises(Unprocessable) as direct:
        call(shared_db, Role.STAFF, "members.update", args)
    assert direct.value.detail == err.value.detail
    # ... and the guard tells the model the same problems, asking for the call again.
    outcome = guard(UPDATE, context(shared_db, Role.STAFF), "preview", Plan.PRO)(args)
    assert not outcome.ok
    assert outcome.content == (f"invalid arguments for members_update: changes.surname: "
                               f"{problem['message']}; call it again with corrected arguments")


@pytest.mark.parametrize("args", [["member"], "member=Jane", None, 7])
def test_arguments_must_be_an_object(shared_db: Database[Document], args: Any) -> None:
    with pytest.raises(BadInput, match=r"^args: expected a JSON object, got "):
        invoke(UPDATE, context(shared_db, Role.STAFF), args, "preview")
    outcome = guard(UPDATE, context(shared_db, Role.STAFF), "preview", Plan.PRO)(args)
    assert not outcome.ok and str(outcome.content).startswith("args: expected a JSON object")


def test_an_ambiguous_name_lists_the_candidates_for_the_model(
        shared_db: Database[Document]) -> None:
    outcome = guard(UPDATE, context(shared_db, Role.STAFF), "preview", Plan.PRO)(
        {"member": "tom baker", "changes": {"phone": PHONE}})
    assert not outcome.ok
    assert [c["id"] for c in outcome.content["candidates"]] == ["mem_demo_004", "mem_demo_005"]
    assert outcome.content["next"] == "ask which one is meant, or call with the id"


@pytest.mark.parametrize(("op_id", "mode"), [
    ("members.get", "preview"), ("members.get", "apply"), ("members.update", "read"),
])
def test_the_mode_must_fit_the_operation(seeded: Database[Document], op_id: str,
                                         mode: Any) -> None:
    before = snapshot(seeded)
    with pytest.raises(BadInput, match=f"cannot be called to {mode}"):
        invoke(get_operation(op_id), context(seeded), {"member": "Jane Smith"}, mode)
    assert snapshot(seeded) == before


def test_a_preview_resolves_names_and_writes_nothing(seeded: Database[Document]) -> None:
    before = snapshot(seeded)
    out = invoke(UPDATE, context(seeded, Role.STAFF),
                 {"member": "jane.smith@example.com", "changes": {"phone": PHONE}}, "preview")
    assert out.json_args == {"member": "mem_demo_001", "changes": {"phone": PHONE}}
    assert out.preview.new == {"phone": PHONE}
    assert snapshot(seeded) == before


def test_apply_applies_once_under_a_new_change_id_and_audits_one_row(
        seeded: Database[Document]) -> None:
    scope = TenantScope(seeded, "demo")
    out = invoke(UPDATE, context(seeded, person(Role.STAFF, user="staff-liam")),
                 {"member": "Jane Smith", "changes": {"phone": PHONE}}, "apply")
    assert re.fullmatch(r"chg_[0-9a-f]{16}", out.change_id)
    member = scope["members"].find_one({"_id": "mem_demo_001"})
    assert member is not None and member["phone"] == PHONE
    assert list(seeded["audit"].find({}, {"_id": 0})) == [{
        "tenant_id": "demo", "change_id": out.change_id, "operation": "members.update",
        "from": None, "to": "applied", "actor": "staff-liam", "thread_id": None, "at": NOW,
        "detail": {"via": "direct", "summary": out.preview.summary,
                   "args": {"member": "mem_demo_001", "changes": {"phone": PHONE}}}}]


@pytest.mark.parametrize(("who", "args", "error"), [
    (Role.MEMBER, {"member": "Jane Smith", "changes": {"phone": PHONE}}, Forbidden),
    (Role.STAFF, {"member": "Jane Smith", "changes": {}}, Unprocessable),
    (Role.STAFF, {"member": "Nobody Atall", "changes": {"phone": PHONE}}, NotFound),
])
def test_a_refused_apply_writes_nothing(seeded: Database[Document], who: Role,
                                        args: Document, error: type[OpsgraphError]) -> None:
    before = snapshot(seeded)
    with pytest.raises(error):
        invoke(UPDATE, context(seeded, who), args, "apply")
    assert snapshot(seeded) == before


def test_the_plan_is_the_tenants_unless_the_caller_knows_it(
        shared_db: Database[Document]) -> None:
    acme = context(shared_db, person(Role.MANAGER, tenant="acme"))
    events = get_operation("events.list")
    with pytest.raises(Forbidden) as err:
        invoke(events, acme, {}, "read")
    assert err.value.detail == {"gate": "entitlement"}
    assert invoke(events, acme, {}, "read", plan=Plan.PRO).result.data is not None


def test_plan_of_reads_the_tenant_document(shared_db: Database[Document]) -> None:
    assert plan_of(TenantScope(shared_db, "demo")) is Plan.PRO
    assert plan_of(TenantScope(shared_db, "acme")) is Plan.BASIC
    assert plan_of(TenantScope(shared_db, "nobody")) is Plan.BASIC


def test_change_ids_are_fresh() -> None:
    ids = {new_change_id() for _ in range(100)}
    assert len(ids) == 100 and all(re.fullmatch(r"chg_[0-9a-f]{16}", i) for i in ids)


def test_the_guard_reads_an_empty_optional_argument_as_not_given(
        shared_db: Database[Document]) -> None:
    # the local model's `bookings_list {member: ""}` for "who's got court 2 booked today?"
    # (held-out bookings-09, 2026-12-02) was refused for the empty member it did not mean
    listing_op = get_operation("bookings.list")
    ctx = context(shared_db, Role.STAFF)
    with pytest.raises(Unprocessable, match="member: String should have at least 1"):
        invoke(listing_op, ctx, {"member": "", "date": "2026-12-02"}, "read")
    outcome = guard(listing_op, ctx, "read", Plan.PRO)({"member": " ", "date": "2026-12-02"})
    assert outcome.ok, outcome.content
    assert outcome.content == guard(listing_op, ctx, "read", Plan.PRO)(
        {"date": "2026-12-02"}).content
    # a required field keeps its empty value, for the error to name it
    outcome = guard(UPDATE, ctx, "preview", Plan.PRO)({"member": "", "changes": {}})
    assert not outcome.ok and "member" in str(outcome.content)
