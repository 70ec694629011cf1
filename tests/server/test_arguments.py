"""Tool arguments: strict booleans, published size bounds, and errors an assistant can act on.

Every refusal here is `invalid_input` in the one error shape (isError, one compact JSON text item,
no structuredContent) and happens before any connection to Gmail.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.types import TextContent
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.server import build_server
from mcp_multi_gmail.server.tools import arguments
from tool_results import error_body

pytestmark = pytest.mark.anyio

REPLY = {
    "account": "osobni",
    "to": ["lucie@example.org"],
    "subject": "Chata: jedeme v pátek",
    "body": "Ahoj, jedeme v pátek.",
    "in_reply_to": "chata-vysocina-09@example.org",
    "quote_original": False,
    "signature": False,
}


async def refused(call: Call, runtime: Runtime, emulator: GmailEmulator, tool: str, **args: Any) -> str:
    """The invalid_input message of a call that must not reach Gmail at all."""
    emulator.reset_counters()
    before = emulator.snapshot()
    body = await error(call, runtime, tool, **args)
    assert body["code"] == "invalid_input" and body["retryable"] is False, body
    assert emulator.connections() == 0 and emulator.smtp_sessions() == 0, "refused before any connection"
    assert emulator.snapshot() == before
    message: str = body["message"]
    return message


async def test_a_string_never_unlocks_a_second_send(demo: Runtime, call: Call, emulator_session: GmailEmulator) -> None:
    await ok(call, demo, "mg_send_message", **REPLY)
    assert len(emulator_session.outbox()) == 1
    assert (await error(call, demo, "mg_send_message", **REPLY))["code"] == "duplicate_send"
    for value in ("yes", "true", 1, "1", [True], {"value": True}):
        message = await refused(call, demo, emulator_session, "mg_send_message", **REPLY, repeat=value)
        assert "`repeat`: expected JSON true or false" in message, message
    assert len(emulator_session.outbox()) == 1
    await ok(call, demo, "mg_send_message", **REPLY, repeat=True)  # the real thing still works
    assert len(emulator_session.outbox()) == 2


@pytest.mark.parametrize(
    ("tool", "args", "words"),
    [
        ("mg_list_accounts", {"verify": "yes"}, ['`verify`: expected JSON true or false, received the string "yes"']),
        ("mg_list_accounts", {"verify": 1}, ["`verify`: expected JSON true or false, received the number 1"]),
        ("mg_set_flags", {"message_id": "x@example.cz", "seen": "yes"}, ["`seen`: expected JSON true or false"]),
        ("mg_set_flags", {"message_id": "x@example.cz", "flagged": 0}, ["`flagged`: expected JSON true or false"]),
        ("mg_save_draft", {"to": ["a@example.cz"], "subject": "s", "body": "b", "quote_original": "no"}, ["quote_"]),
        ("mg_save_draft", {"to": ["a@example.cz"], "subject": "s", "body": "b", "signature": 0}, ["`signature`"]),
        (
            "mg_search_threads",
            {"query": "x", "max_results": True},
            ["`max_results`: expected an integer, received true"],
        ),
        ("mg_search_threads", {"query": "x", "max_results": 0}, ["`max_results`: expected a number >= 1"]),
        ("mg_list_labels", {"account": None}, ["`account`: expected a string, received null"]),
        ("mg_label_message", {"message_ids": "a@b", "label": "Asistent"}, ["`message_ids`: expected a list"]),
        ("mg_label_message", {"message_ids": ["a@b", 7], "label": "Asistent"}, ["`message_ids[1]`: expected a string"]),
        ("mg_get_thread", {}, ["`thread_id`: required, but missing"]),
        (
            "mg_send_message",
            {"subject": "s"},  # a subject alone: `to` and `body` are missing (a reply may leave out the subject)
            ["Invalid arguments for mg_send_message", "`to`: required, but missing", "`body`: required"],
        ),
    ],
)
async def test_wrong_arguments_are_named_with_expected_and_received(
    demo: Runtime, call: Call, emulator_session: GmailEmulator, tool: str, args: dict[str, Any], words: list[str]
) -> None:
    args = {"account": "osobni", **args}
    message = await refused(call, demo, emulator_session, tool, **args)
    for word in words:
        assert word in message, message
    assert "validation error" not in message and "errors.pydantic.dev" not in message


@pytest.mark.parametrize(
    ("tool", "args", "argument", "limit"),
    [
        ("mg_search_threads", {"query": "a" * 2_000_000}, "query", arguments.MAX_QUERY),
        ("mg_search_threads", {"query": "x", "page_token": "1" * 5_000}, "page_token", arguments.MAX_TOKEN),
        ("mg_next_pass", {"since": "2026-01-01" * 1_000}, "since", arguments.MAX_TOKEN),
        ("mg_get_message", {"message_id": "a" * 5_000}, "message_id", arguments.MAX_ID),
        ("mg_label_thread", {"thread_id": "1", "label": "L" * 5_000}, "label", arguments.MAX_LABEL),
        ("mg_list_labels", {"account": "o" * 1_000}, "account", arguments.MAX_ACCOUNT),
        (
            "mg_save_draft",
            {"to": ["a@example.cz"], "subject": "s" * 10_000, "body": "b"},
            "subject",
            arguments.MAX_SUBJECT,
        ),
        (
            "mg_save_draft",
            {"to": ["a@example.cz"], "subject": "s", "body": "b" * 6_000_000},
            "body",
            arguments.MAX_BODY,
        ),
        (
            "mg_send_message",
            {"to": ["a@example.cz"], "subject": "s", "body": "b", "attachments": ["/" + "p" * 5_000]},
            "attachments[0]",
            arguments.MAX_PATH,
        ),
    ],
)
async def test_oversized_text_is_refused_before_any_connection(
    demo: Runtime,
    call: Call,
    emulator_session: GmailEmulator,
    tool: str,
    args: dict[str, Any],
    argument: str,
    limit: int,
) -> None:
    message = await refused(call, demo, emulator_session, tool, **{"account": "osobni", **args})
    assert f"`{argument}`: expected at most {limit} characters" in message, message


async def test_oversized_lists_are_refused(demo: Runtime, call: Call, emulator_session: GmailEmulator) -> None:
    many = [f"m{i}@example.cz" for i in range(arguments.MAX_IDS + 1)]
    message = await refused(
        call, demo, emulator_session, "mg_label_message", account="osobni", message_ids=many, label="Asistent"
    )
    assert f"`message_ids`: expected at most {arguments.MAX_IDS} items, received a list of {len(many)} items" in message


async def test_unknown_arguments_are_ignored_and_unknown_tools_refused(demo: Runtime, call: Call) -> None:
    data = await ok(call, demo, "mg_list_labels", account="tym", colour="blue")
    assert data["account"] == "tym"
    body = await error(call, demo, "mg_no_such_tool")
    assert body["code"] == "invalid_input" and "Unknown tool mg_no_such_tool" in body["message"]
    assert "mg_list_labels" in body["message"]


async def test_input_schemas_publish_every_bound_and_strict_booleans(demo: Runtime) -> None:
    """A client can see every limit: each string has maxLength, each list maxItems, at every depth."""

    def walk(name: str, schema: dict[str, Any]) -> None:
        for branch in schema.get("anyOf", []):
            walk(name, branch)
        if schema.get("type") == "string" and "const" not in schema and "enum" not in schema:
            assert "maxLength" in schema, f"{name} has no maxLength"
        if schema.get("type") == "array":
            assert "maxItems" in schema, f"{name} has no maxItems"
            walk(f"{name}[]", schema["items"])

    async with Client(build_server(demo)) as client:
        tools = (await client.list_tools()).tools
    assert len(tools) == 24
    for tool in tools:
        for name, schema in tool.input_schema["properties"].items():
            walk(f"{tool.name}.{name}", schema)
    send = next(t for t in tools if t.name == "mg_send_message").input_schema["properties"]
    assert send["repeat"]["type"] == "boolean" and send["body"]["maxLength"] == arguments.MAX_BODY


async def test_errors_and_successes_have_one_shape_each(demo: Runtime) -> None:
    async with Client(build_server(demo)) as client:
        failed = await client.call_tool("mg_list_labels", {"account": "nobody"})
        labels = await client.call_tool("mg_list_labels", {"account": "osobni"})
    assert error_body(failed)["code"] == "account_unknown"
    assert isinstance(failed.content[0], TextContent) and isinstance(labels.content[0], TextContent)
    assert failed.content[0].text.startswith('{"error":{"code":"account_unknown","message":')
    assert labels.is_error is False and labels.structured_content is not None
    text = labels.content[0].text
    assert "\n" not in text and ", " not in text[:200] and "Asistent/čeká" in text  # compact, non-ASCII as is
