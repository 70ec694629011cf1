"""The --wait watcher: injected clock and sleep, the real window scan against the emulator."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gmail_emulator import FaultRule, GmailEmulator, imap_server
from mcp_multi_gmail.config import parse_duration_ms, parse_hours
from mcp_multi_gmail.errors import ErrorCode, MailError, RefusalKind
from mcp_multi_gmail.watch.args import DEFAULT_MAX_MS, WatchArgs, WatchArgsError, plan_watch
from mcp_multi_gmail.watch.loop import (
    LINE_ABORTED,
    LINE_ORPHANED,
    LINE_REPLACED,
    LINE_TIME_UP,
    NEW_MAIL_ADVICE,
    Watcher,
    in_hours,
    run_watcher,
)
from mcp_multi_gmail.watch.state import KNOWN_FILE, OWNER_FILE, load_known
from support import gmail_env
from support.watching import FakeTime, at_hour, boundary, fake_time_options, mail

OSOBNI = "osobni@example.cz"
PRACE = "tym@example.com"
AUTOMATY = "upozorneni@example.com"
ACCOUNTS: list[dict[str, Any]] = [
    {"name": "osobni", "address": OSOBNI, "password": "osobniheslohesla"},
    {"name": "prace", "address": PRACE, "password": "tymovehesloheslo"},
    {"name": "automaty", "address": AUTOMATY, "password": "automatyheslooko"},
]


@pytest.fixture
def config_path(write_config: Callable[..., Path]) -> Path:
    return write_config(ACCOUNTS)


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    path = tmp_path / "addon"
    path.mkdir()
    return path


@pytest.fixture
def fake() -> FakeTime:
    return FakeTime(at_hour(10))


@pytest.fixture
def logs() -> list[str]:
    return []


@pytest.fixture
def make(
    emulator: GmailEmulator, config_path: Path, state_dir: Path, fake: FakeTime, logs: list[str]
) -> Callable[..., Watcher]:
    """A watcher over the real emulator-backed check, planned by the real argument handling."""

    def build(*boxes: str, hours: str | None = None, max_time: str = "15m", **overrides: Any) -> Watcher:
        plan = plan_watch(
            WatchArgs(
                config_path=config_path,
                since=[f"{box}={boundary()}" for box in boxes or ("osobni",)],
                interval="5m",
                max_time=max_time,
                hours=hours,
                layout=None,
                environ=gmail_env(emulator),
            )
        )
        options = fake_time_options(plan, state_dir, fake)
        options.update(
            {
                "log": logs.append,
            }
        )
        options.update(overrides)
        return Watcher(plan.watched, **options)

    return build


def new_mail_line(counts: str) -> str:
    return f"nová pošta: {counts}. {NEW_MAIL_ADVICE}"


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


# ---------------------------------------------------------------- ending from outside


def test_a_newer_watcher_takes_over(make: Callable[..., Watcher], fake: FakeTime, state_dir: Path) -> None:
    newer = "999 1760000000000 abc123"
    fake.on_sleep[1] = lambda: (state_dir / OWNER_FILE).write_text(newer + "\n", encoding="utf-8")
    outcome = make().run()
    assert (outcome.code, outcome.line) == (3, LINE_REPLACED)
    assert (state_dir / OWNER_FILE).read_text(encoding="utf-8") == newer + "\n"


def test_a_removed_claim_still_counts_as_ours(make: Callable[..., Watcher], fake: FakeTime, state_dir: Path) -> None:
    fake.on_sleep[1] = lambda: (state_dir / OWNER_FILE).unlink()
    watcher = make()
    assert watcher.run().code == 4
    assert watcher.checks == 4


def test_parent_gone_ends_with_3(make: Callable[..., Watcher]) -> None:
    parents = iter([4242, 4242, 1])
    outcome = make(ppid=lambda: next(parents)).run()
    assert (outcome.code, outcome.line) == (3, LINE_ORPHANED)


def test_parent_check_is_skipped_when_started_by_init(make: Callable[..., Watcher]) -> None:
    parents = iter([1, 777, 778, 779, 780])
    assert make(ppid=lambda: next(parents)).run().code == 4


def test_external_stop_ends_promptly(make: Callable[..., Watcher]) -> None:
    abort = threading.Event()
    watcher = make(sleep=lambda seconds, event: event.wait(seconds), interval_s=60.0, abort=abort)
    timer = threading.Timer(0.2, abort.set)
    started = time.monotonic()
    timer.start()
    outcome = watcher.run()
    timer.join()
    assert (outcome.code, outcome.line) == (4, LINE_ABORTED)
    assert time.monotonic() - started < 5  # against 60 s (10 s); the slack is for a machine under load


def test_stop_during_a_slow_gmail_answer_ends_promptly(state_dir: Path, fake: FakeTime) -> None:
    abort = threading.Event()
    release = threading.Event()

    def stuck(name: str, since: datetime) -> set[str]:
        release.wait(10)
        return set()

    watcher = Watcher({"osobni": datetime.now(UTC)}, state_dir=state_dir, check=stuck, clock=fake.clock, abort=abort)
    timer = threading.Timer(0.2, abort.set)
    started = time.monotonic()
    timer.start()
    try:
        outcome = watcher.run()
    finally:
        release.set()
        timer.join()
    assert (outcome.code, outcome.line) == (4, LINE_ABORTED)
    assert time.monotonic() - started < 5  # against 60 s (10 s); the slack is for a machine under load
    assert not (state_dir / KNOWN_FILE).exists()  # a half-done round is not saved


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_sigterm_stops_run_watcher(
    emulator: GmailEmulator, config_path: Path, state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers need the main thread")
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM))
    previous = signal.getsignal(signal.SIGTERM)
    timer.start()
    code = run_watcher(
        WatchArgs(
            config_path=config_path,
            since=[f"osobni={boundary()}"],
            interval="1m",
            max_time="5m",
            hours=None,
            layout=None,
            environ=gmail_env(emulator),
        ),
        state_dir=state_dir,
    )
    timer.join()
    assert code == 4
    assert capsys.readouterr().out == LINE_ABORTED + "\n"
    assert signal.getsignal(signal.SIGTERM) is previous


# ---------------------------------------------------------------- files


def test_state_and_claim_files(emulator: GmailEmulator, make: Callable[..., Watcher], state_dir: Path) -> None:
    info = emulator.deliver(OSOBNI, mail(OSOBNI))
    assert make().run().code == 0
    known_path, owner_path = state_dir / KNOWN_FILE, state_dir / OWNER_FILE
    assert json.loads(known_path.read_text(encoding="utf-8")) == {"version": 1, "known": {"osobni": [info.header_id]}}
    assert stat.S_IMODE(known_path.stat().st_mode) == 0o600
    assert not (state_dir / (KNOWN_FILE + ".tmp")).exists()
    # The claim stays after the exit: an older watcher finding it missing would think it still owns it.
    assert re.fullmatch(rf"{os.getpid()} \d{{13}} [0-9a-z]+\n", owner_path.read_text(encoding="utf-8"))
    assert stat.S_IMODE(owner_path.stat().st_mode) == 0o600


def test_state_of_other_mailboxes_is_kept(
    emulator: GmailEmulator, make: Callable[..., Watcher], state_dir: Path
) -> None:
    (state_dir / KNOWN_FILE).write_text(json.dumps({"version": 1, "known": {"prace": ["a@b"]}}), encoding="utf-8")
    assert make().run().code == 4
    assert load_known(state_dir / KNOWN_FILE) == {"prace": {"a@b"}, "osobni": set()}


@pytest.mark.parametrize("content", ["{", '{"version": 2, "known": {}}', '{"version": 1, "known": []}', "[]"])
def test_broken_state_counts_as_empty(
    emulator: GmailEmulator, make: Callable[..., Watcher], state_dir: Path, content: str
) -> None:
    emulator.deliver(OSOBNI, mail(OSOBNI))
    (state_dir / KNOWN_FILE).write_text(content, encoding="utf-8")
    assert make().run().line == new_mail_line("osobni 1")


def test_unwritable_claim_is_a_bad_start(make: Callable[..., Watcher], tmp_path: Path) -> None:
    outcome = make(state_dir=tmp_path / "chybi").run()
    assert outcome.code == 6
    assert outcome.line.startswith(f"chyba: nejde zapsat {tmp_path / 'chybi' / OWNER_FILE}: ")


# ---------------------------------------------------------------- arguments


@pytest.fixture
def start(
    emulator: GmailEmulator, state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, str]]:
    """run_watcher as the CLI calls it; returns the exit code and stdout."""

    def go(config_path: Path, *since: str, **options: str) -> tuple[int, str]:
        code = run_watcher(
            WatchArgs(
                config_path=config_path,
                since=list(since),
                interval=options.get("interval"),
                max_time=options.get("max_time"),
                hours=options.get("hours"),
                layout=None,
                environ=gmail_env(emulator),
            ),
            state_dir=state_dir,
        )
        return code, capsys.readouterr().out

    return go


def test_argument_errors_come_in_one_line(
    start: Callable[..., tuple[int, str]], config_path: Path, state_dir: Path
) -> None:
    code, out = start(
        config_path,
        "neznama=2026-09-01",
        "osobni=2026-09-01",
        "osobni=2026-09-02",
        "prace=zitra",
        "bez-rovnitka",
        interval="10s",
        max_time="0m",
        hours="rano",
    )
    assert code == 6
    assert out.count("\n") == 1
    problems = out.removeprefix("chyba: ").rstrip("\n").split("; ")
    assert len(problems) == 7, out
    assert "neznámou schránku „neznama“" in problems[0]
    assert "osobni má --since dvakrát" in problems[1]
    assert "kotva „zitra“ u schránky prace není datum" in problems[2]
    assert "„bez-rovnitka“ nemá tvar --since jmeno=kotva" in problems[3]
    assert problems[4].startswith("--interval „10s“")
    assert problems[5].startswith("--max „0m“")
    assert problems[6].startswith("--hours „rano“")
    assert not (state_dir / OWNER_FILE).exists()


def test_watched_mailbox_without_boundary(
    start: Callable[..., tuple[int, str]], write_config: Callable[..., Path]
) -> None:
    accounts = [{**ACCOUNTS[0], "watch": True}, {**ACCOUNTS[1], "watch": True}, ACCOUNTS[2]]
    code, out = start(write_config(accounts), f"osobni={boundary()}", f"automaty={boundary()}")
    assert code == 6
    assert out == "chyba: chybí kotva pro hlídanou schránku prace (--since prace=kotva ze system/mail-kotva.md)\n"


def test_watch_flags_choose_the_mailboxes(write_config: Callable[..., Path], emulator: GmailEmulator) -> None:
    accounts = [{**ACCOUNTS[0], "watch": True}, ACCOUNTS[1], ACCOUNTS[2]]
    plan = plan_watch(
        WatchArgs(
            config_path=write_config(accounts),
            since=[f"prace={boundary()}", f"osobni={boundary()}"],
            interval=None,
            max_time=None,
            hours=None,
            layout=None,
            environ=gmail_env(emulator),
        )
    )
    assert list(plan.watched) == ["osobni"]
    assert plan.dropped == ("prace",)
    assert (plan.interval_s, plan.max_s, plan.hours) == (300, DEFAULT_MAX_MS / 1000, None)


def test_options_override_the_config(write_config: Callable[..., Path], emulator: GmailEmulator) -> None:
    path = write_config(ACCOUNTS, watch_interval="10m", watch_hours="8-18")

    def plan(**options: str | None) -> tuple[float, tuple[int, int] | None]:
        result = plan_watch(
            WatchArgs(
                config_path=path,
                since=[f"osobni={boundary()}"],
                interval=options.get("interval"),
                max_time=options.get("max_time"),
                hours=options.get("hours"),
                layout=None,
                environ=gmail_env(emulator),
            )
        )
        return result.interval_s, result.hours

    assert plan() == (600, (8, 18))
    assert plan(interval="2m", hours="22-6") == (120, (22, 6))


def test_nothing_watched(start: Callable[..., tuple[int, str]], config_path: Path) -> None:
    assert start(config_path) == (6, "chyba: --wait potřebuje aspoň jedno --since jmeno=kotva\n")


def test_bad_config_file(start: Callable[..., tuple[int, str]], tmp_path: Path) -> None:
    broken = tmp_path / "rozbite.json"
    broken.write_text('{"accounts": [', encoding="utf-8")
    code, out = start(broken, "osobni=2026-09-01", hours="rano")
    assert code == 6
    assert out.startswith(f"chyba: Nastavení `{broken}`") or out.startswith(f"chyba: `{broken}`"), out
    assert out.count("\n") == 1
    assert out.rstrip("\n").endswith("; --hours „rano“ není rozsah hodin, čeká se třeba 9-19 nebo 22-6")
    code, out = start(tmp_path / "chybi.json", "osobni=2026-09-01")
    assert code == 6
    assert "nejde přečíst" in out


def test_missing_password_env_is_a_bad_start(
    start: Callable[..., tuple[int, str]], write_config: Callable[..., Path]
) -> None:
    entry = {"name": "osobni", "address": OSOBNI, "password_env": "MG_TEST_HESLO_KTERE_NENI"}
    code, out = start(write_config([entry]), "osobni=2026-09-01")
    assert code == 6
    assert out.startswith("chyba: ") and out.count("\n") == 1


def test_plan_errors_are_collected() -> None:
    with pytest.raises(WatchArgsError) as caught:
        plan_watch(
            WatchArgs(
                config_path=Path("/neexistuje/nastaveni.json"),
                since=["x"],
                interval="pět",
                max_time=None,
                hours="9",
                layout=None,
                environ={},
            )
        )
    assert len(caught.value.problems) == 4


# ---------------------------------------------------------------- parsing


def test_duration_and_hour_parsing() -> None:
    assert parse_duration_ms("5m") == 300_000
    assert parse_duration_ms("90s") == 90_000
    assert parse_duration_ms("2h") == 7_200_000
    assert parse_duration_ms("10") == 600_000
    assert parse_duration_ms("pět") is None
    assert parse_hours("9-19") == (9, 19)
    assert parse_hours("22-6") == (22, 6)
    assert parse_hours("9") is None


def test_hour_window_wraps_over_midnight() -> None:
    assert [h for h in range(24) if in_hours(h, (9, 19))] == list(range(9, 19))
    assert [h for h in range(24) if in_hours(h, (22, 6))] == [0, 1, 2, 3, 4, 5, 22, 23]
    assert all(in_hours(h, None) for h in range(24))


# ---------------------------------------------------------------- the real process


@pytest.fixture
def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MG_")}


def test_watcher_process_wakes_on_waiting_mail(
    emulator: GmailEmulator, config_path: Path, state_dir: Path, clean_env: dict[str, str]
) -> None:
    emulator.deliver(OSOBNI, mail(OSOBNI))
    today = datetime.now(UTC).date().isoformat()
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mcp_multi_gmail", "--config", str(config_path), "--wait",
         "--since", f"osobni={today}", "--max", "1m", "--interval", "1m"],
        stdin=subprocess.DEVNULL, capture_output=True, encoding="utf-8", timeout=60,
        env={**clean_env, **gmail_env(emulator), "MG_WATCH_DIR": str(state_dir)},
    )  # fmt: skip
    assert time.monotonic() - started < 30
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [new_mail_line("osobni 1")]
    assert (state_dir / OWNER_FILE).exists() and (state_dir / KNOWN_FILE).exists()
    assert "hlídač:" in done.stderr


def test_state_written_by_1_5_0_with_bracketed_ids_is_understood(
    emulator: GmailEmulator, make: Callable[..., Watcher], state_dir: Path
) -> None:
    # 1.5.0 kept the envelope's Message-ID with its angle brackets: the first watcher after the
    # upgrade must not wake once more for mail that was already reported.
    known = emulator.deliver(OSOBNI, mail(OSOBNI))
    fresh = mail(OSOBNI)
    state = {"version": 1, "known": {"osobni": [f"<{known.header_id}>"], "prace": ["<x@example.org>", "uid:7"]}}
    (state_dir / KNOWN_FILE).write_text(json.dumps(state), encoding="utf-8")
    assert make().run().code == 4
    emulator.deliver(OSOBNI, fresh)
    assert make().run().line == new_mail_line("osobni 1")
    saved = load_known(state_dir / KNOWN_FILE)
    assert saved["osobni"] == {known.header_id, fresh["Message-ID"].strip("<>")}
    assert saved["prace"] == {"x@example.org", "uid:7"}


def test_anchor_in_rfc_2822_or_iso_with_a_space(config_path: Path, emulator: GmailEmulator) -> None:
    plan = plan_watch(
        WatchArgs(
            config_path=config_path,
            since=["osobni=Sun, 29 Nov 2026 08:00:00 +0100", "prace=2026-11-29 08:00"],
            interval=None,
            max_time=None,
            hours=None,
            layout=None,
            environ=gmail_env(emulator),
        )
    )
    assert plan.watched == {
        "osobni": datetime(2026, 11, 29, 7, 0, tzinfo=UTC),
        "prace": datetime(2026, 11, 29, 8, 0, tzinfo=UTC),
    }


def test_watcher_process_ignores_unknown_arguments_and_still_watches(
    emulator: GmailEmulator, config_path: Path, state_dir: Path, clean_env: dict[str, str]
) -> None:
    emulator.deliver(OSOBNI, mail(OSOBNI))
    today = datetime.now(UTC).date().isoformat()
    done = subprocess.run(
        [sys.executable, "-m", "mcp_multi_gmail", "--wait", "--config", str(config_path), "--verbose",
         "--since", f"osobni={today}", "--max=1m", "--interval", "1m", "navic"],
        stdin=subprocess.DEVNULL, capture_output=True, encoding="utf-8", timeout=60,
        env={**clean_env, **gmail_env(emulator), "MG_WATCH_DIR": str(state_dir)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [new_mail_line("osobni 1")]
    assert "POZOR: hlídač přeskočil neznámé argumenty: --verbose navic" in done.stderr.splitlines()
