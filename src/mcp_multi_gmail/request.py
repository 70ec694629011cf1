"""The outgoing request: one value from the draft and send tools through policy to SMTP.

`Request` is what the tool was asked to write; `Prepared` is the same request once policy passed
it, with what was resolved for it (sender, signature, the files read). Composition, the
content-derived Message-ID and the result all read these values; no layer copies their fields.
A bottom module: it imports nothing of the project at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .config.resolved import Signature


@dataclass(frozen=True)
class CalendarPart:
    """An iTIP message carried beside the text (RFC 6047): `text/calendar; method=...`."""

    method: str  # REPLY
    text: str  # the VCALENDAR, CRLF lines
    key: str  # what makes it this answer (UID, SEQUENCE, occurrence, attendee, answer, comment), not its DTSTAMP


@dataclass(frozen=True)
class Request:
    """The arguments of mg_save_draft / mg_send_message."""

    to: list[str]
    cc: list[str]
    bcc: list[str]
    subject: str | None  # None when replying: "Re: " + the answered message's subject
    body: str
    html_body: str | None
    in_reply_to: str | None
    references: list[str]
    quote_original: bool
    signature: str | bool | None  # a name, False for none, None for the default
    from_alias: str | None
    attachments: list[str]  # paths as given
    # text/plain alone, no HTML alternative: a mailto opt-out, whose body a list server reads as commands.
    text_only: bool = False
    # An invitation's answer (mg_respond_invitation): multipart/mixed of the text and this part.
    calendar: CalendarPart | None = None

    @classmethod
    def server_written(
        cls,
        to: str,
        subject: str | None,
        body: str,
        *,
        in_reply_to: str | None = None,
        from_alias: str | None = None,
        calendar: CalendarPart | None = None,
    ) -> Request:
        """A plain-text message the server writes itself (an opt-out mail, an invitation's answer):
        to one address, with no copy, HTML, quote, signature or file."""
        return cls(
            to=[to],
            cc=[],
            bcc=[],
            subject=subject,
            body=body,
            html_body=None,
            in_reply_to=in_reply_to,
            references=[],
            quote_original=False,
            signature=False,
            from_alias=from_alias,
            attachments=[],
            text_only=True,
            calendar=calendar,
        )


@dataclass(frozen=True)
class Prepared:
    """A request that passed every check, with its files read."""

    request: Request
    sender: tuple[str, str | None]  # From address and display name
    signature: Signature | None
    files: list[tuple[str, bytes, str]]  # (filename, content, MIME type)
    in_reply_to: str | None  # bare

    @property
    def recipients(self) -> list[str]:
        return [*self.request.to, *self.request.cc, *self.request.bcc]
