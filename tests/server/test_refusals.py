"""Gmail's refusals, told apart: a credential failure is `auth_failed` (IMAP switched off too, with
its own advice: test_gmail_refusals.py).

Too many connections (15 per account, shared with the user's phone), an outage and
unrecognised answers are retryable; a web-login demand says what to do in the browser; SMTP keeps
Gmail's own words for a refused recipient, retries nothing by itself, and names the daily limit.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from imapclient import IMAPClient
from toolcalls import Call, error, ok

from gmail_emulator import FaultRule, GmailEmulator, SmtpFault
from mcp_multi_gmail.gmail.imap import worker
from mcp_multi_gmail.gmail.refusals import smtp_login_refused
from mcp_multi_gmail.runtime import Runtime
from support import gmail_env
from tool_results import error_body

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"


@pytest.fixture
def runtime(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> Runtime:
    entry = {"name": "o", "address": ME, "password": "osobniheslohesla", "can_send": True, "smtp_port": 465}
    return make_runtime(write_config([entry]))


async def send(call: Call, runtime: Runtime, to: list[str] | None = None) -> dict[str, Any]:
    result = await call(
        runtime, "mg_send_message", {"account": "o", "to": to or ["petr@partner.example"], "subject": "x", "body": "y"}
    )
    return error_body(result)


# ------------------------------------------------------------------ IMAP LOGIN


@pytest.mark.parametrize(
    ("kind", "code", "retryable", "words"),
    [
        ("invalid", "auth_failed", False, "Invalid credentials"),
        ("app_password", "auth_failed", False, "Application-specific password required"),
        ("too_many", "upstream_error", True, "too many connections"),
        ("unavailable", "upstream_error", True, "temporarily unavailable"),
        ("webalert", "upstream_error", False, "web browser"),
    ],
)
async def test_each_login_refusal_gets_its_own_diagnosis(
    emulator: GmailEmulator, runtime: Runtime, call: Call, kind: str, code: str, retryable: bool, words: str
) -> None:
    emulator.add_fault(FaultRule(action=f"refuse_login:{kind}", times=-1))
    body = await error(call, runtime, "mg_list_labels", account="o")
    assert (body["code"], body["retryable"]) == (code, retryable)
    assert words in body["message"]
    if code != "auth_failed":
        assert "new app password" not in body["message"] or "does not help" in body["message"]


async def test_web_login_demand_tells_what_to_do_in_the_browser(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    emulator.add_fault(FaultRule(action="refuse_login:webalert", times=-1))
    body = await error(call, runtime, "mg_list_labels", account="o")
    assert "Sign in to Gmail (https://mail.google.com) in a browser" in body["message"]
    assert "A new app password does not help" in body["message"]
    assert "plt=" not in body["message"]  # the sign-in continuation link is a session token: never passed on


@pytest.mark.parametrize(
    ("action", "words"),
    [
        ("bye", "connection to Gmail failed"),
        ("no:[ALERT] Something new happened (Failure)", "does not say the password is wrong"),
    ],
)
async def test_bye_and_unknown_login_answers_are_retryable(
    emulator: GmailEmulator, runtime: Runtime, call: Call, action: str, words: str
) -> None:
    emulator.add_fault(FaultRule(action=action, match="LOGIN", times=-1))
    body = await error(call, runtime, "mg_list_labels", account="o")
    assert (body["code"], body["retryable"]) == ("upstream_error", True)
    assert words in body["message"]


async def test_too_many_connections_for_real_is_retryable(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    """The emulator's own 15-connection cap, filled by "other clients" holding sessions open."""
    emulator.set_knobs(max_connections=2)
    env = gmail_env(emulator)
    host, port = env["MG_GMAIL_ENDPOINT"].split(":")[0:2]
    context = ssl.create_default_context(cafile=env["MG_GMAIL_CA_FILE"])
    others = [IMAPClient(host, port=int(port), ssl_context=context) for _ in range(2)]
    try:
        for other in others:
            other.login(ME, "osobniheslohesla")
        body = await error(call, runtime, "mg_list_labels", account="o")
        assert (body["code"], body["retryable"]) == ("upstream_error", True)
        assert "too many connections" in body["message"]
    finally:
        for other in others:
            other.logout()
    assert (await ok(call, runtime, "mg_list_labels", account="o"))["account"] == "o"


@pytest.mark.real_backoff
async def test_too_many_connections_waits_a_jittered_moment_then_tries_once_more(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    """The one test with the real back-off (the others wait 0 s): the second LOGIN comes 1-3 s after
    Gmail refused the first for too many connections, and the call then succeeds."""
    emulator.add_fault(FaultRule(action="refuse_login:too_many", nth=1, times=1))
    assert (await ok(call, runtime, "mg_list_labels", account="o"))["account"] == "o"
    first, second = [c for c in emulator.commands() if c.name == "LOGIN"]
    low, high = worker.TOO_MANY_BACKOFF_S
    assert low <= second.started - (first.started + first.duration) <= high + 1.0
    assert (low, high) == (1.0, 3.0)


# ------------------------------------------------------------------ IMAP commands


@pytest.mark.parametrize("command", ["LIST", "EXAMINE", "UID SEARCH", "UID FETCH"])
async def test_unavailable_on_any_command_is_retryable(
    emulator: GmailEmulator, runtime: Runtime, call: Call, command: str
) -> None:
    emulator.deliver(ME, b"From: a@partner.example\r\nSubject: Hi\r\nMessage-ID: <hi@partner.example>\r\n\r\nHi\r\n")
    emulator.add_fault(FaultRule(action="no:[UNAVAILABLE] Temporary System Error (Failure)", match=command, times=-1))
    body = await error(call, runtime, "mg_next_pass", account="o", since="2026-01-01")
    assert (body["code"], body["retryable"]) == ("upstream_error", True)
    assert "[UNAVAILABLE]" in body["message"]


async def test_a_plain_refusal_of_a_command_stays_not_retryable(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    emulator.add_fault(FaultRule(action="no:Some permanent problem (Failure)", match="UID SEARCH", times=-1))
    body = await error(call, runtime, "mg_next_pass", account="o", since="2026-01-01")
    assert (body["code"], body["retryable"]) == ("upstream_error", False)


# ------------------------------------------------------------------ SMTP


@pytest.mark.parametrize(
    ("action", "code", "retryable", "words"),
    [
        ("535", "auth_failed", False, "5.7.8"),
        ("534", "auth_failed", False, "Application-specific password required"),
        ("454", "upstream_error", True, "Too many login attempts"),
        ("421", "upstream_error", True, "Nothing was sent"),
        ("web_login", "upstream_error", False, "A new app password does not help"),
    ],
)
async def test_smtp_login_refusals(
    emulator: GmailEmulator, runtime: Runtime, call: Call, action: str, code: str, retryable: bool, words: str
) -> None:
    emulator.add_smtp_fault(SmtpFault(stage="auth", action=action, times=-1))  # type: ignore[arg-type]
    body = await send(call, runtime)
    assert (body["code"], body["retryable"]) == (code, retryable)
    assert words in body["message"] and "Nothing was sent" in body["message"]
    assert emulator.outbox() == []


@pytest.mark.parametrize(("stage", "action"), [("mail", "421"), ("data", "421"), ("rcpt", "450"), ("mail", "454")])
async def test_temporary_smtp_refusals_say_not_sent_retry_later(
    emulator: GmailEmulator, runtime: Runtime, call: Call, stage: str, action: str
) -> None:
    emulator.add_smtp_fault(SmtpFault(stage=stage, action=action))  # type: ignore[arg-type]
    body = await send(call, runtime)
    assert (body["code"], body["retryable"]) == ("upstream_error", True)
    assert "Nothing was sent; try again in a few minutes" in body["message"]
    assert emulator.outbox() == []
    # Nothing went out, so the repeat is not a duplicate: it goes through.
    sent = await ok(call, runtime, "mg_send_message", account="o", to=["petr@partner.example"], subject="x", body="y")
    assert sent["accepted"] == ["petr@partner.example"] and len(emulator.outbox()) == 1


@pytest.mark.parametrize("stage", ["mail", "rcpt", "data"])
async def test_daily_sending_limit_is_named_and_not_retryable(
    emulator: GmailEmulator, runtime: Runtime, call: Call, stage: str
) -> None:
    emulator.add_smtp_fault(SmtpFault(stage=stage, action="quota"))  # type: ignore[arg-type]
    body = await send(call, runtime)
    assert (body["code"], body["retryable"]) == ("upstream_error", False)
    assert "daily sending limit" in body["message"] and "5.4.5" in body["message"]
    assert emulator.outbox() == []


async def test_a_refused_recipient_keeps_gmails_words(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    emulator.add_smtp_fault(SmtpFault(stage="rcpt", action="550", match="nikdo@partner.example"))
    data = await ok(
        call,
        runtime,
        "mg_send_message",
        account="o",
        to=["petr@partner.example", "nikdo@partner.example"],
        subject="x",
        body="y",
    )
    assert data["accepted"] == ["petr@partner.example"] and data["rejected"] == ["nikdo@partner.example"]
    assert (
        "It did NOT reach nikdo@partner.example (550 5.1.1 The email account that you tried to reach does not "
        in (data["warning"])
    )


async def test_every_recipient_refused_for_good(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    emulator.add_smtp_fault(SmtpFault(stage="rcpt", action="550"))
    body = await send(call, runtime)
    assert (body["code"], body["retryable"]) == ("upstream_error", False)
    assert "petr@partner.example: 550 5.1.1 The email account that you tried to reach does not exist" in body["message"]
    assert emulator.outbox() == []


# ------------------------------------------------------------------ Gmail's texts as reported


@pytest.mark.parametrize(
    ("code", "text", "expected"),
    [
        (
            535,
            "5.7.8 Username and Password not accepted. Learn more at https://support.google.com/mail/?p=BadCredentials",
            "auth_failed",
        ),
        (
            534,
            "5.7.9 Application-specific password required. Learn more at https://support.google.com/mail/?p=InvalidSecondFactor",
            "auth_failed",
        ),
        (
            534,
            "5.7.14 <https://accounts.google.com/signin/continue> Please log in via your web browser and then try",
            "web",
        ),
        (
            534,
            "5.7.9 Please log in with your web browser and then try again. Learn more at https://support.google.com/mail/?p=WebLoginRequired",
            "web",
        ),
        (454, "4.7.0 Too many login attempts, please try again later.", "retry"),
        (421, "4.7.0 Temporary System Problem.  Try again later (10).", "retry"),
    ],
)
def test_smtp_login_texts_from_public_reports(code: int, text: str, expected: str) -> None:
    error = smtp_login_refused("o", code, text)
    kind = "auth_failed" if error.code == "auth_failed" else "retry" if error.retryable else "web"
    assert kind == expected
    if expected == "web":
        assert "web browser" in error.message and "does not help" in error.message
