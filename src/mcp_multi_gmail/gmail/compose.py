"""Outgoing messages, built once: the same bytes serve a draft APPEND, SMTP and a Sent APPEND.

Pure: no sockets, no files. Every header value is checked by `headers.check_header_value`
before it reaches the `email` package, so a line break in a subject, name, address,
filename or message id is refused instead of becoming a header of its own.

Layout of a composed message (MIME multipart types: RFC 2046):

* `multipart/alternative` with `text/plain` and `text/html` (both always present), wrapped in
  `multipart/mixed` when there are attachments;
* the signature goes above the quote in both halves; the quote is Gmail's own markup;
* `data` keeps a `Bcc:` header (drafts, a Sent copy the server appends itself), `smtp_data`
  is the same bytes without it (the envelope still reaches those recipients).
"""

from __future__ import annotations

import hashlib
import html as html_lib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from email.errors import HeaderParseError
from email.headerregistry import Address, BaseHeader, HeaderRegistry
from email.message import EmailMessage
from email.policy import SMTP, Policy
from typing import Any, ClassVar, Literal

from ..config.resolved import Signature
from ..errors import MailError
from ..headers import address_problem, check_header_value, idna_address, show
from ..request import Prepared
from ..text import html_to_text, inner_body
from .parse.envelope import gmail_msgid_of

__all__ = [
    "Composed",
    "Draft",
    "Quote",
    "attribution",
    "compose",
    "content_message_id",
    "html_from_text",
    "quote_html",
    "quote_text",
]

QuoteLocale = Literal["cs", "en"]

# Gmail's quote markup; the class names are kept so clients collapse the quote.
_BLOCKQUOTE_OPEN = (
    '<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;'
    'border-left:1px solid rgb(204,204,204);padding-left:1ex">'
)

_CS_WEEKDAYS = ("po", "út", "st", "čt", "pá", "so", "ne")
_EN_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_EN_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

_BODY_CLOSE = re.compile(r"</body\s*>", re.IGNORECASE)

# RFC 2045 token characters for the type and subtype of an attachment.
_MIME_TOKEN = re.compile(r"[A-Za-z0-9!#$&^_.+-]+")
# A message id travels in headers on one line; anything longer is no real id.
_MAX_ID_LENGTH = 900
_DEFAULT_MIME = ("application", "octet-stream")


# --- data ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Quote:
    """The answered message, already fetched and decoded by the caller."""

    author_name: str | None
    author_address: str | None
    date: datetime | None  # the original's Date header (aware)
    text: str | None  # its text/plain body, decoded
    html: str | None  # its text/html body, decoded


@dataclass(frozen=True)
class Draft:
    """A prepared request with what was read for it: the subject it goes under and the quote."""

    prepared: Prepared
    subject: str  # the given subject, or "Re: " and the answered message's
    quote: Quote | None = None


@dataclass(frozen=True)
class Composed:
    message_id: str  # bare
    data: bytes  # the full message, with a Bcc header when there are Bcc recipients
    smtp_data: bytes  # the same bytes without the Bcc header (what goes over SMTP)
    quoted: bool  # a quote was actually added
    envelope_recipients: list[str]  # to + cc + bcc, de-duplicated case-insensitively, order kept


# --- headers that must never be RFC 2047-encoded -------------------------------------------


class _MessageIdsHeader(BaseHeader):
    """Message-ID / In-Reply-To / References: msg-ids folded between ids, never encoded.

    The stock unstructured header would turn a long Gmail id into encoded words, which
    breaks threading; the stock Message-ID header keeps only the first of several ids.
    The values reaching this class were validated (ASCII, no white space inside an id).
    """

    max_count: ClassVar[Literal[1] | None] = 1

    @classmethod
    def parse(cls, value: str, kwds: dict[str, Any]) -> None:
        kwds["decoded"] = " ".join(value.split())
        kwds["parse_tree"] = None  # fold() below does not use a parse tree

    def fold(self, *, policy: Policy) -> str:
        limit = policy.max_line_length or 998
        lines: list[str] = []
        current = f"{self.name}:"
        on_line = 0  # ids on the current line
        for token in str(self).split():
            if on_line and len(current) + 1 + len(token) > limit:
                lines.append(current)
                current, on_line = "", 0
            current += " " + token
            on_line += 1
        lines.append(current)
        return policy.linesep.join(lines) + policy.linesep


def _header_factory() -> HeaderRegistry:
    registry = HeaderRegistry()
    for name in ("message-id", "in-reply-to", "references"):
        registry.map_to_type(name, _MessageIdsHeader)
    return registry


# CRLF on output; 7bit so that non-ASCII bodies get quoted-printable or base64 (the package
# picks the shorter) rather than raw 8-bit, which every hop and APPEND accepts.
_POLICY = SMTP.clone(cte_type="7bit", header_factory=_header_factory())


# --- small helpers -------------------------------------------------------------------------


def _lf(text: str) -> str:
    """CRLF and lone CR normalised to LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _refuse(message: str) -> MailError:
    return MailError("invalid_input", message)


def _checked_text(field: str, text: str) -> str:
    """A body-like text: line endings normalised, no lone surrogates (they cannot be encoded)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _refuse(f"The {field} contains characters that cannot be encoded (lone surrogates).") from None
    return _lf(text)


def _plain_address(field: str, value: str) -> str:
    """One plain `local@domain` address (trimmed; a non-ASCII domain in its IDNA form)."""
    check_header_value(field, value)
    address = value.strip()
    problem = address_problem(address)
    if problem is None:
        return idna_address(address)
    advice = {
        "is not a plain e-mail address": (
            " Give one bare address such as name@example.com, without a display name, angle brackets, "
            "quotes, commas, semicolons or spaces."
        ),
        "has non-ASCII characters before the @, which Gmail cannot submit here": (
            " Only the domain part may contain national characters."
        ),
    }.get(problem, "")
    raise _refuse(f'The {field} "{show(address)}" {problem}.{advice}')


def _bare_id(field: str, value: str) -> str:
    """A message id without angle brackets; refused unless it is one ASCII token."""
    check_header_value(field, value)
    bare = value.strip()
    if bare.startswith("<") and bare.endswith(">"):
        bare = bare[1:-1].strip()
    if (
        not bare
        or len(bare) > _MAX_ID_LENGTH
        or not bare.isascii()
        or any(ch.isspace() or ch in "<>" or not ch.isprintable() for ch in bare)
    ):
        raise _refuse(
            f'The {field} "{show(value.strip())}" is not one message id. Give it as id@domain, with or '
            "without angle brackets, one id per entry."
        )
    return bare


def _mime_type(value: str) -> tuple[str, str]:
    check_header_value("attachment MIME type", value)
    main, _, sub = value.split(";", 1)[0].strip().lower().partition("/")
    if not _MIME_TOKEN.fullmatch(main) or not _MIME_TOKEN.fullmatch(sub):
        return _DEFAULT_MIME
    # Containers cannot be attached as base64 leaves (RFC 2046); send them as plain bytes.
    if main in ("multipart", "message"):
        return _DEFAULT_MIME
    return main, sub


def _dedupe(addresses: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    result: list[str] = []
    for address in addresses:
        key = address.lower()
        if key not in seen:
            seen.add(key)
            result.append(address)
    return result


def _append_html(document: str, addition: str) -> str:
    """`addition` after `document`; inside its body when it is a whole HTML document."""
    ends = list(_BODY_CLOSE.finditer(document))
    if ends:
        at = ends[-1].start()
        return document[:at] + addition + document[at:]
    return document + addition


def _escape(text: str) -> str:
    return html_lib.escape(text, quote=False)


def _text_as_html_lines(text: str) -> str:
    return "<br>".join(_escape(line) for line in _lf(text).split("\n"))


# --- HTML body, signature, quote -------------------------------------------------------------


def html_from_text(text: str) -> str:
    """Gmail's own shape: `<div dir="ltr">`, one `<div>` per line, `<div><br></div>` for a blank one."""
    lines = _lf(text).split("\n")
    inner = "".join(f"<div>{_escape(line)}</div>" if line.strip() else "<div><br></div>" for line in lines)
    return f'<div dir="ltr">{inner}</div>'


def _signature_parts(signature: Signature) -> tuple[str, str] | None:
    """(plain, html) of a signature, or None when it has no content at all."""
    markup = _lf(signature.html) if signature.html and signature.html.strip() else None
    text = _lf(signature.text) if signature.text and signature.text.strip() else None
    if text is None and markup is not None:
        text = html_to_text(markup)
    if text is None and markup is None:
        return None
    if markup is None:
        markup = f'<div dir="ltr">{_text_as_html_lines(text or "")}</div>'
    return text or "", markup


def _author(quote: Quote, locale: QuoteLocale) -> tuple[str | None, str | None]:
    """(display name, address) of the quoted author, white space collapsed."""
    name = " ".join((quote.author_name or "").split()) or None
    address = " ".join((quote.author_address or "").split()) or None
    if name is None and address is None:
        name = "(neznámý odesílatel)" if locale == "cs" else "(unknown sender)"
    return name, address


def _attribution_frame(quote: Quote, locale: QuoteLocale) -> tuple[str, str]:
    """The attribution text before and after the author."""
    when = quote.date.astimezone() if quote.date is not None else None  # server's local zone
    if locale == "cs":
        if when is None:
            return "Odesílatel ", " napsal:"
        weekday = _CS_WEEKDAYS[when.weekday()]
        return (
            f"Dne {weekday} {when.day}. {when.month}. {when.year} v {when.hour}:{when.minute:02d} odesílatel ",
            " napsal:",
        )
    if when is None:
        return "", " wrote:"
    weekday = _EN_WEEKDAYS[when.weekday()]
    month = _EN_MONTHS[when.month - 1]
    return f"On {weekday}, {when.day} {month} {when.year} at {when.hour:02d}:{when.minute:02d} ", " wrote:"


def attribution(quote: Quote, locale: QuoteLocale) -> str:
    """The line above a quote, e.g. `On Mon, 28 Sep 2026 at 14:05 Jan Novák <jan@example.com> wrote:`."""
    before, after = _attribution_frame(quote, locale)
    name, address = _author(quote, locale)
    author = f"{name} <{address}>" if name and address else name or address or ""
    return before + author + after


def _attribution_html(quote: Quote, locale: QuoteLocale) -> str:
    before, after = _attribution_frame(quote, locale)
    name, address = _author(quote, locale)
    link = ""
    if address:
        link = f'<a href="mailto:{html_lib.escape(address, quote=True)}">{_escape(address)}</a>'
    author = f"{_escape(name)} &lt;{link}&gt;" if name and address else link or _escape(name or "")
    return _escape(before) + author + _escape(after)


def _readable(quote: Quote) -> tuple[str, str] | None:
    """(text, html) of the quoted body, line endings normalised; None when both are empty."""
    text = _lf(quote.text or "")
    markup = _lf(quote.html or "")
    if not text.strip() and not markup.strip():
        return None
    return text, markup


def quote_text(quote: Quote, locale: QuoteLocale) -> str | None:
    """Attribution, newline, every original line prefixed `> ` (`>` alone for an empty line)."""
    readable = _readable(quote)
    if readable is None:
        return None
    text, markup = readable
    source = text if text.strip() else html_to_text(markup)
    lines = source.rstrip().lstrip("\n").split("\n")
    quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in lines)
    return f"{attribution(quote, locale)}\n{quoted}"


def quote_html(quote: Quote, locale: QuoteLocale) -> str | None:
    """Gmail's quote markup around the original HTML (or the escaped text when there is none)."""
    readable = _readable(quote)
    if readable is None:
        return None
    text, markup = readable
    inner = inner_body(markup) if markup.strip() else ""
    if not inner.strip():
        inner = _text_as_html_lines(text.rstrip().lstrip("\n"))
    return (
        '<div class="gmail_quote">'
        f'<div dir="ltr" class="gmail_attr">{_attribution_html(quote, locale)}<br></div>'
        f"{_BLOCKQUOTE_OPEN}{inner}</blockquote></div>"
    )


# --- the message -------------------------------------------------------------------------------


def _address_list(field: str, values: Sequence[str]) -> list[str]:
    if isinstance(values, str):
        raise TypeError(f"{field} must be a list of addresses, not a single string")
    return _dedupe(_plain_address(f"{field} address", value) for value in values)


def _references(given: Sequence[str], in_reply_to: str | None) -> list[str]:
    if isinstance(given, str):
        raise TypeError("references must be a list of message ids, not a single string")
    result: list[str] = []
    for entry in given:
        check_header_value("References", entry)
        # An entry may hold several ids separated by white space (a copied References header).
        for token in entry.split():
            bare = _bare_id("References", token)
            if bare not in result and gmail_msgid_of(bare) is None:  # a shown Gmail id names no header
                result.append(bare)
    if not result and in_reply_to is not None:
        result = [in_reply_to]
    return result


def _reply_header(in_reply_to: str | None) -> str | None:
    """The id In-Reply-To names: none when the answered message has no Message-ID (it was shown
    under its Gmail id, parse.envelope.gmail_id), since a header may name only a real one."""
    bare = _bare_id("In-Reply-To", in_reply_to) if in_reply_to is not None else None
    return None if bare is None or gmail_msgid_of(bare) is not None else bare


def _without_header(data: bytes, name: str) -> bytes:
    """`data` with every top-level `name:` header line (and its continuation lines) removed."""
    head, sep, body = data.partition(b"\r\n\r\n")
    prefix = name.lower().encode("ascii") + b":"
    kept: list[bytes] = []
    dropping = False
    for line in head.split(b"\r\n"):
        if line[:1] in (b" ", b"\t"):
            if dropping:
                continue
        else:
            dropping = line.lower().startswith(prefix)
            if dropping:
                continue
        kept.append(line)
    return b"\r\n".join(kept) + sep + body


def _attachment_part(filename: str, content: bytes, mime: str) -> EmailMessage:
    check_header_value("attachment filename", filename)
    name = filename.strip()
    if not name:
        raise _refuse("An attachment has an empty filename.")
    if not isinstance(content, bytes | bytearray | memoryview):
        raise TypeError("attachment content must be bytes")
    main, sub = _mime_type(mime)
    part = EmailMessage(policy=_POLICY)
    part.set_content(bytes(content), maintype=main, subtype=sub, cte="base64", disposition="attachment", filename=name)
    part.set_param("name", name, replace=True)  # older clients read the name from Content-Type
    return part


def _parts(prepared: Prepared) -> list[EmailMessage]:
    """The parts beside the text: an iTIP calendar first (RFC 6047 §2.4, in multipart/mixed and never
    inside an alternative, where Outlook organizers miss a REPLY), then the attachments."""
    calendar = prepared.request.calendar
    parts = [_calendar_part(calendar.method, calendar.text)] if calendar is not None else []
    return parts + [_attachment_part(name, content, mime) for name, content, mime in prepared.files]


def _calendar_part(method: str, text: str) -> EmailMessage:
    part = EmailMessage(policy=_POLICY)
    part.set_content(text, subtype="calendar", charset="utf-8", cte="quoted-printable", params={"method": method})
    return part


def _bodies(draft: Draft, quote_locale: QuoteLocale) -> tuple[str, str, bool]:
    """The text and HTML bodies with signature and quote, and whether a quote was added."""
    request = draft.prepared.request
    plain = _checked_text("body", request.body)
    markup = _checked_text("HTML body", request.html_body) if request.html_body is not None else None
    html = markup if markup is not None and markup.strip() else html_from_text(plain)

    if draft.prepared.signature is not None:
        signature = _signature_parts(draft.prepared.signature)
        if signature is not None:
            plain = f"{plain}\n\n{signature[0]}"
            html = _append_html(html, "<div><br></div>" + signature[1])

    quoted = False
    if draft.quote is not None:
        text_quote = quote_text(draft.quote, quote_locale)
        html_quote = quote_html(draft.quote, quote_locale)
        if text_quote is not None and html_quote is not None:
            plain = f"{plain}\n\n{text_quote}"
            html = _append_html(html, html_quote)
            quoted = True
    return _checked_text("message text", plain), _checked_text("message HTML", html), quoted


def _set_bodies(msg: EmailMessage, plain: str, html: str | None) -> None:
    """text/plain; charset="utf-8", with its HTML twin unless the message is text alone."""
    msg.set_content(plain)
    if html is not None:
        msg.add_alternative(html, subtype="html")


def compose(draft: Draft, *, message_id: str, date: datetime, quote_locale: QuoteLocale) -> Composed:
    """Build the message once; `data` for drafts and Sent copies, `smtp_data` for submission."""
    # Every header value is checked before anything is built.
    bare_message_id = _bare_id("Message-ID", message_id)
    check_header_value("Subject", draft.subject)
    subject = _checked_text("Subject", draft.subject)
    prepared = draft.prepared
    request = prepared.request
    sender = _plain_address("From address", prepared.sender[0])
    from_name: str | None = None
    if prepared.sender[1] is not None:
        check_header_value("From display name", prepared.sender[1])
        from_name = prepared.sender[1].strip() or None
    to = _address_list("To", request.to)
    cc = _address_list("Cc", request.cc)
    bcc = _address_list("Bcc", request.bcc)
    in_reply_to = _reply_header(prepared.in_reply_to)
    references = _references(request.references, in_reply_to)
    parts = _parts(prepared)

    plain, html, quoted = _bodies(draft, quote_locale)
    when = date if date.tzinfo is not None else date.replace(tzinfo=UTC)

    msg = EmailMessage(policy=_POLICY)
    try:
        msg["From"] = Address(display_name=from_name or "", addr_spec=sender)
    except (ValueError, HeaderParseError):
        raise _refuse(f'The From display name "{show(from_name or "")}" cannot be used.') from None
    if to:
        msg["To"] = [Address(addr_spec=a) for a in to]
    if cc:
        msg["Cc"] = [Address(addr_spec=a) for a in cc]
    if bcc:
        msg["Bcc"] = [Address(addr_spec=a) for a in bcc]
    msg["Subject"] = subject
    msg["Date"] = when
    msg["Message-ID"] = f"<{bare_message_id}>"
    if in_reply_to is not None:
        msg["In-Reply-To"] = f"<{in_reply_to}>"
    if references:
        msg["References"] = " ".join(f"<{ref}>" for ref in references)

    _set_bodies(msg, plain, None if request.text_only else html)
    if parts:
        msg.make_mixed()
        for part in parts:
            msg.attach(part)
    for sub in msg.walk():
        if sub is not msg:
            del sub["MIME-Version"]  # only the top level carries it

    data = msg.as_bytes()
    smtp_data = _without_header(data, "Bcc") if bcc else data
    return Composed(
        message_id=bare_message_id,
        data=data,
        smtp_data=smtp_data,
        quoted=quoted,
        envelope_recipients=_dedupe([*to, *cc, *bcc]),
    )


# --- duplicate-send protection -----------------------------------------------------------------


def content_message_id(prepared: Prepared, *, account: str, day: date) -> str:
    """A deterministic Message-ID (bare): the same send repeated on the same UTC day gets the same id.

    `<first 32 hex digits of a SHA-256>.mg@<sender's domain>` over a canonical JSON of the
    request (recipients trimmed, lower-cased and sorted per field; attachment contents hashed; the
    subject as given, since a derived "Re:" subject follows from in_reply_to) and the day. `day`
    is the UTC date of the send; a datetime is converted to its UTC date.
    """
    request = prepared.request
    sender = prepared.sender[0]
    if isinstance(day, datetime):
        day = (day if day.tzinfo is not None else day.replace(tzinfo=UTC)).astimezone(UTC).date()
    host = sender.strip().rpartition("@")[2]
    check_header_value("Message-ID domain", host)
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise _refuse(f'"{show(host)}" is not a valid domain for a Message-ID.') from None
    host = host.lower()
    if not host or any(ch.isspace() or ch in '<>@"\\' or not ch.isprintable() for ch in host):
        raise _refuse(f'"{show(host)}" is not a valid domain for a Message-ID.')

    def recipients(values: Sequence[str]) -> list[str]:
        return sorted(value.strip().lower() for value in values)

    reply = prepared.in_reply_to.strip() if prepared.in_reply_to is not None else None
    if reply is not None and reply.startswith("<") and reply.endswith(">"):
        reply = reply[1:-1].strip()
    canonical = {
        "v": 1,
        "account": account,
        "sender": sender.strip().lower(),
        "to": recipients(request.to),
        "cc": recipients(request.cc),
        "bcc": recipients(request.bcc),
        "subject": request.subject or "",
        "body": _lf(request.body),
        "html_body": _lf(request.html_body) if request.html_body is not None else None,
        "attachments": [[name, hashlib.sha256(content).hexdigest()] for name, content, _mime in prepared.files],
        "in_reply_to": reply or None,
        "day": day.isoformat(),
    }
    if request.calendar is not None:  # only then: every other message keeps the id it always had
        canonical["calendar"] = request.calendar.key
    encoded = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    digest = hashlib.sha256(encoded.encode("ascii")).hexdigest()[:32]
    return f"{digest}.mg@{host}"
