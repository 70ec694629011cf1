"""Gmail's real refusal texts, in every place they arrive, each with the right class and advice.

The texts are the recorded ones (packages/gmail-emulator/BEHAVIOURS.md cites each): the daily
transfer limit ([OVERQUOTA]), IMAP switched off (Workspace and personal account), a web-login
demand, and throttling, which Gmail says as a suffix of a successful answer. Each refusal is met on
LOGIN and on FETCH, as a tagged NO and as an untagged BYE, through the real client over TLS.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import FaultRule, GmailEmulator, SmtpFault
from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.gmail import imap
from mcp_multi_gmail.gmail.refusals import bye_refused, command_refused, login_refused
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
PASSWORD = "osobniheslohesla"
MAIL = b"From: a@partner.example\r\nSubject: Hi\r\nMessage-ID: <hi@partner.example>\r\n\r\nHi\r\n"

OVERQUOTA = "[OVERQUOTA] Account exceeded command or bandwidth limits."
WORKSPACE_OFF = (
    "[ALERT] IMAP access is disabled for your domain. Please contact your domain administrator for questions "
    "about this feature. (Failure)"
)
PERSONAL_OFF = "[ALERT] Your account is not enabled for IMAP use."

# (emulator refusal kind, code, retryable, kind, words the advice must contain)
REFUSALS = [
    (
        "overquota",
        "upstream_error",
        False,
        "overquota",
        ["[OVERQUOTA]", "transfer limit", "resets within 24 hours", "Nothing was changed"],
    ),
    (
        "imap_disabled",
        "auth_failed",
        False,
        "imap_disabled",
        ["IMAP access is disabled", "administrator must allow IMAP", "a new one does not help"],
    ),
    (
        "imap_not_enabled",
        "auth_failed",
        False,
        "imap_disabled",
        ["not enabled for IMAP use", "turn IMAP on in Gmail's settings", "a new one does not help"],
    ),
]
# Where the refusal comes: (fault action template, command it fires on).
POSITIONS = {
    "LOGIN NO": ("refuse_login:{kind}", "LOGIN"),
    "LOGIN BYE": ("bye:{kind}", "LOGIN"),
    "FETCH NO": ("refuse:{kind}", "FETCH"),
    "FETCH BYE": ("bye:{kind}", "FETCH"),
}


@pytest.fixture
def runtime(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> Runtime:
    entry = {"name": "o", "address": ME, "password": PASSWORD, "can_send": True, "smtp_port": 465}
    return make_runtime(write_config([entry]))


def _log_in_and_fetch(runtime: Runtime) -> None:
    with imap.logged_in("o", ME, PASSWORD, runtime.endpoint) as session:
        session.open(imap.ALL_MAIL)
        session.fetch_all(["FLAGS"])


def session_error(runtime: Runtime) -> MailError:
    """The error of one IMAP session that logs in and fetches, straight from the protocol layer."""
    with pytest.raises(MailError) as caught:
        _log_in_and_fetch(runtime)
    return caught.value


@pytest.mark.parametrize("position", list(POSITIONS))
@pytest.mark.parametrize(("refusal", "code", "retryable", "kind", "words"), REFUSALS, ids=[r[0] for r in REFUSALS])
async def test_each_refusal_in_each_position(
    emulator: GmailEmulator,
    runtime: Runtime,
    call: Call,
    position: str,
    refusal: str,
    code: str,
    retryable: bool,
    kind: str,
    words: list[str],
) -> None:
    emulator.deliver(ME, MAIL)
    action, command = POSITIONS[position]
    emulator.add_fault(FaultRule(action=action.format(kind=refusal), match=command, times=-1))
    body = await error(call, runtime, "mg_next_pass", account="o", since="2026-01-01")
    assert (body["code"], body["retryable"]) == (code, retryable)
    for word in words:
        assert word in body["message"], (word, body["message"])
    assert "Try again in a few minutes" not in body["message"]
    if refusal == "imap_disabled":  # Workspace's policy: only the administrator can change it
        assert "personal Gmail account" not in body["message"]
    refused = session_error(runtime)
    assert (refused.code, refused.retryable, refused.kind) == (code, retryable, kind)


async def test_the_bare_bandwidth_bye_is_the_transfer_limit(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    """The form kept in client fixtures: `* BYE Account exceeded command or bandwidth limits.`"""
    emulator.deliver(ME, MAIL)
    emulator.add_fault(FaultRule(action="bye:Account exceeded command or bandwidth limits.", match="FETCH"))
    body = await error(call, runtime, "mg_next_pass", account="o", since="2026-01-01")
    assert (body["code"], body["retryable"]) == ("upstream_error", False)
    assert "resets within 24 hours" in body["message"]


async def test_a_limit_met_after_a_change_says_the_change_may_have_been_made(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    emulator.deliver(ME, MAIL)
    emulator.add_fault(FaultRule(action="bye:overquota", match="FETCH", nth=2))  # the check after the STORE
    body = await error(
        call, runtime, "mg_label_message", account="o", message_ids=["hi@partner.example"], label="processed"
    )
    assert (body["code"], body["retryable"]) == ("upstream_error", False)
    assert "resets within 24 hours" in body["message"] and "may have been made" in body["message"]
    assert "Nothing was changed" not in body["message"]


@pytest.mark.parametrize("command", ["STORE", "MOVE"])
async def test_a_limit_met_by_a_write_ends_the_call_with_its_advice(
    emulator: GmailEmulator, runtime: Runtime, call: Call, command: str
) -> None:
    """A refused STORE or MOVE is normally one failed outcome; the transfer limit is not "try again"."""
    emulator.deliver(ME, MAIL)
    emulator.add_fault(FaultRule(action="refuse:overquota", match=command))
    if command == "STORE":
        body = await error(
            call, runtime, "mg_label_message", account="o", message_ids=["hi@partner.example"], label="processed"
        )
    else:
        body = await error(call, runtime, "mg_trash_message", account="o", message_id="hi@partner.example")
    assert (body["code"], body["retryable"]) == ("upstream_error", False)
    assert "resets within 24 hours" in body["message"]


async def test_a_web_login_demand_is_kind_web_login(emulator: GmailEmulator, runtime: Runtime) -> None:
    emulator.add_fault(FaultRule(action="refuse_login:webalert", times=-1))
    refused = session_error(runtime)
    assert (refused.code, refused.retryable, refused.kind) == ("upstream_error", False, "web_login")


async def test_an_smtp_web_login_demand_is_kind_web_login(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    from mcp_multi_gmail.gmail import smtp

    emulator.add_smtp_fault(SmtpFault(stage="auth", action="web_login", times=-1))
    with pytest.raises(MailError) as caught:
        await smtp.choose_port("o", ME, PASSWORD, runtime.endpoint, (465,))
    assert (caught.value.code, caught.value.retryable, caught.value.kind) == ("upstream_error", False, "web_login")


# ------------------------------------------------------------------ throttling: a success


@pytest.mark.parametrize("command", ["LOGIN", "FETCH"])
async def test_throttling_is_a_success_said_on_stderr(
    emulator: GmailEmulator, runtime: Runtime, call: Call, caplog: pytest.LogCaptureFixture, command: str
) -> None:
    emulator.deliver(ME, MAIL)
    emulator.add_fault(FaultRule(action="throttle:0.2", match=command, times=-1))
    with caplog.at_level(logging.WARNING, logger="mcp_multi_gmail"):
        data = await ok(call, runtime, "mg_next_pass", account="o", since="2026-01-01")
    assert len(data["threads"]) == 1
    wire = b"".join(e.data for e in emulator.wire_log() if e.direction == "s")
    assert b"OK Success [THROTTLED]" in wire or b"(Success) [THROTTLED]" in wire
    said = [r.getMessage() for r in caplog.records if "[THROTTLED]" in r.getMessage()]
    assert len(said) == 1 and 'schránka "o": Gmail ji teď brzdí' in said[0] and "Volání se povedlo" in said[0]


async def test_a_throttled_refusal_would_still_be_retryable(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    """No recording shows Gmail refusing with NO [THROTTLED]; were it to, waiting is the cure."""
    emulator.add_fault(FaultRule(action="no:[THROTTLED] Slow down (Failure)", match="LOGIN", times=-1))
    body = await error(call, runtime, "mg_list_labels", account="o")
    assert (body["code"], body["retryable"]) == ("upstream_error", True)


# ------------------------------------------------------------------ the texts themselves


@pytest.mark.parametrize(
    ("text", "code", "retryable", "kind"),
    [
        (OVERQUOTA, "upstream_error", False, "overquota"),
        ("Account exceeded command or bandwidth limits.", "upstream_error", False, "overquota"),
        (WORKSPACE_OFF, "auth_failed", False, "imap_disabled"),
        (PERSONAL_OFF, "auth_failed", False, "imap_disabled"),
        ("[THROTTLED] Account exceeded command or bandwidth limits.", "upstream_error", True, None),
    ],
)
def test_refusal_texts_as_recorded(text: str, code: str, retryable: bool, kind: str | None) -> None:
    for refused in (login_refused("o", text), command_refused("o", text), bye_refused("o", text)):
        if refused is None:  # a BYE with a passing reason stays a dropped connection
            assert retryable
            continue
        assert (refused.code, refused.retryable, refused.kind) == (code, retryable, kind)


async def test_an_smtp_web_login_demand_met_while_choosing_the_port_stays_not_retryable(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime], call: Call
) -> None:
    """Without smtp_port the send first probes the ports; Gmail's demand for a browser sign-in there
    is the same refusal as at the send itself: not retryable, said once that nothing was sent."""
    entry = {"name": "o", "address": ME, "password": PASSWORD, "can_send": True}  # no smtp_port: a probe
    runtime = make_runtime(write_config([entry]))
    emulator.add_smtp_fault(SmtpFault(stage="auth", action="web_login", times=-1))
    body = await error(
        call, runtime, "mg_send_message", account="o", to=["petr@partner.example"], subject="S", body="B"
    )
    assert (body["code"], body["retryable"]) == ("upstream_error", False)
    assert "web browser" in body["message"] and body["message"].count("Nothing was sent") == 1
    assert emulator.outbox() == []
