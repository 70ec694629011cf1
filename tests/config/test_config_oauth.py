"""`"auth": "oauth"` and `oauth_client_file`: what loads, what is refused, and that no secret is quoted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_multi_gmail.config import ConfigError, SignIn, load_config
from mcp_multi_gmail.runtime import sign_in_warnings

SECRET = "GOCSPX-tajnyKlicKteryNesmiVen"
GOOGLE = {
    "client_id": "123-abc.apps.googleusercontent.com",
    "client_secret": SECRET,
    "auth_uri": "https://accounts.google.com/o/oauth2/auth",
    "token_uri": "https://oauth2.googleapis.com/token",
    "redirect_uris": ["http://localhost"],
}
TEST_MODE = {"MG_GMAIL_ENDPOINT": "127.0.0.1:1:2:3"}


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def config(tmp_path: Path, client: Any = None, **account: Any) -> Path:
    if client is not None:
        write(tmp_path / "secrets" / "klient.json", client)
    entry = {"name": "prace", "address": "prace@example.com", "auth": "oauth", **account}
    return write(
        tmp_path / "multigmail.json",
        {
            "oauth_client_file": "secrets/klient.json",
            "accounts": [entry, {"name": "doma", "address": "d@x.cz", "password": "x"}],
        },
    )


def refusal(path: Path, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path, environ=environ or {})
    assert SECRET not in info.value.message
    return info.value.message


def test_an_oauth_mailbox_needs_no_password_and_gets_its_client(tmp_path: Path) -> None:
    loaded = load_config(config(tmp_path, {"installed": GOOGLE}), environ={})
    prace = loaded.account("prace")
    assert prace is not None and prace.auth == "oauth" and prace.oauth is not None
    assert prace.login == SignIn("prace", "prace@example.com", prace.oauth) and prace.password == ""
    assert prace.oauth.tokens_file == tmp_path / "secrets" / "oauth-tokeny.json"
    assert SECRET not in repr(loaded)
    assert loaded.account("doma") is not None  # the other mailbox stays on its app password
    doma = loaded.account("doma")
    assert doma is not None and doma.auth == "app_password" and doma.oauth is None


def test_a_password_for_an_oauth_mailbox_is_an_error(tmp_path: Path) -> None:
    message = refusal(config(tmp_path, {"installed": GOOGLE}, password="abcdefghijklmnop"))
    assert "se přihlašuje přes Google" in message and '"password"' in message
    assert "abcdefghijklmnop" not in message


def test_oauth_without_a_client_file(tmp_path: Path) -> None:
    path = write(tmp_path / "c.json", {"accounts": [{"name": "a", "address": "a@x.cz", "auth": "oauth"}]})
    assert '"oauth_client_file"' in refusal(path)


@pytest.mark.parametrize(
    ("client", "words"),
    [
        (None, "nejde přečíst"),
        ({"web": GOOGLE}, "Desktopová aplikace"),
        ({"installed": "x"}, "není JSON klienta Google"),
        ({"installed": {**GOOGLE, "client_secret": ""}}, "„client_secret“"),
        ({"installed": {**GOOGLE, "token_uri": "https://evil.example/token"}}, "„token_uri“ neukazuje"),
        ({"installed": {**GOOGLE, "auth_uri": "http://accounts.google.com/o/oauth2/auth"}}, "„auth_uri“"),
        ({"installed": {**GOOGLE, "auth_uri": "https://127.0.0.1:8443/auth"}}, "„auth_uri“"),
    ],
)
def test_a_missing_malformed_or_foreign_client_file(tmp_path: Path, client: Any, words: str) -> None:
    message = refusal(config(tmp_path, client))
    assert words in message and "oauth_client_file" in message


def test_loopback_endpoints_only_in_the_test_mode(tmp_path: Path) -> None:
    local = {**GOOGLE, "auth_uri": "https://127.0.0.1:8443/auth", "token_uri": "https://127.0.0.1:8443/token"}
    path = config(tmp_path, {"installed": local})
    refusal(path)
    assert load_config(path, environ=TEST_MODE).oauth_client is not None


def test_not_signed_in_and_a_readable_tokens_file_are_warned(tmp_path: Path) -> None:
    loaded = load_config(config(tmp_path, {"installed": GOOGLE}), environ={})
    [line] = sign_in_warnings(loaded)
    assert "`prace`" in line and "ještě není přihlášená" in line and "--sign-in prace" in line
    tokens = tmp_path / "secrets" / "oauth-tokeny.json"
    write(tokens, {"version": 1, "accounts": {"prace": {"address": "prace@example.com", "refresh_token": "r"}}})
    tokens.chmod(0o644)
    [line] = sign_in_warnings(loaded)
    assert "smí číst i jiní" in line and "chmod 600" in line and '"r"' not in line
    tokens.chmod(0o600)
    assert sign_in_warnings(loaded) == []
