"""Where Gmail is: always imap.gmail.com / smtp.gmail.com, except a loopback test override."""

from __future__ import annotations

import ipaddress
import re
import ssl
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ENDPOINT_ENV = "MG_GMAIL_ENDPOINT"
CA_FILE_ENV = "MG_GMAIL_CA_FILE"

_ENDPOINT_RE = re.compile(r"^(\[[^\]]+\]|[^:\[\]]+):(\d{1,5}):(\d{1,5}):(\d{1,5})$")

# Gmail's well-known ports; the override keeps their meaning (465 implicit TLS, 587 STARTTLS).
SMTPS = 465
SUBMISSION = 587


class EndpointError(Exception):
    """The test override is malformed or points away from this machine (Czech message)."""


@dataclass(frozen=True)
class Endpoint:
    imap_host: str
    imap_port: int
    smtp_host: str
    smtp_ports: Mapping[int, int]  # Gmail port (465/587) -> port actually dialled
    ca_file: Path | None
    overridden: bool

    def smtp_port(self, gmail_port: int) -> int:
        return self.smtp_ports[gmail_port]

    def tls_context(self) -> ssl.SSLContext:
        # Verification is never switched off. An override (loopback only) trusts exactly its CA
        # file, the emulator's: no public CA can vouch for a loopback port.
        return shared_tls_context(self.ca_file, system_store=self.ca_file is None)


# Building a default context loads the whole system trust store (~0.1 s of CPU); doing that for
# every connection was the largest fixed cost of a tool call. One context per CA file (keyed by
# its path, size and mtime, so a replaced file is picked up) and trust store is built once and
# shared: an SSLContext may be used by many connections and threads at once.
_CONTEXTS: dict[tuple[tuple[str, int, int] | None, bool], ssl.SSLContext] = {}
_CONTEXTS_LOCK = threading.Lock()


def _ca_key(ca_file: Path | None) -> tuple[str, int, int] | None:
    if ca_file is None:
        return None
    try:
        stat = ca_file.stat()
    except OSError:
        return (str(ca_file), -1, -1)
    return (str(ca_file), stat.st_size, stat.st_mtime_ns)


def shared_tls_context(ca_file: Path | None, *, system_store: bool = True) -> ssl.SSLContext:
    """The verifying TLS context that trusts `ca_file` and, with `system_store`, the system's
    trust store too (with neither, the system store alone), built once."""
    system_store = system_store or ca_file is None
    key = (_ca_key(ca_file), system_store)
    with _CONTEXTS_LOCK:
        context = _CONTEXTS.get(key)
        if context is None:
            # With a cafile, create_default_context loads that file instead of the system store.
            context = ssl.create_default_context(cafile=None if system_store else str(ca_file))
            if system_store and ca_file is not None:
                context.load_verify_locations(cafile=str(ca_file))
            _CONTEXTS[key] = context
        return context


GMAIL = Endpoint("imap.gmail.com", 993, "smtp.gmail.com", {SMTPS: SMTPS, SUBMISSION: SUBMISSION}, None, False)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def loopback_environ(
    *, host: str, imap_port: int, smtp_ssl_port: int, smtp_starttls_port: int, ca_file: str
) -> dict[str, str]:
    """The MG_GMAIL_* variables that point the server at a loopback IMAP/SMTP server, the inverse
    of `resolve_endpoint`. The keywords are those of the emulator's `env()`, so the demo, the tests
    and the benchmarks call `loopback_environ(**emulator.env())`."""
    return {ENDPOINT_ENV: f"{host}:{imap_port}:{smtp_ssl_port}:{smtp_starttls_port}", CA_FILE_ENV: ca_file}


def resolve_endpoint(environ: Mapping[str, str]) -> Endpoint:
    """Gmail itself, or the loopback emulator named by MG_GMAIL_ENDPOINT=host:imap:smtps:submission."""
    raw = environ.get(ENDPOINT_ENV, "").strip()
    ca_raw = environ.get(CA_FILE_ENV, "").strip()
    if not raw:
        return GMAIL
    match = _ENDPOINT_RE.match(raw)
    if match is None:
        raise EndpointError(
            f"{ENDPOINT_ENV} má tvar host:imap_port:smtps_port:submission_port, například 127.0.0.1:1993:1465:1587."
        )
    host = match.group(1).strip("[]")
    if not _is_loopback(host):
        raise EndpointError(
            f"{ENDPOINT_ENV} smí ukazovat jen na tento počítač (127.0.0.1, localhost nebo ::1), ne na {host}."
        )
    imap_port, smtps_port, submission_port = (int(p) for p in match.groups()[1:])
    ca_file = Path(ca_raw).resolve() if ca_raw else None
    if ca_file is not None and not ca_file.is_file():
        raise EndpointError(f"{CA_FILE_ENV} ukazuje na {ca_file}, který neexistuje.")
    return Endpoint(host, imap_port, host, {SMTPS: smtps_port, SUBMISSION: submission_port}, ca_file, True)
