"""A mailbox with "auth": "oauth": every IMAP and SMTP login is XOAUTH2, refreshed before it ends,
refreshed once when refused in date, one refresh for many parallel calls, and invalid_grant ends it.

The emulator's token endpoint and the server share one settable clock, so "4 seconds later" takes
no time. Every test checks that no token or the client secret reached stdout, stderr, a log or a
result.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from gmail_emulator import GmailEmulator
from gmail_emulator.oauth_http import GoogleOAuth
from mcp_multi_gmail.config import OAuthClient
from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.gmail.imap import finish_logouts
from mcp_multi_gmail.oauth import tokens
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.server import build_server
from support import gmail_env, load_runtime
from support.google import OSOBNI, Clock, assert_no_secret, oauth_config, sign_in_directly
from tool_results import error_body

pytestmark = pytest.mark.anyio


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    shared = Clock()
    monkeypatch.setattr(tokens, "clock", shared)
    return shared


@pytest.fixture
def google(emulator: GmailEmulator, clock: Clock) -> Iterator[GoogleOAuth]:
    with GoogleOAuth(emulator, clock=clock) as endpoints:
        yield endpoints


@pytest.fixture
def outputs(
    google: GoogleOAuth, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> Iterator[list[str]]:
    """What the test saw (results, subprocess output); with stdout, stderr and the log, grepped at the end."""
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []
    yield seen
    out, err = capfd.readouterr()
    assert_no_secret(google, [*seen, out, err, caplog.text])


@pytest.fixture
def runtime(emulator: GmailEmulator, google: GoogleOAuth, tmp_path: Path) -> Runtime:
    loaded = load_runtime(oauth_config(tmp_path, google), gmail_env(emulator), state_dir=tmp_path / "state")
    client = loaded.config.oauth_client
    assert client is not None
    sign_in_directly(google, client)
    return loaded


def client_of(runtime: Runtime) -> OAuthClient:
    assert runtime.config.oauth_client is not None
    return runtime.config.oauth_client


def mail(subject: str = "Schůzka") -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = "anna@example.org"
    msg["To"] = OSOBNI
    msg["Subject"] = subject
    msg["Message-ID"] = f"<{subject.encode().hex()}@example.org>"
    msg.set_content("Dobrý den, posílám podklady.")
    return msg


async def calls(runtime: Runtime, outputs: list[str], *requests: tuple[str, dict[str, Any]]) -> list[Any]:
    """The tool calls one after another through one in-process client; each result's text kept."""
    results = []
    async with Client(build_server(runtime)) as client:
        for tool, args in requests:
            result = await client.call_tool(tool, {"account": "osobni", **args})
            outputs.append(json.dumps(result.structured_content) + "".join(str(c) for c in result.content))
            results.append(result)
    await finish_logouts()
    return results


def xoauth2(google: GoogleOAuth, protocol: str) -> list[bool]:
    return [a.ok for a in google.provider.attempts_of(OSOBNI) if a.protocol == protocol and a.mechanism == "XOAUTH2"]


SEARCH = ("mg_search_threads", {"query": "subject:Schůzka"})


async def test_search_thread_draft_and_send_each_log_in_with_xoauth2(
    emulator: GmailEmulator, google: GoogleOAuth, runtime: Runtime, outputs: list[str]
) -> None:
    emulator.deliver(OSOBNI, mail())
    [search] = await calls(runtime, outputs, SEARCH)
    [thread] = search.structured_content["threads"]
    thread_result, draft, sent = await calls(
        runtime,
        outputs,
        ("mg_get_thread", {"thread_id": thread["thread_id"]}),
        ("mg_save_draft", {"to": ["anna@example.org"], "subject": "Re: Schůzka", "body": "Děkuji."}),
        ("mg_send_message", {"to": ["anna@example.org"], "subject": "Potvrzení", "body": "Přijdu."}),
    )
    assert not any(r.is_error for r in (search, thread_result, draft, sent)), outputs
    assert len(thread_result.structured_content["messages"]) == 1
    imap, smtp = xoauth2(google, "imap"), xoauth2(google, "smtp")
    # search, thread, draft and the send's own IMAP work (its Sent copy check) each sign in once
    assert len(imap) >= 4 and all(imap), imap
    assert smtp and all(smtp), smtp
    assert not [a for a in google.provider.attempts_of(OSOBNI) if a.mechanism != "XOAUTH2"]
    assert not [c for c in emulator.commands(OSOBNI) if c.name == "LOGIN"]
    assert len(emulator.outbox()) == 1
    assert google.provider.token_requests == {"authorization_code": 0, "refresh_token": 0}


async def test_a_token_close_to_its_end_is_refreshed_before_gmail_refuses_it(
    google: GoogleOAuth, clock: Clock, runtime: Runtime, outputs: list[str]
) -> None:
    google.provider.knobs.access_lifetime_s = 3
    sign_in_directly(google, client_of(runtime))  # a 3-second token
    await calls(runtime, outputs, SEARCH)
    assert google.provider.token_requests["refresh_token"] == 0  # still in date: used as it is
    clock.advance(4)
    [late] = await calls(runtime, outputs, SEARCH)
    assert late.is_error is False
    assert google.provider.token_requests["refresh_token"] == 1
    assert xoauth2(google, "imap") == [True, True]  # no failed XOAUTH2 first


async def test_a_refused_token_in_date_is_refreshed_once_and_tried_once_more(
    google: GoogleOAuth, runtime: Runtime, outputs: list[str]
) -> None:
    google.provider.revoke_access_tokens(OSOBNI)  # Gmail no longer takes the stored, in-date token
    [result] = await calls(runtime, outputs, SEARCH)
    assert result.is_error is False, outputs
    assert xoauth2(google, "imap") == [False, True]
    assert google.provider.token_requests["refresh_token"] == 1


async def test_invalid_grant_is_auth_failed_with_the_sign_in_command_and_no_second_refresh(
    google: GoogleOAuth, clock: Clock, runtime: Runtime, outputs: list[str]
) -> None:
    google.provider.knobs.refresh_outcome = "invalid_grant"
    clock.advance(3600)
    first, again = await calls(runtime, outputs, SEARCH, SEARCH)
    error = error_body(first)
    assert (error["code"], error["retryable"]) == ("auth_failed", False)
    message = error["message"]
    assert '"osobni"' in message and "invalid_grant" in message and "--sign-in osobni" in message
    assert "7 days" in message and "In production" in message and "Internal" in message
    assert error_body(again)["code"] == "auth_failed"
    assert google.provider.token_requests["refresh_token"] == 1  # the second call did not ask again
    assert xoauth2(google, "imap") == []  # nothing was sent to Gmail with a dead token


async def test_ten_parallel_calls_at_the_end_of_a_token_share_one_refresh(
    google: GoogleOAuth, clock: Clock, runtime: Runtime, outputs: list[str]
) -> None:
    clock.advance(3600)
    async with Client(build_server(runtime)) as client:
        results = await asyncio.gather(
            *(client.call_tool("mg_search_threads", {"account": "osobni", "query": f"x{i}"}) for i in range(10))
        )
    await finish_logouts()
    outputs.extend(str(r.content) for r in results)
    assert not any(r.is_error for r in results), outputs
    assert google.provider.token_requests["refresh_token"] == 1
    imap = xoauth2(google, "imap")
    assert len(imap) == 10 and all(imap)


async def test_list_accounts_shows_auth_and_verify_names_the_sign_in(
    google: GoogleOAuth, clock: Clock, runtime: Runtime, outputs: list[str]
) -> None:
    [listed] = await calls(runtime, outputs, ("mg_list_accounts", {}))
    accounts = {a["account"]: a for a in listed.structured_content["accounts"]}
    assert (accounts["osobni"]["auth"], accounts["tym"]["auth"]) == ("oauth", "app_password")
    tokens_file = client_of(runtime).tokens_file
    tokens_file.unlink()
    [unsigned] = await calls(runtime, outputs, ("mg_list_accounts", {"verify": True}))
    failures = [f for f in unsigned.structured_content["failures"] if f["account"] == "osobni"]
    assert [f["check"] for f in failures] == ["imap", "smtp"]
    assert all("not signed in yet" in f["message"] and "--sign-in osobni" in f["message"] for f in failures)
    sign_in_directly(google, client_of(runtime))
    google.provider.revoke_sign_in(OSOBNI)
    clock.advance(3600)
    [revoked] = await calls(runtime, outputs, ("mg_list_accounts", {"verify": True}))
    failures = [f for f in revoked.structured_content["failures"] if f["account"] == "osobni"]
    assert [f["check"] for f in failures] == ["imap", "smtp"]
    assert all("signed-in access revoked" in f["message"] and "--sign-in osobni" in f["message"] for f in failures)
    assert google.provider.token_requests["refresh_token"] == 1  # the two checks shared one refresh attempt


def test_the_watcher_ends_with_its_auth_failure_code_on_invalid_grant(
    emulator: GmailEmulator, google: GoogleOAuth, runtime: Runtime, tmp_path: Path, outputs: list[str]
) -> None:
    google.provider.knobs.refresh_outcome = "invalid_grant"
    path = client_of(runtime).tokens_file
    with tokens.locked(path):
        grants = tokens.read_grants(path)
        stale = grants["osobni"]
        grants["osobni"] = tokens.Grant(stale.address, stale.refresh_token, stale.access_token, 0.0, 0.0)
        tokens.write_grants(path, grants)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MG_")}
    (tmp_path / "state").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "mcp_multi_gmail", "--config", str(runtime.config.path), "--wait",
         "--since", f"osobni={datetime.now(UTC).date().isoformat()}", "--max", "1m", "--interval", "1m"],
        stdin=subprocess.DEVNULL, capture_output=True, encoding="utf-8", timeout=60,
        env={**env, **gmail_env(emulator), "MG_WATCH_DIR": str(tmp_path / "state")},
    )  # fmt: skip
    outputs.extend((done.stdout, done.stderr))
    assert done.returncode == 5, done.stderr
    [line] = done.stdout.splitlines()
    assert line.startswith("problém: schránka osobni se nepřihlásí, přihlášení přes Google skončilo")
    assert "--sign-in osobni" in line
    assert google.provider.token_requests["refresh_token"] == 1


async def test_smtp_refreshes_a_refused_in_date_token_once_too(
    google: GoogleOAuth, runtime: Runtime, outputs: list[str]
) -> None:
    from mcp_multi_gmail.gmail import smtp

    account = runtime.account("osobni")
    google.provider.revoke_access_tokens(OSOBNI)
    port = await smtp.choose_port("osobni", OSOBNI, account.login, runtime.endpoint, (465,))
    assert port == 465
    assert xoauth2(google, "smtp") == [False, True]
    assert google.provider.token_requests["refresh_token"] == 1
    google.provider.revoke_sign_in(OSOBNI)
    google.provider.revoke_access_tokens(OSOBNI)
    with pytest.raises(MailError) as refused:
        await smtp.choose_port("osobni", OSOBNI, account.login, runtime.endpoint, (465,))
    outputs.append(refused.value.message)
    assert refused.value.code == "auth_failed" and "--sign-in osobni" in refused.value.message
    assert "Nothing was sent" in refused.value.message
