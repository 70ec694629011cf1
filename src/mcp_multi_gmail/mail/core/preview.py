"""Previews: the first 300 characters a message says, for deciding without reading it whole.

A page of messages costs one extra FETCH: the beginnings of every message's text part are asked
for together (`BODY.PEEK[part]<0.n>`), never one command per message. The text is plain,
whitespace collapsed, without quoted history and signatures where they can be recognised, and an
HTML-only body is converted as mg_get_message converts it (hidden text left out).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ...gmail.imap import Fetched, ImapSession
from ...gmail.parse.bodystructure import Part, body_part
from ...gmail.parse.transfer import decode_body
from ...htmltext import html_to_text

PREVIEW_CHARS = 300
# Bytes asked for per part: enough for 300 characters after quoted-printable encoding of a
# language with diacritics; HTML carries its markup (and often a <head> full of styles) first.
TEXT_BYTES = 4096
HTML_BYTES = 24576

_SIGNATURE = re.compile(r"^-- ?$")
# Where a reply's quoted history starts: attribution lines of the common mail programs, in the
# languages this server's users write in, and Outlook's separators.
_HISTORY = re.compile(
    r"^(?:On .{4,200}wrote:?"
    r"|Dne .{4,200}napsal(?:a|\(a\))?:?"
    r"|Am .{4,200}schrieb .{1,200}:?"
    r"|-{2,}\s*(?:Original Message|Původní zpráva|Puvodni zprava)\s*-{2,}"
    r"|_{10,}"
    r"|(?:From|Od): .{0,200}@.{1,200}"
    r")$",
    re.IGNORECASE,
)
# A wrapped attribution: its last line ends like this, its first starts with "On"/"Dne"/"Am".
_ATTRIBUTION_END = re.compile(r"(?:wrote|napsal|napsala|napsal\(a\)|schrieb):$", re.IGNORECASE)
_ATTRIBUTION_START = re.compile(r"^(?:On|Dne|Am) ", re.IGNORECASE)
_FORWARD = re.compile(
    r"^-{3,}\s*(?:Forwarded message|Přeposlaná zpráva|Preposlana zprava|Weitergeleitete Nachricht)\s*-{3,}$",
    re.IGNORECASE,
)
_SPACES = re.compile(r"\s+")


def _own_words(text: str) -> str:
    """The part of a plain body the sender wrote now: before the signature and quoted history."""
    kept: list[str] = []
    for line in text.split("\n"):
        bare = line.strip()
        if _SIGNATURE.match(line.rstrip("\r")) or _HISTORY.match(bare):
            break
        if _ATTRIBUTION_END.search(bare):
            if kept and _ATTRIBUTION_START.match(kept[-1].strip()):
                kept.pop()
            break
        if _FORWARD.match(bare):
            if any(k.strip() for k in kept):
                break  # the forwarder's own note comes first; the forwarded mail is history
            continue  # a bare forward: what was forwarded is the content
        if bare.startswith(">"):
            continue
        kept.append(line)
    return "\n".join(kept)


def preview_of(text: str, *, html: bool) -> str:
    """Plain, collapsed, at most PREVIEW_CHARS characters (an ellipsis marks a cut)."""
    if html:
        text = html_to_text(text, skip_quotes=True).text
    words = _SPACES.sub(" ", _own_words(text)).strip()
    if not words:  # nothing but quotes: show the start of what there is rather than nothing
        words = _SPACES.sub(" ", text).strip()
    words = words.rstrip("\ufffd")  # a multi-byte character cut by the byte range
    if len(words) <= PREVIEW_CHARS:
        return words
    return words[: PREVIEW_CHARS - 1].rstrip() + "…"


def previews(session: ImapSession, items: Iterable[Fetched]) -> dict[int, str | None]:
    """uid → preview for messages fetched with BODYSTRUCTURE; None where there is no text part."""
    chosen: dict[int, Part] = {}
    sizes: dict[str, int] = {}
    result: dict[int, str | None] = {}
    for item in items:
        part = body_part(item.parts)
        result[item.uid] = None
        if part is None:
            continue
        chosen[item.uid] = part
        wanted = HTML_BYTES if part.mime_type == "text/html" else TEXT_BYTES
        sizes[part.part_id] = max(sizes.get(part.part_id, 0), wanted)
    beginnings = session.fetch_beginnings(sorted(chosen), sizes)
    for uid, part in chosen.items():
        raw = beginnings.get(uid, {}).get(part.part_id)
        if raw is None:
            continue
        text = decode_body(raw, part.encoding, part.charset, part.mime_type)
        result[uid] = preview_of(text, html=part.mime_type == "text/html")
    return result
