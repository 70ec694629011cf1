"""`mcp-multi-gmail probe` against the emulator: under each knob setting it reports that setting.

The probe is how a real account tells the emulator what Gmail does; if it cannot read the
emulator's own settings back, its report on a real account would be worth nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import fields
from datetime import UTC, datetime, time, timedelta
from email.message import EmailMessage
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from gmail_emulator import FaultRule, GmailEmulator, Knobs
from gmail_emulator.knobs import ENGLISH_FOLDERS, GERMAN_FOLDERS
from mcp_multi_gmail import cli
from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.gmail.endpoint import resolve_endpoint
from mcp_multi_gmail.gmail.probe import ProbeReport, run_probe
from support import gmail_env

ADDRESS = "sonda@example.cz"
PASSWORD = "sondaheslosonda1"
ZONES = ["America/Los_Angeles", "UTC", "Europe/Prague", "Pacific/Kiritimati"]
TODAY = datetime.now(UTC).date()
KNOBS = {f.name for f in fields(Knobs)}


def mail(mid: str, subject: str = "Zpráva") -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = "Petr <petr@example.org>"
    msg["To"] = ADDRESS
    msg["Subject"] = subject
    msg["Message-ID"] = f"<{mid}@example.org>"
    msg.set_content("Text.")
    return msg


@pytest.fixture
def mailbox(emulator: GmailEmulator) -> GmailEmulator:
    """A mailbox with mail a few minutes either side of each test zone's midnight on three days,
    a flat and a nested label, and one message in Trash."""
    emulator.add_account(ADDRESS, PASSWORD, labels=["Práce", "Projekt/Alfa"])
    n = 0
    for back in (3, 4, 5):
        day = TODAY - timedelta(days=back)
        for zone in ZONES:
            midnight = datetime.combine(day, time.min, ZoneInfo(zone))
            for shift in (-5, 5):
                n += 1
                emulator.deliver(ADDRESS, mail(f"m{n}"), internaldate=midnight + timedelta(minutes=shift))
    emulator.deliver(ADDRESS, mail("prace-1"), labels=["\\Inbox", "Práce"])
    emulator.deliver(ADDRESS, mail("alfa-1"), labels=["\\Inbox", "Projekt/Alfa"])
    emulator.deliver(ADDRESS, mail("vlakno-1", "Porada"), labels=["\\Inbox"])
    emulator.deliver(ADDRESS, mail("smeti"), location="trash")
    return emulator


def probe(emulator: GmailEmulator, *, write_test: bool = False) -> ProbeReport:
    endpoint = resolve_endpoint(gmail_env(emulator))
    return run_probe("sonda", ADDRESS, PASSWORD, endpoint, write_test=write_test, today=TODAY)


@pytest.mark.parametrize("zone", ZONES)
def test_the_probe_finds_the_zone_since_uses(mailbox: GmailEmulator, zone: str) -> None:
    mailbox.set_knobs(date_search_timezone=zone)
    report = probe(mailbox)
    assert report.date_zone == zone
    assert report.knobs()["date_search_timezone"] == zone
    assert {b.day for b in report.boundaries} >= {TODAY - timedelta(days=d) for d in (3, 4, 5)}
    day = TODAY - timedelta(days=3)
    offset = datetime.combine(day, time.min, ZoneInfo(zone)).utcoffset() or timedelta()
    hours = round(offset.total_seconds() / 3600)
    line = next(x for x in report.lines() if x.startswith(f"  SINCE {day.isoformat()}"))
    # Mail 5 minutes either side of midnight pins the offset to a 10-minute range around the zone's.
    if hours < 0:
        low, high = f"-{-hours:02d}:05", f"-{-hours - 1:02d}:55"
    else:
        low, high = f"+{hours - 1:02d}:55" if hours else "-00:05", f"+{hours:02d}:05"
    assert f"(UTC offset from {low} to {high})" in line


def test_too_little_mail_near_midnight_decides_nothing(emulator: GmailEmulator) -> None:
    emulator.add_account(ADDRESS, PASSWORD)
    emulator.deliver(ADDRESS, mail("jen-jedna"), internaldate=datetime.combine(TODAY, time(12), UTC))
    report = probe(emulator)
    assert report.date_zone is None and "date_search_timezone" not in report.knobs()
    assert any("not measured" in line for line in report.lines())


@pytest.mark.parametrize("names", [ENGLISH_FOLDERS, GERMAN_FOLDERS], ids=["english", "german"])
def test_the_probe_reports_localised_folder_names(emulator: GmailEmulator, names: dict[str, str]) -> None:
    emulator.set_knobs(folder_names=dict(names))  # affects accounts created from now on
    emulator.add_account(ADDRESS, PASSWORD)
    report = probe(emulator)
    assert report.knobs()["folder_names"] == names
    assert "X-GM-EXT-1" in report.capabilities_before and "MOVE" not in report.capabilities_before
    assert "MOVE" in report.capabilities_after and "SPECIAL-USE" in report.capabilities_after


def test_labels_envelopes_and_read_only(mailbox: GmailEmulator) -> None:
    before = mailbox.snapshot()
    mailbox.reset_counters()
    report = probe(mailbox)
    assert report.labels_case_insensitive is True  # the emulator matches labels case-insensitively
    assert report.nested_labels_found is True
    nested = next(c for c in report.labels if c.nested)
    assert (nested.label, nested.folder_count, nested.exact) == ("Projekt/Alfa", 1, 1)
    assert report.envelope_ids_match is True and report.envelope_checked >= 20
    assert report.trash_count == 1 and report.draft is None
    # Read-only: the store is untouched, only EXAMINE opened folders, nothing was stored or sent.
    assert mailbox.snapshot() == before
    names = {c.name for c in mailbox.commands(ADDRESS)}
    assert "EXAMINE" in names and not names & {"SELECT", "STORE", "UID STORE", "APPEND", "UID MOVE", "EXPUNGE"}
    assert mailbox.smtp_sessions() == 0
    fetches = [c.line for c in mailbox.commands(ADDRESS) if c.name == "UID FETCH"]
    assert all("BODY[" not in line and "RFC822" not in line.replace("RFC822.SIZE", "") for line in fetches)


@pytest.mark.parametrize("value", [True, False] if "raw_search_in_trash" in KNOBS else [True])
def test_the_probe_reports_whether_raw_search_sees_trash(mailbox: GmailEmulator, value: bool) -> None:
    """Without the knob the emulator's X-GM-RAW finds trashed mail when Trash is the open folder."""
    if "raw_search_in_trash" in KNOBS:
        mailbox.set_knobs(raw_search_in_trash=value)
    report = probe(mailbox)
    assert report.raw_finds_in_trash is value
    assert report.knobs()["raw_search_in_trash"] is value


@pytest.mark.parametrize("value", [True, False] if "thread_by_subject" in KNOBS else [False])
def test_the_write_test_saves_one_draft_and_deletes_it(mailbox: GmailEmulator, value: bool) -> None:
    """Without the knob the emulator threads by references alone: a draft with another subject joins."""
    if "thread_by_subject" in KNOBS:
        mailbox.set_knobs(thread_by_subject=value)
    before = mailbox.snapshot()
    report = probe(mailbox, write_test=True)
    assert report.draft is not None and report.draft.deleted is True
    assert report.knobs()["thread_by_subject"] is value
    assert mailbox.snapshot() == before  # the draft is gone again, nothing else changed
    assert [c.name for c in mailbox.commands(ADDRESS)].count("APPEND") == 1


def test_a_refused_login_is_reported_with_its_diagnosis(mailbox: GmailEmulator) -> None:
    mailbox.add_fault(FaultRule(action="refuse_login:too_many", times=-1))
    report = probe(mailbox)
    assert report.login_error is not None and report.login_error.retryable is True
    assert report.capabilities_before and not report.capabilities_after
    assert report.knobs() == {}


@pytest.mark.parametrize("command", ["LOGIN", "FETCH"])
def test_a_bye_that_says_why_ends_the_probe_with_gmails_reason(mailbox: GmailEmulator, command: str) -> None:
    # The probe logs in and reads through the same code as a tool call, so Gmail's BYE gives its advice.
    mailbox.add_fault(FaultRule(action="bye:overquota", match=command, times=-1))
    with pytest.raises(MailError) as caught:
        probe(mailbox)
    assert (caught.value.kind, caught.value.retryable) == ("overquota", False)


def test_a_bare_bye_is_a_dropped_connection(mailbox: GmailEmulator) -> None:
    mailbox.add_fault(FaultRule(action="bye", match="LOGIN", times=-1))
    with pytest.raises(MailError) as caught:
        probe(mailbox)
    assert (caught.value.code, caught.value.retryable, caught.value.kind) == ("upstream_error", True, None)


# ------------------------------------------------------------------ the command


@pytest.fixture
def probe_config(mailbox: GmailEmulator, write_config: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    for key, value in gmail_env(mailbox).items():
        monkeypatch.setenv(key, value)
    return write_config([{"name": "sonda", "address": ADDRESS, "password": PASSWORD}])


def test_the_command_prints_the_report_and_the_knobs_as_json(
    mailbox: GmailEmulator, probe_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mailbox.set_knobs(date_search_timezone="Europe/Prague")
    with pytest.raises(SystemExit) as ended:
        cli.main(["probe", "--config", str(probe_config), "--account", "sonda"])
    assert ended.value.code == 0
    out, err = capsys.readouterr()
    assert out.startswith("mcp-multi-gmail probe: mailbox sonda\n")
    knobs = json.loads(out[out.index("emulator knobs matching this mailbox:\n") :].split("\n", 1)[1])
    assert knobs["date_search_timezone"] == "Europe/Prague"
    assert set(knobs) <= KNOBS | {"raw_search_in_trash", "thread_by_subject"}
    assert PASSWORD not in out + err and "MG_GMAIL_ENDPOINT" in err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["probe"], "--account"),
        (["probe", "--account", "nikdo"], 'schránka "nikdo" v nastavení není'),
    ],
)
def test_the_command_refuses_without_a_known_account(
    probe_config: Path, capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    with pytest.raises(SystemExit) as ended:
        cli.main([*argv, "--config", str(probe_config)])
    assert ended.value.code == 2
    assert words in capsys.readouterr().err
