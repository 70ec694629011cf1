"""The tool list as clients read it: standard JSON Schema and descriptions without source indentation.

Pydantic writes a bound that follows a validator (our `Count` refuses booleans before the bound
is checked) under its own names `ge`/`le`/`gt`/`lt`, which no JSON Schema client knows, so the
bound would be invisible. The published schema uses JSON Schema 2020-12's `minimum`, `maximum`,
`exclusiveMinimum` and `exclusiveMaximum` instead (docs/architecture.md, "MCP surface"); validation
is pydantic's and does not change.

The SDK publishes a tool's docstring as its description verbatim; before Python 3.13 that keeps
the source indentation of every line after the first, which clients show and count. Descriptions
are cleaned as `inspect.cleandoc` does.
"""

from __future__ import annotations

import inspect
from typing import Any

from mcp.types import Tool

# Pydantic's constraint names -> JSON Schema keywords, with which of two values is the stricter.
_BOUNDS: dict[str, tuple[str, Any]] = {
    "ge": ("minimum", max),
    "gt": ("exclusiveMinimum", max),
    "le": ("maximum", min),
    "lt": ("exclusiveMaximum", min),
}
# Where a schema holds further schemas (JSON Schema 2020-12 core and applicator vocabularies).
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_VALUES = (
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
)


def standard_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of `schema` with pydantic's bound names turned into JSON Schema keywords, at every depth."""
    out: dict[str, Any] = {}
    bounds: list[tuple[str, Any, Any]] = []
    for key, value in schema.items():
        if key in _BOUNDS and isinstance(value, int | float) and not isinstance(value, bool):
            keyword, stricter = _BOUNDS[key]
            bounds.append((keyword, value, stricter))
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _sub(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_sub(sub) for sub in value]
        elif key in _SCHEMA_VALUES:
            out[key] = _sub(value)
        else:
            out[key] = value
    for keyword, value, stricter in bounds:
        out[keyword] = stricter(out[keyword], value) if keyword in out else value
    return out


def _sub(schema: Any) -> Any:
    return standard_schema(schema) if isinstance(schema, dict) else schema  # `true`/`false` are schemas too


# Per tool name: the SDK's schemas and description and what they were turned into. tools/list is
# asked often and its schemas are ~130 KB: they are converted once, not on every request. The SDK
# hands out fresh copies of the same schemas on every tools/list (its Tool model copies the dicts),
# so the cache compares them by value, which costs far less than converting them again.
_DONE: dict[str, tuple[tuple[Any, Any, Any], dict[str, Any]]] = {}


def published(tool: Tool) -> Tool:
    """The tool as it goes out in tools/list."""
    originals = (tool.input_schema, tool.output_schema, tool.description)
    done = _DONE.get(tool.name)
    if done is None or done[0] != originals:
        changes: dict[str, Any] = {"input_schema": standard_schema(tool.input_schema)}
        if tool.output_schema is not None:
            changes["output_schema"] = standard_schema(tool.output_schema)
        if tool.description is not None:
            changes["description"] = inspect.cleandoc(tool.description)
        done = _DONE[tool.name] = (originals, changes)
    return tool.model_copy(update=done[1])
