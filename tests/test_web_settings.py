"""MG_WEB_RESOLVE and MG_WEB_CA_FILE: honoured only beside MG_GMAIL_ENDPOINT, said on stderr and in
mg_list_accounts when honoured or ignored, and a malformed map is a Czech start-up error (issue 36)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.gmail.endpoint import ENDPOINT_ENV, EndpointError
from mcp_multi_gmail.gmail.web import (
    PRODUCTION,
    WEB_CA_FILE_ENV,
    WEB_RESOLVE_ENV,
    OneClickTarget,
    post_one_click,
    web_settings,
)
from mcp_multi_gmail.runtime import check_start
from mcp_multi_gmail.server.build import build_server
from support import gmail_env, load_runtime
from support.web_standin import WebStandIn

OSOBNI = {"name": "osobni", "address": "osobni@example.cz", "password": "osobniheslohesla"}
TEST_ENDPOINT = {ENDPOINT_ENV: "127.0.0.1:1993:1465:1587"}


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MG_")}
    return subprocess.run(
        [sys.executable, "-m", "mcp_multi_gmail", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=60,
    )


def test_without_the_test_endpoint_both_variables_are_ignored(web_standin: WebStandIn) -> None:
    settings = web_settings(web_standin.environ())
    assert settings.test_mode is False and dict(settings.resolve) == {} and settings.ca_file is None
    assert settings.ignored == (WEB_RESOLVE_ENV, WEB_CA_FILE_ENV)
    assert web_settings({}) == PRODUCTION


@pytest.mark.anyio
async def test_a_production_process_is_never_pointed_at_loopback_by_the_environment(
    web_standin: WebStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MG_WEB_RESOLVE names the stand-in, but without MG_GMAIL_ENDPOINT the name goes to DNS, and an
    answer of 127.0.0.1 (as a hostile DNS would give) is refused: the stand-in is never reached."""
    lookups: list[str] = []

    def getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        lookups.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    settings = web_settings(web_standin.environ())
    with pytest.raises(MailError) as refused:
        await post_one_click(OneClickTarget("news.example", "/u"), settings)
    assert refused.value.code == "unsubscribe_refused" and "resolves to 127.0.0.1, loopback" in refused.value.message
    assert lookups == ["news.example"] and web_standin.connections == []


def test_beside_the_test_endpoint_both_are_honoured(web_standin: WebStandIn) -> None:
    # An IP literal a URL may name stands for itself too, in its canonical form.
    extra = ("v6.example=[::1]:8443", "93.184.216.34=127.0.0.1:443", "[2606:4700:0::1111]=127.0.0.1:443")
    settings = web_settings({**TEST_ENDPOINT, **web_standin.environ(extra=extra)})
    assert settings.test_mode is True and settings.ca_file == web_standin.ca_file
    assert dict(settings.resolve) == {
        "news.example": ("127.0.0.1", web_standin.port),
        "lists.example": ("127.0.0.1", web_standin.port),
        "v6.example": ("::1", 8443),
        "93.184.216.34": ("127.0.0.1", 443),
        "2606:4700::1111": ("127.0.0.1", 443),
    }
    # Test mode with no map at all: nothing resolves.
    assert web_settings(TEST_ENDPOINT).test_mode is True and dict(web_settings(TEST_ENDPOINT).resolve) == {}


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("news.example", "nemá tvar host=ip:port"),
        ("news.example=127.0.0.1", "nemá tvar host=ip:port"),
        ("news.example=localhost:443", "localhost není IP adresa"),
        ("news.example=127.0.0.1:0", "port 0 je mimo 1–65535"),
        ("news.example=127.0.0.1:70000", "port 70000 je mimo 1–65535"),
        ("bad_-.=127.0.0.1:443", "není jméno serveru ani IP adresa"),
        ("127.1=127.0.0.1:443", "127.1 není jméno serveru ani IP adresa"),
        ("a.example=127.0.0.1:1, A.example=127.0.0.1:2", "a.example je v seznamu dvakrát"),
    ],
)
def test_a_malformed_map_is_a_czech_start_up_error(raw: str, problem: str) -> None:
    with pytest.raises(EndpointError) as error:
        web_settings({**TEST_ENDPOINT, WEB_RESOLVE_ENV: raw})
    assert str(error.value).startswith(f"{WEB_RESOLVE_ENV} má tvar host=ip:port") and problem in str(error.value)


def test_a_missing_ca_file_is_a_czech_start_up_error(tmp_path: Path) -> None:
    with pytest.raises(EndpointError, match=r"MG_WEB_CA_FILE ukazuje na .*, který neexistuje"):
        web_settings({**TEST_ENDPOINT, WEB_CA_FILE_ENV: str(tmp_path / "chybi.pem")})


def test_the_runtime_holds_the_settings_from_the_same_environment(
    write_config: Callable[..., Path], emulator: GmailEmulator, web_standin: WebStandIn
) -> None:
    runtime = load_runtime(write_config([OSOBNI]), {**gmail_env(emulator), **web_standin.environ()})
    assert runtime.endpoint.overridden and runtime.web.test_mode
    assert runtime.web.resolve["news.example"] == ("127.0.0.1", web_standin.port)
    assert load_runtime(write_config([OSOBNI]), web_standin.environ()).web.test_mode is False


def test_stderr_says_pozor_when_the_stand_in_is_honoured(
    write_config: Callable[..., Path], web_standin: WebStandIn
) -> None:
    done = run(["--config", str(write_config([OSOBNI]))], {**TEST_ENDPOINT, **web_standin.environ("news.example")})
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert (
        f"POZOR: odhlášení jedním kliknutím posílám jen na news.example=127.0.0.1:{web_standin.port} a na nic "
        f"jiného ({WEB_RESOLVE_ENV}, jen pro testy)." in lines
    )
    assert (
        f"POZOR: u odhlášení jedním kliknutím věřím i certifikátům z {web_standin.ca_file} "
        f"({WEB_CA_FILE_ENV}, jen pro testy)." in lines
    )
    assert done.stdout == ""


def test_stderr_says_pozor_when_they_are_ignored(write_config: Callable[..., Path], web_standin: WebStandIn) -> None:
    done = run(["--config", str(write_config([OSOBNI]))], web_standin.environ())
    assert done.returncode == 0, done.stderr
    assert (
        "POZOR: MG_WEB_RESOLVE a MG_WEB_CA_FILE platí jen spolu s MG_GMAIL_ENDPOINT; bez něj je nechávám bez "
        "účinku a odhlášení jedním kliknutím jde na skutečnou adresu." in done.stderr.splitlines()
    )
    assert "posílám jen na" not in done.stderr


def test_a_malformed_map_stops_the_trial_run_with_its_czech_report(write_config: Callable[..., Path]) -> None:
    done = run(["--config", str(write_config([OSOBNI]))], {**TEST_ENDPOINT, WEB_RESOLVE_ENV: "news.example"})
    assert done.returncode == 1
    assert "MG_WEB_RESOLVE má tvar host=ip:port" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.anyio
async def test_the_warnings_travel_through_mg_list_accounts(
    write_config: Callable[..., Path], emulator: GmailEmulator, web_standin: WebStandIn, tmp_path: Path
) -> None:
    environ = {**gmail_env(emulator), **web_standin.environ("news.example")}
    check = check_start(write_config([OSOBNI]), project=tmp_path, release=False, layout=None, environ=environ)
    assert check.runtime is not None
    async with Client(build_server(check.runtime)) as client:
        result = await client.call_tool("mg_list_accounts", {})
        assert result.structured_content is not None
        warnings = result.structured_content["warnings"]
        assert any(w.startswith("odhlášení jedním kliknutím posílám jen na news.example=") for w in warnings)
        assert any(str(web_standin.ca_file) in w for w in warnings)


def test_a_repair_mode_for_a_malformed_map_names_the_variable(
    write_config: Callable[..., Path], emulator: GmailEmulator, tmp_path: Path
) -> None:
    environ = {**gmail_env(emulator), WEB_RESOLVE_ENV: "nonsense"}
    check = check_start(write_config([OSOBNI]), project=tmp_path, release=False, layout=None, environ=environ)
    assert check.runtime is None and check.problem == "endpoint"
    assert any("MG_WEB_RESOLVE má tvar" in line for line in check.lines)
