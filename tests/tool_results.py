"""The two shapes a tool result may have, checked on every result the suite sees.

Either an error (`isError`, no structuredContent, one text item holding compact JSON
`{"error": {code, message, retryable}}`), or a success whose structuredContent validates against
the tool's declared outputSchema and whose text is the same data as compact JSON. A strict client
(the TypeScript SDK 1.x) refuses anything else, so the suite does too.
"""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path
from typing import Any

import jsonschema
from mcp.types import CallToolResult

ERROR_KEYS = {"code", "message", "retryable"}


def error_body(result: Any) -> dict[str, Any]:
    """The error of an error result, after checking the error shape."""
    assert result.is_error is True, f"expected an error result, got {result.content}"
    assert result.structured_content is None, "an error result must carry no structuredContent"
    assert len(result.content) == 1 and result.content[0].type == "text", result.content
    text: str = result.content[0].text
    body = json.loads(text)
    assert text == json.dumps(body, ensure_ascii=False, separators=(",", ":")), "error text is not compact JSON"
    assert set(body) == {"error"} and set(body["error"]) == ERROR_KEYS, body
    error: dict[str, Any] = body["error"]
    assert isinstance(error["code"], str) and isinstance(error["message"], str), error
    assert isinstance(error["retryable"], bool), error
    assert "pydantic" not in error["message"], error["message"]  # no library internals or their URLs
    return error


CUT_ENTRY = ["field", "shown", "total", "how_to_get_the_rest"]


def check_cut_published(tool: str, output_schema: dict[str, Any]) -> None:
    """Every tool's result says what it left out: `cut`, its last property, a list of entries of
    the one shape (mail/core/budget.py, Cut), so a tool added later cannot forget it."""
    properties = output_schema.get("properties", {})
    assert "cut" in properties, f"{tool}: the outputSchema has no `cut`"
    assert list(properties)[-1] == "cut", f"{tool}: `cut` is not the last property of the outputSchema"
    assert "cut" not in output_schema.get("required", []), f"{tool}: `cut` must default to []"
    items = properties["cut"]["items"]
    if "$ref" in items:
        items = output_schema["$defs"][items["$ref"].rpartition("/")[2]]
    assert list(items["properties"]) == CUT_ENTRY and items["required"] == CUT_ENTRY, (tool, items)


def check_result(tool: str, result: Any, output_schema: dict[str, Any] | None, *, schema_checked: bool = False) -> None:
    """Fail unless `result` has one of the two shapes above. `schema_checked`: the SDK client has
    already validated this success's structuredContent against `output_schema` itself."""
    if output_schema is not None:
        check_cut_published(tool, output_schema)
    if result.is_error:
        error_body(result)
        return
    assert output_schema is not None, f"{tool} declares no outputSchema"
    assert result.structured_content is not None, f"{tool}: a success without structuredContent"
    if not schema_checked:
        try:
            _validator(json.dumps(output_schema, sort_keys=True)).validate(result.structured_content)
        except jsonschema.ValidationError as invalid:
            message = f"{tool}: structuredContent does not match the outputSchema: {invalid.message}"
            raise AssertionError(message) from None
    texts = [block.text for block in result.content if block.type == "text"]
    compact = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
    assert texts == [compact], f"{tool}: the text content is not the compact JSON of structuredContent"


@functools.lru_cache(maxsize=64)
def _validator(schema: str) -> Any:
    """One validator per schema, checked once (`jsonschema.validate` checks the schema on every call,
    which costs more than the validation itself)."""
    loaded = json.loads(schema)
    kind = jsonschema.validators.validator_for(loaded)
    kind.check_schema(loaded)
    return kind(loaded)


@functools.cache
def output_schemas() -> dict[str, dict[str, Any] | None]:
    """Every tool's outputSchema, for results read off the wire as raw JSON-RPC (no SDK client)."""
    from mcp_multi_gmail.demo.setup import demo_config
    from mcp_multi_gmail.runtime import Runtime
    from mcp_multi_gmail.server import build_server

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.json"
        path.write_text(json.dumps(demo_config(Path(tmp))), encoding="utf-8")
        runtime = Runtime.load(path, environ={})
        server = build_server(runtime)
    return {tool.name: tool.output_schema for tool in server._tool_manager.list_tools()}


def check_wire_result(tool: str, result: dict[str, Any]) -> None:
    """check_result for a `tools/call` result read as raw JSON."""
    check_result(tool, CallToolResult.model_validate(result), output_schemas().get(tool))
