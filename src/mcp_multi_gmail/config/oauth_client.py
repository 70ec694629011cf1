"""The user's own Google OAuth client (`oauth_client_file`): read, checked, never quoted.

The file is what Google Cloud's "Download JSON" gives for a client of type "Desktop app":
`{"installed": {"client_id", "client_secret", "auth_uri", "token_uri", "redirect_uris"}}`.
Sign-in and every refresh go to the file's own `auth_uri` and `token_uri`, as Google's
libraries do, so both must be Google's: a planted file must not send the user's sign-in
elsewhere. Loopback addresses pass only in the test/demo mode `MG_GMAIL_ENDPOINT` marks
(gmail/endpoint.py; the start-up then prints its POZOR line). Messages name the file and its
keys, never a value: the client secret is in it.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from .report import Problems
from .resolved import OAuthClient

# Written beside the client file (the secrets folder), one entry per signed-in mailbox.
TOKENS_FILE = "oauth-tokeny.json"
# The test override of gmail/endpoint.py; the configuration layer only needs to know it is set.
TEST_MODE_ENV = "MG_GMAIL_ENDPOINT"
# Where Google's client JSON points (https://developers.google.com/identity/protocols/oauth2/native-app).
GOOGLE_HOSTS = {"auth_uri": "accounts.google.com", "token_uri": "oauth2.googleapis.com"}
_KEYS = ("client_id", "client_secret", "auth_uri", "token_uri")


def test_mode(environ: Mapping[str, str]) -> bool:
    return bool(environ.get(TEST_MODE_ENV, "").strip())


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def uri_allowed(key: str, uri: str, *, testing: bool) -> bool:
    """Google's https address for `key`, or (test/demo mode only) one on this machine."""
    parts = urlsplit(uri)
    host = (parts.hostname or "").lower()
    if parts.scheme == "https" and host == GOOGLE_HOSTS[key] and parts.port in (None, 443):
        return True
    return testing and parts.scheme in ("http", "https") and _loopback(host)


def read_oauth_client(path: Path, config: Path, environ: Mapping[str, str], problems: Problems) -> OAuthClient | None:
    """The client file's four values, or None after a problem (which names the file, never its content)."""
    where = f"soubor klienta Google `{path}` (oauth_client_file)"
    try:
        raw = path.read_bytes()
    except OSError:
        problems.add(
            f"{where} nejde přečíst (chybí, nebo k němu není přístup); stáhněte ho v Google Cloud "
            "(Google Auth Platform → Klienti → Stáhnout JSON) a uložte na tuto cestu"
        )
        return None
    data: object = None
    try:
        data = json.loads(raw.decode("utf-8").removeprefix("\ufeff"))
    except (ValueError, RecursionError):  # the parser's text could quote the secret
        data = None
    if isinstance(data, dict) and "installed" not in data and "web" in data:
        problems.add(
            f"{where} patří klientovi typu „Webová aplikace“; pro přihlášení z počítače je potřeba "
            "klient typu „Desktopová aplikace“ (Desktop app)"
        )
        return None
    installed = data.get("installed") if isinstance(data, dict) else None
    if not isinstance(installed, dict):
        problems.add(
            f'{where} není JSON klienta Google tvaru {{"installed": {{"client_id": …, "client_secret": …}}}} '
            "(jeho obsah se kvůli tajnému klíči nevypisuje); stáhněte ho znovu"
        )
        return None
    missing = [key for key in _KEYS if not isinstance(installed.get(key), str) or not installed[key].strip()]
    if missing:
        problems.add(f"{where}: chybí " + ", ".join(f"„{key}“" for key in missing) + "; stáhněte ho znovu")
        return None
    testing = test_mode(environ)
    foreign = [key for key in GOOGLE_HOSTS if not uri_allowed(key, installed[key], testing=testing)]
    if foreign:
        wrong = " a ".join(f"„{key}“ neukazuje na https://{GOOGLE_HOSTS[key]}/" for key in foreign)
        problems.add(
            f"{where}: {wrong}; přihlášení by šlo jinam než ke Googlu. Stáhněte soubor znovu přímo z Google Cloud"
        )
        return None
    return OAuthClient(
        path=path,
        client_id=installed["client_id"].strip(),
        client_secret=installed["client_secret"].strip(),
        auth_uri=installed["auth_uri"].strip(),
        token_uri=installed["token_uri"].strip(),
        tokens_file=path.parent / TOKENS_FILE,
        config=config,
    )
