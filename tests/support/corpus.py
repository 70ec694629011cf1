"""The real-message corpus (tests/corpus): what Python's `email` package reads in each message, and
how what the server showed differs from it.

The reference is the standard library's parser, independent of ours: the body it picks
(`get_body`, plain before HTML), the headers it decodes, and for every leaf part at an IMAP section
number its decoded bytes. Each difference is named by a short key; tests/corpus/differences.toml
gives the reason for every one that is known, and the corpus test fails on any other.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage, Message
from pathlib import Path
from typing import Any

from mcp_multi_gmail.htmltext import html_to_text

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
DIFFERENCES = CORPUS / "differences.toml"
NOT_MESSAGES = ("SOURCES.md", "differences.toml")


def corpus_files() -> list[str]:
    """Every message of the corpus, as its path below tests/corpus (the originals of attached files,
    under files/, and the licences are not messages; the iCalendar corpus under icalendar/ has a test
    of its own, tests/test_icalendar_corpus.py)."""
    return sorted(
        path.relative_to(CORPUS).as_posix()
        for path in CORPUS.rglob("*")
        if path.is_file()
        and path.name not in NOT_MESSAGES
        and not {"files", "LICENSES"} & set(path.relative_to(CORPUS).parts)
        and path.relative_to(CORPUS).parts[0] != "icalendar"
    )


def message_bytes(name: str) -> bytes:
    """A corpus message as a mailbox holds it: without the mbox `From ` line some files begin with
    (mbox framing that an mbox reader drops; delivered mail never starts with one)."""
    raw = (CORPUS / name).read_bytes()
    if raw.startswith(b"From "):
        raw = raw.split(b"\n", 1)[1] if b"\n" in raw else b""
    return raw


@dataclass
class Leaf:
    mime_type: str
    filename: str | None
    data: bytes | None  # decoded content; None for message/* parts (compared by their subject)
    inner_subject: str | None = None
    encoding: str = ""  # Content-Transfer-Encoding, lower case


@dataclass
class Expected:
    message_id: str | None
    subject: str | None
    from_name: str | None
    from_address: str | None
    body_type: str | None  # "plain", "html" or None
    body: str | None
    body_section: str | None
    leaves: dict[str, Leaf] = field(default_factory=dict)


def _header(msg: Message, name: str) -> str | None:
    try:
        value = msg[name]
    except Exception:  # noqa: BLE001 - the reference parser gives up on this header: no reference value
        return None
    return None if value is None else str(value)


def _reference_id(msg: Message) -> str | None:
    raw = msg.get_all("Message-ID") if hasattr(msg, "get_all") else None
    if not raw:
        return None
    text = str(raw[0])
    found = re.search(r"<([^<>]*)>", text)
    text = found.group(1) if found else text.strip().strip("<>")
    return "".join(text.split()) or None


def _sections(msg: Message, prefix: str = "") -> Iterator[tuple[str, Message]]:
    """Leaves numbered as IMAP sections; a message/* part is a leaf, as in our listing."""
    if msg.is_multipart() and msg.get_content_maintype() != "message":
        for number, child in enumerate(msg.get_payload(), 1):
            yield from _sections(child, f"{prefix}.{number}" if prefix else str(number))
        return
    yield prefix or "1", msg


def _text_of(part: Message) -> str:
    try:
        return str(part.get_content())  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - an unknown charset or a broken payload: read the bytes as UTF-8
        data = part.get_payload(decode=True)
        return data.decode("utf-8", "replace") if isinstance(data, bytes) else ""


def reference(raw: bytes) -> Expected:
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    from_name = from_address = None
    try:
        sender = msg["From"]
        found = list(getattr(sender, "addresses", ()))
        if found:
            from_name = found[0].display_name or None
            from_address = found[0].addr_spec or None
    except Exception:  # noqa: BLE001 - the reference cannot read this From: no reference value
        pass
    try:
        body = msg.get_body(preferencelist=("plain", "html"))
    except Exception:  # noqa: BLE001
        body = None
    leaves: dict[str, Leaf] = {}
    body_section = None
    for section, part in _sections(msg):
        if part is body:
            body_section = section
        inner = None
        data: bytes | None = None
        if part.get_content_maintype() == "message":
            payload = part.get_payload()
            first = payload[0] if isinstance(payload, list) and payload else None
            inner = _header(first, "Subject") if isinstance(first, Message) else None
        else:
            decoded = part.get_payload(decode=True)
            data = decoded if isinstance(decoded, bytes) else b""
        try:
            name = part.get_filename()
        except Exception:  # noqa: BLE001
            name = None
        encoding = str(part.get("Content-Transfer-Encoding", "")).strip().lower()
        leaves[section] = Leaf(part.get_content_type(), name, data, inner, encoding)
    return Expected(
        message_id=_reference_id(msg),
        subject=_header(msg, "Subject"),
        from_name=from_name,
        from_address=from_address,
        body_type=body.get_content_subtype() if body is not None else None,
        body=_text_of(body) if body is not None else None,
        body_section=body_section,
        leaves=leaves,
    )


def words(text: str | None) -> str:
    """Text compared by its words: line ends, folding and runs of spaces are not differences."""
    return " ".join((text or "").split())


@dataclass
class Seen:
    """What the server showed for one message."""

    thread_found: bool = False
    thread_message: dict[str, Any] | None = None
    message: dict[str, Any] | None = None  # mg_get_message, default window
    largest: dict[str, Any] | None = None  # mg_get_message, the largest window
    saved: dict[str, tuple[dict[str, Any], bytes]] = field(default_factory=dict)  # attachment id → (result, file)
    errors: list[str] = field(default_factory=list)
    gmail_id: str | None = None  # the id a message without a Message-ID is shown by (gmail-msgid-N)


def _clip(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def differences(expected: Expected, seen: Seen) -> dict[str, str]:
    """Each way the server's answer differs from the reference: key → what differs."""
    found: dict[str, str] = {}
    for error in seen.errors:
        found.setdefault("error", error)
    shown = seen.largest or seen.thread_message
    if not seen.thread_found:
        found["search"] = "mg_search_threads with rfc822msgid: did not find the message's thread"
    if shown is None:
        found.setdefault("error", "no reading of the message")
        return found
    if (shown.get("message_id") or None) != (expected.message_id or seen.gmail_id):
        found["message_id"] = f"{_clip(shown.get('message_id'))} vs {_clip(expected.message_id)}"
    if words(shown.get("subject")) != words(expected.subject):
        found["subject"] = f"{_clip(shown.get('subject'))} vs {_clip(expected.subject)}"
    sender = shown.get("from") or {}
    reference_address = (
        _lower_host(expected.from_address) if expected.from_address and "@" in expected.from_address else None
    )
    if (sender.get("address") or None) != reference_address:
        found["from_address"] = f"{_clip(sender.get('address'))} vs {_clip(expected.from_address)}"
    if words(sender.get("name")) != words(expected.from_name) and expected.from_name:
        found["from_name"] = f"{_clip(sender.get('name'))} vs {_clip(expected.from_name)}"
    _compare_body(expected, shown, found)
    _compare_attachments(expected, seen, shown, found)
    if seen.thread_message is not None and seen.largest is not None:
        thread_body = words(seen.thread_message.get("body"))
        if not words(seen.largest.get("body")).startswith(thread_body):
            found["thread_body"] = "mg_get_thread's body window is not the beginning of mg_get_message's"
        if seen.thread_message.get("attachments") != seen.largest.get("attachments"):
            found["thread_attachments"] = "mg_get_thread lists other attachments than mg_get_message"
    return found


def _lower_host(address: str) -> str:
    """The server shows hosts in lower case (ENVELOPE does, RFC 5321 names are case-blind)."""
    local, _, host = address.rpartition("@")
    return f"{local}@{host.lower()}"


def _same_content(saved: bytes, leaf: Leaf) -> bool:
    """The saved file is the decoded part; a part sent as text (7bit, 8bit, quoted-printable) in
    line ends of either kind: Gmail keeps CRLF and the corpus files hold LF."""
    decoded = leaf.data or b""
    if hashlib.sha256(saved).digest() == hashlib.sha256(decoded).digest():
        return True
    as_sent = leaf.encoding not in ("base64", "x-uuencode", "uuencode", "x-uue")
    return as_sent and saved.replace(b"\r\n", b"\n") == decoded.replace(b"\r\n", b"\n")


def _compare_body(expected: Expected, shown: dict[str, Any], found: dict[str, str]) -> None:
    body = shown.get("body")
    if expected.body_type is None:
        if body:
            found["body"] = f"we show {shown.get('body_format')} text, the reference finds no body"
        return
    reference_text = expected.body or ""
    if expected.body_type == "html":
        reference_text = html_to_text(reference_text).text
    ours, theirs = words(body), words(reference_text)
    if shown.get("body_truncated"):
        theirs = theirs[: len(ours)]
    if ours != theirs:
        common = min(len(ours), len(theirs))
        at = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), common)
        found["body"] = f"at {at}: {_clip(ours[at : at + 40])} vs {_clip(theirs[at : at + 40])}"
    if "\ufffd" in (body or "") and "\ufffd" not in reference_text:
        found["body_fffd"] = "U+FFFD in our body, none in the reference"


def _compare_attachments(expected: Expected, seen: Seen, shown: dict[str, Any], found: dict[str, str]) -> None:
    listed = {a["attachment_id"]: a for a in shown.get("attachments") or []}
    named = {s: leaf for s, leaf in expected.leaves.items() if leaf.filename and s != expected.body_section}
    missing = sorted(set(named) - set(listed))
    if missing:
        found["attachments_missing"] = f"named parts not listed: {missing}"
    for section, leaf in named.items():
        entry = listed.get(section)
        if entry is not None and not entry["filename_generated"] and words(entry["filename"]) != words(leaf.filename):
            found[f"filename:{section}"] = f"{_clip(entry['filename'])} vs {_clip(leaf.filename)}"
    for attachment_id, (result, data) in seen.saved.items():
        saved_leaf = expected.leaves.get(attachment_id)
        if result.get("size_bytes") != len(data):
            found[f"size:{attachment_id}"] = f"size_bytes {result.get('size_bytes')} for a file of {len(data)}"
        if saved_leaf is None:
            continue  # a part the reference does not have (its tree differs): reported by the body or names
        if saved_leaf.data is not None and not _same_content(data, saved_leaf):
            found[f"content:{attachment_id}"] = f"{len(data)} bytes saved, the reference decodes {len(saved_leaf.data)}"
        if saved_leaf.data is None and saved_leaf.inner_subject is not None:
            inner = email.message_from_bytes(data, policy=email.policy.default)
            if words(_header(inner, "Subject")) != words(saved_leaf.inner_subject):
                found[f"content:{attachment_id}"] = "the saved message is not the attached one"
