"""The emulator's SMTP faults (smtp_faults.py): Gmail's refusals and dropped connections at each stage
of a session, driven by aiosmtplib (the product's client)."""

from __future__ import annotations

from typing import Literal

import aiosmtplib
import pytest

from gmail_emulator import GmailEmulator, SmtpFault
from support import wait_until
from support.smtp_sending import ALICE, BOB, Port, inbox, make_message, send, sent_copies


def test_fault_421_at_connect(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("connect", "421"))
    with pytest.raises(aiosmtplib.SMTPConnectResponseError) as info:
        send(emu, make_message())
    assert info.value.code == 421
    assert "4.7.0 Try again later" in info.value.message
    send(emu, make_message())  # times=1: the next connection is fine
    assert len(emu.outbox()) == 1


def test_fault_421_at_mail_closes_the_connection(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("mail", "421"))
    with pytest.raises(aiosmtplib.SMTPSenderRefused) as info:
        send(emu, make_message())
    assert info.value.code == 421
    assert emu.outbox() == []
    assert sent_copies(emu) == []


def test_fault_421_at_ehlo(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("ehlo", "421"))
    with pytest.raises(aiosmtplib.SMTPResponseException) as info:
        send(emu, make_message())
    assert info.value.code == 421


def test_fault_550_rejects_only_the_matching_recipient(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("rcpt", "550", match="ghost@example.com"))
    errors, _reply = send(emu, make_message(to=[BOB, "ghost@example.com"]))
    assert set(errors) == {"ghost@example.com"}
    code, text = errors["ghost@example.com"]
    assert code == 550 and "5.1.1" in text
    assert emu.outbox()[0].recipients == [BOB]
    assert len(inbox(emu, BOB)) == 1


def test_fault_550_on_the_only_recipient(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("rcpt", "550"))
    with pytest.raises(aiosmtplib.SMTPRecipientsRefused):
        send(emu, make_message())
    assert emu.outbox() == []


def test_fault_534_app_password_required(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("auth", "534", match=ALICE))
    with pytest.raises(aiosmtplib.SMTPAuthenticationError) as info:
        send(emu, make_message())
    assert info.value.code == 534
    assert "5.7.9 Application-specific password required" in info.value.message
    assert emu.smtp_logins() == 0


def test_fault_535_with_the_right_password(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("auth", "535"))
    with pytest.raises(aiosmtplib.SMTPAuthenticationError) as info:
        send(emu, make_message())
    assert info.value.code == 535


def test_fault_drop_during_data_loses_the_message(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("data", "drop"))
    with pytest.raises(aiosmtplib.SMTPServerDisconnected):
        send(emu, make_message())
    wait_until(lambda: emu.smtp_open_sessions() == 0)  # the server is done with the dropped session
    assert emu.outbox() == []
    assert sent_copies(emu) == []
    assert emu.messages(BOB) == []


@pytest.mark.parametrize(("stage", "accepted"), [("data", False), ("after_data", True)])
def test_fault_421_around_data(emu: GmailEmulator, stage: Literal["data", "after_data"], accepted: bool) -> None:
    emu.add_smtp_fault(SmtpFault(stage, "421"))
    with pytest.raises(aiosmtplib.SMTPDataError) as info:
        send(emu, make_message())
    assert info.value.code == 421
    assert len(emu.outbox()) == (1 if accepted else 0)
    assert len(inbox(emu, BOB)) == (1 if accepted else 0)


def test_infinite_filing_delay_means_never(emu: GmailEmulator) -> None:
    emu.set_knobs(sent_filing_delay_s=float("inf"))
    send(emu, make_message())
    assert sent_copies(emu) == []
    assert len(emu.outbox()) == 1


@pytest.mark.parametrize("port", ["ssl", "starttls"])
def test_fault_drop_after_data_message_went_anyway(emu: GmailEmulator, port: Port) -> None:
    emu.add_smtp_fault(SmtpFault("after_data", "drop"))
    with pytest.raises(aiosmtplib.SMTPServerDisconnected):
        send(emu, make_message(), port=port)
    assert len(emu.outbox()) == 1
    assert len(sent_copies(emu)) == 1
    assert len(inbox(emu, BOB)) == 1
    server = b"".join(e.data for e in emu.wire_log() if e.protocol == "smtp" and e.direction == "s")
    assert b"250 2.0.0 OK" not in server


def test_fault_port_kind_and_times(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("mail", "421", times=2, port_kind="starttls"))
    send(emu, make_message(), port="ssl")
    for _ in range(2):
        with pytest.raises(aiosmtplib.SMTPSenderRefused):
            send(emu, make_message(), port="starttls")
    send(emu, make_message(), port="starttls")
    assert [e.port_kind for e in emu.outbox()] == ["ssl", "starttls"]


def test_fault_always_until_cleared(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("connect", "drop", times=-1))
    for _ in range(2):
        with pytest.raises((aiosmtplib.SMTPConnectError, aiosmtplib.SMTPServerDisconnected)):
            send(emu, make_message())
    emu.clear_faults()
    send(emu, make_message())


def test_fault_rule_validation() -> None:
    with pytest.raises(ValueError, match="unknown SMTP fault stage"):
        SmtpFault("quit", "421")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown SMTP fault action"):
        SmtpFault("mail", "500")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="times must be"):
        SmtpFault("mail", "421", times=0)
