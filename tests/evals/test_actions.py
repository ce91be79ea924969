"""tool_choice, interrupts and preview: each passes a good run and catches a seeded fault."""

from __future__ import annotations

from opsgraph.evals.actions import interrupts, preview, tool_choice
from opsgraph.evals.records import RunRecord
from tests.evals.builders import PHONE_CARD, call, card, fails, make_case, make_run, passes, task

PLAN = [task("t1", "members", "update")]
SEARCH = call("members_search", {"query": "Emily Chen"},
              {"members": [{"id": "mem_demo_008", "name": "Emily Chen"}]})


def proposed(**card_fields: object) -> RunRecord:
    """A run that looked Emily up and raised the phone card (fields replaced)."""
    return make_run(plan=PLAN, tasks={"t0": ("completed", [SEARCH])},
                    cards=[card(**card_fields)])


def test_tool_choice_passes_the_right_tools_and_args_by_name_or_id() -> None:
    case = make_case(tools_contains=["members_update", "members.search"],
                     tools_absent=["members_create"],
                     args={"members_update": {"member": "Emily Chen",
                                              "changes": {"phone": "+447700900555"}},
                           "members.search": {"query": "emily chen"}})
    assert passes(tool_choice(case, proposed()))


def test_tool_choice_catches_wrong_tool_args() -> None:
    case = make_case(args={"members_update": {"member": "Jane Smith"}})
    assert fails(tool_choice(case, proposed()), "members_update: no call with",
                 '"member": "Jane Smith"', "mem_demo_008")


def test_tool_choice_catches_a_missing_and_a_forbidden_tool() -> None:
    run = make_run(plan=PLAN, tasks={"t1": ("no_proposal", [SEARCH])})
    case = make_case(tools_contains=["members_update"], tools_absent=["members_search"])
    assert fails(tool_choice(case, run), "members_update was not called",
                 "members_search was called")
    assert tool_choice(make_case(), run) is None


def test_tool_choice_matches_ids_shown_only_by_a_tool_result() -> None:
    # No store names for this member: the search result shows the id ↔ name pair.
    found = call("members_search", {"query": "Priya"},
                 {"members": [{"id": "mem_demo_044", "name": "Priya Patel"}]})
    got = call("members_get", {"member": "mem_demo_044"}, {"id": "mem_demo_044"})
    run = make_run(plan=PLAN, tasks={"t1": ("completed", [found, got])})
    assert passes(tool_choice(make_case(args={"members_get": {"member": "Priya Patel"}}), run))
    assert fails(tool_choice(make_case(args={"members_get": {"member": "Raj Mehta"}}), run))


def test_tool_choice_compares_dates_by_day_and_numbers_by_value() -> None:
    check = call("bookings_availability", {"resource": "res_demo_court1",
                                           "date": "2030-01-07T18:00:00+00:00"})
    refund = call("invoices_refund", {"invoice": "inv_1", "amount": "20.00"})
    run = make_run(plan=PLAN, tasks={"t1": ("completed", [check, refund])})
    case = make_case(args={"bookings_availability": {"resource": "Court 1", "date": "2030-01-07"},
                           "invoices_refund": {"amount": 20}})
    assert passes(tool_choice(case, run))
    wrong_day = make_case(args={"bookings_availability": {"date": "2030-01-08"}})
    assert fails(tool_choice(wrong_day, run), "bookings_availability")


def test_interrupts_pass_the_expected_card() -> None:
    case = make_case(interrupts=[{"operation": "members.update",
                                  "args": {"member": "Emily Chen"}}])
    assert passes(interrupts(case, proposed()))


def test_interrupts_catch_a_write_without_an_interrupt() -> None:
    case = make_case(interrupts=[{"operation": "members.update"}])
    silent = make_run(plan=PLAN, tasks={"t1": ("no_proposal", [SEARCH])},
                      answer="Emily Chen's phone is changed.")
    assert fails(interrupts(case, silent), "expected cards ['members.update']; raised none")


def test_interrupts_catch_an_unexpected_card_and_wrong_card_args() -> None:
    assert fails(interrupts(make_case(interrupts=[]), proposed()), "expected cards none")
    other = make_case(interrupts=[{"operation": "members.update",
                                   "args": {"changes": {"phone": "+44 7700 900999"}}}])
    assert fails(interrupts(other, proposed()), "card arguments differ")


def test_a_denied_request_must_change_nothing() -> None:
    denied = make_case(role="member", denied=True)
    refused = make_run(plan=PLAN, tasks={"t1": ("denied", [])}, answer="You may not do that.")
    assert passes(interrupts(denied, refused))
    assert fails(interrupts(denied, proposed()), "raised 1 card(s)")
    allowed = make_case(denied=False)
    assert fails(interrupts(allowed, refused), "a gate refused t1")
    assert interrupts(make_case(), refused) is None


def test_preview_passes_a_card_that_shows_its_change() -> None:
    run = make_run(plan=PLAN, cards=[PHONE_CARD], before={"phone": "+44 7700 900788"})
    assert passes(preview(make_case(), run))
    assert preview(make_case(), make_run(plan=PLAN)) is None


def test_preview_catches_new_that_does_not_match_the_args() -> None:
    assert fails(preview(make_case(), proposed(new={"phone": "+44 7700 900999"})),
                 "members.update: new", "is not the argument")
    assert fails(preview(make_case(), proposed(new={})), "new lacks phone")


def test_preview_reads_a_null_argument_as_not_given() -> None:
    """A real model sent `changes: {status: cancelled, email: null, phone: null, ...}`; the
    operation reads null as not given, so a card that changes the status alone is right."""
    nulls = {"member": "mem_demo_008",
             "changes": {"phone": "+44 7700 900555", "email": None, "notes": None}}
    assert passes(preview(make_case(), proposed(args=nulls)))
    assert fails(preview(make_case(), proposed(args=nulls, new={})), "new lacks phone")


def test_preview_catches_an_old_value_the_record_does_not_hold() -> None:
    run = make_run(plan=PLAN, cards=[PHONE_CARD], before={"phone": "+44 7700 900111"})
    assert fails(preview(make_case(), run), "old phone", "the record holds")
    assert fails(preview(make_case(), proposed(old={"email": "x@example.com"})),
                 "old names email")


def test_preview_catches_a_summary_that_does_not_name_the_change() -> None:
    assert fails(preview(make_case(), proposed(summary="Update a member")),
                 "the summary does not name phone")
    assert fails(preview(make_case(), proposed(summary=" ")), "the summary is empty")
    booking = {"change_id": "chg_2", "operation": "bookings.create", "task_id": "t1",
               "summary": "Book Court 1 for Emily Chen on Tue 7 Jan 18:00–19:00", "old": {},
               "new": {"member_id": "mem_demo_008", "resource_id": "res_demo_court1",
                       "start": "2030-01-07T18:00:00+00:00"},
               "args": {"member": "mem_demo_008", "resource": "res_demo_court1",
                        "start": "2030-01-07T18:00:00"}}
    assert passes(preview(make_case(), make_run(plan=PLAN, cards=[booking])))
    vague = {**booking, "summary": "Make a booking"}
    assert fails(preview(make_case(), make_run(plan=PLAN, cards=[vague])),
                 "names neither the record nor a value")
