"""Shared pieces of the security suite: the canary, a recording MCP client, store comparisons."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from email.message import EmailMessage
from typing import Any

from mcp import Client

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.server import build_server
from tool_results import error_body

# The canary app password: 16 lowercase letters, as Google issues them. The config carries it in
# the grouped form Google displays ("qkan arek zvxj wplm"); the server compacts it.
CANARY = "qkanarekzvxjwplm"
CANARY_GROUPED = " ".join(CANARY[i : i + 4] for i in range(0, 16, 4))
ME = "osobni@example.cz"
TEAM = "tym@example.com"
ACCOUNTS = (ME, TEAM, "upozorneni@example.com")
CLASSIFICATIONS = {
    "Asistent/akce": "the user has to do something",
    "Asistent/čeká": "waiting for someone else",
    "Asistent/info": "for information only",
}
WRITE_COMMANDS = ("STORE", "APPEND", "MOVE", "COPY", "CREATE", "DELETE", "EXPUNGE", "RENAME")


def canary_forms() -> list[str]:
    """Every shape the canary could take in a leak: plain, grouped, and base64 (SMTP AUTH LOGIN/PLAIN)."""
    forms = {CANARY, CANARY_GROUPED, CANARY.upper()}
    forms.add(base64.b64encode(CANARY.encode()).decode())
    for address in ACCOUNTS:
        forms.add(base64.b64encode(f"\0{address}\0{CANARY}".encode()).decode())
    return sorted(forms)


def result_text(result: Any) -> str:
    parts = [getattr(block, "text", "") or "" for block in result.content or []]
    if result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


class Recorder:
    """Calls tools through a real in-process MCP client and keeps every result's text for the leak scan."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        # Building a server (tool schemas, instructions) costs more than most calls; the server reads
        # the runtime on every call, so one server per runtime serves them all.
        self._servers: list[tuple[Runtime, Any]] = []

    def keep(self, result: Any) -> Any:
        self.texts.append(result_text(result))
        return result

    def server(self, runtime: Runtime) -> Any:
        for known, server in self._servers:
            if known is runtime:
                return server
        server = build_server(runtime)
        self._servers.append((runtime, server))
        return server

    async def call(self, runtime: Runtime, tool: str, args: dict[str, Any]) -> Any:
        async with Client(self.server(runtime)) as client:
            return self.keep(await client.call_tool(tool, args))

    @asynccontextmanager
    async def session(self, runtime: Runtime) -> AsyncIterator[Any]:
        """One client for many calls; every result is still recorded."""
        async with Client(self.server(runtime)) as client:

            async def call(tool: str, args: dict[str, Any]) -> Any:
                return self.keep(await client.call_tool(tool, args))

            yield call


def error_of(result: Any) -> dict[str, Any] | None:
    """The error of a result (in the one error shape), None for a success."""
    if not result.is_error:
        return None
    return error_body(result)


def mail(
    message_id: str,
    *,
    subject: str = "Dotaz",
    sender: str = "Petr Dvořák <petr@partner.example>",
    to: str = ME,
    body: str = "Dobrý den,\npošlete mi prosím ceník.\n",
    in_reply_to: str | None = None,
    attachment: tuple[str, bytes] | None = None,
    date: str = "Mon, 28 Sep 2026 14:05:00 +0200",
) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Message-ID"] = f"<{message_id}>"
    msg["Date"] = date
    if in_reply_to is not None:
        msg["In-Reply-To"] = f"<{in_reply_to}>"
        msg["References"] = f"<{in_reply_to}>"
    msg.set_content(body)
    if attachment is not None:
        name, data = attachment
        msg.add_attachment(data, maintype="application", subtype="octet-stream", filename=name)
    return msg.as_bytes()


def write_commands(emulator: GmailEmulator) -> list[str]:
    """Every IMAP command that could change the store."""
    return [c.name for c in emulator.commands() if any(w in c.name for w in WRITE_COMMANDS)]


# ------------------------------------------------------------------ store comparison
#
# Message numbers (X-GM-MSGID) differ from one emulator reset to the next, so messages are matched
# by mailbox and Message-ID: the messages a scenario starts with have unique ones.

Key = tuple[str, str | None]


def keyed(snapshot: dict[str, Any]) -> dict[Key, dict[str, Any]]:
    return {(address, m["header_id"]): m for address, account in snapshot.items() for m in account["messages"]}


def new_messages(snapshot: dict[str, Any], start: dict[str, Any]) -> list[dict[str, Any]]:
    """Messages not in the `start` snapshot (the same Message-ID counts as old only once)."""
    old = set(keyed(start))
    found: list[dict[str, Any]] = []
    for address, account in snapshot.items():
        for m in account["messages"]:
            key = (address, m["header_id"])
            if key in old:
                old.discard(key)
            else:
                found.append(m)
    return found


def normalized(snapshot: dict[str, Any], start: dict[str, Any]) -> dict[str, Any]:
    """A snapshot where messages created since `start` are compared by their state only (their ids,
    dates and bytes differ from run to run)."""
    old = set(keyed(start))
    result: dict[str, Any] = {}
    for address, account in snapshot.items():
        messages = []
        for m in account["messages"]:
            key = (address, m["header_id"])
            known = key in old
            old.discard(key)
            messages.append(
                (
                    m["header_id"] if known else "new",
                    m["sha256"] if known else "",
                    tuple(sorted(m["labels"])),
                    tuple(sorted(m["flags"])),
                    m["location"],
                )
            )
        result[address] = {
            "user_labels": sorted(label.casefold() for label in account["user_labels"]),
            "messages": sorted(messages),
        }
    return result


def between(value: Iterable[str], first: Iterable[str], last: Iterable[str]) -> bool:
    """`value` holds everything both states agree on and nothing neither of them has."""
    now, a, b = set(value), set(first), set(last)
    return (a & b) <= now <= (a | b)
