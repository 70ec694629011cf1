"""Threading on arrival: references, and (knob `thread_by_subject`, on by default) a matching subject."""

from __future__ import annotations

import pytest

from gmail_emulator import GmailEmulator, Knobs
from gmail_emulator.store import thread_subject

ME = "osobni@example.cz"


def mail(mid: str, subject: str, in_reply_to: str | None = None) -> bytes:
    head = f"From: petr@partner.example\r\nTo: {ME}\r\nSubject: {subject}\r\nMessage-ID: <{mid}>\r\n"
    if in_reply_to:
        head += f"In-Reply-To: <{in_reply_to}>\r\nReferences: <{in_reply_to}>\r\n"
    return (head + "\r\nText.\r\n").encode()


def test_subject_matching_is_on_by_default() -> None:
    assert Knobs().thread_by_subject is True


@pytest.mark.parametrize(
    ("reply", "joins"),
    [
        ("Re: Chata", True),
        ("RE:  chata", True),
        ("Fwd: Re: Chata", True),
        ("AW: Chata", True),
        ("Re[3]: Chata", True),
        ("Chata", True),
        ("Re: Chata v létě", False),
        ("Úplně jiné téma", False),
    ],
)
def test_reply_joins_only_with_a_matching_subject(emulator: GmailEmulator, reply: str, joins: bool) -> None:
    emulator.set_knobs(thread_by_subject=True)
    first = emulator.deliver(ME, mail("a@x", "Chata"))
    second = emulator.deliver(ME, mail("b@x", reply, in_reply_to="a@x"))
    assert (second.thrid == first.thrid) is joins


def test_without_the_knob_references_alone_thread(emulator: GmailEmulator) -> None:
    emulator.set_knobs(thread_by_subject=False)
    first = emulator.deliver(ME, mail("a@x", "Chata"))
    second = emulator.deliver(ME, mail("b@x", "Úplně jiné téma", in_reply_to="a@x"))
    assert second.thrid == first.thrid


def test_a_matching_subject_alone_does_not_thread(emulator: GmailEmulator) -> None:
    first = emulator.deliver(ME, mail("a@x", "Chata"))
    second = emulator.deliver(ME, mail("b@x", "Re: Chata"))
    assert second.thrid != first.thrid


def test_thread_subject_strips_prefixes_case_and_spacing() -> None:
    assert thread_subject(" Re: RE:Fwd:  Chata  na horách ") == "chata na horách"
    assert thread_subject("Regata") == "regata"
