"""What every tool shares: structured error results and common argument types."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, ParamSpec, TypeVar

from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from ..errors import MailError

logger = logging.getLogger("mcp_multi_gmail")

P = ParamSpec("P")
R = TypeVar("R")

AccountName = Annotated[str, Field(description="Short name of a configured mailbox (see mg_list_accounts)")]
AccountOrAll = Annotated[
    str,
    Field(description='Short name of a configured mailbox, or "all" to ask every mailbox at once'),
]

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)
LOCAL_READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def error_result(error: MailError) -> CallToolResult:
    body = {"error": error.as_dict()}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False, indent=2))],
        structured_content=body,
        is_error=True,
    )


def structured_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Turn a MailError (or anything unexpected) into `{"error": {code, message, retryable}}`."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except MailError as error:
            return error_result(error)  # type: ignore[return-value]
        except Exception as error:  # a bug or an unforeseen library error: report, never crash
            logger.exception("tool %s failed", fn.__name__)
            unexpected = MailError("upstream_error", f"Unexpected failure: {type(error).__name__}: {error}")
            return error_result(unexpected)  # type: ignore[return-value]

    return wrapper


def jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))
