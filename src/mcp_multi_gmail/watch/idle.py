"""IMAP IDLE for the watcher: one connection per watched mailbox waits in All Mail for new mail.

When Gmail reports new messages the watcher checks at once instead of at its next poll. The poll
stays: it is the safety net for anything IDLE misses, and the only way for a mailbox where IDLE
is refused or the connection keeps failing (that mailbox then simply waits for the poll).

Gmail sends nothing while a connection idles, so silence proves nothing. What proves the
connection alive is the answer to DONE when the IDLE is re-issued (at most every 9 minutes, before
Gmail's own drop after about 10). A DONE or `+ idling` unanswered within 30 s, a `* BYE` or a
closed socket means a dead connection: reconnect with backoff, then have the watcher check at
once, so mail that came meanwhile does not wait for the poll (BEHAVIOURS.md, "IDLE").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ..config import Config
from ..errors import MailError
from ..gmail.endpoint import Endpoint
from ..gmail.imap import ALL_MAIL, logged_in

# Test-only: shorter timings, honoured only when the endpoint is the loopback test override
# (`MG_WATCH_IDLE_TIMINGS=reissue=1,answer=0.5,backoff=0.1,stable=60`).
TIMINGS_ENV = "MG_WATCH_IDLE_TIMINGS"
# How often an idling thread looks at its stop flag.
_SLICE_S = 0.25
# Failed connections in a row (each shorter than `stable_s`) after which the mailbox gives IDLE
# up and relies on the poll; with the default backoff that is about 14 minutes of trying.
MAX_DROPS = 8


@dataclass(frozen=True)
class IdleTimings:
    # Re-issue IDLE this often: mature clients stay under 10 minutes on Gmail; RFC 2177 asks for 29.
    reissue_s: float = 9 * 60.0
    # `+ idling` and DONE's tagged answer must come within this; later means a dead connection.
    answer_s: float = 30.0
    # Waits before the 1st, 2nd, … reconnection in a row (the last one repeats).
    backoff_s: tuple[float, ...] = (2.0, 10.0, 30.0, 60.0, 120.0, 300.0)
    # A connection that lasted this long was healthy: the count of failures in a row starts again.
    stable_s: float = 60.0

    def backoff(self, failures: int) -> float:
        return self.backoff_s[min(failures, len(self.backoff_s)) - 1]


def timings_from(environ: Mapping[str, str]) -> IdleTimings | None:
    """The test override in `environ`, or None when there is none or it does not parse."""
    text = environ.get(TIMINGS_ENV, "").strip()
    if not text:
        return None
    values: dict[str, object] = {}
    names = {"reissue": "reissue_s", "answer": "answer_s", "backoff": "backoff_s", "stable": "stable_s"}
    try:
        for item in text.split(","):
            key, _, value = item.partition("=")
            field = names[key.strip()]
            numbers = tuple(float(v) for v in value.split("/"))
            if any(n < 0 for n in numbers):  # an empty value already failed float("")
                return None
            values[field] = numbers if field == "backoff_s" else numbers[0]
    except (KeyError, ValueError):
        return None
    return IdleTimings(**values)  # type: ignore[arg-type]


@dataclass(eq=False, repr=False)  # compared and shown as the object it is (its config holds sign-ins)
class Idler:
    """The IDLE connection of one mailbox, on a daemon thread; sets `wake` when new mail arrives
    and when a connection is back after a failure."""

    name: str
    config: Config
    endpoint: Endpoint
    wake: threading.Event
    stop: threading.Event
    log: Callable[[str], None]
    timings: IdleTimings = field(default_factory=IdleTimings)
    active: bool = field(default=False, init=False)  # holding an IDLE right now (for tests and the log)
    gave_up: bool = field(default=False, init=False)  # fell back to polling for good
    # Connections that came back after a failure (each woke the watcher).
    reconnects: int = field(default=0, init=False)
    # The last connection failed: the next IDLE that starts wakes the watcher.
    _failed: bool = field(default=False, init=False)
    thread: threading.Thread = field(init=False)

    def __post_init__(self) -> None:
        self.thread = threading.Thread(target=self._run, name=f"mg-idle-{self.name}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        failures = 0
        while not self.stop.is_set():
            began = time.monotonic()
            try:
                refused = self._hold()
            except (MailError, OSError) as error:
                self.active = False
                self._failed = True
                failures = 1 if time.monotonic() - began >= self.timings.stable_s else failures + 1
                if failures >= MAX_DROPS:
                    self._give_up(f"spojení se opakovaně přerušilo ({_reason(error)})")
                    return
                pause = self.timings.backoff(failures)
                self.log(
                    f"schránka {self.name}: spojení pro okamžité upozornění (IDLE) spadlo ({_reason(error)}), "
                    f"připojím se znovu za {pause:g} s"
                )
                self.stop.wait(pause)
                continue
            except Exception as error:  # noqa: BLE001 - a surprise: polling still works, so fall back to it
                self._give_up(f"nečekaná chyba {type(error).__name__}")
                return
            self.active = False
            if refused:
                self._give_up("Gmail IDLE odmítl")
            return

    def _give_up(self, why: str) -> None:
        self.gave_up = True
        self.log(f"schránka {self.name}: okamžité upozornění (IDLE) nejde, {why}; kontroluji jen pravidelně")

    def _started(self) -> None:
        """An IDLE is in place: after a failure, have the watcher look for what came meanwhile."""
        self.active = True
        if self._failed:
            self._failed = False
            self.reconnects += 1
            self.log(f"schránka {self.name}: spojení pro okamžité upozornění je zpět, hned kontroluji")
            self.wake.set()

    def _hold(self) -> bool:
        """One connection: IDLE, re-issued before Gmail's limit, until stopped. True = refused."""
        account = self.config.account(self.name)
        if account is None:
            return True
        answer_s = self.timings.answer_s
        with logged_in(account.name, account.address, account.login, self.endpoint) as session:
            if not session.can_idle():
                return True
            session.open(ALL_MAIL)
            while not self.stop.is_set():
                if not session.idle_start(answer_s):
                    return True
                self._started()
                began = time.monotonic()
                while not self.stop.is_set():
                    left = self.timings.reissue_s - (time.monotonic() - began)
                    if left <= 0:
                        break
                    if session.idle_wait(min(_SLICE_S, left)):
                        self.wake.set()
                # DONE is also the liveness probe: no answer within answer_s raises (dead connection).
                session.idle_stop(answer_s)
                self.active = False
        return False


def _reason(error: BaseException) -> str:
    text = error.message if isinstance(error, MailError) else str(error)
    return " ".join(text.split())[:160] or type(error).__name__


def start_idlers(
    watched: Iterable[str],
    config: Config,
    endpoint: Endpoint,
    wake: threading.Event,
    stop: threading.Event,
    log: Callable[[str], None],
    timings: IdleTimings | None = None,
) -> list[Idler]:
    timings = timings if timings is not None else IdleTimings()
    idlers = [Idler(name, config, endpoint, wake, stop, log, timings) for name in watched]
    for idler in idlers:
        idler.start()
    return idlers


def stop_idlers(idlers: list[Idler], stop: threading.Event, timeout: float = 3.0) -> None:
    """Ask every IDLE to end with DONE and LOGOUT; a thread still busy after `timeout` is left
    behind (it is a daemon, so it does not hold the exit)."""
    stop.set()
    deadline = time.monotonic() + timeout
    for idler in idlers:
        idler.thread.join(max(0.0, deadline - time.monotonic()))
