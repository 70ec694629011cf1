"""iCalendar (RFC 5545) files as a tree of components, read leniently.

Real-world files break the RFC in known ways, and each is tolerated here:
- lines are unfolded on the raw bytes before any decoding, because a fold may fall inside a
  multi-byte UTF-8 character (RFC 5545 §3.1 folds at 75 octets, not characters);
- a byte-order mark, CRLF, bare LF, stray CRs and blank lines;
- text that is not UTF-8 (Latin-1 from older Outlook versions): the declared charset, else
  Windows-1252, decodes it;
- parameter values quoted or not, with RFC 6868 `^` escapes; a colon inside a quoted value;
- an END that does not match its BEGIN closes up to the matching BEGIN.
Nothing here raises on bad input except `CalendarError`, with a short reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..parse.charsets import codec_for

_BOM = b"\xef\xbb\xbf"
# More than this many content lines is not an invitation a person wrote; stop reading.
MAX_LINES = 20_000
MAX_DEPTH = 8
_TIME_PROPERTIES = frozenset({"DTSTART", "DTEND", "DUE", "RECURRENCE-ID", "EXDATE", "RDATE"})
# A caret before n, ' or ^ (RFC 6868); a backslash before any character (RFC 5545 §3.3.11).
_CARET_ESCAPE = re.compile(r"\^([n'^])")
_CARET_MEANS = {"n": "\n", "'": '"', "^": "^"}
_TEXT_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


class CalendarError(ValueError):
    """A calendar that cannot be read at all; the message is the reason, for the assistant."""


@dataclass(frozen=True)
class Property:
    name: str
    params: dict[str, list[str]]
    value: str

    def param(self, name: str) -> str | None:
        values = self.params.get(name.upper())
        return values[0] if values else None


@dataclass
class Component:
    name: str
    properties: list[Property] = field(default_factory=list)
    children: list[Component] = field(default_factory=list)

    def first(self, name: str) -> Property | None:
        wanted = name.upper()
        return next((prop for prop in self.properties if prop.name == wanted), None)

    def all(self, name: str) -> list[Property]:
        wanted = name.upper()
        return [prop for prop in self.properties if prop.name == wanted]

    def text(self, name: str) -> str | None:
        prop = self.first(name)
        return unescape_text(prop.value) if prop is not None else None

    def walk(self, name: str) -> list[Component]:
        """Every descendant component of that name, depth first."""
        found: list[Component] = []
        for child in self.children:
            if child.name == name.upper():
                found.append(child)
            found.extend(child.walk(name))
        return found


def _raw_lines(data: bytes) -> list[bytes]:
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    if b"\n" not in data:  # a file whose only line ends are CRs
        return data.split(b"\r")
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"").split(b"\n")


def unfold(data: bytes) -> list[bytes]:
    """Logical content lines, unfolded on bytes (RFC 5545 §3.1); blank lines dropped."""
    lines: list[bytes] = []
    for raw in _raw_lines(data):
        if raw[:1] in (b" ", b"\t"):
            if lines:
                lines[-1] += raw[1:]
            continue
        if raw.strip():
            lines.append(raw)
    return lines


def _decoder(lines: list[bytes], charset: str | None) -> str:
    """One codec for the whole file: UTF-8 when it is valid, else the declared one or cp1252."""
    try:
        b"\n".join(lines).decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        declared = codec_for(charset) if charset else "utf-8"
        return declared if declared not in {"utf-8", "utf_8"} else "cp1252"


def _rfc6868(value: str) -> str:
    """RFC 6868 parameter escapes: ^n newline, ^' double quote, ^^ caret (any other caret stays)."""
    return _CARET_ESCAPE.sub(lambda escape: _CARET_MEANS[escape[1]], value)


def _param_values(line: str, index: int, name: str) -> tuple[list[str], int]:
    """The values of one parameter from `index` (just after "="), and where they end."""
    length = len(line)
    values: list[str] = []
    while True:
        if index < length and line[index] == '"':
            end = line.find('"', index + 1)
            if end < 0:  # unterminated quote: the rest up to the last colon
                end = line.rfind(":")
                values.append(line[index + 1 : end])
                return values, end
            values.append(_rfc6868(line[index + 1 : end]))
            index = end + 1
        else:
            start = index
            while index < length and line[index] not in ",;:":
                index += 1
            # An unquoted TZID with a colon, "(UTC-03:00) Brasília": date-time values hold no
            # colon, so the value starts after the last one.
            while name in _TIME_PROPERTIES and index < length and line[index] == ":" and ":" in line[index + 1 :]:
                index = line.index(":", index + 1)
            values.append(_rfc6868(line[start:index].strip()))
        if index < length and line[index] == ",":
            index += 1
            continue
        return values, index


def parse_line(line: str) -> Property | None:
    """NAME;PARAM=value,"quoted":VALUE -> Property; None for a line without a colon."""
    index = 0
    length = len(line)
    while index < length and line[index] not in ";:":
        index += 1
    name = line[:index].strip().upper()
    if not name or index >= length:
        return None
    params: dict[str, list[str]] = {}
    while index < length and line[index] == ";":
        index += 1
        start = index
        while index < length and line[index] not in "=;:":
            index += 1
        pname = line[start:index].strip().upper()
        values: list[str] = []
        if index < length and line[index] == "=":
            values, index = _param_values(line, index + 1, name)
        if pname:
            params.setdefault(pname, []).extend(values)
    if index >= length or line[index] != ":":
        return None
    return Property(name, params, line[index + 1 :])


def unescape_text(value: str) -> str:
    """A TEXT value (RFC 5545 §3.3.11): \\n newline, \\, \\; \\\\ literal."""
    return _TEXT_ESCAPE.sub(lambda escape: "\n" if escape[1] in "nN" else escape[1], value)


def read_calendar(data: bytes, charset: str | None = None) -> Component:
    """The VCALENDAR of a file (the first one when there are several)."""
    lines = unfold(data)
    if not lines:
        raise CalendarError("the calendar part is empty")
    if len(lines) > MAX_LINES:
        raise CalendarError(f"the calendar has more than {MAX_LINES} lines")
    codec = _decoder(lines, charset)
    root = Component("ROOT")
    stack = [root]
    for raw in lines:
        prop = parse_line(raw.decode(codec, "replace"))
        if prop is None:
            continue
        if prop.name == "BEGIN":
            if len(stack) > MAX_DEPTH:
                raise CalendarError("components are nested too deep")
            child = Component(prop.value.strip().upper())
            stack[-1].children.append(child)
            stack.append(child)
        elif prop.name == "END":
            ending = prop.value.strip().upper()
            names = [component.name for component in stack]
            if ending in names[1:]:
                del stack[len(names) - 1 - names[::-1].index(ending) :]
        elif len(stack) > 1:
            stack[-1].properties.append(prop)
    calendars = [child for child in root.children if child.name == "VCALENDAR"]
    if not calendars:
        # A bare VEVENT without its VCALENDAR still says what, when and who.
        if root.children:
            return Component("VCALENDAR", children=root.children)
        raise CalendarError("no BEGIN:VCALENDAR in the calendar part")
    return calendars[0]
