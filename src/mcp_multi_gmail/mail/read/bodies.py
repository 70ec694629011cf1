"""Body windows: one message's (mg_get_message) and a whole thread's in one or two FETCHes (mg_get_thread).

A thread's bodies cost one FETCH of the structures (it rides on the summary FETCH) and one FETCH
of the chosen text parts, however many messages there are; with `bodies="all"` on a short
thread the summary FETCH also brings the beginning of every message's part 1 (read.py,
TEXTS_AHEAD_MESSAGES), which is the whole text part of most messages, so often the second FETCH
is not needed. Messages whose text sits at another part number (a plain message beside one with
attachments, "1" against "1.1") get one FETCH per distinct part number: asking every message for
every number would pull another message's attachment bytes, and how Gmail answers for a part a
message does not have is not documented (every message has a part 1, RFC 3501 section 6.4.5).
"""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, NamedTuple

from pydantic import BaseModel, Field

from ...gmail.imap import Fetched, ImapSession
from ...gmail.parse.bodystructure import Part, attachment_parts, body_part
from ...gmail.parse.filenames import generated_name, type_for
from ...gmail.parse.transfer import (
    UU_ENCODINGS,
    Ignorable,
    UuBlock,
    decode_body,
    decode_bytes,
    decode_judged,
    decoded_size,
    judge,
    read_part,
    text_in_header,
    uu_blocks,
)
from ...htmltext import html_to_text
from ..core import budget
from ..core.preview import preview_of

BodyFormat = Literal["text", "html", "html_as_text"]


class AttachmentInfo(BaseModel):
    attachment_id: str = Field(description="Body part number; pass it to mg_get_attachment")
    filename: str | None
    mime_type: str
    size_bytes: int | None = Field(
        description="Decoded size in bytes. A base64 or uuencoded part not read yet: computed from its encoded "
        "size and the usual line length (76 characters for base64), within a few bytes when the sender kept to "
        "it; quoted-printable: the encoded size, an upper bound"
    )
    inline: bool
    filename_generated: bool = Field(
        default=False,
        description="true: the part has no name of its own; filename was made from its part number and type",
    )


def attachments_cut(field: str, message_id: str | None, start: int, shown: int, total: int) -> budget.Cut:
    """The `cut` entry of an attachment list that holds `shown` of a message's `total`
    attachments from `start` on (mg_get_message's attachments_offset): the offset that lists the
    next ones, or, on the last page, the one that lists them from the first."""
    after = start + shown
    if message_id is None:
        how = budget.no_rest("mg_get_message")
    elif after < total:
        how = f"mg_get_message with message_id={message_id} and attachments_offset={after} lists the ones after these"
    else:
        how = (
            f"These are the last ones; mg_get_message with message_id={message_id} and attachments_offset=0 "
            "lists them from the first"
        )
    return budget.Cut(field=field, shown=shown, total=total, how_to_get_the_rest=how)


def body_cut(field: str, shown: str, total: int, message_id: str | None, offset: int) -> budget.Cut:
    """The `cut` entry of a body window the budget ended early: where mg_get_message reads on."""
    at = offset + len(shown)
    how = (
        f"mg_get_message with message_id={message_id} and body_offset={at} reads on"
        if message_id
        else budget.no_rest("mg_get_message")
    )
    return budget.Cut(field=field, shown=len(shown), total=total, how_to_get_the_rest=how)


@dataclass(frozen=True)
class BodyWindow:
    """The body fields mg_get_message and mg_get_thread return for one message."""

    body_format: BodyFormat | None
    body: str | None
    body_offset: int
    body_total_length: int
    body_truncated: bool
    hidden_text_chars: int = 0
    attachments: list[AttachmentInfo] = field(default_factory=list)
    charset_used: str | None = None
    transfer_encoding_ignored: Ignorable | None = None  # the label the body part could not have (judge)
    text: str | None = None  # the whole decoded text (for the preview), not part of the result

    def fields(self) -> dict[str, object]:
        return {
            "body_format": self.body_format,
            "body": self.body,
            "body_offset": self.body_offset,
            "body_total_length": self.body_total_length,
            "body_truncated": self.body_truncated,
            "hidden_text_chars": self.hidden_text_chars,
            "attachments": self.attachments,
            "charset_used": self.charset_used,
            "transfer_encoding_ignored": self.transfer_encoding_ignored,
        }


def attachment_list(structure: Sequence[Part] | None, held: Mapping[str, bytes] | None = None) -> list[AttachmentInfo]:
    """The listed attachments; a part without a name is listed under a generated one. The size of a
    part whose bytes were read (`held`, by part number: the body, when it is listed too) is theirs
    decoded; any other is computed from BODYSTRUCTURE's encoded size (decoded_size)."""
    held = held or {}
    return [
        AttachmentInfo(
            attachment_id=part.part_id,
            filename=part.filename or generated_name(part.part_id, part.mime_type),
            mime_type=part.mime_type,
            size_bytes=(
                len(decode_judged(held[part.part_id], part.encoding, part.charset))
                if part.part_id in held
                else decoded_size(part.size, part.encoding, part.filename)
            ),
            inline=part.disposition == "inline",
            filename_generated=part.filename is None,
        )
        for part in attachment_parts(structure)
    ]


def content_of(session: ImapSession, uid: int, part: Part, raw: bytes | None) -> bytes | None:
    """A part's bytes as served; for a part of 0 octets, what its header holds after its fields.

    A server that ends a header only at the first empty line serves a part whose header is not
    followed by one (data right after "Content-Transfer-Encoding: base64", a separator line with a
    space in it) as 0 octets, its content left in the header (the emulator's BEHAVIOURS.md,
    "Broken MIME"). One more FETCH, only for such a part."""
    if raw or part.size != 0:
        return raw
    block = session.fetch_part(uid, "HEADER" if part.whole else f"{part.part_id}.MIME")
    return text_in_header(block or b"") or raw


def header_contents(
    session: ImapSession, uid: int, structure: Sequence[Part] | None, held: Mapping[str, bytes]
) -> dict[str, bytes]:
    """What the headers of a message's listed parts served as 0 octets hold (as content_of finds
    it), by part number, so that their listed size is that content's. One FETCH for all of them;
    none for a message without such a part."""
    sections = {
        ("HEADER" if part.whole else f"{part.part_id}.MIME"): part.part_id
        for part in attachment_parts(structure)
        if part.size == 0 and part.part_id not in held
    }
    if not sections:
        return {}
    blocks = session.fetch_parts(uid, list(sections))
    return {
        part_id: content
        for section, part_id in sections.items()
        if (content := text_in_header(blocks.get(section, b"")))
    }


def uu_block_name(part: Part, index: int, block: UuBlock) -> tuple[str, str, bool]:
    """(file name, MIME type, whether the name was made) of the `index`-th uuencoded file."""
    name = block.name or generated_name(f"{part.part_id}.{index}", "application/octet-stream")
    kind = type_for(name) or mimetypes.guess_type(name)[0] or "application/octet-stream"
    return name, kind, block.name is None


class Split(NamedTuple):
    """A text part's bytes once the uuencoded files are out (uu_split)."""

    data: bytes
    encoding: str  # the transfer encoding `data` has now
    files: list[AttachmentInfo]
    transfer_ignored: Ignorable | None = None  # the label the part could not have, when it was split


def uu_split(part: Part, raw: bytes) -> Split:
    """A plain text part without the uuencoded files inside it (`begin 644 name` … `end`, mail's
    way before MIME), the transfer encoding its bytes now have, and those files listed as
    attachments "<part>.<n>" (mg_get_attachment takes them back: attachments.py). A part without
    such files comes back as it is."""
    if part.mime_type != "text/plain" or part.encoding in UU_ENCODINGS:
        return Split(raw, part.encoding, [])
    judged = judge(raw, part.encoding, part.charset, text=True)  # read as the body's text
    data = decode_bytes(raw, judged.encoding)
    blocks = uu_blocks(data)
    if not blocks:
        return Split(raw, part.encoding, [])
    kept = bytearray()
    listed: list[AttachmentInfo] = []
    position = 0
    for index, block in enumerate(blocks, 1):
        kept += data[position : block.start]
        position = block.end
        name, mime_type, made = uu_block_name(part, index, block)
        listed.append(
            AttachmentInfo(
                attachment_id=f"{part.part_id}.{index}",
                filename=name,
                mime_type=mime_type,
                size_bytes=len(block.data(data)),
                inline=False,
                filename_generated=made,
            )
        )
    kept += data[position:]
    return Split(bytes(kept), "8bit", listed, judged.ignored)


def decoded(
    chosen: Part, raw: bytes, encoding: str | None, *, raw_html: bool = False
) -> tuple[BodyFormat, str, int, str, Ignorable | None]:
    """(format, text, hidden characters, charset used, transfer encoding ignored) of the chosen
    part, its bytes in `encoding` (uu_split's, once the uuencoded files are out), as mg_get_message
    shows it: the plain part as it is (text/enriched and text/richtext converted to what a reader
    sees); an HTML-only body converted to text without what it hides; raw HTML only when asked for."""
    text, used, ignored = read_part(raw, encoding, chosen.charset, chosen.mime_type)
    if chosen.mime_type != "text/html":
        return "text", text, 0, used, ignored
    if raw_html:
        return "html", text, 0, used, ignored
    converted = html_to_text(text)
    return "html_as_text", converted.text, converted.hidden_chars, used, ignored


def window(
    body_format: BodyFormat | None,
    text: str | None,
    offset: int,
    limit: int,
    structure: Sequence[Part] | None,
    hidden: int = 0,
    held: Mapping[str, bytes] | None = None,
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
        hidden_text_chars=hidden,
        attachments=attachment_list(structure, held),
        text=text,
    )


@dataclass
class ThreadTexts:
    """The text parts of a thread's chosen messages, read in one FETCH (per distinct part number)."""

    fetched: Mapping[int, Fetched]
    wanted: list[int]
    chosen: dict[int, Part]
    raw: dict[int, bytes]
    in_headers: dict[int, dict[str, bytes]] = field(default_factory=dict)  # header_contents, by UID
    # uu_split of each message's text, by UID: previews and windows both need it, so it runs once.
    _split: dict[int, Split] = field(default_factory=dict, init=False, repr=False)

    def _text(self, uid: int) -> tuple[Part, Split] | None:
        """The chosen part of `uid` and its bytes without the uuencoded files in them (uu_split);
        None when no text part was read."""
        part, raw = self.chosen.get(uid), self.raw.get(uid)
        if part is None or raw is None:
            return None
        if uid not in self._split:
            self._split[uid] = uu_split(part, raw)
        return part, self._split[uid]

    def previews(self) -> dict[int, str | None]:
        """The previews of the messages read whole, from their text (no FETCH of beginnings)."""
        found: dict[int, str | None] = {}
        for uid in self.wanted:
            text = self._text(uid)
            if text is None:
                found[uid] = None
                continue
            part, split = text
            found[uid] = preview_of(
                decode_body(split.data, split.encoding, part.charset, part.mime_type),
                html=part.mime_type == "text/html",
            )
        return found

    def windows(self, order: Sequence[int], limit: int) -> dict[int, BodyWindow]:
        """Body windows of the messages in `order`, each at most `limit` characters from the start.
        (How many of them fit one result is the caller's part: mail/core/budget.py.)"""
        windows: dict[int, BodyWindow] = {}
        for uid in order:
            item = self.fetched.get(uid)
            structure = item.parts if item is not None else None
            read = self._text(uid)
            body_format: BodyFormat | None = None
            body: str | None = None
            hidden, used, ignored = 0, None, None
            files: list[AttachmentInfo] = []
            held = dict(self.in_headers.get(uid, {}))
            if read is not None:
                part, split = read
                files = split.files
                body_format, body, hidden, used, ignored = decoded(part, split.data, split.encoding)
                ignored = split.transfer_ignored or ignored
                held[part.part_id] = self.raw[uid]
            shown = window(body_format, body, 0, limit, structure, hidden, held)
            windows[uid] = replace(
                shown, charset_used=used, transfer_encoding_ignored=ignored, attachments=shown.attachments + files
            )
        return windows


def read_texts(session: ImapSession, fetched: Mapping[int, Fetched], wanted: Sequence[int]) -> ThreadTexts:
    """Fetch the chosen text part of every wanted message (their BODYSTRUCTUREs are in `fetched`),
    unless the whole part came with them already (Fetched.first_part of part 1)."""
    chosen: dict[int, Part] = {}
    by_part: dict[str, list[int]] = {}
    raw: dict[int, bytes] = {}
    for uid in wanted:
        item = fetched.get(uid)
        part = body_part(item.parts) if item is not None else None
        if part is None:
            continue
        chosen[uid] = part
        ahead = item.first_part if item is not None else None
        if part.part_id == "1" and ahead is not None and len(ahead) == part.size:
            raw[uid] = ahead  # the whole part came with the summaries
        else:
            by_part.setdefault(part.part_id, []).append(uid)
    for part_id, group in by_part.items():
        raw.update(session.fetch_same_part(group, part_id))
    for uid, part in chosen.items():  # parts served as 0 octets: rare, one FETCH each
        if part.size == 0 and (content := content_of(session, uid, part, raw.get(uid))) is not None:
            raw[uid] = content
    in_headers: dict[int, dict[str, bytes]] = {}
    for uid in wanted:  # listed parts served as 0 octets: rare, one FETCH per message that has any
        item = fetched.get(uid)
        part = chosen.get(uid)
        held = {part.part_id: raw[uid]} if part is not None and uid in raw else {}
        if item is not None and (found := header_contents(session, uid, item.parts, held)):
            in_headers[uid] = found
    return ThreadTexts(fetched, list(wanted), chosen, raw, in_headers)
