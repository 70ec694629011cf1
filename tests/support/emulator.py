"""The server's view of a test emulator: the MG_GMAIL_* variables that point it there."""

from __future__ import annotations

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.gmail.endpoint import loopback_environ


def gmail_env(emulator: GmailEmulator) -> dict[str, str]:
    """MG_GMAIL_ENDPOINT and MG_GMAIL_CA_FILE for `emulator` (it reports only host, ports and CA)."""
    return loopback_environ(**emulator.env())
