"""policy/reminders: the reminder labels' own family, their names, and every refusal of a reminder."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

import pytest

from mcp_multi_gmail.config.zone import UserZone
from mcp_multi_gmail.policy import reminders as family
from mcp_multi_gmail.policy.reminders import Reminder
from policy_refusals import refused

P = "Připomínky"
PRAGUE = UserZone("Europe/Prague")
NOW = datetime(2026, 12, 6, 10, 0, tzinfo=UTC)


def test_names_say_the_date_the_time_and_the_kind() -> None:
    assert family.label_name(P, Reminder("reply", date(2026, 12, 7))) == "Připomínky/2026-12-07 odpověď"
    assert (
        family.label_name(P, Reminder("revisit", date(2026, 12, 7), time(9, 5))) == "Připomínky/2026-12-07 09.05 znovu"
    )
    assert family.expect_nothing_label(P) == "Připomínky/nic nečekám"
    assert family.parse_label(P, "Připomínky/2026-12-07 09.05 znovu") == Reminder(
        "revisit", date(2026, 12, 7), time(9, 5)
    )
    assert family.parse_label(P, "připomínky/2026-12-07 odpověď") == Reminder("reply", date(2026, 12, 7))
    assert Reminder("revisit", date(2026, 12, 7), time(9, 5)).shown == "2026-12-07T09:05"
    assert Reminder("reply", date(2026, 12, 7)).shown == "2026-12-07"


@pytest.mark.parametrize(
    "label",
    [
        "Připomínky/moje",  # the user's own sublabel
        "Připomínky/2026-02-30 odpověď",  # no such day: not a name this server writes
        "Připomínky/2026-12-07 25.00 znovu",
        "Připomínky/2026-12-07 later",
        "Připomínky/2026-12-07",
        "Připomínky/x/2026-12-07 odpověď",
        "Jiné/2026-12-07 odpověď",
        "Zpracovano/2026-12-07 odpověď",  # another parent as long as "Připomínky/"
        "Připomínky",
        "Připomínky2026-12-07 odpověď",
    ],
)
def test_anything_else_under_the_parent_is_the_users_own(label: str) -> None:
    assert family.parse_label(P, label) is None
    assert not family.is_family(P, label)


def test_the_family_is_the_dated_labels_and_the_expect_nothing_mark() -> None:
    assert family.is_family(P, "Připomínky/2026-12-07 odpověď")
    assert family.is_family(P, "Připomínky/nic nečekám") and family.is_expect_nothing(P, "připomínky/Nic nečekám")
    assert not family.is_expect_nothing(P, "Připomínky/nic")
    assert not family.is_expect_nothing(P, "Jiné/nic nečekám")


def test_calendar_answers_by_their_subject() -> None:
    assert family.is_calendar_answer("Accepted: Porada v pondělí")
    assert family.is_calendar_answer("Přijato: Porada")
    assert not family.is_calendar_answer("Porada: accepted")
    assert not family.is_calendar_answer(None)


def test_due_times_and_day_starts() -> None:
    assert Reminder("reply", date(2026, 12, 7)).due_at(PRAGUE) == datetime(2026, 12, 6, 23, 0, tzinfo=UTC)
    assert Reminder("reply", date(2026, 12, 7), time(9, 0)).due_at(PRAGUE) == datetime(2026, 12, 7, 8, 0, tzinfo=UTC)
    assert Reminder("reply", date(2026, 12, 7)).sort_key < Reminder("reply", date(2026, 12, 7), time(0, 1)).sort_key


def test_accepted_dates() -> None:
    assert family.check_on("2026-12-06", "reply", PRAGUE, NOW) == Reminder("reply", date(2026, 12, 6))  # today
    assert family.check_on(" 2026-12-06T11:30 ", "revisit", PRAGUE, NOW) == Reminder(
        "revisit", date(2026, 12, 6), time(11, 30)
    )
    assert family.check_on("2026-12-06 11:30:00", "reply", PRAGUE, NOW).at == time(11, 30)
    assert family.check_on("2028-12-06", "reply", PRAGUE, NOW).day == date(2028, 12, 6)  # two years ahead
    # The last day allowed is the one the refusal names (2 × 366 days after today), and it is allowed.
    assert family.check_on("2028-12-07", "reply", PRAGUE, NOW).day == date(2028, 12, 7)
    refused(lambda: family.check_on("2028-12-08", "reply", PRAGUE, NOW), "invalid_input", "on or before 2028-12-07")


def test_an_unreadable_date_is_quoted_in_at_most_60_characters() -> None:
    err = refused(lambda: family.check_on("a" * 60 + "Z", "reply", PRAGUE, NOW), "invalid_input", "a" * 60)
    assert "Z" not in err.message.split("not a date")[0]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("2026-12-05", "already past"),
        ("2026-12-06T11:00", "already past"),  # 10:00 UTC is 11:00 in Prague
        ("2029-01-01", "more than two years ahead"),
        ("zítra", "not a date"),
        ("2026-13-01", "not a date"),
        ("2026-12-06T24:00", "not a date"),
        ("06.12.2026", "not a date"),
        ("", "not a date"),
    ],
)
def test_refused_dates(text: str, words: str) -> None:
    refused(lambda: family.check_on(text, "reply", PRAGUE, NOW), "invalid_input", words, "Nothing was changed")


def test_kinds() -> None:
    assert family.check_kind("reply") == "reply" and family.check_kind("revisit") == "revisit"
    refused(lambda: family.check_kind("odpověď"), "invalid_input", '"reply" or "revisit"')


@pytest.mark.parametrize(
    ("parent", "processed", "classifications"),
    [
        ("processed", "processed", {}),
        ("Processed", "processed", {}),
        ("Asistent", None, {"Asistent/akce": "akce"}),
        ("Asistent/akce/Připomínky", None, {"Asistent/akce": "akce"}),
        ("zpracováno/x", "zpracováno", {}),
    ],
)
def test_a_parent_that_clashes_is_refused(parent: str, processed: str | None, classifications: dict[str, str]) -> None:
    refused(lambda: family.check_parent("o", parent, processed, classifications), "label_forbidden", "clashes")


def test_a_parent_of_its_own_is_fine_and_a_broken_one_refused() -> None:
    family.check_parent("o", P, "processed", {"Asistent/akce": "akce", "Připomínky-staré": "x"})
    for parent in ("XXXX", "Připomínky", "Čeká"):  # no processed label and no classification: nothing to clash with
        family.check_parent("o", parent, None, {})
    refused(lambda: family.check_parent("o", "\\Inbox", None, {}), "label_forbidden", "cannot be a label")
    refused(lambda: family.check_parent("o", "a\nb", None, {}), "label_forbidden", "cannot be a label")
    refused(lambda: family.check_parent("o", " ", None, {}), "label_forbidden", "cannot be a label")
