"""The watcher wakes on IMAP IDLE: new mail ends it in seconds, not at the next poll; IDLE refused
or dropping again and again leaves the poll doing the work."""

from __future__ import annotations

import itertools
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from gmail_emulator import FaultRule, GmailEmulator
from mcp_multi_gmail.watch import args as args_module
from mcp_multi_gmail.watch import idle
from mcp_multi_gmail.watch.args import WatchArgs, plan_watch
from mcp_multi_gmail.watch.check import imap_check
from mcp_multi_gmail.watch.idle import TIMINGS_ENV, Idler, IdleTimings, start_idlers, stop_idlers, timings_from
from mcp_multi_gmail.watch.loop import Watcher, idle_timings, run_watcher
from mcp_multi_gmail.watch.state import KNOWN_FILE
from support import gmail_env
from support import wait_until as shared_wait_until

OSOBNI = "osobni@example.cz"
ACCOUNTS: list[dict[str, Any]] = [{"name": "osobni", "address": OSOBNI, "password": "osobniheslohesla"}]


def boundary() -> str:
    return (datetime.now(UTC) - timedelta(days=1)).date().isoformat()


def mail() -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = "anna@example.org"
    msg["To"] = OSOBNI
    msg["Subject"] = "Schůzka"
    msg["Message-ID"] = f"<{uuid.uuid4().hex}@example.org>"
    msg.set_content("Dobrý den, posílám podklady.")
    return msg


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    shared_wait_until(condition, timeout, what)


def idles_started(emulator: GmailEmulator) -> list[int]:
    """Session ids of every `+ idling` the emulator sent, in order."""
    return [e.session_id for e in emulator.wire_log() if e.direction == "s" and e.data.startswith(b"+ idling")]


def our_logouts(emulator: GmailEmulator) -> int:
    """LOGOUTs of sessions logged in since the test began (not of another test's leftovers)."""
    commands = emulator.commands(OSOBNI)
    ours = {c.session_id for c in commands if c.name == "LOGIN"}
    return sum(1 for c in commands if c.name == "LOGOUT" and c.session_id in ours)


def scans(emulator: GmailEmulator) -> int:
    return sum(1 for c in emulator.commands(OSOBNI) if c.name == "UID SEARCH")


@pytest.fixture
def config_path(write_config: Callable[..., Path]) -> Path:
    return write_config(ACCOUNTS)


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    path = tmp_path / "addon"
    path.mkdir()
    return path


class Background:
    """Something that blocks (the watcher) on a thread of its own, with its result kept."""

    def __init__(self, target: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(target,), daemon=True)
        self.thread.start()

    def _run(self, target: Callable[[], Any]) -> None:
        try:
            self.result = target()
        except BaseException as error:  # noqa: BLE001 - re-raised by join()
            self.error = error

    def join(self, timeout: float) -> Any:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"still running after {timeout} s"
        if self.error is not None:
            raise self.error
        return self.result


@pytest.fixture
def stop() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # idlers a failed test left behind end with it


def test_new_mail_ends_the_watcher_long_before_its_poll(
    emulator: GmailEmulator, config_path: Path, state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    interval_s = 300.0

    def watch() -> int:
        return run_watcher(
            WatchArgs(
                config_path=config_path,
                since=[f"osobni={boundary()}"],
                interval="5m",
                max_time="15m",
                hours=None,
                layout=None,
                environ=gmail_env(emulator),
            ),
            state_dir=state_dir,
        )

    watcher = Background(watch)
    # The first poll found nothing, and the IDLE connection is waiting in All Mail.
    wait_until(
        lambda: (state_dir / KNOWN_FILE).exists() and len(idles_started(emulator)) >= 1, "the first check and the IDLE"
    )
    delivered = time.monotonic()
    emulator.deliver(OSOBNI, mail())
    code = watcher.join(timeout=60)
    elapsed = time.monotonic() - delivered
    assert code == 0
    assert capsys.readouterr().out.startswith("nová pošta: osobni 1.")
    assert elapsed < interval_s / 10, f"woke after {elapsed:.1f} s; the poll would have come after {interval_s} s"
    assert scans(emulator) == 2  # the first poll and the check IDLE asked for, nothing in between
    # The IDLE connection ended with DONE and LOGOUT, not by a dropped socket.
    wait_until(lambda: our_logouts(emulator) == 3, "every connection to log out")
    assert emulator.connections(OSOBNI) == 3
    assert [c.name for c in emulator.commands(OSOBNI)].count("IDLE") == 1


def _watcher(emulator: GmailEmulator, config_path: Path, state_dir: Path, **options: Any) -> tuple[Watcher, Any]:
    plan = plan_watch(
        WatchArgs(
            config_path=config_path,
            since=[f"osobni={boundary()}"],
            interval="5m",
            max_time="15m",
            hours=None,
            layout=None,
            environ=gmail_env(emulator),
        )
    )
    settings: dict[str, Any] = {
        "state_dir": state_dir,
        "check": imap_check(plan.config, plan.endpoint),
        "interval_s": plan.interval_s,
        "max_s": plan.max_s,
        "ppid": lambda: 4242,
    }
    settings.update(options)
    return Watcher(plan.watched, **settings), plan


def test_idle_refused_falls_back_to_polling(
    emulator: GmailEmulator, config_path: Path, state_dir: Path, stop: threading.Event
) -> None:
    emulator.set_knobs(idle_refused=True)
    logs: list[str] = []
    wake = threading.Event()
    watcher, plan = _watcher(emulator, config_path, state_dir, interval_s=1.0, wake=wake, log=logs.append)
    idlers = start_idlers(plan.watched, plan.config, plan.endpoint, wake, stop, logs.append)
    wait_until(lambda: all(i.gave_up for i in idlers), "the IDLE to be given up")
    assert any("IDLE odmítl" in line and "pravidelně" in line for line in logs), logs
    running = Background(watcher.run)
    wait_until(lambda: (state_dir / KNOWN_FILE).exists(), "the first poll to finish")
    emulator.deliver(OSOBNI, mail())
    outcome = running.join(timeout=30)
    assert outcome.code == 0 and outcome.line.startswith("nová pošta: osobni 1.")
    assert watcher.checks >= 2  # found by a later poll
    assert idles_started(emulator) == []
    assert not wake.is_set()
    stop_idlers(idlers, stop)


def test_a_passing_refusal_of_idle_is_retried_not_taken_as_idle_refused(
    emulator: GmailEmulator, config_path: Path, stop: threading.Event
) -> None:
    """`NO [UNAVAILABLE]` to one IDLE is Gmail's passing trouble: the next connection idles again."""
    emulator.add_fault(FaultRule("refuse:unavailable", match="IDLE", times=1))
    logs: list[str] = []
    _watcher_unused, plan = _watcher(emulator, config_path, config_path.parent)
    timings = IdleTimings(backoff_s=(0.01,))
    [idler] = start_idlers(plan.watched, plan.config, plan.endpoint, threading.Event(), stop, logs.append, timings)
    wait_until(lambda: idler.active, "IDLE to be held on a new connection")
    assert not idler.gave_up
    assert emulator.connections(OSOBNI) == 2
    assert not any("IDLE odmítl" in line for line in logs), logs
    stop_idlers([idler], stop)


def test_a_connection_that_keeps_dropping_gives_idle_up(
    emulator: GmailEmulator, config_path: Path, stop: threading.Event
) -> None:
    emulator.add_fault(FaultRule("drop_before_reply", match="IDLE", times=-1))
    logs: list[str] = []
    _watcher_unused, plan = _watcher(emulator, config_path, config_path.parent)
    timings = IdleTimings(backoff_s=(0.01,))
    [idler] = start_idlers(plan.watched, plan.config, plan.endpoint, threading.Event(), stop, logs.append, timings)
    wait_until(lambda: idler.gave_up, "the IDLE to be given up")
    assert emulator.connections(OSOBNI) == idle.MAX_DROPS
    assert any("opakovaně přerušilo" in line for line in logs), logs


def test_idle_is_reissued_and_still_wakes(emulator: GmailEmulator, config_path: Path, stop: threading.Event) -> None:
    _watcher_unused, plan = _watcher(emulator, config_path, config_path.parent)
    wake = threading.Event()
    idler = Idler(
        "osobni", plan.config, plan.endpoint, wake, stop, lambda _line: None, timings=IdleTimings(reissue_s=0.3)
    )
    idler.start()
    wait_until(lambda: len(idles_started(emulator)) >= 3, "IDLE issued again")
    assert len(set(idles_started(emulator))) == 1  # DONE and IDLE again on the same connection
    assert emulator.connections(OSOBNI) == 1
    emulator.deliver(OSOBNI, mail())
    assert wake.wait(20)
    stop_idlers([idler], stop)
    wait_until(lambda: our_logouts(emulator) == 1, "the connection to log out")


def test_idle_timings_are_gmails_unless_a_test_server_shortens_them(emulator: GmailEmulator, config_path: Path) -> None:
    timings = IdleTimings()
    assert (timings.reissue_s, timings.answer_s) == (9 * 60.0, 30.0)  # under Gmail's ~10 min drop
    assert timings.backoff(1) == 2.0 and timings.backoff(99) == timings.backoff_s[-1]
    assert timings_from({TIMINGS_ENV: "reissue=1,answer=0.5,backoff=0.1/0.2"}) == IdleTimings(1.0, 0.5, (0.1, 0.2))
    assert timings_from({TIMINGS_ENV: "reissue=fast"}) is None
    assert timings_from({}) is None
    shortened = {TIMINGS_ENV: "reissue=1,answer=0.5"}
    _watcher_unused, test_plan = _watcher(emulator, config_path, config_path.parent)
    assert idle_timings(test_plan, shortened) == IdleTimings(1.0, 0.5)
    gmail_plan = plan_watch(
        WatchArgs(
            config_path=config_path, since=[f"osobni={boundary()}"], interval=None, max_time=None, hours=None,
            layout=None, environ={},
        )
    )  # fmt: skip
    assert not gmail_plan.endpoint.overridden
    assert idle_timings(gmail_plan, shortened) == IdleTimings()  # real Gmail always gets Gmail's timings


def test_reissue_before_gmails_limit_keeps_one_connection(
    emulator: GmailEmulator, config_path: Path, stop: threading.Event
) -> None:
    """Each IDLE ends before the drop limit, so one connection idles for longer than the limit."""
    emulator.set_knobs(idle_drop_after_s=0.9)
    _watcher_unused, plan = _watcher(emulator, config_path, config_path.parent)
    idler = Idler(
        "osobni",
        plan.config,
        plan.endpoint,
        threading.Event(),
        stop,
        lambda _line: None,
        timings=IdleTimings(reissue_s=0.3),
    )
    began = time.monotonic()
    idler.start()
    wait_until(lambda: len(idles_started(emulator)) >= 6, "IDLE re-issued five times")
    assert time.monotonic() - began > 0.9 * 1.5
    assert len(set(idles_started(emulator))) == 1 and emulator.connections(OSOBNI) == 1
    assert idler.reconnects == 0
    stop_idlers([idler], stop)


DEAD_ENDS = {
    # Gmail closes the socket with no BYE; the client sees the end of the stream.
    "drop": {"idle_drop_after_s": 0.3},
    # `* BYE Session expired, please login again.` during IDLE.
    "bye": {"idle_bye_after_s": 0.3},
    # Nothing answers any more, the socket stays open: only the unanswered DONE shows it.
    "blackhole": {"idle_blackhole_after_s": 0.0},
}
GMAIL_ENDS: dict[str, object] = {"idle_drop_after_s": 600.0, "idle_bye_after_s": None, "idle_blackhole_after_s": None}
# Backoff as in Gmail's default (2 s); the re-issue and DONE's answer shortened from 9 min and 30 s.
TEST_TIMINGS = "reissue=3,answer=1,backoff=2"


@pytest.mark.parametrize("end", list(DEAD_ENDS))
def test_mail_that_came_while_idle_was_dead_wakes_the_watcher_after_the_reconnect(
    end: str, emulator: GmailEmulator, config_path: Path, state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    emulator.set_knobs(**DEAD_ENDS[end])
    delivered: list[float] = []

    def deliver_at_the_reconnect() -> None:
        # The mail arrives when the reconnection's LOGIN does: after the IDLE died, before the next
        # one starts, however long the test's own waits took (a timer raced the 2 s backoff).
        if delivered or not ((state_dir / KNOWN_FILE).exists() and idles_started(emulator)):
            return  # the first check's LOGIN, or the idler's first one
        emulator.set_knobs(**GMAIL_ENDS)  # the next connection stays up
        delivered.append(time.monotonic())
        emulator.deliver(OSOBNI, mail())

    emulator.add_fault(FaultRule("hook", match="LOGIN", times=-1, account=OSOBNI, hook=deliver_at_the_reconnect))
    environ = {**gmail_env(emulator), TIMINGS_ENV: TEST_TIMINGS}
    args = WatchArgs(
        config_path=config_path, since=[f"osobni={boundary()}"], interval="5m", max_time="15m", hours=None,
        layout=None, environ=environ,
    )  # fmt: skip
    watcher = Background(lambda: run_watcher(args, state_dir=state_dir))
    code = watcher.join(timeout=60)
    assert delivered, "the idler never reconnected"
    elapsed = time.monotonic() - delivered[0]
    captured = capsys.readouterr()
    assert code == 0 and captured.out.startswith("nová pošta: osobni 1.")
    assert "spadlo" in captured.err and "je zpět, hned kontroluji" in captured.err
    # The mail came while no IDLE was alive, so only the check after the reconnection can have found
    # it: the new IDLE counts it in its first EXISTS, and the 5-minute poll is past the join's 60 s.
    sys.stderr.write(f"\nwake-up after a {end}: {elapsed:.2f} s after the reconnection's LOGIN\n")


PRACE = "tym@example.com"
TWO_ACCOUNTS: list[dict[str, Any]] = [*ACCOUNTS, {"name": "prace", "address": PRACE, "password": "tymovehesloheslo"}]


def poll_sessions(emulator: GmailEmulator, address: str) -> dict[int, list[str]]:
    """Every connection the account logged in on, with the commands it sent, in order."""
    sessions: dict[int, list[str]] = {}
    for command in emulator.commands(address):
        sessions.setdefault(command.session_id, []).append(command.name)
    return sessions


def test_watch_idle_false_is_the_poll_only_watcher_of_1_5_0(
    emulator: GmailEmulator,
    write_config: Callable[..., Path],
    state_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No IDLE command and no extra connection: one connection per poll, at the interval, and mail
    waits for the next poll."""
    monkeypatch.setattr(args_module, "MIN_INTERVAL_MS", 100)  # a 1 s interval, so the polls come quickly
    interval_s = 1.0
    config = write_config(ACCOUNTS, watch_idle=False)
    args = WatchArgs(
        config_path=config, since=[f"osobni={boundary()}"], interval="1s", max_time="15m", hours=None, layout=None,
        environ=gmail_env(emulator),
    )  # fmt: skip
    watcher = Background(lambda: run_watcher(args, state_dir=state_dir))
    wait_until(lambda: scans(emulator) >= 3, "three polls")
    delivered = time.monotonic()
    emulator.deliver(OSOBNI, mail())
    assert watcher.join(timeout=30) == 0
    elapsed = time.monotonic() - delivered
    assert capsys.readouterr().out.startswith("nová pošta: osobni 1.")
    wait_until(lambda: our_logouts(emulator) == len(poll_sessions(emulator, OSOBNI)), "every poll to log out")
    sessions = poll_sessions(emulator, OSOBNI)
    names = [name for commands in sessions.values() for name in commands]
    assert "IDLE" not in names and idles_started(emulator) == []
    assert emulator.login_peak(OSOBNI) == 1  # never a second connection beside the poll's
    for commands in sessions.values():  # each connection is one poll: log in, scan, log out
        assert commands[0] == "LOGIN" and commands[-1] == "LOGOUT" and "UID SEARCH" in commands
    logins = [c.started for c in emulator.commands(OSOBNI) if c.name == "LOGIN"]
    gaps = [later - earlier for earlier, later in itertools.pairwise(logins)]
    assert len(logins) >= 4 and all(gap >= interval_s * 0.9 for gap in gaps), gaps
    assert elapsed <= interval_s + 5  # found by the next poll
    sys.stderr.write(
        f"\nwatch_idle false: {len(sessions)} polls, gaps {[round(g, 2) for g in gaps]} s, "
        f"commands {sorted(set(names))}, first {next(iter(sessions.values()))}, woke {elapsed:.2f} s after mail\n"
    )


@pytest.mark.parametrize(
    ("top", "osobni", "prace", "idling"),
    [
        ({}, {}, {"watch_idle": False}, [OSOBNI]),  # default true, one mailbox opts out
        ({"watch_idle": False}, {"watch_idle": True}, {}, [OSOBNI]),  # off, one mailbox opts in
    ],
)
def test_watch_idle_per_mailbox_overrides_the_top_level(
    top: dict[str, Any],
    osobni: dict[str, Any],
    prace: dict[str, Any],
    idling: list[str],
    emulator: GmailEmulator,
    write_config: Callable[..., Path],
    state_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    accounts = [{**TWO_ACCOUNTS[0], **osobni}, {**TWO_ACCOUNTS[1], **prace}]
    config = write_config(accounts, **top)
    args = WatchArgs(
        config_path=config, since=[f"osobni={boundary()}", f"prace={boundary()}"], interval="5m", max_time="15m",
        hours=None, layout=None, environ=gmail_env(emulator),
    )  # fmt: skip
    watcher = Background(lambda: run_watcher(args, state_dir=state_dir))
    wait_until(
        lambda: (state_dir / KNOWN_FILE).exists() and bool(idles_started(emulator)), "the first check and the IDLE"
    )
    delivered = time.monotonic()
    emulator.deliver(PRACE, mail())  # to the mailbox without IDLE: it waits for the poll
    emulator.deliver(OSOBNI, mail())  # to the idling one: wakes the watcher at once
    assert watcher.join(timeout=60) == 0
    assert time.monotonic() - delivered < 30  # the poll would come after 5 minutes
    # One round checks both; the mail for prace is reported with it, found by that round's poll.
    assert capsys.readouterr().out.startswith("nová pošta: osobni 1, prace 1.")
    assert {c.account for c in emulator.commands() if c.name == "IDLE"} == set(idling)
    assert emulator.login_peak(PRACE) == 1  # only the poll's connection, never an IDLE one beside it
