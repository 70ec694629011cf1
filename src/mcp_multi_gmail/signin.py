"""`--sign-in NAME`: the one-time sign-in with Google of a mailbox with "auth": "oauth", run by the user.

The user runs it in their own terminal: it prints the Google address to open (and opens a browser
where there is one; `BROWSER` is honoured), waits on 127.0.0.1 for the browser to come back,
exchanges the code, checks with Gmail that the account signed in is the mailbox's own, and only
then stores the refresh token (oauth/tokens.py). Every refusal changes nothing and says why in
one Czech line. No token or secret is ever printed: the assistant may read this terminal.
"""

from __future__ import annotations

import contextlib
import os
import sys
import webbrowser
from collections.abc import Mapping
from pathlib import Path

from .config import Account, ConfigError, load_config
from .config.oauth_client import test_mode
from .errors import MailError
from .gmail.endpoint import Endpoint, EndpointError, resolve_endpoint
from .gmail.imap import check_access_token
from .layout import detect_layout, project_dir
from .oauth import tokens
from .oauth.flow import LoopbackListener, auth_url, exchange_code, new_state, pkce_pair
from .oauth.google import TokenEndpointError

# Google's consent takes a person a minute or two; after that the listener gives up.
TIMEOUT_S = 300.0
# Tests shorten the wait; honoured only in the test/demo mode (MG_GMAIL_ENDPOINT).
TIMEOUT_ENV = "MG_SIGN_IN_TIMEOUT_S"

EXIT_DONE, EXIT_REFUSED, EXIT_USAGE = 0, 1, 2


def _err(line: str) -> None:
    sys.stderr.write(f"chyba: {line}\n")
    sys.stderr.flush()


def _timeout(environ: Mapping[str, str]) -> float:
    if test_mode(environ):
        try:
            return max(0.1, float(environ.get(TIMEOUT_ENV, "")))
        except ValueError:
            pass
    return TIMEOUT_S


def sign_in(config_path: Path, name: str, environ: Mapping[str, str] | None = None) -> int:
    env = os.environ if environ is None else environ
    try:
        config = load_config(config_path, layout=detect_layout(project_dir()), environ=env)
        endpoint = resolve_endpoint(env)
    except (ConfigError, EndpointError) as error:
        sys.stderr.write(f"{error}\n")
        return EXIT_REFUSED
    account = config.account(name)
    if account is None:
        _err(f"schránka `{name}` v nastavení není (jsou tam: {', '.join(config.names())})")
        return EXIT_USAGE
    if account.oauth is None:
        _err(f'schránka `{name}` se přihlašuje heslem aplikace; přihlášení přes Google potřebuje "auth": "oauth"')
        return EXIT_USAGE
    if endpoint.overridden:
        sys.stderr.write(f"POZOR: místo Googlu se přihlašuji u {account.oauth.auth_uri} (MG_GMAIL_ENDPOINT).\n")
    return _run(account, endpoint, _timeout(env))


def _run(account: Account, endpoint: Endpoint, timeout_s: float) -> int:
    assert account.oauth is not None, "only an OAuth mailbox signs in"
    client = account.oauth
    verifier, challenge = pkce_pair()
    state = new_state()
    with LoopbackListener() as listener:
        url = auth_url(client, listener.redirect_uri, account.address, state, challenge)
        print(f"Přihlášení schránky `{account.name}` ({account.address}) přes Google.", flush=True)
        print("Otevřete v prohlížeči tuto adresu (pokud se neotevřela sama) a přihlaste se tímto účtem:")
        print(url, flush=True)
        with contextlib.suppress(webbrowser.Error):  # no browser here: the printed address is enough
            webbrowser.open(url)
        redirect = listener.wait(timeout_s)
    if redirect is None:
        minutes = max(1, round(timeout_s / 60))
        _err(f"prohlížeč se do {minutes} min nevrátil, přihlášení neproběhlo; nic se neuložilo, spusťte příkaz znovu")
        return EXIT_REFUSED
    if redirect.state != state:
        _err(
            "odpověď z prohlížeče nepatří k tomuto přihlášení (nesouhlasí „state“), nic se neuložilo; "
            "spusťte příkaz znovu a otevřete jen adresu, kterou vypíše"
        )
        return EXIT_REFUSED
    if redirect.code is None:
        if redirect.error == "access_denied":
            _err(
                "na obrazovce Googlu nebyl přístup povolen, nic se neuložilo; spusťte příkaz znovu "
                "a přístup k poště povolte (Pokračovat, zaškrtnout přístup ke Gmailu)"
            )
        else:
            _err(f"Google přihlášení odmítl ({redirect.error}), nic se neuložilo")
        return EXIT_REFUSED
    tls = endpoint.tls_context()
    try:
        answer = exchange_code(client, redirect.code, verifier, listener.redirect_uri, tls)
        now = tokens.clock()
        refresh = answer.get("refresh_token")
        if not isinstance(refresh, str) or not refresh:
            raise TokenEndpointError("refused", "no refresh_token")
        grant = tokens.grant_from(account.address, refresh, answer, now)
    except TokenEndpointError as error:
        _err(f"Google nevydal přihlášení ({error.code}), nic se neuložilo; spusťte příkaz znovu")
        return EXIT_REFUSED
    try:
        check_access_token(account.name, account.address, grant.access_token, endpoint)
    except MailError as error:
        if error.code == "auth_failed":
            _err(
                f"v prohlížeči jste se přihlásili jiným účtem Google, než je {account.address}; nic se "
                f"neuložilo. Spusťte příkaz znovu a vyberte účet {account.address}"
            )
        else:
            _err(f"Gmail teď přihlášení nepotvrdil ({error.message}), nic se neuložilo; zkuste to za chvíli znovu")
        return EXIT_REFUSED
    try:
        tokens.save_grant(client.tokens_file, account.name, grant)
    except OSError as error:
        _err(f"nejde zapsat {client.tokens_file} ({error.strerror or error}), nic se neuložilo")
        return EXIT_REFUSED
    print(f"Hotovo: schránka `{account.name}` je přihlášená přes Google (uloženo v {client.tokens_file}).", flush=True)
    return EXIT_DONE
