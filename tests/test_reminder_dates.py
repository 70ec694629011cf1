"""Reminder dates are the user's calendar dates: across daylight-saving changes and around midnight UTC."""

from __future__ import annotations

import time
import zoneinfo
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from datetime import time as dt_time
from pathlib import Path

import pytest

from mcp_multi_gmail.config import ConfigError, load_config
from mcp_multi_gmail.config.zone import UserZone, zone_line, zone_problem
from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.mail.reminding import is_due
from mcp_multi_gmail.policy import reminders as family

PRAGUE = UserZone("Europe/Prague")


def test_dates_follow_prague_across_both_daylight_saving_changes() -> None:
    # 29 March 2026: 02:00 CET becomes 03:00 CEST; 25 October 2026: 03:00 CEST becomes 02:00 CET.
    assert family.Reminder("revisit", date(2026, 3, 28), time_of(9)).due_at(PRAGUE) == utc(2026, 3, 28, 8)
    assert family.Reminder("revisit", date(2026, 3, 29), time_of(9)).due_at(PRAGUE) == utc(2026, 3, 29, 7)
    assert family.Reminder("revisit", date(2026, 10, 25), time_of(9)).due_at(PRAGUE) == utc(2026, 10, 25, 8)
    # The day starts at local midnight, whose UTC time moves with the offset.
    assert PRAGUE.start_of(date(2026, 3, 29)) == utc(2026, 3, 28, 23)
    assert PRAGUE.start_of(date(2026, 3, 30)) == utc(2026, 3, 29, 22)
    # 02:30 on 29 March does not exist in Prague: read with the offset before the change.
    assert family.Reminder("reply", date(2026, 3, 29), time_of(2, 30)).due_at(PRAGUE) == utc(2026, 3, 29, 1, 30)


def test_a_day_is_due_by_the_users_calendar_not_by_utc() -> None:
    reminder = family.Reminder("reply", date(2026, 12, 7))
    assert is_due(reminder, PRAGUE, utc(2026, 12, 6, 23, 30))  # 00:30 on the 7th in Prague
    assert not is_due(reminder, PRAGUE, utc(2026, 12, 6, 22, 59))
    new_york = UserZone("America/New_York")
    assert not is_due(reminder, new_york, utc(2026, 12, 7, 3))  # still the 6th there
    assert is_due(reminder, new_york, utc(2026, 12, 7, 5))


def test_on_is_checked_in_the_users_zone() -> None:
    late = utc(2026, 12, 6, 23, 30)
    assert family.check_on("2026-12-07", "reply", PRAGUE, late).day == date(2026, 12, 7)
    with pytest.raises(MailError, match="already past"):
        family.check_on("2026-12-06", "reply", PRAGUE, late)  # still today in UTC, yesterday in Prague
    with pytest.raises(MailError, match="already past"):
        family.check_on("2026-12-07T00:29", "reply", PRAGUE, late)
    assert family.check_on("2026-12-07T00:31", "reply", PRAGUE, late).at == time_of(0, 31)


@pytest.fixture
def new_york_local(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("new_york_local")
def test_the_machines_local_zone_by_default_across_its_change() -> None:
    local = UserZone(None)
    # 8 March 2026: 02:00 EST becomes 03:00 EDT in New York.
    assert local.moment(datetime(2026, 3, 7, 9, 0)) == utc(2026, 3, 7, 14)
    assert local.moment(datetime(2026, 3, 8, 9, 0)) == utc(2026, 3, 8, 13)
    assert local.today(utc(2026, 3, 8, 4, 30)) == date(2026, 3, 7)
    assert local.today(utc(2026, 3, 8, 5, 30)) == date(2026, 3, 8)


def test_without_the_zone_database_only_the_local_zone_is_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> zoneinfo.ZoneInfo:
        raise zoneinfo.ZoneInfoNotFoundError(name)

    monkeypatch.setattr(zoneinfo, "ZoneInfo", missing)
    problem = zone_problem("Europe/Prague")
    assert problem is not None and "nemá databázi časových pásem" in problem
    assert "nemá databázi časových pásem" in zone_line(None)


def test_an_unknown_zone_name_is_refused_in_czech() -> None:
    problem = zone_problem("Europe/Brno")
    assert problem == '"timezone" je "Europe/Brno", takové časové pásmo neznám; čeká se třeba "Europe/Prague"'
    assert zone_line("Europe/Prague") == "Data připomínek: časové pásmo Europe/Prague."


def time_of(hour: int, minute: int = 0) -> dt_time:
    return datetime(2000, 1, 1, hour, minute).time()


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def test_follow_up_settings_in_the_configuration(write_config: Callable[..., Path]) -> None:
    account = {"name": "o", "address": "osobni@example.cz", "password": "osobniheslohesla"}
    config = load_config(write_config([{**account, "follow_up_after": "36h"}], follow_up_after="5d"), environ={})
    assert config.accounts[0].follow_up_after_s == 36 * 3600 and config.accounts[0].reminder_label == "Připomínky"
    config = load_config(write_config([account], follow_up_after="5d", timezone="Europe/Prague"), environ={})
    assert config.accounts[0].follow_up_after_s == 5 * 86400 and config.zone == UserZone("Europe/Prague")
    with pytest.raises(ConfigError) as refused:
        load_config(write_config([{**account, "follow_up_after": "brzy"}], timezone="Mars/Olymp"), environ={})
    report = str(refused.value)
    assert '"follow_up_after" je "brzy"' in report and '"timezone" je "Mars/Olymp"' in report
