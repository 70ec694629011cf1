"""Fault matrix: every write tool with the connection dropped at each IMAP command in turn, and sending
with the connection dropped (or refused) at each SMTP stage.

For every fault point the tool is called once with the fault armed and once more without it. The
emulator's store is the truth:

* a success really happened (the store shows the tool's whole effect);
* an error either changed nothing, or says honestly that the change may have been made, and what
  it did change is part of the intended change (a message is never deleted or duplicated);
* the repeat converges: labels report `already`, trash `moved: false`, a send that went out is
  refused as `duplicate_send` (one that did not go out is sent by the repeat, or refused as a
  duplicate only when the first call said it may have gone), and the store ends as after a clean
  run; a draft whose save failed is saved once by the repeat (a successful save is not repeated:
  saving twice makes two drafts by design);
* a send is never attempted twice by the server (at most one SMTP session per call) and at most
  one message leaves across the faulted call and its repeat.

The number of IMAP commands N of each scenario is measured by a clean run first; the fault
`drop_before_reply` (the command is never executed) and `drop_mid_reply` (the command is executed,
its answer is cut off) are injected at k = 1..N.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from security_support import (
    ACCOUNTS,
    CANARY,
    ME,
    between,
    error_of,
    keyed,
    mail,
    new_messages,
    normalized,
)

from gmail_emulator import FaultRule, GmailEmulator, SmtpFault
from mcp_multi_gmail.mail.sending import send as send_service
from mcp_multi_gmail.mail.sending.journal import JOURNAL_FILE
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

IMAP_ACTIONS = ("drop_before_reply", "drop_mid_reply")
# "may or may not", "may have": the honest words for a change whose outcome is unknown.
MAY = re.compile(r"\bmay\b", re.IGNORECASE)


def _thread(emulator: GmailEmulator, labels: list[str]) -> None:
    emulator.deliver(ME, mail("dotaz-1@partner.example"))
    emulator.deliver(ME, mail("dotaz-2@partner.example", subject="Re: Dotaz", in_reply_to="dotaz-1@partner.example"))
    if labels:
        for mid in ("dotaz-1@partner.example", "dotaz-2@partner.example"):
            emulator.add_labels(ME, mid, labels)
    emulator.deliver(ME, mail("jina-1@partner.example", subject="Jiná věc"))  # never touched


@dataclass
class Scenario:
    name: str
    tool: str
    args: Callable[[GmailEmulator], dict[str, Any]]
    setup: Callable[[GmailEmulator], None]
    knobs: dict[str, Any] = field(default_factory=dict)
    idempotent: bool = True


def _ids(*mids: str) -> Callable[[GmailEmulator], dict[str, Any]]:
    return lambda _e: {"account": "o", "message_ids": list(mids), "label": "Asistent"}


def _thread_args(label: str) -> Callable[[GmailEmulator], dict[str, Any]]:
    def build(emulator: GmailEmulator) -> dict[str, Any]:
        info = emulator.message(ME, "dotaz-1@partner.example")
        assert info is not None
        return {"account": "o", "thread_id": str(info.thrid), "label": label}

    return build


REPLY = {
    "account": "o",
    "to": ["petr@partner.example"],
    "subject": "Re: Dotaz",
    "body": "Dobrý den,\nceník posílám.",
    "in_reply_to": "dotaz-1@partner.example",
}

SCENARIOS = [
    Scenario(
        "label_message",
        "mg_label_message",
        _ids("dotaz-1@partner.example", "dotaz-2@partner.example"),
        lambda e: _thread(e, []),
    ),
    Scenario(
        "unlabel_message",
        "mg_unlabel_message",
        _ids("dotaz-1@partner.example", "dotaz-2@partner.example"),
        lambda e: _thread(e, ["Asistent"]),
    ),
    Scenario("label_thread", "mg_label_thread", _thread_args("Asistent/akce"), lambda e: _thread(e, ["Asistent/info"])),
    Scenario(
        "unlabel_thread", "mg_unlabel_thread", _thread_args("Asistent/akce"), lambda e: _thread(e, ["Asistent/akce"])
    ),
    Scenario(
        "set_flags",
        "mg_set_flags",
        lambda _e: {"account": "o", "message_id": "dotaz-1@partner.example", "seen": True, "flagged": True},
        lambda e: _thread(e, []),
    ),
    Scenario(
        "trash",
        "mg_trash_message",
        lambda _e: {"account": "o", "message_id": "<dotaz-2@partner.example>"},
        lambda e: _thread(e, []),
    ),
    Scenario("save_draft", "mg_save_draft", lambda _e: dict(REPLY), lambda e: _thread(e, []), idempotent=False),
    Scenario("send_gmail_files", "mg_send_message", lambda _e: dict(REPLY), lambda e: _thread(e, [])),
    Scenario(
        "send_server_appends",
        "mg_send_message",
        lambda _e: dict(REPLY),
        lambda e: _thread(e, []),
        knobs={"sent_filing_delay_s": None},
    ),
]


@dataclass
class Outcome:
    error: dict[str, Any] | None
    data: dict[str, Any] | None
    before: dict[str, Any]
    after: dict[str, Any]
    outbox: int
    smtp_sessions: int


class Bench:
    """Runs one scenario again and again on a freshly reset emulator."""

    def __init__(
        self,
        scenario: Scenario,
        emulator: GmailEmulator,
        make_runtime: Callable[..., Runtime],
        call: Callable[..., Any],
    ) -> None:
        self.scenario = scenario
        self.emulator = emulator
        self.call = call
        self.base = make_runtime()
        self.args: dict[str, Any] = {}

    def fresh(self) -> Runtime:
        """Reset the store to the scenario's start; the runtime forgets remembered ports and sends."""
        emulator = self.emulator
        emulator.reset()
        for address in ACCOUNTS:
            emulator.add_account(address, CANARY)
        self.scenario.setup(emulator)
        if self.scenario.knobs:
            emulator.set_knobs(**self.scenario.knobs)
        self.args = self.scenario.args(emulator)
        # Every point starts like a fresh server process: nothing remembered (folders, ports, sends).
        self.base.connections.special_folders.clear()
        self.base.smtp_ports.clear()
        self.base.handed_over.clear()
        # Gmail's store starts afresh, so the send journal of earlier points goes too.
        (self.base.state_folder() / JOURNAL_FILE).unlink(missing_ok=True)
        return self.base

    async def run(self, runtime: Runtime) -> Outcome:
        emulator = self.emulator
        before = emulator.snapshot()
        outbox, sessions = len(emulator.outbox()), emulator.smtp_sessions()
        result = await self.call(runtime, self.scenario.tool, self.args)
        error = error_of(result)
        return Outcome(
            error=error,
            data=None if error else result.structured_content,
            before=before,
            after=emulator.snapshot(),
            outbox=len(emulator.outbox()) - outbox,
            smtp_sessions=emulator.smtp_sessions() - sessions,
        )


@dataclass
class Clean:
    before: dict[str, Any]
    final: dict[str, Any]
    commands: int

    def same_as_final(self, snapshot: dict[str, Any]) -> bool:
        return bool(normalized(snapshot, self.before) == normalized(self.final, self.before))

    def same_as_start(self, snapshot: dict[str, Any]) -> bool:
        return bool(normalized(snapshot, self.before) == normalized(self.before, self.before))


def _check_partial(clean: Clean, after: dict[str, Any]) -> list[str]:
    """What a faulted call left behind must lie between the start and the clean end state."""
    problems: list[str] = []
    start, end, now = keyed(clean.before), keyed(clean.final), keyed(after)
    if not set(start) <= set(now):
        problems.append("a message was deleted")
    for key, message in start.items():
        if key not in now:
            continue
        got, want = now[key], end.get(key, message)
        if got["sha256"] != message["sha256"]:
            problems.append(f"{message['header_id']}: its bytes changed")
        if not between(got["labels"], message["labels"], want["labels"]):
            problems.append(f"{message['header_id']}: labels {got['labels']} are neither before nor after")
        if not between(got["flags"], message["flags"], want["flags"]):
            problems.append(f"{message['header_id']}: flags {got['flags']} are neither before nor after")
        if got["location"] not in (message["location"], want["location"]):
            problems.append(f"{message['header_id']}: moved to {got['location']}")
    created, expected = new_messages(after, clean.before), new_messages(clean.final, clean.before)
    if len(created) > len(expected):
        problems.append(f"{len(created)} new messages where a clean run makes {len(expected)} (a duplicate)")
    for address in after:
        labels = after[address]["user_labels"]
        if not between(labels, clean.before[address]["user_labels"], clean.final[address]["user_labels"]):
            problems.append(f"user labels {labels} are neither before nor after")
    return problems


def _label_outcomes(data: dict[str, Any] | None) -> list[str]:
    return [m["outcome"] for m in (data or {}).get("messages", [])]


def _converged(scenario: Scenario, first: Outcome, second: Outcome, clean: Clean) -> list[str]:
    """The repeat after a faulted call: tool by tool, what convergence means."""
    problems: list[str] = []
    tool = scenario.tool
    if tool == "mg_send_message":
        total = first.outbox + second.outbox
        if total > 1:
            problems.append(f"{total} messages delivered across the faulted call and its repeat")
        if second.smtp_sessions > 1:
            problems.append("the repeat opened more than one SMTP session")
        went_out = first.outbox == 1
        if went_out and (second.error is None or second.error["code"] != "duplicate_send"):
            problems.append(f"the repeat of a send that went out was not refused as duplicate_send: {second.error}")
        if not went_out:
            if second.error is None:
                if second.outbox != 1:
                    problems.append("the repeat reported success but delivered nothing")
            elif (
                second.error["code"] != "duplicate_send"
                or first.error is None
                or not MAY.search(first.error["message"])
            ):
                problems.append(f"the repeat of a send that did not go out failed: {second.error}")
        copies = [m for m in new_messages(second.after, clean.before) if m["header_id"] == _sent_id(first, second)]
        if len(copies) > 1:
            problems.append(f"{len(copies)} copies of the sent message in the mailbox")
        return problems
    return _repeat_converged(tool, first, second, clean)


def _repeat_converged(tool: str, first: Outcome, second: Outcome, clean: Clean) -> list[str]:
    """Labels, flags and Trash: the repeat succeeds and ends where a clean run ends."""
    problems: list[str] = []
    if second.error is not None:
        return [f"the repeat failed: {second.error}"]
    if not clean.same_as_final(second.after):
        problems.append("after the repeat the store differs from a clean run's end state")
    if tool in ("mg_label_message", "mg_unlabel_message", "mg_label_thread", "mg_unlabel_thread"):
        outcomes = _label_outcomes(second.data)
        if not outcomes or any(o not in ("already", "changed") for o in outcomes):
            problems.append(f"the repeat reports {outcomes}")
        if first.error is None and any(o != "already" for o in outcomes):
            problems.append(f"the repeat of a success reports {outcomes}, not already")
    elif tool == "mg_set_flags":
        if first.error is None and (second.data or {}).get("changed"):
            problems.append(f"the repeat of a success changed {second.data}")
    elif tool == "mg_trash_message":
        moved_before = clean.same_as_final(first.after)
        if (second.data or {}).get("moved") is moved_before:
            problems.append(f"the repeat says moved={not moved_before}, but the first call had already moved it")
    return problems


def _sent_id(first: Outcome, second: Outcome) -> str | None:
    for outcome in (first, second):
        if outcome.data and outcome.data.get("message_id"):
            return str(outcome.data["message_id"])
    return None


def _first_call(scenario: Scenario, first: Outcome, clean: Clean) -> list[str]:
    """The faulted call itself: an honest success or an honest error."""
    if scenario.tool == "mg_send_message":
        problems: list[str] = []
        if first.smtp_sessions > 1:
            problems.append(f"{first.smtp_sessions} SMTP sessions in one call (a second attempt)")
        if first.error is None and first.outbox != 1:
            problems.append("reported as sent, but nothing was delivered")
        if first.error is not None and first.outbox == 1 and not MAY.search(first.error["message"]):
            problems.append(f"delivered, yet reported as failed without a doubt: {first.error}")
        copy = (first.data or {}).get("sent_copy") or {}
        if copy.get("saved"):
            ids = [m["header_id"] for m in new_messages(first.after, clean.before)]
            if (first.data or {}).get("message_id") not in ids:
                problems.append("sent_copy.saved is true but there is no copy")
        problems += _check_partial(clean, first.after)
        return problems
    problems = _check_partial(clean, first.after)
    if first.error is None:
        if not clean.same_as_final(first.after):
            problems.append("reported success, but the store does not show the whole change")
        labelling = scenario.tool.endswith(("label_message", "label_thread"))
        if labelling and any(o not in ("already", "changed") for o in _label_outcomes(first.data)):
            problems.append(f"success with outcomes {_label_outcomes(first.data)}")
    elif not clean.same_as_start(first.after) and not MAY.search(first.error["message"]):
        problems.append(f"the store changed, yet the error does not say the change may have happened: {first.error}")
    return problems


async def _clean_run(bench: Bench) -> Clean:
    runtime = bench.fresh()
    bench.emulator.reset_counters()
    outcome = await bench.run(runtime)
    assert outcome.error is None, f"{bench.scenario.name}: clean run failed: {outcome.error}"
    if bench.scenario.tool == "mg_send_message":
        assert outcome.outbox == 1
    return Clean(before=outcome.before, final=outcome.after, commands=len(bench.emulator.commands()))


async def _fault_point(
    bench: Bench, clean: Clean, arm: Callable[[], None], label: str, counts: Counter[str]
) -> list[str]:
    runtime = bench.fresh()
    arm()
    first = await bench.run(runtime)
    unfired = bench.emulator.observer.faults()  # an IMAP rule that fired once is gone
    bench.emulator.clear_faults()
    if unfired:
        return [f"{label}: the fault never fired (the call issued fewer commands than the clean run)"]
    if first.error is None:
        counts["fault_success"] += 1
    elif clean.same_as_start(first.after) and first.outbox == 0:
        counts["fault_error_nothing_changed"] += 1
    else:
        counts["fault_error_may_have_changed"] += 1
    problems = _first_call(bench.scenario, first, clean)
    if bench.scenario.idempotent or first.error is not None:
        second = await bench.run(runtime)
        problems += _converged(bench.scenario, first, second, clean)
    return [f"{label}: {p}" for p in problems]


@pytest.fixture
def fast_sent_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Gmail files within seconds; the emulator files at once, so the server's waits are shortened."""
    monkeypatch.setattr(send_service, "SENT_WAIT_S", 0.05)


@pytest.mark.usefixtures("fast_sent_checks")
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
async def test_dropped_connection_at_every_imap_command(
    scenario: Scenario,
    emulator: GmailEmulator,
    make_runtime: Callable[..., Runtime],
    call: Callable[..., Any],
    counts: Counter[str],
) -> None:
    bench = Bench(scenario, emulator, make_runtime, call)
    clean = await _clean_run(bench)
    assert clean.commands >= 5
    problems: list[str] = []
    for action in IMAP_ACTIONS:
        for k in range(1, clean.commands + 1):

            def arm(action: str = action, k: int = k) -> None:
                emulator.add_fault(FaultRule(action=action, nth=k, times=1))

            problems += await _fault_point(bench, clean, arm, f"{scenario.name} {action} at command {k}", counts)
            counts["fault"] += 1
            counts["fault_imap"] += 1
    counts["fault_tools"] += 1
    assert not problems, "\n".join(problems)


SMTP_FAULTS = [
    *(("drop", stage) for stage in ("connect", "ehlo", "auth", "mail", "rcpt", "data", "after_data")),
    *(("421", stage) for stage in ("connect", "ehlo", "auth", "mail", "rcpt", "data")),
    ("550", "rcpt"),
    ("550", "data"),
]


@pytest.mark.usefixtures("fast_sent_checks")
@pytest.mark.parametrize("filing", ["gmail_files", "server_appends"])
async def test_send_fault_at_every_smtp_stage(
    filing: str,
    emulator: GmailEmulator,
    make_runtime: Callable[..., Runtime],
    call: Callable[..., Any],
    counts: Counter[str],
) -> None:
    knobs = {"sent_filing_delay_s": None} if filing == "server_appends" else {}
    scenario = Scenario(f"send_{filing}", "mg_send_message", lambda _e: dict(REPLY), lambda e: _thread(e, []), knobs)
    bench = Bench(scenario, emulator, make_runtime, call)
    clean = await _clean_run(bench)
    problems: list[str] = []
    for action, stage in SMTP_FAULTS:

        def arm(action: str = action, stage: str = stage) -> None:
            emulator.add_smtp_fault(SmtpFault(stage=stage, action=action))  # type: ignore[arg-type]

        problems += await _fault_point(bench, clean, arm, f"send ({filing}) SMTP {action} at {stage}", counts)
        counts["fault"] += 1
        counts["fault_smtp"] += 1
    counts["fault_tools"] += 1
    assert not problems, "\n".join(problems)
