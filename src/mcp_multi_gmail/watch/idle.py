"""IMAP IDLE for the watcher: one connection per watched mailbox waits in All Mail for new mail.

When Gmail reports new messages the watcher checks at once instead of at its next poll. The poll
stays: it is the safety net for anything IDLE misses, and the only way for a mailbox where IDLE
is refused or the connection keeps dropping (that mailbox then simply waits for the poll).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from ..config import Config
from ..errors import MailError
from ..gmail.endpoint import Endpoint
from ..gmail.imap import ALL_MAIL, open_session

# Gmail ends an IDLE after about 30 minutes and RFC 2177 asks clients to re-issue it within 29.
REISSUE_S = 25 * 60.0
# How often an idling thread looks at its stop flag.
_SLICE_S = 0.25
# A connection that lasted this long was healthy: the count of drops in a row starts again.
_STABLE_S = 60.0
# Drops in a row after which the mailbox gives IDLE up and relies on the poll.
MAX_DROPS = 3
_BACKOFF_S = (2.0, 10.0, 30.0)


class Idler:
    """The IDLE connection of one mailbox, on a daemon thread; sets `wake` when new mail arrives."""

    def __init__(
        self,
        name: str,
        config: Config,
        endpoint: Endpoint,
        wake: threading.Event,
        stop: threading.Event,
        log: Callable[[str], None],
        *,
        reissue_s: float = REISSUE_S,
    ) -> None:
        self.name = name
        self.config = config
        self.endpoint = endpoint
        self.wake = wake
        self.stop = stop
        self.log = log
        self.reissue_s = reissue_s
        self.active = False  # holding an IDLE right now (for tests and the log)
        self.gave_up = False  # fell back to polling for good
        self.thread = threading.Thread(target=self._run, name=f"mg-idle-{name}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        drops = 0
        while not self.stop.is_set():
            began = time.monotonic()
            try:
                refused = self._hold()
            except (MailError, OSError) as error:
                self.active = False
                drops = 1 if time.monotonic() - began >= _STABLE_S else drops + 1
                if drops >= MAX_DROPS:
                    self._give_up(f"spojení se opakovaně přerušilo ({_reason(error)})")
                    return
                self.stop.wait(_BACKOFF_S[min(drops, len(_BACKOFF_S)) - 1])
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

    def _hold(self) -> bool:
        """One connection: IDLE, re-issued before Gmail's limit, until stopped. True = refused."""
        account = self.config.account(self.name)
        if account is None:
            return True
        with open_session(account.name, account.address, account.password, self.endpoint) as session:
            if not session.can_idle():
                return True
            session.open(ALL_MAIL)
            while not self.stop.is_set():
                if not session.idle_start():
                    return True
                self.active = True
                began = time.monotonic()
                while not self.stop.is_set():
                    left = self.reissue_s - (time.monotonic() - began)
                    if left <= 0:
                        break
                    if session.idle_wait(min(_SLICE_S, left)):
                        self.wake.set()
                session.idle_stop()
                self.active = False
        return False


def _reason(error: BaseException) -> str:
    text = error.message if isinstance(error, MailError) else str(error)
    return " ".join(text.split())[:160] or type(error).__name__


def start_idlers(
    watched: Mapping[str, object],
    config: Config,
    endpoint: Endpoint,
    wake: threading.Event,
    stop: threading.Event,
    log: Callable[[str], None],
) -> list[Idler]:
    idlers = [Idler(name, config, endpoint, wake, stop, log) for name in watched]
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
