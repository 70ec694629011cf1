"""Replies and Gmail's threading: a reply joins its thread only when the subject matches too.

Google documents that the Subject headers must match for a message to join a thread; the emulator's
`thread_by_subject` knob (on by default) models that, and off models threading on references alone.
The client is tested under both.
"""

from __future__ import annotations

import email
import email.policy
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.mail.sending.prepare import detached_warning, reply_subject, same_topic
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
ORIGINAL = "dotaz-1@partner.example"
BY_SUBJECT = pytest.mark.parametrize("by_subject", [True, False], ids=["subject-and-refs", "refs-only"])


@pytest.fixture
def runtime(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> Runtime:
    entry = {"name": "o", "address": ME, "password": "osobniheslohesla", "can_send": True}
    return make_runtime(write_config([entry]))


def deliver_original(emulator: GmailEmulator, subject: str = "Dotaz na ceník") -> None:
    msg = EmailMessage()
    msg["From"] = "Petr Dvořák <petr@partner.example>"
    msg["To"] = ME
    msg["Subject"] = subject
    msg["Message-ID"] = f"<{ORIGINAL}>"
    msg["Date"] = "Mon, 28 Sep 2026 14:05:00 +0200"
    msg.set_content("Pošlete mi prosím ceník.")
    emulator.deliver(ME, msg.as_bytes())


def subject_in(data: bytes) -> str:
    return str(email.message_from_bytes(data, policy=email.policy.default)["Subject"])


@pytest.mark.parametrize(
    ("original", "reply"),
    [
        ("Dotaz na ceník", "Re: Dotaz na ceník"),
        ("Re: Dotaz na ceník", "Re: Dotaz na ceník"),
        ("RE: Dotaz", "RE: Dotaz"),
        ("re:Dotaz", "re:Dotaz"),
        ("Re[2]: Dotaz", "Re[2]: Dotaz"),
        ("Fwd: Ceník", "Re: Fwd: Ceník"),
        ("Regata 2026", "Re: Regata 2026"),  # a word starting with "Re" is not a prefix
        ("Dva\r\n řádky", "Re: Dva řádky"),
        ("", "Re:"),
        (None, "Re:"),
    ],
)
def test_reply_subject_adds_one_re(original: str | None, reply: str) -> None:
    assert reply_subject(original) == reply


def test_subjects_compare_without_prefixes_case_or_spacing() -> None:
    assert same_topic("Re: Dotaz  na ceník", "dotaz na CENÍK")
    assert same_topic("AW: Fwd: Dotaz", "Dotaz")
    assert not same_topic("Nový dotaz", "Dotaz")


def test_the_warning_names_the_likely_cause() -> None:
    changed = detached_warning("This draft", "Nabídka", "Dotaz na ceník", ORIGINAL)
    assert "subject" in changed and '"Nabídka"' in changed and '"Dotaz na ceník"' in changed
    same = detached_warning("This draft", "Re: Dotaz na ceník", "Dotaz na ceník", ORIGINAL)
    assert "In-Reply-To" in same and ORIGINAL in same


@BY_SUBJECT
async def test_reply_draft_without_subject_gets_re_and_joins(
    emulator: GmailEmulator, runtime: Runtime, call: Call, by_subject: bool
) -> None:
    emulator.set_knobs(thread_by_subject=by_subject)
    deliver_original(emulator)
    data = await ok(
        call,
        runtime,
        "mg_save_draft",
        account="o",
        to=["petr@partner.example"],
        body="Ceník posílám.",
        in_reply_to=ORIGINAL,
    )
    assert data["joined_thread"] is True and data["warning"] is None
    draft = emulator.message(ME, data["message_id"])
    assert draft is not None and subject_in(draft.raw) == "Re: Dotaz na ceník"


@BY_SUBJECT
async def test_reply_to_a_reply_does_not_double_the_prefix(
    emulator: GmailEmulator, runtime: Runtime, call: Call, by_subject: bool
) -> None:
    emulator.set_knobs(thread_by_subject=by_subject)
    deliver_original(emulator, subject="RE: Dotaz na ceník")
    data = await ok(
        call, runtime, "mg_save_draft", account="o", to=["petr@partner.example"], body="Ano.", in_reply_to=ORIGINAL
    )
    draft = emulator.message(ME, data["message_id"])
    assert draft is not None and subject_in(draft.raw) == "RE: Dotaz na ceník" and data["joined_thread"] is True


@BY_SUBJECT
async def test_changed_subject_is_named_when_the_draft_does_not_join(
    emulator: GmailEmulator, runtime: Runtime, call: Call, by_subject: bool
) -> None:
    emulator.set_knobs(thread_by_subject=by_subject)
    deliver_original(emulator)
    data = await ok(
        call,
        runtime,
        "mg_save_draft",
        account="o",
        to=["petr@partner.example"],
        subject="Nabídka",
        body="Posílám nabídku.",
        in_reply_to=ORIGINAL,
    )
    listed = await ok(call, runtime, "mg_list_drafts", account="o")
    [entry] = listed["drafts"]
    if by_subject:
        # Gmail files the reply apart: both results say so and name the subject as the cause.
        assert data["joined_thread"] is False and entry["joined_thread"] is False
        for warning in (data["warning"], entry["warning"]):
            assert "separate conversation" in warning and '"Nabídka"' in warning and "Dotaz na ceník" in warning
    else:
        assert data["joined_thread"] is True and entry["joined_thread"] is True and entry["warning"] is None


@BY_SUBJECT
async def test_reply_sent_without_subject_goes_out_as_re(
    emulator: GmailEmulator, runtime: Runtime, call: Call, by_subject: bool
) -> None:
    emulator.set_knobs(thread_by_subject=by_subject)
    deliver_original(emulator)
    data = await ok(
        call,
        runtime,
        "mg_send_message",
        account="o",
        to=["petr@partner.example"],
        body="Ceník v příloze.",
        in_reply_to=ORIGINAL,
        quote_original=False,
    )
    [sent] = emulator.outbox()
    assert subject_in(sent.data) == "Re: Dotaz na ceník"
    copy = emulator.message(ME, data["message_id"])
    original = emulator.message(ME, ORIGINAL)
    assert copy is not None and original is not None and copy.thrid == original.thrid


async def test_subject_may_be_left_out_only_when_replying(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    for tool in ("mg_save_draft", "mg_send_message"):
        body = await error(call, runtime, tool, account="o", to=["petr@partner.example"], body="Bez předmětu.")
        assert body["code"] == "invalid_input" and "subject" in body["message"]
    assert emulator.outbox() == [] and emulator.messages(ME) == []
