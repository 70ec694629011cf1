"""The list fields of a message, and the facts an unsubscribe is decided on.

- `List-Unsubscribe` (RFC 2369 section 3.2): angle-bracketed URIs separated by commas, in order of
  preference, with comments in parentheses; white space inside the brackets is ignored, and the
  first item that is not a bracketed URI ends the list (so a field that does not start with `<`,
  comments aside, offers nothing).
- `List-Unsubscribe-Post` (RFC 8058 section 3.1): `List-Unsubscribe=One-Click` marks the HTTPS URI
  as one-click.
- `List-Id` (RFC 2919): an optional phrase and the `<id>`.
- `mailto:` URLs (RFC 6068): addresses, `subject=` and `body=`, percent-encoded UTF-8.

`list_facts` reads all of them from one header block together with the DKIM-Signature fields and
Gmail's own verdict, and states which fields a signature that Gmail passed covers. It decides
nothing: the policy module does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.utils import getaddresses
from urllib.parse import unquote

from ...text import clean
from . import dkim
from .authresults import gmail_dkim_results, ordered_headers
from .encoded_words import decode_words

LIST_UNSUBSCRIBE = "list-unsubscribe"
LIST_UNSUBSCRIBE_POST = "list-unsubscribe-post"
ONE_CLICK = "List-Unsubscribe=One-Click"
# What the overview reads of every message of its query: enough to group and count.
SCAN_FIELDS = ("LIST-ID", "LIST-UNSUBSCRIBE", "FROM")
# What an unsubscribe is decided on: the list fields, the signatures, and Gmail's verdict with the
# delivery trace above it (authresults.AUTH_FIELDS: without the trace the verdict is not Gmail's).
DECISION_FIELDS = (
    "LIST-ID",
    "LIST-UNSUBSCRIBE",
    "LIST-UNSUBSCRIBE-POST",
    "FROM",
    "DKIM-SIGNATURE",
    "AUTHENTICATION-RESULTS",
    "ARC-AUTHENTICATION-RESULTS",
    "RECEIVED",
    "RECEIVED-SPF",
)

_WSP = re.compile(r"[ \t\r\n]+")


# --------------------------------------------------------------------------- List-Unsubscribe


def _skip_comments(text: str, at: int) -> int:
    """The position after white space and (nested, escaped) comments starting at `at`."""
    depth = 0
    while at < len(text):
        ch = text[at]
        if depth and ch == "\\":
            at += 2
            continue
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif not depth and ch not in " \t\r\n":
            return at
        at += 1
    return at


def unsubscribe_uris(value: str) -> list[str]:
    """The URIs of a List-Unsubscribe field, in the sender's order of preference (RFC 2369)."""
    uris: list[str] = []
    at = _skip_comments(value, 0)
    while at < len(value) and value[at] == "<":
        end = value.find(">", at)
        if end < 0:
            break  # an unclosed bracket: nothing after it can be read
        uri = _WSP.sub("", value[at + 1 : end])
        if uri:
            uris.append(uri)
        at = _skip_comments(value, end + 1)
        if at >= len(value) or value[at] != ",":
            break  # anything but a comma after a URI ends the list
        at = _skip_comments(value, at + 1)
    return uris


def is_one_click(value: str) -> bool:
    """A List-Unsubscribe-Post value that asks for one-click (RFC 8058 section 3.1)."""
    return _WSP.sub("", value).casefold() == ONE_CLICK.casefold()


# --------------------------------------------------------------------------- List-Id


@dataclass(frozen=True)
class ListId:
    id: str  # what stands in the angle brackets
    name: str | None  # the phrase before it, decoded; None when there is none


def list_id(value: str) -> ListId | None:
    """`phrase <list-label.namespace>` (RFC 2919 section 3); a bare id without brackets is taken as it is."""
    text = value.strip()
    start, end = text.rfind("<"), text.rfind(">")
    if 0 <= start < end:
        ident = _WSP.sub("", text[start + 1 : end])
        phrase = text[:start].strip()
    elif text and not _WSP.search(text) and "<" not in text and ">" not in text:
        ident, phrase = text, ""
    else:
        return None
    if not ident:
        return None
    name = clean(decode_words(phrase.strip('"')) or "").strip() if phrase else ""
    return ListId(clean(ident), name or None)


# --------------------------------------------------------------------------- mailto (RFC 6068)


@dataclass(frozen=True)
class Mailto:
    """What a mailto: URL asks for: its recipients (the path and any to= field) and the fields it sets."""

    addresses: tuple[str, ...]
    subject: str | None
    body: str | None
    cc_or_bcc: bool  # the URL adds cc= or bcc= recipients
    other_fields: tuple[str, ...]  # header fields it names besides to/cc/bcc/subject/body, lower-cased


def _decoded(text: str) -> str:
    return unquote(text, encoding="utf-8", errors="replace")


def mailto(uri: str) -> Mailto | None:
    """A `mailto:` URI's recipients and fields, percent-decoded as UTF-8; None for another scheme."""
    scheme, colon, rest = uri.partition(":")
    if not colon or scheme.lower() != "mailto":
        return None
    path, _, query = rest.partition("?")
    addresses = [_decoded(a).strip() for a in path.split(",") if a.strip()]
    subject: str | None = None
    body: str | None = None
    cc_or_bcc = False
    others: list[str] = []
    for pair in query.split("&") if query else []:
        name, _, raw = pair.partition("=")
        key = _decoded(name).strip().lower()
        content = _decoded(raw)
        if key == "to":
            addresses.extend(a.strip() for a in content.split(",") if a.strip())
        elif key in ("cc", "bcc"):
            cc_or_bcc = cc_or_bcc or bool(content.strip())
        elif key == "subject" and subject is None:
            subject = content
        elif key == "body" and body is None:
            body = content
        elif key:
            others.append(key)
    return Mailto(tuple(addresses), subject, body, cc_or_bcc, tuple(others))


# --------------------------------------------------------------------------- the facts of a message


@dataclass(frozen=True)
class ListFacts:
    """What one message's header says about leaving its list, and which of it Gmail vouches for."""

    list_id: ListId | None
    sender: str | None  # the From address, lower-cased
    sender_name: str | None
    unsubscribe_fields: int  # how many List-Unsubscribe fields the header has
    uris: tuple[str, ...]  # of the first List-Unsubscribe field
    post_fields: int
    one_click_post: bool  # every List-Unsubscribe-Post field says List-Unsubscribe=One-Click
    gmail_verdict: bool  # Gmail's own Authentication-Results is there (below its delivery trace)
    dkim_results: tuple[str, ...]  # the result tokens of Gmail's dkim= results, in order
    matched: tuple[dkim.Signature, ...]  # the signatures that a dkim=pass of Gmail's speaks of

    @property
    def group(self) -> str | None:
        """What the message is grouped by: its List-Id, else its sender's address."""
        if self.list_id is not None:
            return "list:" + self.list_id.id.lower()
        return "from:" + self.sender if self.sender else None

    def signed_by(self, *fields: str) -> dkim.Signature | None:
        """A passing signature that covers every instance of each field (None when none does)."""
        counts = {LIST_UNSUBSCRIBE: self.unsubscribe_fields, LIST_UNSUBSCRIBE_POST: self.post_fields}
        for sig in self.matched:
            if all(sig.covers(name, counts.get(name, 1)) for name in fields):
                return sig
        return None

    def signers(self, *fields: str) -> frozenset[str]:
        """The domains of every passing signature that covers every instance of each field."""
        counts = {LIST_UNSUBSCRIBE: self.unsubscribe_fields, LIST_UNSUBSCRIBE_POST: self.post_fields}
        return frozenset(
            sig.domain for sig in self.matched if all(sig.covers(name, counts.get(name, 1)) for name in fields)
        )

    def first(self, scheme: str) -> str | None:
        """The first URI of the field with this scheme, given in lower case (schemes are
        case-insensitive, RFC 3986 section 3.1): the sender's preferred one."""
        prefix = scheme + ":"
        return next((uri for uri in self.uris if uri.lower().startswith(prefix)), None)


def _sender(values: list[str]) -> tuple[str | None, str | None]:
    if not values:
        return None, None
    [(name, address), *_rest] = getaddresses([values[0]]) or [("", "")]
    address = clean(address).strip().lower()
    shown = clean(decode_words(name) or "").strip()
    return (address if "@" in address else None), (shown or None)


def list_facts(header_block: bytes) -> ListFacts:
    """The list fields, signatures and Gmail's DKIM verdict of one message's header block."""
    fields: dict[str, list[str]] = {}
    for name, value in ordered_headers(header_block or b""):
        fields.setdefault(name, []).append(value)
    unsubscribe = fields.get(LIST_UNSUBSCRIBE, [])
    posts = fields.get(LIST_UNSUBSCRIBE_POST, [])
    ids = [found for found in (list_id(v) for v in fields.get("list-id", [])) if found is not None]
    sender, sender_name = _sender(fields.get("from", []))
    results = gmail_dkim_results(header_block or b"")
    sigs = dkim.signatures(fields.get("dkim-signature", []))
    return ListFacts(
        list_id=ids[0] if ids else None,
        sender=sender,
        sender_name=sender_name,
        unsubscribe_fields=len(unsubscribe),
        uris=tuple(unsubscribe_uris(unsubscribe[0])) if unsubscribe else (),
        post_fields=len(posts),
        one_click_post=bool(posts) and all(is_one_click(v) for v in posts),
        gmail_verdict=results is not None,
        dkim_results=tuple(r.result or "unknown" for r in results or []),
        matched=tuple(dkim.passed(results or [], sigs)),
    )
