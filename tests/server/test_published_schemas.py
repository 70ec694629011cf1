"""The tool list in standard JSON Schema: every client sees the bounds, descriptions carry no source indentation.

docs/architecture.md (`schema`): bounds are `minimum`/`maximum` (pydantic's own `ge`/`le` are invisible to a client),
descriptions carry no docstring indentation, and every published input and output schema is a valid
JSON Schema 2020-12 document. The published bounds are the ones validation enforces.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.types import Tool
from toolcalls import Call, error

from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.server import build_server
from mcp_multi_gmail.server.schema import standard_schema
from tool_results import check_cut_published

pytestmark = pytest.mark.anyio

# Every keyword of JSON Schema 2020-12 (core, applicator, unevaluated, validation, meta-data, format,
# content vocabularies: https://json-schema.org/draft/2020-12/json-schema-core and -validation).
KEYWORDS = {
    *("$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs"),
    *("allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "prefixItems", "items"),
    *("contains", "properties", "patternProperties", "additionalProperties", "propertyNames"),
    *("unevaluatedItems", "unevaluatedProperties"),
    *("type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"),
    *("maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains"),
    *("maxProperties", "minProperties", "required", "dependentRequired"),
    *("title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples"),
    *("format", "contentEncoding", "contentMediaType", "contentSchema"),
}
_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_VALUES = ("items", "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "contains")
_VALUES_TOO = ("propertyNames", "not", "if", "then", "else", "contentSchema")


def subschemas(schema: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema inside `schema` (itself included), with a path to name it."""
    if not isinstance(schema, dict):
        return
    yield where, schema
    for key, value in schema.items():
        if key in _MAPS and isinstance(value, dict):
            for name, sub in value.items():
                yield from subschemas(sub, f"{where}/{key}/{name}")
        elif key in _LISTS and isinstance(value, list):
            for index, sub in enumerate(value):
                yield from subschemas(sub, f"{where}/{key}/{index}")
        elif key in _VALUES or key in _VALUES_TOO:
            yield from subschemas(value, f"{where}/{key}")


async def _tools(runtime: Runtime) -> list[Tool]:
    async with Client(build_server(runtime)) as client:
        return (await client.list_tools()).tools


def _schemas(tool: Tool) -> Iterator[tuple[str, dict[str, Any]]]:
    yield f"{tool.name} input", tool.input_schema
    if tool.output_schema is not None:
        yield f"{tool.name} output", tool.output_schema


async def test_every_published_schema_is_json_schema_2020_12_with_standard_keywords(demo: Runtime) -> None:
    tools = await _tools(demo)
    assert len(tools) == 24
    assert all(tool.output_schema is not None for tool in tools)
    for tool in tools:
        for label, schema in _schemas(tool):
            Draft202012Validator.check_schema(schema)  # raises SchemaError, naming the bad part
            for where, sub in subschemas(schema, label):
                unknown = set(sub) - KEYWORDS
                assert not unknown, f"{where}: keywords JSON Schema does not know: {sorted(unknown)}"


async def test_every_output_schema_ends_with_cut(demo: Runtime) -> None:
    """What a result left out (issue 33): every tool, including any added later, publishes `cut`."""
    tools = await _tools(demo)
    for tool in tools:
        assert tool.output_schema is not None, tool.name
        check_cut_published(tool.name, tool.output_schema)


async def test_every_integer_bound_is_published_as_minimum_and_maximum(demo: Runtime) -> None:
    bounds: dict[str, tuple[int | None, int | None]] = {}
    for tool in await _tools(demo):
        for name, prop in tool.input_schema["properties"].items():
            if prop.get("type") == "integer":
                bounds[f"{tool.name}.{name}"] = (prop.get("minimum"), prop.get("maximum"))
    # Every integer argument has a published lower bound (counts and offsets are never negative).
    assert all(low is not None for low, _high in bounds.values()), bounds
    expected = {
        "mg_search_threads.max_results": (1, 100),
        "mg_next_pass.max_threads": (1, 100),
        "mg_list_drafts.max_results": (1, 100),
        "mg_get_message.body_offset": (0, None),
    }
    assert {key: bounds.get(key) for key in expected} == expected
    # The body budgets (issue 21 may lower them) have a maximum, whatever it is now.
    for key in ("mg_get_message.max_body_length", "mg_get_thread.max_body_length"):
        low, high = bounds[key]
        assert low == 1 and high is not None, (key, bounds[key])


def _some_value(schema: dict[str, Any]) -> Any:
    """A value of the schema's type (validation of the argument under test fails first anyway)."""
    branch = next((b for b in schema.get("anyOf", [schema]) if b.get("type") != "null"), schema)
    kind = str(branch.get("type"))
    if "enum" in branch:
        return branch["enum"][0]
    return {"string": "x", "array": [], "boolean": False, "integer": branch.get("minimum", 1)}.get(kind, "x")


async def test_the_published_bounds_are_the_ones_validation_enforces(demo: Runtime, call: Call) -> None:
    checked = 0
    for tool in await _tools(demo):
        schema = tool.input_schema
        for name, prop in schema["properties"].items():
            if prop.get("type") != "integer":
                continue
            base = {arg: _some_value(schema["properties"][arg]) for arg in schema.get("required", [])}
            base["account"] = "osobni"
            for keyword, outside, words in (("minimum", -1, ">="), ("maximum", 1, "<=")):
                if keyword not in prop:
                    continue
                bound = prop[keyword]
                body = await error(call, demo, tool.name, **{**base, name: bound + outside})
                assert body["code"] == "invalid_input", (tool.name, name, body)
                assert f"`{name}`: expected a number {words} {bound}" in body["message"], body["message"]
                checked += 1
    assert checked >= 11  # every bound of the six integer arguments above, and any added since


async def test_descriptions_carry_no_source_indentation(demo: Runtime) -> None:
    for tool in await _tools(demo):
        assert tool.description is not None
        assert tool.description == inspect.cleandoc(tool.description), tool.name
        for line in tool.description.splitlines():
            assert line == line.strip(), f"{tool.name}: {line!r}"
        for label, schema in _schemas(tool):
            for where, sub in subschemas(schema, label):
                text = sub.get("description")
                if isinstance(text, str):
                    assert all(line == line.strip() for line in text.splitlines()), f"{where}: {text!r}"


def test_pydantic_bound_names_become_json_schema_keywords_at_every_depth() -> None:
    given = {
        "type": "object",
        "properties": {
            "ge": {"type": "integer", "ge": 1, "le": 5},  # a property may be called "ge": a name, not a bound
            "list": {"type": "array", "items": {"type": "number", "gt": 0, "lt": 1.5}},
            "either": {"anyOf": [{"type": "integer", "ge": 2, "minimum": 3}, {"type": "null"}]},
        },
        "$defs": {"Inner": {"type": "object", "additionalProperties": {"type": "integer", "le": 9}}},
        "default": {"ge": 1},  # a value, left alone
    }
    assert standard_schema(given) == {
        "type": "object",
        "properties": {
            "ge": {"type": "integer", "minimum": 1, "maximum": 5},
            "list": {"type": "array", "items": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1.5}},
            "either": {"anyOf": [{"type": "integer", "minimum": 3}, {"type": "null"}]},
        },
        "$defs": {"Inner": {"type": "object", "additionalProperties": {"type": "integer", "maximum": 9}}},
        "default": {"ge": 1},
    }


async def test_a_second_tools_list_converts_nothing_again(demo: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK hands out fresh copies of the same schemas on every tools/list; converting them
    again each time was two thirds of a tools/list's CPU. The second listing is the same, from the cache."""
    server = build_server(demo)
    first = await server.list_tools()
    conversions: list[int] = []

    def counted(schema: dict[str, Any]) -> dict[str, Any]:
        conversions.append(1)
        return standard_schema(schema)

    monkeypatch.setattr("mcp_multi_gmail.server.schema.standard_schema", counted)
    second = await server.list_tools()
    assert conversions == []
    assert [tool.model_dump() for tool in second] == [tool.model_dump() for tool in first]
