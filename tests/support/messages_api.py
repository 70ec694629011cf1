"""A local stand-in for Anthropic's Messages API, so Claude Code can run a scripted session offline.

Claude Code is pointed at it with `ANTHROPIC_BASE_URL=http://127.0.0.1:<port>` and any
`ANTHROPIC_API_KEY`. Every request is recorded: what Claude Code sends is exactly what the model
would read (the system prompt with the servers' instructions, the tools with their schemas, and
each `tool_result`). The answers come from a script: a function that sees the conversation so far
and returns the next tool call, or None to end with a short text.

Only the parts of the API that Claude Code uses are spoken: `POST /v1/messages` (streamed as
server-sent events when the request asks for `stream`, JSON otherwise) and
`POST /v1/messages/count_tokens` (estimated as characters / 4, Claude Code's own estimate).
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "claude-stand-in"


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: dict[str, Any]


@dataclass
class Conversation:
    """One main-conversation request as the script sees it."""

    body: dict[str, Any]

    @property
    def tools(self) -> dict[str, dict[str, Any]]:
        return {tool["name"]: tool for tool in self.body.get("tools", []) if "name" in tool}

    def calls(self) -> list[tuple[ToolCall, dict[str, Any] | None]]:
        """Every tool call so far with its tool_result block (None while it has none), oldest first."""
        uses: list[tuple[str, ToolCall]] = []
        results: dict[str, dict[str, Any]] = {}
        for message in self.body.get("messages", []):
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if block.get("type") == "tool_use":
                    uses.append((block["id"], ToolCall(block["name"], block.get("input", {}))))
                elif block.get("type") == "tool_result":
                    results[block["tool_use_id"]] = block
        return [(call, results.get(use_id)) for use_id, call in uses]


Script = Callable[[Conversation], ToolCall | None]


def result_text(block: dict[str, Any]) -> str:
    """The text of a tool_result block, as the model reads it."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if part.get("type") == "text")
    return ""


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system", "")
    if isinstance(system, str):
        return system
    return "\n".join(part.get("text", "") for part in system if isinstance(part, dict))


@dataclass
class MessagesApi:
    script: Script
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: Iterator[int] = field(default_factory=itertools.count)
    url: str = ""

    def is_main(self, body: dict[str, Any]) -> bool:
        """The conversation the script drives offers tools; Claude Code's side requests do not."""
        return bool(body.get("tools"))

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.requests.append({"path": path, "body": body})
            number = next(self.ids)
        if path.endswith("/count_tokens"):
            return {"input_tokens": max(1, len(json.dumps(body, ensure_ascii=False)) // 4)}
        call = self.script(Conversation(body)) if self.is_main(body) else None
        if call is None:
            content: list[dict[str, Any]] = [{"type": "text", "text": "Done."}]
            stop = "end_turn"
        else:
            content = [{"type": "tool_use", "id": f"toolu_{number:04d}", "name": call.name, "input": call.input}]
            stop = "tool_use"
        return {
            "id": f"msg_{number:04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", MODEL),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }


def sse_events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The streamed form of one message: start, each block (start, one delta, stop), delta, stop."""
    yield "message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
            )
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": 1},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _handler(api: MessagesApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body: dict[str, Any] = json.loads(self.rfile.read(length) or b"{}")
            path = self.path.split("?", 1)[0]
            if not path.startswith("/v1/messages"):
                self.send_error(404)
                return
            message = api.answer(path, body)
            if body.get("stream") and not path.endswith("/count_tokens"):
                payload = "".join(
                    f"event: {event}\ndata: {json.dumps(data)}\n\n" for event, data in sse_events(message)
                ).encode()
                kind = "text/event-stream"
            else:
                payload = json.dumps(message).encode()
                kind = "application/json"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("request-id", "req_stand_in")
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            self.send_error(404)

    return Handler


@contextmanager
def messages_api(script: Script) -> Iterator[MessagesApi]:
    """Serve the stand-in on 127.0.0.1 (a free port) for the duration of the block."""
    api = MessagesApi(script)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="messages-api", daemon=True)
    thread.start()
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
