"""The --wait watcher wakes for new mail, and only for it: injected clock and sleep, the real window
scan against the emulator; a failure becomes a problem line only when the user must act."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gmail_emulator import FaultRule, GmailEmulator, imap_server
from mcp_multi_gmail.errors import ErrorCode, MailError, RefusalKind
from mcp_multi_gmail.watch.loop import LINE_TIME_UP, Watcher
from mcp_multi_gmail.watch.state import KNOWN_FILE, load_known
from support.watch_mailboxes import OSOBNI, PRACE, new_mail_line
from support.watching import FakeTime, at_hour, mail

# ---------------------------------------------------------------- waking on new mail


def test_known_mail_does_not_wake(emulator: GmailEmulator, make: Callable[..., Watcher], state_dir: Path) -> None:
    info = emulator.deliver(OSOBNI, mail(OSOBNI))
    known = {"version": 1, "known": {"osobni": [info.header_id]}}
    (state_dir / KNOWN_FILE).write_text(json.dumps(known), encoding="utf-8")
    watcher = make()
    outcome = watcher.run()
    assert (outcome.code, outcome.line) == (4, LINE_TIME_UP)
    assert watcher.checks == 4  # at 0, 5, 10 and 15 minutes


def test_new_mail_wakes_once_and_the_next_watcher_stays_quiet(
    emulator: GmailEmulator, make: Callable[..., Watcher], fake: FakeTime, state_dir: Path
) -> None:
    fake.on_sleep[1] = lambda: emulator.deliver(OSOBNI, mail(OSOBNI))
    first = make()
    outcome = first.run()
    assert (outcome.code, outcome.line) == (0, new_mail_line("osobni 1"))
    assert first.checks == 2
    second = make()
    assert second.run().code == 4
    assert second.checks == 4


def test_first_watcher_wakes_for_what_waits_and_counts_per_mailbox_in_since_order(
    emulator: GmailEmulator, make: Callable[..., Watcher]
) -> None:
    emulator.deliver(PRACE, mail(PRACE))
    emulator.deliver(OSOBNI, mail(OSOBNI))
    emulator.deliver(OSOBNI, mail(OSOBNI, subject="Jiná věc"))
    watcher = make("prace", "osobni", "automaty")
    outcome = watcher.run()
    assert (outcome.code, outcome.line) == (0, new_mail_line("prace 1, osobni 2"))
    assert watcher.checks == 3  # the first check happens immediately, one per mailbox


def test_the_line_never_names_senders_or_subjects(emulator: GmailEmulator, make: Callable[..., Watcher]) -> None:
    emulator.deliver(OSOBNI, mail(OSOBNI, "Tajný Odesílatel <tajny@example.org>", subject="Přísně tajné"))
    line = make().run().line
    assert "tajn" not in line.lower()
    assert "\n" not in line


def test_overnight_mail_wakes_at_the_start_of_hours(
    emulator: GmailEmulator, make: Callable[..., Watcher], fake: FakeTime
) -> None:
    emulator.deliver(OSOBNI, mail(OSOBNI))
    assert make().run().code == 0  # the day's watcher reported what waited then
    fake.now = at_hour(22)
    fake.sleeps = 0
    fake.on_sleep[1] = lambda: emulator.deliver(OSOBNI, mail(OSOBNI))  # arrives at night
    fake.jump_to[1] = at_hour(9) + timedelta(days=1)
    night = make(hours="9-19", max_time="12h")
    outcome = night.run()
    assert (outcome.code, outcome.line) == (0, new_mail_line("osobni 1"))
    assert night.checks == 1  # nothing at 22:00, one check at 9:00


def test_outside_hours_nothing_is_asked(
    emulator: GmailEmulator, make: Callable[..., Watcher], fake: FakeTime, logs: list[str]
) -> None:
    emulator.deliver(OSOBNI, mail(OSOBNI))
    fake.now = at_hour(20)
    watcher = make(hours="9-19")
    outcome = watcher.run()
    assert (outcome.code, outcome.line) == (4, LINE_TIME_UP)
    assert watcher.checks == 0
    assert emulator.connections(OSOBNI) == 0
    assert sum("mimo hodiny" in line for line in logs) == 1


def test_own_sent_mail_never_wakes(emulator: GmailEmulator, make: Callable[..., Watcher], state_dir: Path) -> None:
    emulator.deliver(OSOBNI, mail("kamarad@example.org", OSOBNI), labels=("\\Sent",))
    watcher = make()
    assert watcher.run().code == 4
    assert load_known(state_dir / KNOWN_FILE) == {"osobni": set()}


def test_labelled_mail_is_forgotten(emulator: GmailEmulator, make: Callable[..., Watcher], state_dir: Path) -> None:
    info = emulator.deliver(OSOBNI, mail(OSOBNI))
    assert make().run().code == 0
    assert load_known(state_dir / KNOWN_FILE) == {"osobni": {info.header_id}}
    emulator.add_labels(OSOBNI, str(info.header_id), ["processed"])
    assert make().run().code == 4
    assert load_known(state_dir / KNOWN_FILE) == {"osobni": set()}


# ---------------------------------------------------------------- failures


def test_second_login_refusal_in_a_row_is_a_problem(emulator: GmailEmulator, make: Callable[..., Watcher]) -> None:
    emulator.add_fault(FaultRule(action="refuse_login:invalid", account=OSOBNI, times=-1))
    watcher = make()
    outcome = watcher.run()
    assert outcome.code == 5
    assert outcome.line.startswith("problém: schránka osobni se nepřihlásí, heslo aplikace je nejspíš zrušené")
    assert watcher.checks == 2


def test_new_mail_elsewhere_wins_over_a_problem(
    emulator: GmailEmulator, make: Callable[..., Watcher], fake: FakeTime
) -> None:
    emulator.add_fault(FaultRule(action="refuse_login:invalid", account=OSOBNI, times=-1))
    fake.on_sleep[1] = lambda: emulator.deliver(PRACE, mail(PRACE))
    outcome = make("osobni", "prace").run()
    assert outcome.code == 0
    assert outcome.line.startswith(new_mail_line("prace 1") + " Pozor: schránka osobni se nepřihlásí")
    assert outcome.line.endswith(").")


def test_network_failures_never_end_in_a_problem(
    emulator: GmailEmulator, make: Callable[..., Watcher], logs: list[str]
) -> None:
    emulator.deliver(OSOBNI, mail(OSOBNI))
    emulator.add_fault(FaultRule(action="drop_before_reply", match="LOGIN", times=-1))
    watcher = make(max_time="30m")
    outcome = watcher.run()
    assert (outcome.code, outcome.line) == (4, LINE_TIME_UP)
    assert watcher.checks == 7
    assert sum("neodpovídá" in line for line in logs) == 7


@pytest.mark.parametrize("kind", ["too_many", "unavailable", "throttled"])
def test_refusals_that_are_not_the_password_never_end_in_a_problem(
    kind: str,
    emulator: GmailEmulator,
    make: Callable[..., Watcher],
    logs: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Gmail's 15-connection limit is shared with the user's phone: a refusal for it or an outage is
    ridden out, never reported as a revoked app password (exit 5)."""
    # A throttled LOGIN answers after a second in the emulator; how long is not this test's subject.
    monkeypatch.setattr(imap_server, "THROTTLE_DELAY_S", 0.05)
    emulator.add_fault(FaultRule(action=f"refuse_login:{kind}", account=OSOBNI, times=-1))
    watcher = make(max_time="30m")
    outcome = watcher.run()
    assert (outcome.code, outcome.line) == (4, LINE_TIME_UP)
    assert watcher.checks == 7
    assert all("osobni" in line and "heslo aplikace" not in line for line in logs if "schránka" in line)


def test_a_web_login_demand_ends_the_watcher_on_the_second_round(
    emulator: GmailEmulator, make: Callable[..., Watcher], logs: list[str]
) -> None:
    """Nobody but the user can sign in in the browser: left alone, the mailbox would stay unwatched."""
    emulator.add_fault(FaultRule(action="refuse_login:webalert", account=OSOBNI, times=-1))
    watcher = make(max_time="30m")
    outcome = watcher.run()
    assert outcome.code == 5
    assert outcome.line.startswith("problém: schránka osobni se nepřihlásí, Gmail chce přihlášení v prohlížeči")
    assert "heslo aplikace" not in outcome.line
    assert watcher.checks == 2
    assert sum("když se to zopakuje, ohlásím problém" in line for line in logs) == 1


@pytest.mark.parametrize(
    ("kind", "cause"),
    [("web_login", "Gmail chce přihlášení v prohlížeči"), ("imap_disabled", "Gmail má pro ni vypnutý IMAP")],
)
def test_a_refusal_only_the_user_can_fix_ends_the_watcher_on_the_second_round(
    kind: RefusalKind, cause: str, state_dir: Path, fake: FakeTime, logs: list[str]
) -> None:
    code: ErrorCode = "upstream_error" if kind == "web_login" else "auth_failed"

    def check(name: str, since: datetime) -> set[str]:
        raise MailError(code, f'Mailbox "{name}": Gmail blocked the login.', kind=kind)

    watcher = Watcher(
        {"osobni": datetime.now(UTC)}, state_dir=state_dir, check=check, clock=fake.clock, sleep=fake.sleep,
        max_s=3600, log=logs.append,
    )  # fmt: skip
    outcome = watcher.run()
    assert outcome.code == 5
    assert outcome.line.startswith(f"problém: schránka osobni se nepřihlásí, {cause}")
    assert outcome.line.endswith('(Mailbox "osobni": Gmail blocked the login)')
    assert watcher.checks == 2


def test_a_passing_refusal_between_two_web_login_demands_starts_the_count_again(
    state_dir: Path, fake: FakeTime
) -> None:
    answers = [
        MailError("upstream_error", "Web login required.", kind="web_login"),
        MailError("upstream_error", "Too many simultaneous connections.", retryable=True),
        MailError("upstream_error", "Web login required.", kind="web_login"),
        MailError("upstream_error", "Web login required.", kind="web_login"),
    ]

    def check(name: str, since: datetime) -> set[str]:
        raise answers.pop(0)

    watcher = Watcher(
        {"osobni": datetime.now(UTC)}, state_dir=state_dir, check=check, clock=fake.clock, sleep=fake.sleep, max_s=3600
    )
    outcome = watcher.run()
    assert outcome.code == 5 and "přihlášení v prohlížeči" in outcome.line
    assert watcher.checks == 4


def test_a_refusal_for_connections_between_two_bad_passwords_starts_the_count_again(
    emulator: GmailEmulator, make: Callable[..., Watcher]
) -> None:
    emulator.add_fault(FaultRule(action="refuse_login:invalid", account=OSOBNI, times=1))
    emulator.add_fault(FaultRule(action="refuse_login:too_many", account=OSOBNI, nth=2, times=1))
    emulator.add_fault(FaultRule(action="refuse_login:invalid", account=OSOBNI, nth=3, times=-1))
    watcher = make()
    outcome = watcher.run()
    assert outcome.code == 5 and "heslo aplikace je nejspíš zrušené" in outcome.line
    assert watcher.checks == 4  # invalid, too many, invalid, invalid


def test_network_hiccups_do_not_hide_later_mail(emulator: GmailEmulator, make: Callable[..., Watcher]) -> None:
    emulator.deliver(OSOBNI, mail(OSOBNI))
    emulator.add_fault(FaultRule(action="drop_before_reply", match="LOGIN", times=2))
    watcher = make()
    assert watcher.run().line == new_mail_line("osobni 1")
    assert watcher.checks == 3


def test_unusable_mailbox_is_a_problem_at_once(state_dir: Path, fake: FakeTime) -> None:
    def check(name: str, since: datetime) -> set[str]:
        raise MailError("query_too_broad", f'The window holds 6000 messages in mailbox "{name}".')

    watcher = Watcher({"osobni": datetime.now(UTC)}, state_dir=state_dir, check=check, clock=fake.clock)
    outcome = watcher.run()
    assert (outcome.code, outcome.line) == (
        5,
        'problém: schránka osobni: The window holds 6000 messages in mailbox "osobni"',
    )
    assert watcher.checks == 1


def test_a_surprise_in_the_check_is_only_logged(state_dir: Path, fake: FakeTime, logs: list[str]) -> None:
    def check(name: str, since: datetime) -> set[str]:
        raise ValueError("nečekané")

    watcher = Watcher(
        {"osobni": datetime.now(UTC)}, state_dir=state_dir, check=check, clock=fake.clock, sleep=fake.sleep, max_s=600,
        log=logs.append,
    )  # fmt: skip
    assert watcher.run().code == 4
    assert any("ValueError" in line for line in logs)
