"""Assertions shared by the tool tests: a call that must succeed, or must fail with an error body."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp_multi_gmail.runtime import Runtime
from tool_results import error_body

Call = Callable[..., Any]


async def ok(call: Call, runtime: Runtime, tool: str, **args: Any) -> dict[str, Any]:
    result = await call(runtime, tool, args)
    assert result.is_error is False, result.content[0].text
    data: dict[str, Any] = result.structured_content
    return data


async def error(call: Call, runtime: Runtime, tool: str, **args: Any) -> dict[str, Any]:
    return error_body(await call(runtime, tool, args))
