"""`--sign-in NAME` end to end, as the user runs it: a real process, a browser (BROWSER names a
stand-in that follows the consent page's redirect), the emulator's Google endpoints over HTTPS, and
the check with Gmail that the right account signed in. Each refusal stores nothing."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from gmail_emulator import GmailEmulator
from gmail_emulator.oauth_http import GoogleOAuth
from support import gmail_env
from support.google import OSOBNI, assert_no_secret, oauth_config

BROWSER = Path(__file__).resolve().parents[1] / "support" / "fake_browser.py"


@pytest.fixture
def google(emulator: GmailEmulator) -> Iterator[GoogleOAuth]:
    with GoogleOAuth(emulator) as endpoints:
        yield endpoints


@pytest.fixture
def browser(tmp_path: Path) -> Path:
    wrapper = tmp_path / "browser"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{BROWSER}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    return wrapper


def sign_in(
    emulator: GmailEmulator, google: GoogleOAuth, browser: Path, tmp_path: Path, mode: str = "allow", **env: str
) -> subprocess.CompletedProcess[str]:
    path = oauth_config(tmp_path, google)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MG_", "BROWSER"))}
    done = subprocess.run(
        [sys.executable, "-m", "mcp_multi_gmail", "--config", str(path), "--sign-in", "osobni"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        env={
            **base,
            **gmail_env(emulator),
            "BROWSER": str(browser),
            "FAKE_BROWSER": mode,
            "FAKE_BROWSER_LOG": str(tmp_path / "browser.log"),
            **env,
        },
    )
    assert_no_secret(google, [done.stdout, done.stderr, *(p.read_text() for p in tmp_path.glob("*.log"))])
    return done


def tokens_file(tmp_path: Path) -> Path:
    return tmp_path / "secrets" / "oauth-tokeny.json"


def test_sign_in_prints_the_address_follows_the_redirect_and_stores_the_token_0600(
    emulator: GmailEmulator, google: GoogleOAuth, browser: Path, tmp_path: Path
) -> None:
    done = sign_in(emulator, google, browser, tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    [url] = [line for line in lines if line.startswith("https://")]
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == google.client_json()["installed"]["auth_uri"]  # type: ignore[index]
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    assert query["scope"] == "https://mail.google.com/"
    assert (query["access_type"], query["prompt"], query["response_type"]) == ("offline", "consent", "code")
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
    assert query["login_hint"] == OSOBNI and query["client_id"] == google.provider.client_id
    assert len(query["state"]) >= 32
    redirect = urlsplit(query["redirect_uri"])
    assert redirect.scheme == "http" and redirect.hostname == "127.0.0.1" and redirect.port
    # the browser came back to exactly that listener, with a code and the state
    assert (tmp_path / "browser.log").read_text().splitlines() == [f"{query['redirect_uri']} code state"]
    assert lines[-1].startswith("Hotovo: schránka `osobni` je přihlášená přes Google")
    stored = tokens_file(tmp_path)
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    entry = json.loads(stored.read_text())["accounts"]["osobni"]
    assert entry["address"] == OSOBNI and entry["refresh_token"] and entry["access_token"]
    assert google.provider.token_requests["authorization_code"] == 1
    # the address check: one XOAUTH2 login as the mailbox, accepted
    assert [(a.protocol, a.mechanism, a.ok) for a in google.provider.attempts_of(OSOBNI)] == [("imap", "XOAUTH2", True)]
    assert "POZOR:" in done.stderr  # the test mode says so, as everywhere else


@pytest.mark.parametrize(
    ("mode", "knob", "words"),
    [
        ("wrong_state", {}, "nesouhlasí „state“"),
        ("allow", {"deny_consent": True}, "nebyl přístup povolen"),
        ("allow", {"signed_in_as": "tym@example.com"}, "jiným účtem Google, než je osobni@example.cz"),
    ],
)
def test_each_refusal_says_why_and_stores_nothing(
    emulator: GmailEmulator,
    google: GoogleOAuth,
    browser: Path,
    tmp_path: Path,
    mode: str,
    knob: dict[str, object],
    words: str,
) -> None:
    google.provider.knobs.__dict__.update(knob)
    done = sign_in(emulator, google, browser, tmp_path, mode)
    assert done.returncode == 1
    [line] = [line for line in done.stderr.splitlines() if line.startswith("chyba:")]
    assert words in line and "nic se neuložilo" in line
    assert not tokens_file(tmp_path).exists()


def test_a_browser_that_never_comes_back_times_out(
    emulator: GmailEmulator, google: GoogleOAuth, browser: Path, tmp_path: Path
) -> None:
    done = sign_in(emulator, google, browser, tmp_path, "stay_away", MG_SIGN_IN_TIMEOUT_S="0.5")
    assert done.returncode == 1
    assert "prohlížeč se do 1 min nevrátil" in done.stderr and "nic se neuložilo" in done.stderr
    assert not tokens_file(tmp_path).exists()
    assert google.provider.token_requests["authorization_code"] == 0


def check_config(path: Path, emulator: GmailEmulator | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MG_")}
    env = {**base, **(gmail_env(emulator) if emulator is not None else {})}
    return subprocess.run(
        [sys.executable, "-m", "mcp_multi_gmail", "--check-config", str(path)],
        stdin=subprocess.DEVNULL, capture_output=True, encoding="utf-8", timeout=60, env=env,
    )  # fmt: skip


def test_check_config_reports_the_sign_in_and_the_client_file(
    emulator: GmailEmulator, google: GoogleOAuth, tmp_path: Path
) -> None:
    path = oauth_config(tmp_path, google)
    unsigned = check_config(path, emulator)
    assert unsigned.returncode == 0, unsigned.stdout
    assert "schránka `osobni` se přihlašuje přes Google, ale ještě není přihlášená" in unsigned.stdout
    assert "--sign-in osobni" in unsigned.stdout and "MG_GMAIL_ENDPOINT" in unsigned.stdout
    # the same loopback client file outside the test mode: not Google's addresses, so refused
    foreign = check_config(path)
    assert foreign.returncode == 1
    assert "„auth_uri“ neukazuje na https://accounts.google.com/" in foreign.stdout
    assert "„token_uri“ neukazuje na https://oauth2.googleapis.com/" in foreign.stdout
    # a missing or malformed client file: tests/config/test_config_oauth.py
    assert_no_secret(google, [unsigned.stdout, unsigned.stderr, foreign.stdout, foreign.stderr])
