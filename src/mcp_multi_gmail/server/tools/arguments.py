"""Strict argument types with size bounds, and argument errors in words an assistant can act on.

Every tool parameter is built from these pieces, so the rules hold on every tool:

- booleans accept only JSON true/false (`Flag`, `OptionalFlag`): a string such as "yes" must
  never unlock anything, least of all a second send;
- integers accept numbers (and numeric strings, as the SDK allows) but not booleans (`Count`);
- every free-text input has a maximum length, published in the input schema (`maxLength`,
  `maxItems`) and checked by pydantic before the tool runs, so oversized input never reaches a
  connection. Use `Annotated[str, Field(max_length=MAX_..., description=...)]`.

The limits are far above anything a real user writes; they only stop runaway input.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, Strict, ValidationError
from pydantic_core import PydanticCustomError

from ...errors import MailError

MAX_ACCOUNT = 200  # account short names (and "all")
MAX_NAME = 200  # signature names
MAX_LABEL = 1_000  # Gmail label names are far shorter
MAX_ID = 1_000  # Message-IDs (RFC 5322 caps a header line at 998), thread ids, part numbers
MAX_IDS = 1_000  # ids in one call (mg_label_message, references)
MAX_TOKEN = 1_000  # page tokens and `since` boundaries
MAX_QUERY = 8_000  # a Gmail search of a few KB
MAX_ADDRESS = 320  # RFC 5321: 64 local part + @ + 255 domain
MAX_ADDRESSES = 100  # Gmail's own cap on recipients of one message (to, cc and bcc together: policy/sending.py)
MAX_SUBJECT = 2_000
MAX_BODY = 5_000_000  # characters; Gmail's message limit is 25 MB
MAX_HTML_BODY = 10_000_000
MAX_PATH = 4_096  # PATH_MAX on Linux
MAX_PATHS = 100  # attachments of one message


def _refuse_bool(value: Any) -> Any:
    # JSON true is a Python int: without this `max_results: true` would quietly mean 1.
    if isinstance(value, bool):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


def _refuse_number(value: Any) -> Any:
    # A Literal[False] branch would otherwise take JSON 0 as false.
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise PydanticCustomError("string_or_false", "Input should be a string, false or null")
    return value


Flag = Annotated[bool, Strict()]
OptionalFlag = Annotated[bool | None, Strict()]
Count = Annotated[int, BeforeValidator(_refuse_bool)]
NoNumber = BeforeValidator(_refuse_number)

Text = Annotated[str, Field(max_length=MAX_SUBJECT)]
Identifier = Annotated[str, Field(max_length=MAX_ID)]
Identifiers = Annotated[list[Identifier], Field(max_length=MAX_IDS)]
PageSize = Annotated[Count, Field(ge=1, le=100)]  # items on one page: threads, drafts
ThreadsPerPage = Annotated[PageSize, Field(description="Threads per page (1-100)")]
Token = Annotated[str, Field(max_length=MAX_TOKEN)]  # a page token or a `since` boundary
EmailAddress = Annotated[str, Field(max_length=MAX_ADDRESS)]
EmailAddresses = Annotated[list[EmailAddress], Field(max_length=MAX_ADDRESSES)]
FilePath = Annotated[str, Field(max_length=MAX_PATH)]
FilePaths = Annotated[list[FilePath], Field(max_length=MAX_PATHS)]


# ---------------------------------------------------------------- validation errors in words

_EXPECTED = {
    "bool_type": "JSON true or false",
    "bool_parsing": "JSON true or false",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "a whole number",
    "string_type": "a string",
    "string_unicode": "valid text (it holds unpaired surrogates: invalid UTF-8)",
    "list_type": "a list (JSON array)",
    "dict_type": "an object",
    "string_or_false": "a string, false or null",
}


def _expected(error: Any) -> str:
    kind: str = error["type"]
    ctx: dict[str, Any] = error.get("ctx") or {}
    if kind in _EXPECTED:
        return _EXPECTED[kind]
    if kind == "string_too_long":
        return f"at most {ctx['max_length']} characters"
    if kind == "string_too_short":
        return f"at least {ctx['min_length']} characters"
    if kind == "too_long":
        return f"at most {ctx['max_length']} items"
    if kind == "too_short":
        return f"at least {ctx['min_length']} items"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        sign = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}[kind]
        bound = next(iter(ctx.values()))
        return f"a number {sign} {bound}"
    if kind == "literal_error":
        return str(ctx.get("expected", "")).replace("False", "false").replace("True", "true")
    message: str = error["msg"]
    return message[0].lower() + message[1:] if message else kind


def _received(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        if len(value) <= 40:
            return f"the string {json.dumps(value, ensure_ascii=False)}"
        return f"a string of {len(value)} characters"
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _where(loc: tuple[int | str, ...]) -> str:
    # loc is (argument, item index..., union branch tag...): keep the argument and the indexes.
    name = str(loc[0]) if loc else "arguments"
    return name + "".join(f"[{part}]" for part in loc[1:] if isinstance(part, int))


def invalid_arguments(tool: str, error: ValidationError) -> MailError:
    """One invalid_input error naming every bad argument, what it expects and what came."""
    expected: dict[str, list[str]] = {}
    received: dict[str, str] = {}
    for item in error.errors(include_url=False):
        where = _where(item["loc"])
        if item["type"] == "missing":
            expected.setdefault(where, [])
            continue
        phrase = _expected(item)
        if phrase not in expected.setdefault(where, []):
            expected[where].append(phrase)
        received.setdefault(where, _received(item.get("input")))
    parts = []
    for where, phrases in expected.items():
        if not phrases:
            parts.append(f"`{where}`: required, but missing")
        else:
            parts.append(f"`{where}`: expected {' or '.join(phrases)}, received {received[where]}")
    plural = "argument" if len(parts) == 1 else "arguments"
    return MailError("invalid_input", f"Invalid {plural} for {tool}: " + "; ".join(parts) + ".")
