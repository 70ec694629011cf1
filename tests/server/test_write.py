"""Drafts, sending and trash against the emulator: its outbox and store are the truth."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator, SmtpFault
from mcp_multi_gmail.mail.sending import send
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
SIGNATURES = {
    "plny": {"text": "Jana Nováková\nKnihovna Lipová", "html": "<div>Jana <b>Nováková</b></div>"},
    "kratky": {"text": "J."},
}


@pytest.fixture
def sender(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime], tmp_path: Path
) -> Callable[..., Runtime]:
    """A runtime for osobni@example.cz with the given account settings (sending allowed by default)."""
    (tmp_path / "prilohy").mkdir()

    def make(**account: Any) -> Runtime:
        top = {"attachment_dirs": [str(tmp_path / "prilohy")], "quote_locale": account.pop("quote_locale", "cs")}
        entry = {
            "name": "o",
            "address": ME,
            "password": "osobniheslohesla",
            "processed_label": "Asistent",
            "can_send": True,
            "signatures": SIGNATURES,
            **account,
        }
        return make_runtime(write_config([entry], **top))

    return make


def original(
    emulator: GmailEmulator,
    *,
    charset: str = "utf-8",
    body: str = "Dobrý den,\npošlete mi prosím ceník.\n",
    mid: str = "dotaz-1@partner.example",
) -> None:
    msg = EmailMessage()
    msg["From"] = "Petr Dvořák <petr@partner.example>"
    msg["To"] = ME
    msg["Subject"] = "Dotaz na ceník"
    msg["Message-ID"] = f"<{mid}>"
    msg["Date"] = "Mon, 28 Sep 2026 14:05:00 +0200"
    msg.set_content(body, charset=charset)
    emulator.deliver(ME, msg.as_bytes())


def parsed(data: bytes) -> email.message.EmailMessage:
    message = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(message, email.message.EmailMessage)
    return message


def text_of(message: email.message.EmailMessage, subtype: str) -> str:
    part = message.get_body((subtype,))
    assert part is not None
    return str(part.get_content()).replace("\r\n", "\n")


# ------------------------------------------------------------------ refusals send nothing


@pytest.mark.parametrize(
    ("settings", "args", "code", "words"),
    [
        ({"can_send": False}, {}, "send_forbidden", "send"),
        ({"allowed_recipients": []}, {}, "send_forbidden", "empty"),
        (
            {"allowed_recipients": ["@partner.example"]},
            {"to": ["a@evil-partner.example"]},
            "send_forbidden",
            "evil-partner",
        ),
        ({"allowed_recipients": ["@partner.example"]}, {"to": ["a@sub.partner.example"]}, "send_forbidden", "sub"),
        ({"allowed_recipients": ["petr@partner.example"]}, {"cc": ["x@partner.example"]}, "send_forbidden", "x@"),
        ({}, {"from_alias": "ceo@example.cz"}, "send_forbidden", "alias"),
        ({}, {"subject": "Ahoj\r\nBcc: x@evil.example"}, "invalid_input", "subject"),
        ({}, {"to": ["petr@partner.example\r\nBcc: x@evil.example"]}, "invalid_input", ""),
        ({}, {"signature": "neni"}, "not_found", "signature"),
        ({}, {"attachments": ["relative.pdf"]}, "invalid_input", "relative"),
        ({}, {"in_reply_to": "<nikde@example.org>"}, "not_found", "nikde"),
        # Like 1.5.0: a message only to Bcc would go out without a To header.
        ({}, {"to": [], "bcc": ["petr@partner.example"]}, "invalid_input", "at least one address in `to`"),
        ({}, {"to": ["  "], "cc": ["petr@partner.example"]}, "invalid_input", "`to`"),
    ],
)
async def test_refused_send_sends_nothing(
    emulator: GmailEmulator,
    sender: Callable[..., Runtime],
    call: Call,
    settings: dict[str, Any],
    args: dict[str, Any],
    code: str,
    words: str,
) -> None:
    runtime = sender(**settings)
    before = emulator.snapshot()
    body = await error(
        call,
        runtime,
        "mg_send_message",
        **{"account": "o", "to": ["petr@partner.example"], "subject": "Ceník", "body": "Posílám.", **args},
    )
    assert body["code"] == code and words.lower() in body["message"].lower()
    assert emulator.outbox() == []
    assert emulator.smtp_logins() == 0
    assert emulator.snapshot() == before


async def test_allowed_recipients_exact_and_domain(
    emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call
) -> None:
    runtime = sender(allowed_recipients=["@partner.example", "Boss@Example.cz"])
    data = await ok(
        call,
        runtime,
        "mg_send_message",
        account="o",
        to=["A@Partner.Example"],
        cc=["boss@example.cz"],
        subject="Ahoj",
        body="Text.",
    )
    assert sorted(data["accepted"]) == ["A@Partner.Example", "boss@example.cz"]
    assert len(emulator.outbox()) == 1


async def test_attachment_through_symlink_out_of_allowed_dir_refused(
    emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call, tmp_path: Path
) -> None:
    secret = tmp_path / "tajne.txt"
    secret.write_text("heslo")
    (tmp_path / "prilohy" / "nevinne.txt").symlink_to(secret)
    runtime = sender()
    body = await error(
        call,
        runtime,
        "mg_send_message",
        account="o",
        to=["petr@partner.example"],
        subject="x",
        body="y",
        attachments=[str(tmp_path / "prilohy" / "nevinne.txt")],
    )
    assert body["code"] == "send_forbidden"
    assert emulator.outbox() == [] and emulator.smtp_logins() == 0


# ------------------------------------------------------------------ composition


async def test_alias_with_signature_and_attachment(
    emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call, tmp_path: Path
) -> None:
    pdf = tmp_path / "prilohy" / "nabídka.pdf"
    pdf.write_bytes(b"%PDF-1.4 nabidka")
    runtime = sender(
        aliases=[{"address": "obchod@example.cz", "name": 'Obchod "Lipová"', "default_signature": "kratky"}],
        default_signature="plny",
    )
    data = await ok(
        call,
        runtime,
        "mg_send_message",
        account="o",
        to=["petr@partner.example"],
        subject="Nabídka",
        body="Dobrý den,\n\nposílám nabídku.",
        from_alias="OBCHOD@example.cz",
        attachments=[str(pdf)],
    )
    assert data["from"] == {"name": "Obchod Lipová", "address": "obchod@example.cz"}
    assert data["signature"] == "kratky" and data["attachments"] == ["nabídka.pdf"]
    [sent] = emulator.outbox()
    message = parsed(sent.data)
    assert message["From"].addresses[0].addr_spec == "obchod@example.cz"
    plain = text_of(message, "plain")
    assert plain.startswith("Dobrý den,\n\nposílám nabídku.") and plain.rstrip().endswith("J.")
    html = text_of(message, "html")
    assert html.startswith('<div dir="ltr">') and "<div><br></div>" in html
    [attachment] = list(message.iter_attachments())
    assert attachment.get_filename() == "nabídka.pdf" and attachment.get_content() == b"%PDF-1.4 nabidka"


@pytest.mark.parametrize(("locale", "attribution"), [("cs", "odesílatel Petr Dvořák"), ("en", "Petr Dvořák")])
async def test_reply_quotes_in_both_parts(
    emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call, locale: str, attribution: str
) -> None:
    original(emulator, charset="windows-1250", body="Příliš žluťoučký kůň.\n\nDíky, Petr\n")
    runtime = sender(quote_locale=locale, default_signature="plny")
    data = await ok(
        call,
        runtime,
        "mg_send_message",
        account="o",
        to=["petr@partner.example"],
        subject="Re: Dotaz na ceník",
        body="Ceník posílám.",
        in_reply_to="dotaz-1@partner.example",
    )
    assert data["quoted"] is True and data["warning"] is None
    message = parsed(emulator.outbox()[0].data)
    assert message["In-Reply-To"] == "<dotaz-1@partner.example>"
    assert message["References"] == "<dotaz-1@partner.example>"
    plain = text_of(message, "plain")
    assert attribution in plain and ("napsal:" in plain if locale == "cs" else "wrote:" in plain)
    assert "> Příliš žluťoučký kůň." in plain and "\n>\n" in plain
    assert plain.index("Knihovna Lipová") < plain.index("> Příliš")  # signature above the quote
    html = text_of(message, "html")
    assert 'class="gmail_quote"' in html and "mailto:petr@partner.example" in html
    assert "Příliš žluťoučký kůň." in html
    info = emulator.message(ME, data["message_id"])
    assert info is not None and info.thrid == emulator.message(ME, "dotaz-1@partner.example").thrid  # type: ignore[union-attr]


async def test_original_without_readable_body_gives_a_warning(
    emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call
) -> None:
    msg = EmailMessage()
    msg["From"] = "petr@partner.example"
    msg["To"] = ME
    msg["Subject"] = "Jen příloha"
    msg["Message-ID"] = "<jen-priloha@partner.example>"
    msg.add_attachment(b"data", maintype="application", subtype="octet-stream", filename="a.bin")
    emulator.deliver(ME, msg.as_bytes())
    data = await ok(
        call,
        sender(),
        "mg_send_message",
        account="o",
        to=["petr@partner.example"],
        subject="Re",
        body="Díky.",
        in_reply_to="jen-priloha@partner.example",
    )
    assert data["quoted"] is False and "no readable body" in data["warning"]


# ------------------------------------------------------------------ Bcc and the Sent copy


async def test_bcc_absent_from_delivered_bytes_and_gmail_files_the_copy(
    emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call
) -> None:
    data = await ok(
        call,
        sender(),
        "mg_send_message",
        account="o",
        to=["petr@partner.example"],
        bcc=["skryta@partner.example"],
        subject="Tajná kopie",
        body="Text.",
    )
    [sent] = emulator.outbox()
    assert "skryta@partner.example" in sent.recipients
    assert b"Bcc" not in sent.data and b"skryta" not in sent.data
    assert data["sent_copy"]["filed_by"] == "gmail" and data["sent_copy"]["saved"] is True
    copies = [m for m in emulator.messages(ME) if m.header_id == data["message_id"]]
    assert len(copies) == 1 and "\\Sent" in copies[0].labels


async def test_never_filed_means_the_server_appends_with_bcc(
    emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(send, "SENT_WAIT_S", 0.5)  # the 15 s wait itself is tested in test_sent_copy
    emulator.set_knobs(sent_filing_delay_s=None)
    data = await ok(
        call,
        sender(),
        "mg_send_message",
        account="o",
        to=["petr@partner.example"],
        bcc=["skryta@partner.example"],
        subject="Bez kopie",
        body="Text.",
    )
    assert data["sent_copy"]["filed_by"] == "server" and data["sent_copy"]["uid"] is not None
    [copy] = [m for m in emulator.messages(ME) if m.header_id == data["message_id"]]
    assert "\\Sent" in copy.labels and b"Bcc: skryta@partner.example" in copy.raw


# ------------------------------------------------------------------ ports and broken connections


async def test_port_465_refused_587_used_and_remembered(
    emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call
) -> None:
    emulator.add_smtp_fault(SmtpFault(stage="connect", action="421", times=-1, port_kind="ssl"))
    runtime = sender()
    data = await ok(call, runtime, "mg_send_message", account="o", to=["petr@partner.example"], subject="1", body="a")
    assert data["smtp_port"] == 587 and runtime.smtp_ports["o"] == 587
    sessions = emulator.smtp_sessions()
    await ok(call, runtime, "mg_send_message", account="o", to=["petr@partner.example"], subject="2", body="b")
    assert emulator.smtp_sessions() == sessions + 1  # straight to the remembered 587: no probe, 465 not tried
    assert [o.port_kind for o in emulator.outbox()] == ["starttls", "starttls"]


async def test_bad_password_fails_at_once(emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call) -> None:
    runtime = sender(password="spatnespatnespat")
    body = await error(
        call, runtime, "mg_send_message", account="o", to=["petr@partner.example"], subject="x", body="y"
    )
    assert body["code"] == "auth_failed"
    assert emulator.outbox() == []


async def test_drop_during_data_says_it_may_have_gone_and_never_retries(
    emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whether it went out is looked up in Sent, which never gets it: the 15 s of that wait (tested in
    # test_sent_copy) are not this test's subject.
    monkeypatch.setattr(send, "SENT_WAIT_S", 0.5)
    emulator.add_smtp_fault(SmtpFault(stage="data", action="drop"))
    runtime = sender(smtp_port=465)
    body = await error(
        call, runtime, "mg_send_message", account="o", to=["petr@partner.example"], subject="x", body="y"
    )
    assert body["code"] == "upstream_error" and "may or may not have been sent" in body["message"]
    assert emulator.outbox() == []
    assert emulator.smtp_sessions() == 1  # one attempt, no second port, no retry


async def test_drop_after_data_is_reported_as_sent(
    emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call
) -> None:
    emulator.add_smtp_fault(SmtpFault(stage="after_data", action="drop"))
    runtime = sender(smtp_port=465)
    data = await ok(call, runtime, "mg_send_message", account="o", to=["petr@partner.example"], subject="x", body="y")
    assert "went out" in data["warning"] and data["sent_copy"]["filed_by"] == "gmail"
    assert len(emulator.outbox()) == 1 and emulator.smtp_sessions() == 1


async def test_identical_retry_refused_as_duplicate_unless_repeat(
    emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call
) -> None:
    runtime = sender()
    args = {"account": "o", "to": ["petr@partner.example"], "subject": "Faktura", "body": "V příloze."}
    first = await ok(call, runtime, "mg_send_message", **args)
    again = await error(call, runtime, "mg_send_message", **args)
    assert again["code"] == "duplicate_send" and first["message_id"] in again["message"]
    assert len(emulator.outbox()) == 1
    other = await ok(call, runtime, "mg_send_message", **{**args, "body": "Jiný text."})
    assert other["message_id"] != first["message_id"]
    repeated = await ok(call, runtime, "mg_send_message", **args, repeat=True)
    assert repeated["message_id"] != first["message_id"] and len(emulator.outbox()) == 3


# ------------------------------------------------------------------ drafts


async def test_reply_draft_joins_its_thread(
    emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call
) -> None:
    original(emulator)
    runtime = sender(can_send=False)
    data = await ok(
        call,
        runtime,
        "mg_save_draft",
        account="o",
        to=["petr@partner.example"],
        subject="Re: Dotaz na ceník",
        body="Návrh odpovědi.",
        in_reply_to="<dotaz-1@partner.example>",
    )
    assert data["joined_thread"] is True and data["warning"] is None and data["quoted"] is True
    [draft] = [m for m in emulator.messages(ME) if m.header_id == data["message_id"]]
    assert draft.labels == frozenset({"\\Draft"}) and draft.flags == frozenset({"\\Seen"})
    assert emulator.outbox() == [] and emulator.smtp_logins() == 0
    listed = await ok(call, runtime, "mg_list_drafts", account="o")
    assert listed["total_drafts"] == 1
    [entry] = listed["drafts"]
    assert entry["joined_thread"] is True and entry["in_reply_to"] == "dotaz-1@partner.example"
    assert entry["state"] == "draft"


async def test_draft_with_unknown_parent_is_refused_and_one_that_does_not_join_is_flagged(
    emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call
) -> None:
    runtime = sender()
    body = await error(
        call,
        runtime,
        "mg_save_draft",
        account="o",
        to=["petr@partner.example"],
        subject="Re",
        body="x",
        in_reply_to="nikde@example.org",
    )
    assert body["code"] == "not_found"
    assert emulator.messages(ME) == []
    # A draft that claims a parent but whose headers point elsewhere: Gmail files it apart.
    original(emulator)
    emulator.append(ME, _detached_draft(), labels=["\\Draft"], flags=["\\Seen"])
    listed = await ok(call, runtime, "mg_list_drafts", account="o")
    [entry] = listed["drafts"]
    assert entry["joined_thread"] is None and "no longer in this mailbox" in entry["warning"]


def _detached_draft() -> bytes:
    msg = EmailMessage()
    msg["From"] = ME
    msg["To"] = "petr@partner.example"
    msg["Subject"] = "Re: něco"
    msg["Message-ID"] = "<detached@example.cz>"
    msg["In-Reply-To"] = "<zmizela@partner.example>"
    msg.set_content("Koncept.")
    return msg.as_bytes()


async def test_draft_needs_a_recipient_and_respects_attachment_dirs(
    emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call, tmp_path: Path
) -> None:
    runtime = sender()
    body = await error(call, runtime, "mg_save_draft", account="o", to=[], subject="x", body="y")
    assert body["code"] == "invalid_input"
    body = await error(
        call, runtime, "mg_save_draft", account="o", to=[], bcc=["a@partner.example"], subject="x", body="y"
    )
    assert body["code"] == "invalid_input" and "at least one address in `to`" in body["message"]
    outside = tmp_path / "jinde.txt"
    outside.write_text("x")
    body = await error(
        call,
        runtime,
        "mg_save_draft",
        account="o",
        to=["a@partner.example"],
        subject="x",
        body="y",
        attachments=[str(outside)],
    )
    assert body["code"] == "send_forbidden"
    assert emulator.messages(ME) == []


# ------------------------------------------------------------------ trash


async def test_trash_moves_once_then_reports_already(
    emulator: GmailEmulator, sender: Callable[..., Runtime], call: Call
) -> None:
    original(emulator)
    runtime = sender()
    data = await ok(call, runtime, "mg_trash_message", account="o", message_id="<dotaz-1@partner.example>")
    assert data["moved"] is True and data["folder"] == "[Gmail]/Trash" and "30 days" in data["note"]
    info = emulator.message(ME, "dotaz-1@partner.example")
    assert info is not None and info.location == "trash"
    again = await ok(call, runtime, "mg_trash_message", account="o", message_id="dotaz-1@partner.example")
    assert again["moved"] is False and "already in Trash" in again["note"]
    missing = await error(call, runtime, "mg_trash_message", account="o", message_id="nikde@example.org")
    assert missing["code"] == "not_found"
    names = [c.name for c in emulator.commands()]
    assert "UID EXPUNGE" not in names and "EXPUNGE" not in names
