"""What every tool shares: error results, compact JSON text and common argument types."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeVar

import anyio
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from ... import deadline
from ...errors import MailError
from ...mail.core import budget
from .arguments import MAX_ACCOUNT

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from ...runtime import Runtime

logger = logging.getLogger("mcp_multi_gmail")

P = ParamSpec("P")
R = TypeVar("R")

AccountName = Annotated[
    str, Field(max_length=MAX_ACCOUNT, description="Short name of a configured mailbox (see mg_list_accounts)")
]
AccountOrAll = Annotated[
    str,
    Field(
        max_length=MAX_ACCOUNT,
        description='Short name of a configured mailbox, or "all" to ask every mailbox at once',
    ),
]

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True)
# Changes something, but the same call again changes nothing more (labels, flags, a saved attachment).
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True)


def compact_json(value: Any) -> str:
    """JSON as the assistant reads it: no indentation, no escaped non-ASCII (every byte is context)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def error_result(error: MailError) -> CallToolResult:
    """An error every client can read: isError, one text item, and no structuredContent.

    The TypeScript SDK 1.x client validates structuredContent against the tool's outputSchema
    even on errors, so an error body there would hide the message behind a client exception.
    The text stays within the result budget: a message that lists too much is cut, and says so.
    """
    body = error.as_dict()
    text = compact_json({"error": body})
    if len(text) > budget.RESULT_BUDGET:
        message = str(body["message"])
        note = f" … [cut: the whole message was {len(message)} characters]"
        room = budget.json_length(message) - (len(text) - budget.RESULT_BUDGET) - budget.json_length(note)
        body["message"] = budget.fit_text(message, room) + note
        text = compact_json({"error": body})
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def within_budget(tool: str, result: R) -> R:
    """The last resort of the result budget: the tools size their pages and windows themselves,
    and whatever a pathological mailbox still makes too large is cut here (budget.shrink), each
    cut named in the result's `cut` with `tool` as the call that cannot bring more."""
    if not isinstance(result, BaseModel):
        return result
    fitted = budget.shrink(result, tool=tool)
    if fitted is not result:
        logger.warning("tool %s: result over %d characters, cut to fit", tool, budget.RESULT_BUDGET)
    return fitted


def structured_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Turn a MailError (or anything unexpected) into `{"error": {code, message, retryable}}`."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return within_budget(fn.__name__, await fn(*args, **kwargs))
        except MailError as error:
            return error_result(error)  # type: ignore[return-value]
        except Exception as error:  # a bug or an unforeseen library error: report, never crash
            logger.exception("tool %s failed", fn.__name__)
            unexpected = MailError("upstream_error", f"Unexpected failure: {type(error).__name__}: {error}")
            return error_result(unexpected)  # type: ignore[return-value]

    return wrapper


def within_deadline(runtime: Runtime) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Awaitable[R]]]:
    """One deadline for the whole call (config `call_timeout_s`): waiting for a connection slot,
    every IMAP session and the SMTP submission all count against it (a send's grows with its
    upload). When it passes, the call ends with an error that says what was known, and its sockets
    are closed; a send Gmail already accepted ends with its success result instead."""

    def decorate(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        @functools.wraps(fn)
        async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            timeout = runtime.call_timeout_s
            with deadline.call_scope(timeout) as progress:
                try:
                    with anyio.move_on_after(timeout) as scope:

                        def later(seconds: float) -> None:
                            scope.deadline += seconds

                        progress.on_extend = later
                        return await fn(*args, **kwargs)
                except MailError as error:
                    if error.code == "upstream_error" and progress.remaining() <= 0:
                        if progress.outcome is not None:
                            return progress.outcome()  # type: ignore[return-value]
                        raise progress.error() from None  # a socket gave up at the deadline itself
                    raise
                finally:
                    progress.on_extend = None
                    if scope.cancelled_caught or progress.remaining() <= 0:
                        progress.expire()
                if progress.outcome is not None:
                    return progress.outcome()  # type: ignore[return-value]
                raise progress.error()

        return wrapper

    return decorate


F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


class Registrar:
    """The decorator every tool is registered with, `@tool(name, title, annotations)`: the tool
    runs within the call's deadline (within_deadline), and its result stays within the budget and
    its failures become error results (structured_errors)."""

    def __init__(self, server: MCPServer, runtime: Runtime) -> None:
        self._server = server
        self._runtime = runtime

    def __call__(self, name: str, title: str, annotations: ToolAnnotations) -> Callable[[F], F]:
        def register(fn: F) -> F:
            if fn.__doc__:  # the description names the budget's number where it writes "{budget}"
                fn.__doc__ = fn.__doc__.replace("{budget}", budget.BUDGET_NUMBER)
            wrapped = structured_errors(within_deadline(self._runtime)(fn))
            self._server.tool(name=name, title=title, annotations=annotations)(wrapped)
            return fn

        return register
