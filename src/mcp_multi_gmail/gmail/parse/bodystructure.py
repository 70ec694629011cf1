"""BODYSTRUCTURE as a flat list of leaf parts, and which of them are the body and the attachments.

Parameters are decoded per RFC 2231 (continuations, charset'language'value) and RFC 2047.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import unquote_to_bytes

from ...text import clean
from .charsets import atom_raw, atom_text, decode_text, undeclared
from .encoded_words import decode_words
from .envelope import bare_id


@dataclass(frozen=True)
class Part:
    """One leaf of BODYSTRUCTURE. `part_id` is the RFC 3501 section number for BODY.PEEK[...]."""

    part_id: str
    mime_type: str  # lower case, "text/plain"
    charset: str | None = None  # lower case, as declared
    encoding: str = "7bit"  # Content-Transfer-Encoding, lower case
    size: int | None = None  # encoded size in octets
    disposition: str | None = None  # "attachment", "inline", … lower case
    filename: str | None = None  # disposition filename, else Content-Type name; decoded, cleaned
    content_id: str | None = None  # Content-ID without angle brackets (what "cid:" URLs use)
    # The message's only part (its MIME header is the message's HEADER); where it sits, not what it is.
    whole: bool = field(default=False, compare=False)


_DISPOSITIONS = ("attachment", "inline")
_MAX_DEPTH = 64  # deeper nesting is junk (and would exhaust the recursion limit)
_EXTENDED_PARAM = re.compile(r"^(?P<name>[^*]+)\*(?:(?P<section>[0-9]{1,3})(?P<encoded>\*)?)?$")
# Up to 20 digits: every size or count IMAP sends fits, and int() never meets a huge string.
_ASCII_NUMBER = re.compile(r"[0-9]{1,20}")


def _token(value: object) -> str | None:
    text = atom_text(value)
    if text is None:
        return None
    return text.strip().lower() or None


def _int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value >= 0 else None
    text = atom_text(value)
    # ASCII digits only: str.isdigit() is also true for "²", which int() refuses.
    if text is not None and _ASCII_NUMBER.fullmatch(text.strip()):
        return int(text.strip())
    return None


def _at(node: Sequence[object], index: int) -> object:
    return node[index] if len(node) > index else None


def _pairs(raw: object) -> list[tuple[str, object]]:
    """Parameter list as (lower-case key, raw value) pairs from a flat tuple (or pairs, or NIL)."""
    if not isinstance(raw, (tuple, list)):
        return []
    items: list[object] = []
    for item in raw:
        if isinstance(item, (tuple, list)):  # non-standard: ((k, v), (k, v))
            items.extend(item[:2])
        else:
            items.append(item)
    pairs: list[tuple[str, object]] = []
    for i in range(0, len(items) - 1, 2):
        key = _token(items[i])
        if key:
            pairs.append((key, items[i + 1]))
    return pairs


def _params(raw: object) -> dict[str, str]:
    """Content-Type / Content-Disposition parameters, RFC 2231 and RFC 2047 decoded, cleaned."""
    plain: dict[str, str] = {}
    extended: dict[str, dict[int, tuple[bool, str]]] = {}
    for key, value in _pairs(raw):
        text = atom_text(value)
        if text is None:
            continue
        match = _EXTENDED_PARAM.match(key)
        if match is None:
            decoded = decode_words(atom_raw(value))
            if decoded is not None:
                plain.setdefault(key, decoded)
            continue
        section = int(match.group("section") or 0)
        encoded = match.group("section") is None or match.group("encoded") is not None
        extended.setdefault(match.group("name"), {})[section] = (encoded, text)
    for name, sections in extended.items():
        plain[name] = _rfc2231(sections)
    return plain


def _rfc2231(sections: dict[int, tuple[bool, str]]) -> str:
    charset: str | None = None
    data = bytearray()
    for index in sorted(sections):
        encoded, text = sections[index]
        if encoded:
            if index == 0 and text.count("'") >= 2:  # charset'language'value
                charset, _language, text = text.split("'", 2)
            data += unquote_to_bytes(text)
        else:
            data += text.encode("utf-8")
    value = decode_text(bytes(data), charset) if charset else undeclared(bytes(data), cut_short=True)[0]
    return clean(value.strip())


def _disposition(node: Sequence[object], index: int) -> tuple[str | None, dict[str, str]]:
    """(disposition, params) from the expected extension slot, else from wherever a shifted
    field left it (servers that omit `lines` or send NIL for it). Nothing else in a leaf has the
    shape (string, list-or-NIL); a bare atom counts only in the expected slot."""
    for i in [index, *(i for i in range(7, len(node)) if i != index)]:
        value = _at(node, i)
        if isinstance(value, (tuple, list)) and len(value) == 2:
            kind, params = value
            if isinstance(kind, (bytes, str)) and (params is None or isinstance(params, (tuple, list))):
                return _token(kind), _params(params)
        if i == index and isinstance(value, (bytes, str)):
            return _token(value), {}
    # Gmail has described attachments as a four-element node, ("RELATED" NIL ("ATTACHMENT" NIL) NIL):
    # no subtype, and the disposition where the parameters belong. In a node too short to have
    # extension data, a pair naming a disposition is taken wherever it sits.
    if len(node) < 7:
        for value in node[2:]:
            if isinstance(value, (tuple, list)) and len(value) == 2:
                kind, params = value
                token = _token(kind) if isinstance(kind, (bytes, str)) else None
                if token in _DISPOSITIONS and (params is None or isinstance(params, (tuple, list))):
                    return token, _params(params)
    return None, {}


def _name(value: str | None) -> str | None:
    """A file name without the U+FFFD that ends it: what is left of a character cut at a byte count
    when the name declared its charset (RFC 2231, RFC 2047), or when the server replaced what it
    could not read. The rest of the name is kept as it is."""
    return (value or "").rstrip("\ufffd").rstrip() or None


def _leaf(node: object, part_id: str) -> Part | None:
    if not isinstance(node, (tuple, list)) or not node:
        return None
    main = _token(_at(node, 0))
    sub = _token(_at(node, 1))
    if main is None or "/" in main:
        main, sub = "application", "octet-stream"
    elif sub is None or "/" in sub:
        sub = "plain" if main == "text" else "octet-stream"
    params = _params(_at(node, 2))
    # Extension data starts after the type-specific fields: text/* has `lines`; message/rfc822
    # has envelope, body and lines.
    if main == "text":
        extension = 8 if isinstance(_at(node, 7), int) else 7
    elif main == "message" and isinstance(_at(node, 7), (tuple, list)):
        extension = 10
    else:
        extension = 7
    disposition, disposition_params = _disposition(node, extension + 1)
    filename = _name(disposition_params.get("filename")) or _name(params.get("name"))
    return Part(
        part_id=part_id,
        mime_type=f"{main}/{sub}",
        charset=(params.get("charset") or "").strip().lower() or None,
        encoding=_token(_at(node, 5)) or "7bit",
        size=_int(_at(node, 6)),
        disposition=disposition,
        filename=filename,
        content_id=bare_id(atom_text(_at(node, 3))),
    )


def _children(node: object) -> list[object] | None:
    """Child structures of a multipart node, or None for a leaf."""
    if not isinstance(node, (tuple, list)) or not node:
        return None
    first = node[0]
    if isinstance(first, list):  # imapclient's BodyData gathers the children into a list
        return list(first)
    if isinstance(first, tuple):  # raw parser shape: child tuples up to the subtype
        kids: list[object] = []
        for item in node:
            if not isinstance(item, (tuple, list)):
                break
            kids.append(item)
        return kids
    return None


def _empty_multipart(node: object) -> bool:
    """Gmail's node for a multipart without parts: its subtype alone, `("ALTERNATIVE")` (observed,
    see the emulator's BEHAVIOURS.md). It holds nothing to show or save."""
    return isinstance(node, (tuple, list)) and len(node) == 1 and isinstance(node[0], (bytes, str))


def _walk(node: object, part_id: str, found: list[Part], depth: int) -> None:
    if depth > _MAX_DEPTH or _empty_multipart(node):
        return
    children = _children(node)
    if children is None:
        leaf = _leaf(node, part_id or "1")  # a non-multipart message's only part is "1"
        if leaf is not None:
            found.append(replace(leaf, whole=True) if not part_id else leaf)
        return
    for number, child in enumerate(children, 1):
        _walk(child, f"{part_id}.{number}" if part_id else str(number), found, depth + 1)


def parts(bodystructure: Any) -> list[Part]:
    """Leaf parts of a BODYSTRUCTURE in depth-first order, numbered as RFC 3501 sections.

    A message/rfc822 part is a leaf: what it contains belongs to the inner message.
    """
    found: list[Part] = []
    _walk(bodystructure, "", found, 0)
    return found


_BODY_TYPES = ("text/plain", "text/html")
# Offered as the body only when there is neither plain text nor HTML; converted to text (RFC 1896).
_RICH_TYPES = ("text/enriched", "text/richtext")


def body_part(parts: Sequence[Part] | None) -> Part | None:
    """The first text/plain part that is not an attachment; failing that the first such text/html;
    failing that the first text/enriched or text/richtext (mail from before HTML). A part of 0
    octets is the body only when no candidate has content: an empty text part beside the real one
    (a broken multipart, an empty alternative) must not hide the text."""
    candidates = [
        part
        for mime_type in (*_BODY_TYPES, *_RICH_TYPES)
        for part in parts or ()
        if part.mime_type == mime_type and part.disposition != "attachment"
    ]
    return next((part for part in candidates if part.size != 0), candidates[0] if candidates else None)


def attachment_parts(parts: Sequence[Part] | None) -> list[Part]:
    """Leaves listed as attachments: every leaf that is not the body and whose content is reachable
    no other way. Text/plain and text/html without a filename or an attachment disposition are
    bodies or body alternatives and are not listed; every other leaf is, with or without a
    disposition or a name (a nameless one gets a generated name, see filenames.generated_name),
    so an image, a sound, a forwarded or a partial message can always be saved."""
    body = body_part(parts)
    listed: list[Part] = []
    for part in parts or ():
        if part.mime_type in _BODY_TYPES and not part.filename and part.disposition != "attachment":
            continue
        if body is not None and part.part_id == body.part_id and not part.filename:
            continue
        listed.append(part)
    return listed
