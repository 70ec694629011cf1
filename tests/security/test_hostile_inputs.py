"""Hostile inputs through the real MCP tools: each is refused with its specific code, and nothing changes.

Every case runs against a fresh emulator holding a small thread and a message with an attachment.
After the call the emulator's store must equal its state before, nothing may have gone out over
SMTP (not even a login), no IMAP command that writes may have been issued, and a structured error
must stay short (an error that echoes a 10 000-element list is unreadable and floods the context).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from security_support import ME, error_of, mail, write_commands

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

MAX_ERROR_CHARS = 2000
BIG = 26 * 1024 * 1024  # over Gmail's 25 MiB


@dataclass
class Ctx:
    tmp: Path
    attach: Path
    downloads: Path
    outside: Path
    thread_id: str


Args = dict[str, Any] | Callable[[Ctx], dict[str, Any]]


@dataclass
class Case:
    id: str
    tool: str
    args: Args
    code: str
    settings: dict[str, Any] = field(default_factory=dict)
    top: dict[str, Any] | None = None


SEND = {"account": "o", "to": ["petr@partner.example"], "subject": "Ceník", "body": "Posílám ceník."}
DRAFT = {"account": "o", "to": ["petr@partner.example"], "subject": "Návrh", "body": "Koncept."}
ALLOW = {"allowed_recipients": ["@partner.example", "boss@example.cz"]}


def send(**changes: Any) -> dict[str, Any]:
    return {**SEND, **changes}


def draft(**changes: Any) -> dict[str, Any]:
    return {**DRAFT, **changes}


def to(*addresses: str) -> dict[str, Any]:
    return send(to=list(addresses))


def attach(make: Callable[[Ctx], str], tool_args: dict[str, Any] | None = None) -> Callable[[Ctx], dict[str, Any]]:
    """Send (or the given tool args) with one attachment whose path `make` prepares."""

    def build(ctx: Ctx) -> dict[str, Any]:
        return {**(tool_args or SEND), "attachments": [make(ctx)]}

    return build


def secret(ctx: Ctx) -> Path:
    path = ctx.outside / "tajne.txt"
    path.write_text("tajné heslo k trezoru")
    return path


def _symlinked_file(ctx: Ctx) -> str:
    link = ctx.attach / "nevinne.txt"
    link.symlink_to(secret(ctx))
    return str(link)


def _symlinked_dir(ctx: Ctx) -> str:
    secret(ctx)
    (ctx.attach / "odkaz").symlink_to(ctx.outside, target_is_directory=True)
    return str(ctx.attach / "odkaz" / "tajne.txt")


def _hard_link(ctx: Ctx) -> str:
    link = ctx.attach / "kopie.txt"
    os.link(secret(ctx), link)
    return str(link)


def _proc_symlink(ctx: Ctx) -> str:
    link = ctx.attach / "prostredi.txt"
    link.symlink_to("/proc/self/environ")
    return str(link)


def _prefix_dir(ctx: Ctx) -> str:
    evil = ctx.attach.parent / (ctx.attach.name + "-evil")
    evil.mkdir()
    (evil / "x.txt").write_text("x")
    return str(evil / "x.txt")


def _fifo(ctx: Ctx) -> str:
    path = ctx.attach / "roura"
    os.mkfifo(path)
    return str(path)


def _dangling(ctx: Ctx) -> str:
    link = ctx.attach / "nikam.txt"
    link.symlink_to(ctx.outside / "neexistuje.txt")
    return str(link)


def _newline_name(ctx: Ctx) -> str:
    path = ctx.attach / "faktura\nBcc: x@evil.example.pdf"
    path.write_text("x")
    return str(path)


def _invalid_utf8_name(ctx: Ctx) -> str:
    raw = os.fsencode(ctx.attach) + b"/faktura-\xff\xfe.pdf"
    with open(raw, "wb") as handle:
        handle.write(b"%PDF")
    return os.fsdecode(raw)


def _big_file(ctx: Ctx) -> str:
    path = ctx.attach / "velky.bin"
    with open(path, "wb") as handle:
        handle.truncate(BIG)
    return str(path)


def _ok_file(ctx: Ctx) -> str:
    path = ctx.attach / "ok.txt"
    path.write_text("ok")
    return str(path)


def _many_attachments(ctx: Ctx) -> dict[str, Any]:
    return send(attachments=[_ok_file(ctx)] * 10_000)


def _planted_download(ctx: Ctx) -> dict[str, Any]:
    target = ctx.outside / "cil.txt"
    target.write_text("původní obsah")
    (ctx.downloads / "report.pdf").symlink_to(target)
    return {"account": "o", "message_id": "priloha-1@partner.example", "attachment_id": "2"}


def thread(tool: str, label: str) -> Callable[[Ctx], dict[str, Any]]:
    return lambda ctx: {"account": "o", "thread_id": ctx.thread_id, "label": label}


def message_label(tool: str, label: str, **extra: Any) -> dict[str, Any]:
    del tool
    return {"account": "o", "message_ids": ["dotaz-1@partner.example"], "label": label, **extra}


def get_message(message_id: str) -> dict[str, Any]:
    return {"account": "o", "message_id": message_id}


def search(query: str, **extra: Any) -> dict[str, Any]:
    return {"account": "o", "query": query, **extra}


def next_pass(since: str, **extra: Any) -> dict[str, Any]:
    return {"account": "o", "since": since, **extra}


FORBID = "send_forbidden"
INVALID = "invalid_input"
LABEL = "label_forbidden"

CASES: list[Case] = [
    # ---------------------------------------------------------------- recipient tricks
    Case("rcpt-case-superdomain", "mg_send_message", to("a@PARTNER.example.EVIL.com"), FORBID, ALLOW),
    Case("rcpt-trailing-dot", "mg_send_message", to("a@partner.example."), INVALID, ALLOW),
    Case("rcpt-domain-literal", "mg_send_message", to("a@[192.0.2.1]"), INVALID, ALLOW),
    Case("rcpt-allowed-as-subdomain-of-evil", "mg_send_message", to("a@partner.example.evil.com"), FORBID, ALLOW),
    Case("rcpt-evil-dash-domain", "mg_send_message", to("a@evil-partner.example"), FORBID, ALLOW),
    Case("rcpt-subdomain", "mg_send_message", to("a@sub.partner.example"), FORBID, ALLOW),
    Case("rcpt-exact-entry-case-superdomain", "mg_send_message", to("BOSS@example.cz.evil.com"), FORBID, ALLOW),
    Case("rcpt-display-name-spoof", "mg_send_message", to('"a@partner.example" <x@evil.example>'), INVALID, ALLOW),
    Case("rcpt-name-addr", "mg_send_message", to("Petr <x@evil.example>"), INVALID, ALLOW),
    Case("rcpt-angle-only", "mg_send_message", to("<x@evil.example>"), INVALID, ALLOW),
    Case("rcpt-comment", "mg_send_message", to("x@evil.example(a@partner.example)"), INVALID, ALLOW),
    Case("rcpt-double-at", "mg_send_message", to("x@evil.example@partner.example"), INVALID, ALLOW),
    Case("rcpt-quoted-local-part", "mg_send_message", to('"x@evil.example"@partner.example'), INVALID, ALLOW),
    Case("rcpt-source-route", "mg_send_message", to("@evil.example:a@partner.example"), INVALID, ALLOW),
    Case("rcpt-comma-joined", "mg_send_message", to("a@partner.example,x@evil.example"), INVALID, ALLOW),
    Case("rcpt-comma-space-joined", "mg_send_message", to("a@partner.example, x@evil.example"), INVALID, ALLOW),
    Case("rcpt-semicolon-joined", "mg_send_message", to("a@partner.example;x@evil.example"), INVALID, ALLOW),
    Case("rcpt-group", "mg_send_message", to("friends: a@partner.example, x@evil.example;"), INVALID, ALLOW),
    Case("rcpt-empty-group", "mg_send_message", to("undisclosed-recipients:;"), INVALID, ALLOW),
    Case("rcpt-idn-unicode", "mg_send_message", to("a@pártner.example"), FORBID, ALLOW),
    Case("rcpt-idn-punycode", "mg_send_message", to("a@xn--prtner-wqa.example"), FORBID, ALLOW),
    Case("rcpt-cyrillic-lookalike", "mg_send_message", to("a@pаrtner.example"), FORBID, ALLOW),
    Case("rcpt-fullwidth", "mg_send_message", to("a@ｐartner.example"), INVALID, ALLOW),
    Case("rcpt-zero-width", "mg_send_message", to("a@partner\u200b.example"), INVALID, ALLOW),
    Case("rcpt-rtl-override", "mg_send_message", to("a@partner.example\u202e"), INVALID, ALLOW),
    Case("rcpt-cc-outside", "mg_send_message", send(cc=["x@evil.example"]), FORBID, ALLOW),
    Case("rcpt-bcc-outside", "mg_send_message", send(bcc=["x@evil.example"]), FORBID, ALLOW),
    Case("rcpt-empty-allow-list", "mg_send_message", SEND, FORBID, {"allowed_recipients": []}),
    Case("rcpt-sending-off", "mg_send_message", SEND, FORBID, {"can_send": False}),
    Case("rcpt-none", "mg_send_message", send(to=[]), INVALID),
    Case("rcpt-bcc-only", "mg_send_message", send(to=[], bcc=["petr@partner.example"]), INVALID),
    Case("rcpt-surrogate", "mg_send_message", to("a\udcff@partner.example"), INVALID, ALLOW),
    Case("draft-display-name-spoof", "mg_save_draft", draft(to=['"a@partner.example" <x@evil.example>']), INVALID),
    Case("draft-group", "mg_save_draft", draft(cc=["friends: x@evil.example;"]), INVALID),
    # ---------------------------------------------------------------- CR, LF, NUL in headers
    Case("hdr-to-crlf", "mg_send_message", to("a@partner.example\r\nBcc: x@evil.example"), INVALID, ALLOW),
    Case("hdr-to-nul", "mg_send_message", to("a@partner.example\x00x@evil.example"), INVALID, ALLOW),
    Case("hdr-cc-lf", "mg_send_message", send(cc=["a@partner.example\nBcc: x@evil.example"]), INVALID, ALLOW),
    Case("hdr-bcc-cr", "mg_send_message", send(bcc=["a@partner.example\rX: y"]), INVALID, ALLOW),
    Case("hdr-subject-crlf", "mg_send_message", send(subject="Ahoj\r\nBcc: x@evil.example"), INVALID),
    Case("hdr-subject-lf", "mg_send_message", send(subject="Ahoj\nBcc: x@evil.example"), INVALID),
    Case("hdr-subject-cr", "mg_send_message", send(subject="Ahoj\rBcc: x@evil.example"), INVALID),
    Case("hdr-subject-nul", "mg_send_message", send(subject="Ahoj\x00"), INVALID),
    Case("hdr-subject-line-separator", "mg_send_message", send(subject="Ahoj\u2028Bcc: x@evil.example"), INVALID),
    Case("hdr-subject-nel", "mg_send_message", send(subject="Ahoj\x85Bcc: x@evil.example"), INVALID),
    Case("hdr-subject-surrogate", "mg_send_message", send(subject="Ahoj \udcff"), INVALID),
    Case("hdr-body-surrogate", "mg_send_message", send(body="Text \ud800 dál"), INVALID),
    Case("hdr-from-alias-crlf", "mg_send_message", send(from_alias="obchod@example.cz\r\nBcc: x@evil"), FORBID),
    Case("hdr-from-alias-unlisted", "mg_send_message", send(from_alias="ceo@example.cz"), FORBID),
    Case("hdr-from-alias-surrogate", "mg_send_message", send(from_alias="obchod\udcff@example.cz"), INVALID),
    Case("hdr-in-reply-to-crlf", "mg_send_message", send(in_reply_to="dotaz-1@partner.example\r\nBcc: x"), INVALID),
    Case("hdr-in-reply-to-nul", "mg_send_message", send(in_reply_to="dotaz-1@partner.example\x00"), INVALID),
    Case("hdr-references-crlf", "mg_send_message", send(references=["<a@b.example>\r\nBcc: x@evil"]), INVALID),
    Case("hdr-references-nul", "mg_save_draft", draft(references=["<a@b.example>\x00"]), INVALID),
    Case("hdr-signature-crlf", "mg_send_message", send(signature="kratky\r\nBcc: x@evil"), "not_found"),
    Case("hdr-draft-subject-crlf", "mg_save_draft", draft(subject="Návrh\r\nBcc: x@evil.example"), INVALID),
    Case("hdr-draft-bcc-crlf", "mg_save_draft", draft(bcc=["a@partner.example\r\nX: y"]), INVALID),
    Case("hdr-draft-in-reply-to-crlf", "mg_save_draft", draft(in_reply_to="dotaz-1@partner.example\nX: y"), INVALID),
    Case("hdr-attachment-filename-lf", "mg_send_message", attach(_newline_name), INVALID),
    Case("hdr-attachment-filename-invalid-utf8", "mg_send_message", attach(_invalid_utf8_name), INVALID),
    # ---------------------------------------------------------------- values that reach an IMAP command
    Case("imap-query-crlf", "mg_search_threads", search("from:a\r\nA001 LOGOUT"), INVALID),
    Case("imap-query-lf", "mg_search_threads", search("from:a\nA001 EXPUNGE"), INVALID),
    Case("imap-query-nul", "mg_search_threads", search("from:a\x00"), INVALID),
    Case("imap-query-surrogate", "mg_search_threads", search("ceník \udcff"), INVALID),
    Case("imap-query-empty", "mg_search_threads", search("   "), INVALID),
    Case("imap-msgid-crlf", "mg_get_message", get_message("dotaz-1@partner.example\r\nA1 EXPUNGE"), INVALID),
    Case("imap-msgid-nul", "mg_get_message", get_message("dotaz-1@partner.example\x00"), INVALID),
    # Quotes and backslashes can be part of an id (a quoted local part): such an id goes to IMAP only
    # inside a quoted, escaped HEADER search, never into X-GM-RAW, and is simply not found.
    Case("imap-msgid-quote", "mg_get_message", get_message('a" OR "b@x'), "not_found"),
    Case("imap-msgid-backslash", "mg_get_message", get_message("a\\b@x"), "not_found"),
    Case("imap-msgid-no-word", "mg_get_message", get_message('"@"'), "not_found"),  # nothing to search by
    # Whitespace outside quotes is not part of a Message-ID (RFC 5322's obsolete spacing): this is
    # the id "ab@x", looked up safely and not found.
    Case("imap-msgid-space", "mg_get_message", get_message("a b@x"), "not_found"),
    Case("imap-msgid-surrogate", "mg_get_message", get_message("a\udcff@x"), INVALID),
    Case("imap-msgid-empty", "mg_get_message", get_message("<>"), INVALID),
    Case("imap-msgid-oversize", "mg_get_message", get_message("a" * 10_000 + "@x"), INVALID),
    Case("imap-trash-msgid-crlf", "mg_trash_message", get_message("dotaz-1@partner.example\r\nA1 EXPUNGE"), INVALID),
    Case("imap-trash-msgid-surrogate", "mg_trash_message", get_message("dotaz-1\udcff@partner.example"), INVALID),
    Case(
        "imap-flags-msgid-crlf",
        "mg_set_flags",
        {**get_message("dotaz-1@partner.example\r\nA1 STORE 1:* +FLAGS (\\Deleted)"), "seen": True},
        INVALID,
    ),
    Case(
        "imap-label-ids-one-bad",
        "mg_label_message",
        {"account": "o", "message_ids": ["dotaz-1@partner.example", "x\r\ny@z"], "label": "Asistent"},
        INVALID,
    ),
    Case(
        "imap-attachment-msgid-crlf",
        "mg_get_attachment",
        {"account": "o", "message_id": "priloha-1@partner.example\r\nA1 LOGOUT", "attachment_id": "2"},
        INVALID,
    ),
    Case("imap-thread-crlf", "mg_get_thread", {"account": "o", "thread_id": "123\r\nA1 LOGOUT"}, INVALID),
    Case(
        "imap-thread-nul", "mg_label_thread", {"account": "o", "thread_id": "1\x002", "label": "Asistent/akce"}, INVALID
    ),
    Case("imap-thread-negative", "mg_get_thread", {"account": "o", "thread_id": "-1"}, INVALID),
    Case("imap-thread-2-to-64", "mg_get_thread", {"account": "o", "thread_id": str(2**64)}, INVALID),
    Case("imap-thread-fullwidth", "mg_get_thread", {"account": "o", "thread_id": "１２３"}, INVALID),
    Case("imap-thread-exponent", "mg_get_thread", {"account": "o", "thread_id": "1e5"}, INVALID),
    Case("imap-thread-oversize", "mg_get_thread", {"account": "o", "thread_id": "9" * 100_000}, INVALID),
    Case("imap-thread-surrogate", "mg_unlabel_thread", thread("t", "\udcff"), INVALID),
    Case("imap-label-crlf", "mg_label_message", message_label("m", "Asistent\r\nA1 DELETE INBOX"), INVALID),
    Case("imap-label-lf", "mg_label_thread", thread("t", "Asistent/akce\nA1 DELETE INBOX"), INVALID),
    Case("imap-label-nul", "mg_unlabel_message", message_label("m", "Asistent\x00"), INVALID),
    Case("imap-label-surrogate", "mg_label_message", message_label("m", "Asistent\udcff"), INVALID),
    Case(
        "imap-attachment-id-crlf",
        "mg_get_attachment",
        {"account": "o", "message_id": "priloha-1@partner.example", "attachment_id": "2\r\nA1 LOGOUT"},
        INVALID,
    ),
    Case(
        "imap-attachment-id-traversal",
        "mg_get_attachment",
        {"account": "o", "message_id": "priloha-1@partner.example", "attachment_id": "../../etc/passwd"},
        INVALID,
    ),
    Case(
        "imap-attachment-id-section",
        "mg_get_attachment",
        {"account": "o", "message_id": "priloha-1@partner.example", "attachment_id": "HEADER"},
        INVALID,
    ),
    Case("imap-page-token-crlf", "mg_search_threads", search("ceník", page_token="5\r\nA1 LOGOUT"), INVALID),
    Case("imap-since-crlf", "mg_next_pass", next_pass("2026-09-01\r\nA1 LOGOUT"), INVALID),
    # ---------------------------------------------------------------- attachment paths
    Case("path-outside", "mg_send_message", attach(lambda ctx: str(secret(ctx))), FORBID),
    Case("path-etc-passwd", "mg_send_message", attach(lambda ctx: "/etc/passwd"), FORBID),
    Case(
        "path-parent-traversal",
        "mg_send_message",
        attach(lambda ctx: (secret(ctx), f"{ctx.attach}/../{ctx.outside.name}/tajne.txt")[1]),
        FORBID,
    ),
    Case("path-file-symlink", "mg_send_message", attach(_symlinked_file), FORBID),
    Case("path-dir-symlink", "mg_send_message", attach(_symlinked_dir), FORBID),
    Case("path-hard-link", "mg_send_message", attach(_hard_link), FORBID),
    Case("path-proc-self-environ", "mg_send_message", attach(lambda ctx: "/proc/self/environ"), FORBID),
    Case("path-symlink-to-proc", "mg_send_message", attach(_proc_symlink), FORBID),
    Case(
        "path-proc-as-allowed-dir",
        "mg_send_message",
        attach(lambda ctx: "/proc/self/environ"),
        INVALID,
        top={"attachment_dirs": ["/proc/self"]},
    ),
    Case("path-relative", "mg_send_message", attach(lambda ctx: "prilohy/ok.txt"), INVALID),
    Case("path-tilde", "mg_send_message", attach(lambda ctx: "~/ok.txt"), INVALID),
    Case("path-dir-named-like-allowed-prefix", "mg_send_message", attach(_prefix_dir), FORBID),
    Case("path-the-allowed-dir-itself", "mg_send_message", attach(lambda ctx: str(ctx.attach)), INVALID),
    Case("path-fifo", "mg_send_message", attach(_fifo), INVALID),
    Case("path-dangling-symlink", "mg_send_message", attach(_dangling), "not_found"),
    Case("path-missing", "mg_send_message", attach(lambda ctx: str(ctx.attach / "neni.pdf")), "not_found"),
    Case("path-nul", "mg_send_message", attach(lambda ctx: f"{ctx.attach}/ok.txt\x00.pdf"), INVALID),
    Case("path-crlf", "mg_send_message", attach(lambda ctx: f"{ctx.attach}/ok.txt\r\n"), INVALID),
    Case("path-surrogate-missing", "mg_send_message", attach(lambda ctx: f"{ctx.attach}/\udcff.pdf"), INVALID),
    Case("path-no-attachment-dirs", "mg_send_message", attach(_ok_file), FORBID, top={"attachment_dirs": []}),
    Case("path-draft-outside", "mg_save_draft", attach(lambda ctx: str(secret(ctx)), DRAFT), FORBID),
    Case("path-draft-hard-link", "mg_save_draft", attach(_hard_link, DRAFT), FORBID),
    Case("path-download-planted-symlink", "mg_get_attachment", _planted_download, "upstream_error"),
    # ---------------------------------------------------------------- labels
    Case("label-trash", "mg_label_message", message_label("m", "\\Trash"), LABEL),
    Case("label-inbox", "mg_label_message", message_label("m", "\\Inbox"), LABEL),
    Case("label-double-backslash-inbox", "mg_label_message", message_label("m", "\\\\Inbox"), LABEL),
    Case("label-padded-trash", "mg_unlabel_message", message_label("m", "  \\Trash "), LABEL),
    Case("label-starred-on-thread", "mg_label_thread", thread("t", "\\Starred"), LABEL),
    Case("label-important-off-thread", "mg_unlabel_thread", thread("t", "\\Important"), LABEL),
    Case("label-processed-on-thread", "mg_label_thread", thread("t", "Asistent"), LABEL),
    Case("label-processed-lower-on-thread", "mg_label_thread", thread("t", "asistent"), LABEL),
    Case("label-processed-upper-on-thread", "mg_label_thread", thread("t", "ASISTENT"), LABEL),
    Case("label-processed-padded-on-thread", "mg_unlabel_thread", thread("t", "  Asistent\t"), LABEL),
    Case("label-classification-cyrillic-a", "mg_label_thread", thread("t", "Asistent/аkce"), LABEL),
    Case("label-classification-fullwidth", "mg_label_thread", thread("t", "Ａsistent/akce"), LABEL),
    Case("label-classification-zero-width", "mg_label_thread", thread("t", "Asistent/akce\u200b"), LABEL),
    Case("label-classification-rtl", "mg_label_thread", thread("t", "\u202eAsistent/akce"), LABEL),
    Case("label-classification-nested", "mg_label_thread", thread("t", "Asistent/akce/x"), LABEL),
    Case("label-classification-on-message", "mg_label_message", message_label("m", "Asistent/akce"), LABEL),
    Case("label-processed-cyrillic-on-message", "mg_label_message", message_label("m", "Аsistent"), LABEL),
    Case("label-user-label", "mg_label_message", message_label("m", "Rodina"), LABEL),
    Case("label-empty", "mg_label_message", message_label("m", "   "), INVALID),
    Case("label-oversize", "mg_label_thread", thread("t", "x" * 100_000), INVALID),
    # ---------------------------------------------------------------- flags
    Case("flag-deleted", "mg_set_flags", {**get_message("dotaz-1@partner.example"), "deleted": True}, INVALID),
    Case("flag-draft", "mg_set_flags", {**get_message("dotaz-1@partner.example"), "draft": True}, INVALID),
    Case("flag-raw-list", "mg_set_flags", {**get_message("dotaz-1@partner.example"), "flags": ["\\Deleted"]}, INVALID),
    Case("flag-as-value", "mg_set_flags", {**get_message("dotaz-1@partner.example"), "seen": "\\Deleted"}, INVALID),
    Case("flag-none", "mg_set_flags", get_message("dotaz-1@partner.example"), INVALID),
    # ---------------------------------------------------------------- oversize and 10 000-element lists
    Case("big-body", "mg_send_message", send(body="x" * BIG), INVALID),
    Case("big-draft-body", "mg_save_draft", draft(body="x" * BIG), INVALID),
    Case("big-attachment", "mg_send_message", attach(_big_file), FORBID),
    Case("big-max-results", "mg_search_threads", search("ceník", max_results=1_000_000), INVALID),
    Case(
        "big-body-window",
        "mg_get_message",
        {**get_message("dotaz-1@partner.example"), "max_body_length": 10**9},
        INVALID,
    ),
    Case(
        "list-10k-message-ids",
        "mg_label_message",
        {"account": "o", "message_ids": [f"m{i}@x.example" for i in range(10_000)], "label": "Asistent"},
        INVALID,
    ),
    Case(
        "list-10k-outside-recipients",
        "mg_send_message",
        send(to=[f"x{i}@evil.example" for i in range(10_000)]),
        INVALID,
        ALLOW,
    ),
    Case(
        "list-100-outside-recipients",  # within the 100-recipient bound, so the allow-list decides
        "mg_send_message",
        send(to=[f"x{i}@evil.example" for i in range(100)]),
        FORBID,
        ALLOW,
    ),
    Case(
        "list-10k-allowed-recipients",
        "mg_send_message",
        send(to=[f"a{i}@partner.example" for i in range(10_000)]),
        INVALID,
        ALLOW,
    ),
    Case("list-10k-cc", "mg_save_draft", draft(cc=[f"a{i}@partner.example" for i in range(10_000)]), INVALID),
    Case(
        "list-10k-references", "mg_send_message", send(references=[f"<r{i}@x.example>" for i in range(10_000)]), INVALID
    ),
    Case("list-10k-attachments", "mg_send_message", _many_attachments, INVALID),
    # ---------------------------------------------------------------- since and page-token garbage
    Case("since-words", "mg_next_pass", next_pass("yesterday"), INVALID),
    Case("since-month-13", "mg_next_pass", next_pass("2026-13-45"), INVALID),
    Case("since-february-30", "mg_next_pass", next_pass("2026-02-30"), INVALID),
    Case("since-hour-25", "mg_next_pass", next_pass("2026-09-01T25:00:00Z"), INVALID),
    Case("since-epoch-number", "mg_next_pass", next_pass("9999999999"), INVALID),
    Case("since-fullwidth-digits", "mg_next_pass", next_pass("２０２６-09-01"), INVALID),
    Case("since-empty", "mg_next_pass", next_pass(""), INVALID),
    Case("since-oversize", "mg_next_pass", next_pass("2026-09-01" * 10_000), INVALID),
    Case("since-year-1-east-of-utc", "mg_next_pass", next_pass("0001-01-01T00:00:00+14:00"), INVALID),
    Case("since-year-9999-west-of-utc", "mg_next_pass", next_pass("9999-12-31T23:59:59-14:00"), INVALID),
    Case("since-surrogate", "mg_next_pass", next_pass("2026-09-01\udcff"), INVALID),
    Case("since-year-1", "mg_next_pass", next_pass("0001-01-01"), INVALID),
    Case("since-year-1-utc", "mg_next_pass", next_pass("0001-01-01T00:00:00Z"), INVALID),
    Case(
        "since-year-1-on-label-call-labels-nothing",
        "mg_label_message",
        message_label("m", "Asistent", since="0001-01-01"),
        INVALID,
    ),
    Case(
        "since-bad-on-label-call-labels-nothing",
        "mg_label_message",
        message_label("m", "Asistent", since="0001-01-01T00:00:00+01:00"),
        INVALID,
    ),
    Case("page-negative", "mg_next_pass", next_pass("2026-09-01", page_token="-1"), INVALID),
    Case("page-letters", "mg_next_pass", next_pass("2026-09-01", page_token="abc"), INVALID),
    Case("page-exponent", "mg_search_threads", search("ceník", page_token="1e3"), INVALID),
    Case("page-huge", "mg_search_threads", search("ceník", page_token="9" * 30), INVALID),
    Case("page-fullwidth", "mg_search_threads", search("ceník", page_token="１"), INVALID),
    Case("page-hex", "mg_next_pass", next_pass("2026-09-01", page_token="0x10"), INVALID),
    Case("page-surrogate", "mg_next_pass", next_pass("2026-09-01", page_token="\udcff"), INVALID),
    Case("page-oversize", "mg_search_threads", search("ceník", page_token="1" * 100_000), INVALID),
    # ---------------------------------------------------------------- accounts
    Case("account-unknown", "mg_get_thread", {"account": "../o", "thread_id": "1"}, "account_unknown"),
    Case(
        "account-all-on-write",
        "mg_trash_message",
        {"account": "all", "message_id": "dotaz-1@partner.example"},
        "account_unknown",
    ),
]


def _seed(emulator: GmailEmulator) -> str:
    first = emulator.deliver(ME, mail("dotaz-1@partner.example"))
    emulator.deliver(ME, mail("dotaz-2@partner.example", subject="Re: Dotaz", in_reply_to="dotaz-1@partner.example"))
    emulator.deliver(ME, mail("priloha-1@partner.example", subject="Zpráva", attachment=("report.pdf", b"%PDF-1.4")))
    emulator.add_labels(ME, "dotaz-1@partner.example", ["Rodina"])
    return str(first.thrid)


def _ids() -> list[str]:
    return [case.id for case in CASES]


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 40
    assert len(set(_ids())) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=_ids())
async def test_hostile_input_is_refused_and_changes_nothing(
    case: Case,
    emulator: GmailEmulator,
    make_runtime: Callable[..., Runtime],
    call: Callable[..., Any],
    files: dict[str, Path],
    tmp_path: Path,
    counts: Counter[str],
) -> None:
    thread_id = _seed(emulator)
    ctx = Ctx(tmp_path, files["attach"], files["downloads"], files["outside"], thread_id)
    args = case.args(ctx) if callable(case.args) else case.args
    runtime = make_runtime(top=case.top, **case.settings)
    outside_before = {p: p.read_bytes() for p in files["outside"].iterdir() if p.is_file()}
    before = emulator.snapshot()
    emulator.reset_counters()

    result = await call(runtime, case.tool, args)

    error = error_of(result)
    assert error is not None, f"{case.id}: accepted: {result.content[0].text[:500]}"
    assert error["code"] == case.code, f"{case.id}: {error}"
    assert len(error["message"]) <= MAX_ERROR_CHARS, f"{case.id}: a {len(error['message'])}-character error"
    assert emulator.snapshot() == before
    assert emulator.outbox() == [] and emulator.smtp_logins() == 0 and emulator.smtp_sessions() == 0
    assert write_commands(emulator) == []
    assert {p: p.read_bytes() for p in files["outside"].iterdir() if p.is_file()} == outside_before
    counts["hostile"] += 1
