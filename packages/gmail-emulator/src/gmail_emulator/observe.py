"""Observability, latency and fault injection, shared by the IMAP and SMTP fronts.

The servers run on the emulator's event-loop thread while tests read the observer from their own
thread, so every list here is guarded by one lock.
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "CONNECT_ACTIONS",
    "LOGIN_COMMANDS",
    "REDACTED",
    "CommandRecord",
    "FaultRule",
    "Observer",
    "WireEntry",
    "redact_imap_line",
    "redact_smtp_line",
]

REDACTED = b"***"
# Fault actions that fire when a client connects, not on a command.
CONNECT_ACTIONS = frozenset({"greeting_bye", "tls_fail"})
# Commands a `refuse_login:<kind>` rule can fire on.
LOGIN_COMMANDS = frozenset({"LOGIN", "AUTHENTICATE", "AUTH"})

Protocol = Literal["imap", "smtp"]
Direction = Literal["c", "s"]


@dataclass
class CommandRecord:
    session_id: int
    account: str | None
    name: str  # "UID FETCH", "LOGIN", "SELECT", ...
    line: str  # redacted, at most 300 characters
    started: float
    duration: float


@dataclass
class WireEntry:
    session_id: int
    protocol: Protocol
    direction: Direction
    data: bytes


@dataclass
class FaultRule:
    """One injected fault.

    `action`: drop_before_reply | drop_mid_reply | bye[:<refusal kind>|:<text>] | no:<text> | bad:<text> |
    stall | delay:<s> | throttle[:<s>] (the command runs after <s> seconds, default 1, and its OK
    answer ends in ` [THROTTLED]`, as Gmail throttles) |
    refuse_login:<invalid|app_password|too_many|webalert|unavailable|overquota|imap_disabled|
    imap_not_enabled> (LOGIN only; `refuse_login:throttled` is `throttle` on LOGIN) |
    refuse:<one of those kinds> (any command, a tagged NO with Gmail's text) | greeting_bye |
    tls_fail (the last two fire at connect time) | hook (calls `hook` in a worker thread, then the
    command runs as usual: a test acts at the exact moment a command arrives instead of racing it
    with a timer) | untagged:<text> (calls `hook` if given, then sends `* <text>` before the command
    runs: unsolicited data such as another client's flag change, which RFC 3501 section 7 lets a
    server send during any command).
    `match`: a command name ("UID FETCH", "LOGIN", ...) or "*"/None for any; a plain name also
    matches its UID form ("FETCH" matches "UID FETCH").
    `nth`: fire from the nth matching command on (1-based, counted since the rule was added).
    `times`: how often it fires; -1 = always.
    `account`: only for sessions of this account (for LOGIN: the login name).
    """

    action: str
    match: str | None = None
    nth: int | None = None
    times: int = 1
    account: str | None = None
    hook: Callable[[], None] | None = field(default=None, compare=False, repr=False)
    seen: int = field(default=0, compare=False)  # matching commands counted so far

    @property
    def kind(self) -> str:
        return self.action.split(":", 1)[0]

    @property
    def argument(self) -> str:
        return self.action.split(":", 1)[1] if ":" in self.action else ""

    @property
    def seconds(self) -> float:
        """The argument as seconds (`delay:<s>`, `throttle:<s>`); 0 when it is no number."""
        try:
            return max(float(self.argument), 0.0)
        except ValueError:
            return 0.0

    @property
    def throttles(self) -> bool:
        """Whether the rule makes Gmail throttle the command (slow, then `OK … [THROTTLED]`)."""
        return self.kind == "throttle" or (self.kind == "refuse_login" and self.argument == "throttled")

    def matches(self, name: str, account: str | None) -> bool:
        connect = name == "CONNECT"
        if (self.kind in CONNECT_ACTIONS) != connect:
            return False
        if self.kind == "refuse_login" and name not in LOGIN_COMMANDS:
            return False
        if self.account is not None and (account or "").lower() != self.account.lower():
            return False
        if connect or self.match in (None, "*"):
            return True
        assert self.match is not None
        wanted = self.match.upper()
        return name == wanted or name == f"UID {wanted}"


class Observer:
    """Per-command counter, wire log, latency table and fault rules of an emulator."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._commands: list[CommandRecord] = []
        self._wire: list[WireEntry] = []
        self._faults: list[FaultRule] = []
        self._logins: list[tuple[int, str]] = []
        # Seconds of delay per command name ("UID FETCH"; a plain "FETCH" also covers "UID FETCH"),
        # "*" for every other command.  Applied after parsing, before the first reply byte.
        self.latency: dict[str, float] = {}
        self.jitter_frac: float = 0.0  # +- this fraction of the latency, uniformly
        self.bandwidth_bps: float | None = None  # bytes per second for server output; None = unlimited
        self.wire_logging: bool = True
        self._rng = random.Random(4321)

    # ----------------------------------------------------------------- latency

    def latency_for(self, name: str) -> float:
        table = self.latency
        base = name[4:] if name.startswith("UID ") else name
        value = table.get(name, table.get(base, table.get("*", 0.0)))
        if value > 0 and self.jitter_frac > 0:
            with self._lock:
                value *= 1 + self._rng.uniform(-self.jitter_frac, self.jitter_frac)
        return max(value, 0.0)

    # ----------------------------------------------------------------- faults

    def add_fault(self, rule: FaultRule) -> None:
        with self._lock:
            rule.seen = 0
            self._faults.append(rule)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def faults(self) -> list[FaultRule]:
        with self._lock:
            return list(self._faults)

    def take_fault(self, session_id: int, name: str, account: str | None) -> FaultRule | None:
        """The first rule firing on this command (counts it and uses up one of its `times`).

        `name` "CONNECT" asks for the connect-time actions (greeting_bye, tls_fail).
        """
        del session_id  # rules are global; the argument keeps the call sites self-describing
        with self._lock:
            fired: FaultRule | None = None
            for rule in self._faults:
                if not rule.matches(name, account):
                    continue
                rule.seen += 1
                if fired is not None:
                    continue
                if rule.nth is not None and rule.seen < rule.nth:
                    continue
                if rule.times == 0:
                    continue
                if rule.times > 0:
                    rule.times -= 1
                fired = rule
            self._faults = [r for r in self._faults if r.times != 0]
            return fired

    # ----------------------------------------------------------------- records

    def record_command(
        self,
        session_id: int,
        account: str | None,
        name: str,
        line: str,
        started: float,
        duration: float,
    ) -> None:
        record = CommandRecord(session_id, account, name, line[:300], started, duration)
        with self._lock:
            self._commands.append(record)

    def record_wire(self, session_id: int, protocol: Protocol, direction: Direction, data: bytes) -> None:
        if not self.wire_logging or not data:
            return
        with self._lock:
            self._wire.append(WireEntry(session_id, protocol, direction, bytes(data)))

    def record_login(self, session_id: int, account: str) -> None:
        with self._lock:
            self._logins.append((session_id, account.lower()))

    # ----------------------------------------------------------------- queries

    def commands(self, account: str | None = None) -> list[CommandRecord]:
        with self._lock:
            records = list(self._commands)
        if account is None:
            return records
        wanted = account.lower()
        return [r for r in records if (r.account or "").lower() == wanted]

    def connections(self, account: str | None = None) -> int:
        """Number of IMAP sessions that logged in (as `account`, when given)."""
        with self._lock:
            logins = list(self._logins)
        if account is None:
            return len({sid for sid, _ in logins})
        wanted = account.lower()
        return len({sid for sid, acc in logins if acc == wanted})

    def wire_log(self) -> list[WireEntry]:
        with self._lock:
            return list(self._wire)

    def wire_bytes(self, direction: str = "s", protocol: str = "imap") -> int:
        with self._lock:
            return sum(len(e.data) for e in self._wire if e.direction == direction and e.protocol == protocol)

    def reset(self) -> None:
        """Forget records, faults and latency (a fresh observer for the next test)."""
        with self._lock:
            self._commands.clear()
            self._wire.clear()
            self._faults.clear()
            self._logins.clear()
        self.latency = {}
        self.jitter_frac = 0.0
        self.bandwidth_bps = None


# --------------------------------------------------------------------------- redaction

_IMAP_AUTH = re.compile(rb"^(?P<head>\S+[ ]+(?:LOGIN|AUTHENTICATE)[ ]+)(?P<rest>.*)$", re.I | re.S)
_SMTP_AUTH = re.compile(rb"^(?P<head>AUTH[ ]+\S+)(?P<rest>[ ].*?)?(?P<eol>\r?\n)?$", re.I | re.S)


def _skip_astring(data: bytes, pos: int) -> int:
    """End offset of the IMAP astring starting at `pos` (atom, quoted string or literal)."""
    if pos >= len(data):
        return pos
    if data[pos : pos + 1] == b'"':
        i = pos + 1
        while i < len(data):
            ch = data[i : i + 1]
            if ch == b"\\":
                i += 2
                continue
            if ch == b'"':
                return i + 1
            i += 1
        return len(data)
    literal = re.match(rb"\{(\d+)\+?\}\r\n", data[pos:])
    if literal:
        return min(pos + literal.end() + int(literal.group(1)), len(data))
    i = pos
    while i < len(data) and data[i : i + 1] not in (b" ", b"\r", b"\n"):
        i += 1
    return i


def redact_imap_line(line: bytes) -> bytes:
    """Hide credentials in an IMAP command (LOGIN's password, AUTHENTICATE's payload).

    Also accepts an SMTP `AUTH <mech> <payload>` line, so both fronts can share one helper.
    Anything else is returned unchanged.
    """
    m = _IMAP_AUTH.match(line)
    if m is None:
        return redact_smtp_line(line)
    head, rest = m.group("head"), m.group("rest")
    eol = b"\r\n" if line.endswith(b"\r\n") else (b"\n" if line.endswith(b"\n") else b"")
    if b"LOGIN" in head.upper():
        user_end = _skip_astring(rest, 0)
        return head + rest[:user_end] + b" " + REDACTED + eol
    mech_end = _skip_astring(rest, 0)
    if rest[mech_end:].strip():
        return head + rest[:mech_end] + b" " + REDACTED + eol
    return line


def redact_smtp_line(line: bytes) -> bytes:
    """Hide the payload of an SMTP `AUTH PLAIN <b64>` / `AUTH LOGIN <b64>` line."""
    m = _SMTP_AUTH.match(line)
    if m is None or not (m.group("rest") or b"").strip():
        return line
    return m.group("head") + b" " + REDACTED + (m.group("eol") or b"")
