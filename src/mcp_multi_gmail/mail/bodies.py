"""Body windows: one message's (mg_get_message) and a whole thread's in two FETCHes (mg_get_thread).

A thread's bodies cost one FETCH of the structures (it rides on the summary FETCH) and one FETCH
of the chosen text parts, however many messages there are. Messages whose text sits at another
part number (a plain message beside one with attachments, "1" against "1.1") get one FETCH per
distinct part number: asking every message for every number would pull another message's
attachment bytes, and how Gmail answers for a part a message does not have is not documented.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from ..gmail.imap import Fetched, ImapSession
from ..gmail.parse import Part, attachment_parts, body_part, decode_body
from .results import AttachmentInfo

BodyFormat = Literal["text", "html"]

# The whole mg_get_thread result stays under this many characters; bodies share what is left.
THREAD_BUDGET = 200_000


@dataclass(frozen=True)
class BodyWindow:
    """The body fields mg_get_message and mg_get_thread return for one message."""

    body_format: BodyFormat | None
    body: str | None
    body_offset: int
    body_total_length: int
    body_truncated: bool
    attachments: list[AttachmentInfo] = field(default_factory=list)
    cut_by_budget: bool = False  # shortened because the thread's budget ran out, not by the window

    def fields(self) -> dict[str, object]:
        return {
            "body_format": self.body_format,
            "body": self.body,
            "body_offset": self.body_offset,
            "body_total_length": self.body_total_length,
            "body_truncated": self.body_truncated,
            "attachments": self.attachments,
        }


def attachment_list(structure: Sequence[Part] | None) -> list[AttachmentInfo]:
    return [
        AttachmentInfo(
            attachment_id=part.part_id,
            filename=part.filename,
            mime_type=part.mime_type,
            size_bytes=part.size,
            inline=part.disposition == "inline",
        )
        for part in attachment_parts(structure)
    ]


def overhead(structure: Sequence[Part] | None) -> int:
    """Characters a message's body fields take besides the body text (keys, the attachment list)."""
    listed = attachment_list(structure)
    return 160 + sum(len(a.model_dump_json()) + 40 for a in listed)


def decoded(chosen: Part | None, raw: bytes | None) -> tuple[BodyFormat | None, str | None]:
    """The chosen text part as text, with its format; (None, None) when there is none."""
    if chosen is None or raw is None:
        return None, None
    text = decode_body(raw, chosen.encoding, chosen.charset)
    return ("html" if chosen.mime_type == "text/html" else "text"), text


def window(
    body_format: BodyFormat | None,
    text: str | None,
    offset: int,
    limit: int,
    structure: Sequence[Part] | None,
) -> BodyWindow:
    total = len(text) if text is not None else 0
    start = min(offset, total)
    shown = text[start : start + limit] if text is not None else None
    return BodyWindow(
        body_format=body_format,
        body=shown,
        body_offset=start,
        body_total_length=total,
        body_truncated=shown is not None and start + len(shown) < total,
        attachments=attachment_list(structure),
    )


def thread_bodies(
    session: ImapSession,
    fetched: Mapping[int, Fetched],
    uids: Sequence[int],
    limit: int,
    budget: int,
) -> dict[int, BodyWindow]:
    """Body windows of `uids` (in the order given) from their fetched BODYSTRUCTUREs.

    Each window holds at most `limit` characters; together they hold at most `budget`, so the
    messages late in `uids` are the ones cut when the budget runs out."""
    chosen: dict[int, Part] = {}
    by_part: dict[str, list[int]] = {}
    for uid in uids:
        item = fetched.get(uid)
        part = body_part(item.parts) if item is not None else None
        if part is not None:
            chosen[uid] = part
            by_part.setdefault(part.part_id, []).append(uid)
    raw: dict[int, bytes] = {}
    for part_id, group in by_part.items():
        raw.update(session.fetch_same_part(group, part_id))
    windows: dict[int, BodyWindow] = {}
    left = max(budget, 0)
    for uid in uids:
        item = fetched.get(uid)
        structure = item.parts if item is not None else None
        body_format, text = decoded(chosen.get(uid), raw.get(uid))
        own = window(body_format, text, 0, limit, structure)
        if own.body is not None and len(own.body) > left:
            windows[uid] = replace(window(body_format, text, 0, left, structure), cut_by_budget=True)
        else:
            windows[uid] = own
        left -= len(windows[uid].body or "")
    return windows
