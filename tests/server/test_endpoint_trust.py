"""Whom the server's TLS trusts (docs/en/development.md, `MG_GMAIL_CA_FILE`): for Gmail itself the
system's trust store; for a loopback override exactly the CA file it names, so a certificate from
any other authority is refused before a password leaves."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trustme
from toolcalls import Call, error

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.gmail.endpoint import CA_FILE_ENV, GMAIL, resolve_endpoint
from support import gmail_env, load_runtime

pytestmark = pytest.mark.anyio


def _organizations(certificates: list[dict[str, Any]]) -> list[str]:
    """The organization names in the subjects of `certificates` (ssl's get_ca_certs form)."""
    return [
        value for cert in certificates for rdn in cert["subject"] for key, value in rdn if key == "organizationName"
    ]


def test_an_override_trusts_its_ca_file_and_nothing_else(emulator: GmailEmulator) -> None:
    override = resolve_endpoint(gmail_env(emulator)).tls_context()
    assert _organizations(override.get_ca_certs()) == ["gmail_emulator test CA"]
    assert override.check_hostname and override.verify_mode.name == "CERT_REQUIRED"
    assert GMAIL.tls_context() is not override
    assert "gmail_emulator test CA" not in _organizations(GMAIL.tls_context().get_ca_certs())


async def test_a_server_certificate_from_another_authority_is_refused(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path, call: Call
) -> None:
    other = tmp_path / "other-ca.pem"
    trustme.CA(organization_name="another test CA").cert_pem.write_to_path(str(other))
    env = {**gmail_env(emulator), CA_FILE_ENV: str(other)}
    config = write_config([{"name": "osobni", "address": "osobni@example.cz", "password": "osobniheslohesla"}])
    runtime = load_runtime(config, env, state_dir=tmp_path / "state")
    body = await error(call, runtime, "mg_search_threads", account="osobni", query="in:inbox")
    assert "certificate" in body["message"].lower(), body
    assert [c.name for c in emulator.commands()] == [], "no command, no password, before verification"
