"""The iTIP REPLY that answers an invitation (RFC 5546 §3.2.3), as text for an iMIP message (RFC 6047).

It holds only what §3.2.3 asks for: the one replying ATTENDEE with its PARTSTAT (as the
invitation addressed it, which may be an alias), ORGANIZER, UID, SEQUENCE, DTSTAMP, and
RECURRENCE-ID when the invitation was for one occurrence; a COMMENT when the user wrote one.
Several ATTENDEE lines for one person's addresses are known to break an organizer's update,
so there is never more than one.
"""

from __future__ import annotations

from datetime import UTC, datetime

from .parse.icalendar import Component, Property

PRODID = "-//mcp-multi-gmail//iTIP reply//EN"
PARTSTATS = {"accepted": "ACCEPTED", "declined": "DECLINED", "tentative": "TENTATIVE"}
# Parameters of the invitation's ATTENDEE line a reply keeps; RSVP asks for a reply and does not belong in one.
_ATTENDEE_PARAMS = ("CN", "CUTYPE", "ROLE", "DELEGATED-FROM", "DELEGATED-TO", "SENT-BY", "EMAIL")
_LIMIT = 75  # octets per line before folding (RFC 5545 §3.1)


def _param_value(value: str) -> str:
    """RFC 6868 escapes, and quotes around a value that needs them (RFC 5545 §3.2)."""
    escaped = value.replace("^", "^^").replace("\r\n", "^n").replace("\n", "^n").replace('"', "^'")
    return f'"{escaped}"' if any(ch in escaped for ch in ",;:") else escaped


def escape_text(value: str) -> str:
    """A TEXT value (RFC 5545 §3.3.11)."""
    text = value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
    return text.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n")


def content_line(name: str, params: dict[str, list[str]], value: str) -> str:
    head = name + "".join(f";{key}={','.join(_param_value(v) for v in values)}" for key, values in params.items())
    return fold(f"{head}:{value}")


def fold(line: str) -> str:
    """Folded at 75 octets, never inside a UTF-8 character."""
    data = line.encode("utf-8")
    if len(data) <= _LIMIT:
        return line
    pieces: list[str] = []
    start = 0
    limit = _LIMIT
    while start < len(data):
        end = min(start + limit, len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:  # a continuation byte: back off
            end -= 1
        pieces.append(data[start:end].decode("utf-8"))
        start = end
        limit = _LIMIT - 1  # the space that starts a continuation line counts
    return "\r\n ".join(pieces)


def _copy(prop: Property) -> str:
    return content_line(prop.name, prop.params, prop.value)


def reply_calendar(
    event: Component, attendee: Property, response: str, comment: str | None, now: datetime | None = None
) -> str:
    """The VCALENDAR of a REPLY to `event` from `attendee` (its line as the invitation had it)."""
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    params = {key: attendee.params[key] for key in _ATTENDEE_PARAMS if key in attendee.params}
    params["PARTSTAT"] = [PARTSTATS[response]]
    lines = [
        "BEGIN:VCALENDAR",
        f"PRODID:{PRODID}",
        "VERSION:2.0",
        "CALSCALE:GREGORIAN",
        "METHOD:REPLY",
        "BEGIN:VEVENT",
    ]
    for name in ("UID", "SEQUENCE", "RECURRENCE-ID", "ORGANIZER", "SUMMARY"):
        prop = event.first(name)
        if prop is not None:
            lines.append(_copy(prop))
    if event.first("SEQUENCE") is None:
        lines.append("SEQUENCE:0")
    lines.append(f"DTSTAMP:{stamp}")
    lines.append(content_line("ATTENDEE", params, attendee.value.strip()))
    if comment:
        lines.append(fold(f"COMMENT:{escape_text(comment)}"))
    lines += ["END:VEVENT", "END:VCALENDAR"]
    return "\r\n".join(lines) + "\r\n"
