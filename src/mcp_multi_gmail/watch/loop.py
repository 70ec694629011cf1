"""The `--wait` watcher (docs/en/watcher.md): ends — and so wakes the assistant — when new mail arrives.

An empty check costs the assistant nothing, unlike a pass. The exit code is the message (0 new
mail, 3 replaced or orphaned, 4 restart me, 5 the user must fix something, 6 bad start); the
one Czech line on stdout explains it and never names senders or subjects. Everything else goes
to stderr.

`--follow` is the same watcher that keeps running, for Claude Code's Monitor, which hands each
stdout line to the assistant as an event: one line per wake-up with the same counts, a line for
a mailbox that stays unreachable (at most hourly), and the `--wait` line and exit code only for
what ends watching. A stop by signal prints nothing: whoever stopped it wants no restart.

The watcher asks Gmail exactly what the pass asks (`scan_window`), so "new mail" means "a pass
would have work that no watcher has reported yet".
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..errors import MailError
from ..layout import project_dir
from ..mail.reminding import DUE_KEY_PREFIX
from .args import NO_LIMIT, WatchArgs, WatchArgsError, WatchPlan, one_line, plan_watch
from .check import Check, imap_check
from .idle import IdleTimings, start_idlers, stop_idlers, timings_from
from .lifeline import ancestors, watch_ancestors
from .state import KNOWN_FILE, OWNER_FILE, load_known, new_token, owns_claim, save_known, write_claim

EXIT_NEW_MAIL = 0
EXIT_REPLACED = 3
EXIT_RESTART = 4
EXIT_PROBLEM = 5
EXIT_BAD_START = 6

# Test-only override of where wait.owner / wait-known.json live (a test must not touch the checkout).
STATE_DIR_ENV = "MG_WATCH_DIR"

LINE_ABORTED = "konec: hlídač byl zastaven zvenku. Spusť hlídače znovu se stejnými kotvami."
LINE_REPLACED = "konec: hlídání převzal novější hlídač"
LINE_ORPHANED = "konec: proces, který hlídače spustil, skončil"
LINE_TIME_UP = "konec: vypršel čas hlídání. Spusť hlídače znovu se stejnými kotvami."
NEW_MAIL_ADVICE = "Projdi ji průchodem (mg_next_pass) s kotvami, se kterými jsi hlídače spustila."
# --follow: the watcher is still running when the line arrives, so the advice differs.
FOLLOW_ADVICE = "Projdi ji průchodem (mg_next_pass); hlídač běží dál, znovu ho nespouštěj."
REMINDER_ADVICE = "Připomínky přinese průchod (mg_next_pass, reminders_due)."
FOLLOW_PROBLEM_ADVICE = "Hlídač skončil: řekni to uživateli a spusť hlídače znovu bez té schránky."
# A mailbox failing every check this long (and at least twice) is worth a line, at most one an hour.
UNREACHABLE_AFTER_S = 15 * 60.0
UNREACHABLE_REPEAT_S = 60 * 60.0

Sleep = Callable[[float, threading.Event], None]
_POLL_S = 0.1
# While waiting for IDLE, how often the claim is read: a newer watcher takes over within this.
_CLAIM_CHECK_S = 1.0


@dataclass(frozen=True)
class Outcome:
    code: int
    line: str


def local_now() -> datetime:
    # Aware local time: the hour window is the user's local hours, and subtraction stays right over DST.
    return datetime.now().astimezone()


def event_sleep(seconds: float, abort: threading.Event) -> None:
    abort.wait(seconds)


def stderr_log(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"hlídač: {line}\n")
        sys.stderr.flush()


def in_hours(hour: int, hours: tuple[int, int] | None) -> bool:
    """Is `hour` inside [from, to)? `22-6` wraps over midnight; no hours = always."""
    if hours is None:
        return True
    start, end = hours
    if start < end:
        return start <= hour < end
    return hour >= start or hour < end


class _Aborted(Exception):
    """The watcher was stopped while a check was still waiting for Gmail."""


@dataclass
class _Result:
    keys: set[str] | None = None
    error: Exception | None = None


class Watcher:
    """The polling loop; every outside effect (time, sleep, Gmail, parent pid) is injectable."""

    def __init__(
        self,
        watched: Mapping[str, datetime],
        *,
        state_dir: Path,
        check: Check,
        interval_s: float = 300.0,
        max_s: float = 115 * 60.0,
        hours: tuple[int, int] | None = None,
        clock: Callable[[], datetime] = local_now,
        sleep: Sleep = event_sleep,
        ppid: Callable[[], int] = os.getppid,
        abort: threading.Event | None = None,
        log: Callable[[str], None] = stderr_log,
        wake: threading.Event | None = None,
        follow: bool = False,
        emit: Callable[[str], None] | None = None,
        orphaned: threading.Event | None = None,
    ) -> None:
        self.watched = dict(watched)
        self.owner_path = state_dir / OWNER_FILE
        self.known_path = state_dir / KNOWN_FILE
        self.check = check
        self.interval_s = interval_s
        self.max_s = max_s
        self.hours = hours
        self.clock = clock
        self.sleep = sleep
        self.ppid = ppid
        self.abort = abort if abort is not None else threading.Event()
        self.log = log
        # Set by the IDLE connections when Gmail reports new mail: check now, not at the next poll.
        self.wake = wake
        self.checks = 0  # calls of `check`, for the log and for tests
        self._auth_failures = dict.fromkeys(self.watched, 0)
        # --follow: lines go out while running (to stdout unless a test collects them).
        self.follow = follow
        self.emit = emit if emit is not None else _emit
        # Set (with `abort`) when the process that started us is gone: exit 3, not 4.
        self.orphaned = orphaned if orphaned is not None else threading.Event()
        self._down: dict[str, _Down] = {}  # mailboxes whose checks fail, since when and how often
        self._down_told: dict[str, datetime] = {}  # when each last got an "unreachable" line
        self._token = ""  # our claim in wait.owner, written when run() starts
        self._due: list[str] = []  # this round's reminders fallen due, "<mailbox> <count>"

    def run(self) -> Outcome:  # noqa: C901 - the loop keeps every exit (its exit codes) side by side
        started = self.clock()
        token = self._token = new_token(os.getpid(), int(time.time() * 1000))
        try:
            write_claim(self.owner_path, token)
        except OSError as error:
            return Outcome(EXIT_BAD_START, f"chyba: nejde zapsat {self.owner_path}: {error.strerror or error}")
        known = load_known(self.known_path)
        parent = self.ppid()
        # Windows keeps dead pids, and a parent of 1 means we were orphaned (or daemonised) already.
        watch_parent = parent != 1 and os.name != "nt"
        outside_logged = False
        while True:
            if self.wake is not None:
                self.wake.clear()  # whatever arrives from here on is seen by this round or wakes the next
            if self.abort.is_set():
                return self._stopped()
            if not owns_claim(self.owner_path, token):
                return Outcome(EXIT_REPLACED, LINE_REPLACED)
            if watch_parent and self.ppid() != parent:
                return Outcome(EXIT_REPLACED, LINE_ORPHANED)
            if in_hours(self.clock().hour, self.hours):
                outside_logged = False
                result = self._round(known)
                if result is None:
                    continue  # stopped mid-round: step 1 reports it, nothing half-done is saved
                new, problems = result
                if owns_claim(self.owner_path, token):
                    self._save(known)
                elif self.follow:  # the newer watcher reports this round's mail, not both of us
                    return Outcome(EXIT_REPLACED, LINE_REPLACED)
                outcome = self._follow(new, problems) if self.follow else _ended(new, problems, self._due)
                if outcome is not None:
                    return outcome
            elif not outside_logged:
                assert self.hours is not None
                self.log(f"mimo hodiny hlídání ({self.hours[0]}-{self.hours[1]}), Gmailu se neptám")
                outside_logged = True
            if (self.clock() - started).total_seconds() >= self.max_s:
                return Outcome(EXIT_RESTART, LINE_TIME_UP)
            self._pause()

    def _stopped(self) -> Outcome:
        if self.orphaned.is_set():
            return Outcome(EXIT_REPLACED, LINE_ORPHANED)
        # --follow was stopped on purpose (the user, or the host closing): no line asks for a restart.
        return Outcome(EXIT_RESTART, "" if self.follow else LINE_ABORTED)

    def _follow(self, new: list[str], problems: list[str]) -> Outcome | None:
        """--follow: say what the round found and go on, unless a problem ends watching."""
        if new:
            self._tell(f"nová pošta: {', '.join(new)}. {FOLLOW_ADVICE}")
        if self._due:
            self._tell(f"připomínky na dnešek: {', '.join(self._due)}. {REMINDER_ADVICE} Hlídač běží dál.")
        for line in self._unreachable_lines():
            self._tell(line)
        if problems:
            return Outcome(EXIT_PROBLEM, f"problém: {'; '.join(problems)}. {FOLLOW_PROBLEM_ADVICE}")
        return None

    def _tell(self, line: str) -> None:
        try:
            self.emit(line)
        except OSError:  # nobody reads our stdout any more: the host is gone
            self.orphaned.set()
            self.abort.set()

    def _unreachable_lines(self) -> list[str]:
        now = self.clock()
        lines: list[str] = []
        for name, down in self._down.items():
            told = self._down_told.get(name)
            minutes = (now - down.since).total_seconds() / 60
            if down.failures < 2 or minutes * 60 < UNREACHABLE_AFTER_S:
                continue
            if told is not None and (now - told).total_seconds() < UNREACHABLE_REPEAT_S:
                continue
            self._down_told[name] = now
            lines.append(
                f"pozor: schránka {name} je nedostupná už {minutes:.0f} min ({down.detail}); ostatní hlídám dál "
                "a tuhle zkouším znovu. Řekni to uživateli, hlídače znovu nespouštěj."
            )
        return lines

    def _went_down(self, name: str, detail: str) -> None:
        down = self._down.setdefault(name, _Down(self.clock()))
        down.failures += 1
        down.detail = detail

    def _pause(self) -> None:
        """Until the next poll, a stop, or (with IDLE) new mail in a watched mailbox."""
        if self.wake is None:
            self.sleep(self.interval_s, self.abort)
            return
        end = time.monotonic() + self.interval_s
        claim_check = time.monotonic() + _CLAIM_CHECK_S
        while not self.abort.is_set() and not self.wake.is_set():
            now = time.monotonic()
            if now >= end:
                return
            if now >= claim_check:
                if not owns_claim(self.owner_path, self._token):
                    return  # the loop reports the takeover
                claim_check = now + _CLAIM_CHECK_S
            self.wake.wait(min(end - now, _POLL_S))

    def _round(self, known: dict[str, set[str]]) -> tuple[list[str], list[str]] | None:
        """Check every watched mailbox in turn; None when stopped meanwhile."""
        new: list[str] = []
        problems: list[str] = []
        self._due = []
        for name, since in self.watched.items():
            if self.abort.is_set():
                return None
            try:
                keys = self._checked(name, since)
            except _Aborted:
                return None
            except MailError as error:
                problem = self._failure(name, error)
                if problem is not None:
                    problems.append(problem)
                else:
                    self._went_down(name, one_line(error.message).rstrip("."))
                continue  # the known set of a failing mailbox stays as it was
            except Exception as error:  # noqa: BLE001 - the watcher's loop is a boundary
                # A surprise must not end the watcher either: the next round tries again.
                self.log(f"schránka {name}: nečekaná chyba {type(error).__name__}: {one_line(str(error))}")
                self._went_down(name, f"nečekaná chyba {type(error).__name__}")
                continue
            self._auth_failures[name] = 0
            if self._down.pop(name, None) is not None:
                self.log(f"schránka {name} je zase dostupná")
            fresh = keys - known.get(name, set())
            due = {key for key in fresh if key.startswith(DUE_KEY_PREFIX)}
            if fresh - due:
                new.append(f"{name} {len(fresh - due)}")
            if due:
                self._due.append(f"{name} {len(due)}")
            # Labelled mail leaves the window and is forgotten; reported mail is known from now on.
            known[name] = keys
        if self.abort.is_set():
            return None
        return new, problems

    def _checked(self, name: str, since: datetime) -> set[str]:
        """Run the check on a daemon thread so a stop does not wait for a slow Gmail answer."""
        self.checks += 1
        result = _Result()
        done = threading.Event()

        def work() -> None:
            try:
                result.keys = self.check(name, since)
            except Exception as error:  # noqa: BLE001 - handed to the waiting thread, which reports it
                result.error = error
            finally:
                done.set()

        threading.Thread(target=work, name=f"mg-watch-{name}", daemon=True).start()
        while not done.wait(_POLL_S):
            if self.abort.is_set():
                raise _Aborted
        if result.error is not None:
            raise result.error
        if result.keys is None:
            raise RuntimeError("the check ended without an answer")
        return result.keys

    def _failure(self, name: str, error: MailError) -> str | None:
        """The problem to report for a failed check, or None when it is only worth a log line."""
        detail = one_line(error.message).rstrip(".")
        if error.kind == "signed_out":
            # Google's invalid_grant is final (a revoked or expired sign-in): no second round helps.
            return f"schránka {name} se nepřihlásí, {_login_cause(error)} ({detail})"
        if error.code == "auth_failed" or error.kind == "web_login":
            self._auth_failures[name] += 1
            # One refusal can be Gmail's hiccup; the second in a row needs the user (a revoked or
            # changed password, IMAP switched off, a sign-in in the browser), so the watcher ends.
            if self._auth_failures[name] >= 2:
                return f"schránka {name} se nepřihlásí, {_login_cause(error)} ({detail})"
            self.log(f"schránka {name} se nepřihlásila ({detail}); když se to zopakuje, ohlásím problém")
            return None
        self._auth_failures[name] = 0  # too many connections, throttling, an outage: not the user's to fix
        if error.code in ("provider_unsupported", "query_too_broad"):
            return f"schránka {name}: {detail}"
        # Network trouble and Gmail's passing refusals go by themselves; reporting them would only make
        # the assistant restart us.
        if error.retryable:
            self.log(f"schránka {name}: Gmail teď neodpovídá ({detail}), zkusím to při další kontrole")
        else:
            self.log(f"schránka {name}: Gmail odmítl kontrolu ({detail}), zkusím to při další kontrole")
        return None

    def _save(self, known: dict[str, set[str]]) -> None:
        try:
            save_known(self.known_path, known)
        except OSError as error:
            self.log(f"nejde zapsat {self.known_path}: {error.strerror or error}")


@dataclass
class _Down:
    since: datetime
    failures: int = 0
    detail: str = ""


def _ended(new: list[str], problems: list[str], due: list[str] | None = None) -> Outcome | None:
    """--wait: the round's news or problem ends the watcher with its one line."""
    if due and not new:
        line = f"připomínky na dnešek: {', '.join(due)}. {REMINDER_ADVICE}"
        if problems:
            line += f" Pozor: {'; '.join(problems)}."
        return Outcome(EXIT_NEW_MAIL, line)
    if new:
        line = f"nová pošta: {', '.join(new)}. {NEW_MAIL_ADVICE}"
        if due:
            line += f" Připomínky na dnešek: {', '.join(due)}."
        if problems:
            line += f" Pozor: {'; '.join(problems)}."
        return Outcome(EXIT_NEW_MAIL, line)
    if problems:
        return Outcome(EXIT_PROBLEM, f"problém: {'; '.join(problems)}")
    return None


def _login_cause(error: MailError) -> str:
    """What the user has to fix, in the watcher's line (the detail in brackets gives Gmail's words)."""
    if error.kind == "web_login":
        return "Gmail chce přihlášení v prohlížeči"
    if error.kind == "imap_disabled":
        return "Gmail má pro ni vypnutý IMAP"
    if error.kind == "signed_out":
        return (
            "přihlášení přes Google skončilo (zrušené, změněné heslo účtu, nebo 7denní lhůta projektu "
            "v režimu Testing) a je třeba ho zopakovat"
        )
    return "heslo aplikace je nejspíš zrušené nebo změněné"


def _emit(line: str) -> None:
    """A stdout line; a console that cannot show Czech gets UTF-8 bytes rather than a crash. Raises OSError."""
    text = one_line(line) + "\n"
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except UnicodeEncodeError:
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.flush()


@contextlib.contextmanager
def _stop_on_signals(abort: threading.Event) -> Iterator[None]:
    """SIGTERM/SIGINT/SIGHUP set `abort` (exit 4) instead of killing us mid-write; restored afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signals = [signal.SIGTERM, signal.SIGINT]
    if hasattr(signal, "SIGHUP"):  # a closed terminal; POSIX only
        signals.append(signal.SIGHUP)
    previous = {sig: signal.getsignal(sig) for sig in signals}
    for sig in previous:
        signal.signal(sig, lambda _signum, _frame: abort.set())
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _state_dir(environ: Mapping[str, str]) -> Path:
    override = environ.get(STATE_DIR_ENV, "").strip()
    return Path(override) if override else project_dir()


def _describe(plan: WatchPlan, state_dir: Path, idling: list[str]) -> str:
    boxes = ", ".join(plan.watched)
    hours = f"{plan.hours[0]}-{plan.hours[1]}" if plan.hours else "celý den"
    idle = f"okamžité upozornění (IDLE) {', '.join(idling)}" if idling else "bez okamžitého upozornění (IDLE)"
    limit = "bez časového limitu" if plan.max_s == NO_LIMIT else f"nejdéle {plan.max_s / 60:g} min"
    mode = "každou novou poštu ohlásím řádkem a hlídám dál" if plan.follow else "u první nové pošty skončím"
    return (
        f"hlídám {boxes}; kontrola každých {plan.interval_s / 60:g} min, {limit}, "
        f"hodiny {hours}; {idle}; {mode}; stav v {state_dir}"
    )


def idling_mailboxes(plan: WatchPlan) -> list[str]:
    """The watched mailboxes that keep an IDLE connection (`watch_idle`, default true)."""
    return [name for name in plan.watched if (a := plan.config.account(name)) is not None and a.watch_idle]


def idle_timings(plan: WatchPlan, environ: Mapping[str, str]) -> IdleTimings:
    # Shorter timings only against the loopback test server: real Gmail always gets Gmail's.
    override = timings_from(environ) if plan.endpoint.overridden else None
    if override is not None:
        stderr_log(f"časy IDLE zkrácené pro testy: {override}")
    return override if override is not None else IdleTimings()


def run_watcher(args: WatchArgs, *, state_dir: Path | None = None) -> int:
    """Check the arguments, watch, print the line(s) and return the exit code."""
    try:
        plan = plan_watch(args)
    except WatchArgsError as error:
        _emit(error.line)
        return EXIT_BAD_START
    directory = state_dir if state_dir is not None else _state_dir(args.environ)
    if plan.endpoint.overridden:
        stderr_log(f"místo Gmailu se připojuji k {plan.endpoint.imap_host}:{plan.endpoint.imap_port} (jen pro testy)")
    if plan.dropped:
        stderr_log(f"kotvy schránek bez „watch“ nechávám stranou: {', '.join(plan.dropped)}")
    idling = idling_mailboxes(plan)
    stderr_log(_describe(plan, directory, idling))
    abort = threading.Event()
    # With `watch_idle: false` everywhere there is no wake at all: 1.5.0's watcher, polls only.
    wake = threading.Event() if idling else None
    stop = threading.Event()
    idlers = (
        start_idlers(idling, plan.config, plan.endpoint, wake, stop, stderr_log, idle_timings(plan, args.environ))
        if wake is not None
        else []
    )
    orphaned = threading.Event()

    def gone() -> None:
        stderr_log("proces, který hlídače spustil, skončil; končím")
        orphaned.set()
        abort.set()

    watch_ancestors(ancestors(), gone, stop)
    watcher = Watcher(
        plan.watched,
        state_dir=directory,
        check=imap_check(plan.config, plan.endpoint),
        interval_s=plan.interval_s,
        max_s=plan.max_s,
        hours=plan.hours,
        abort=abort,
        wake=wake,
        follow=plan.follow,
        orphaned=orphaned,
    )
    with _stop_on_signals(abort):
        outcome = watcher.run()
    if outcome.line:
        with contextlib.suppress(OSError):  # a reader that is gone cannot be told
            _emit(outcome.line)
    # DONE and LOGOUT, after the line so the assistant is not kept waiting; within 2 s of a stop.
    stop_idlers(idlers, stop, timeout=1.5)
    return outcome.code
