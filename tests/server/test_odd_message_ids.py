"""Every Message-ID the server shows is accepted back by every tool that takes one, and finds the
same message: the odd forms of tests/corpus (no angle brackets, RFC 2822's obsolete spacing and
comments, several @, one id on several messages), delivered as they are."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime
from support.corpus import message_bytes

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
# corpus file → the id the server shows for it (the one form, parse.envelope.bare_id)
ODD = {
    "mime4j/mimetools-testmsgs/twopart.msg": "102.10200000000105",  # Message-Id:102.10200000000105
    "mail-mime-parser/m4009.txt": "12223",  # Message-ID: 12223
    "ruby-mail/plain_emails/mix_caps_content_type.eml": "201002191008.30117.foo.bar@company.com",
    # <1234   @   local(blah)  .machine .example> (RFC 2822 appendix A.6.3)
    "ruby-mail/rfc2822/example13.eml": "1234@local.machine.example",
    "ruby-mail/plain_emails/raw_email_double_at_in_header.eml": "d3b8cf8e49f0448085@0c28713a1@f473e@37signals.com",
}
# Six hunnysoft samples carry this one id: each tool acts on the newest copy, copies says how many.
SHARED = "NDBBIAKOPKHFGPLCODIGIEKBCHAA.doug@example.com"
SHARING = [
    "mail-mime-parser/m0001.txt",
    "mail-mime-parser/m0023.txt",
    "mail-mime-parser/m4001.txt",
]


@pytest.fixture
def runtime(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime], tmp_path: Path
) -> Runtime:
    entry = {
        "name": "o",
        "address": ME,
        "password": "osobniheslohesla",
        "can_send": True,
        "processed_label": "Asistent",
    }
    return make_runtime(write_config([entry], download_dir=str(tmp_path / "dl")))


async def shown_id(call: Call, runtime: Runtime, thread_id: int) -> str:
    thread = await ok(call, runtime, "mg_get_thread", account="o", thread_id=str(thread_id))
    [message] = thread["messages"]
    found: str = message["message_id"]
    return found


async def send_reply(call: Call, runtime: Runtime, in_reply_to: str, **extra: Any) -> dict[str, Any]:
    """mg_send_message answering `in_reply_to` (its subject comes from the answered message)."""
    args = {"account": "o", "to": ["petr@partner.example"], "body": "Ahoj.", "in_reply_to": in_reply_to}
    sent: dict[str, Any] = await ok(call, runtime, "mg_send_message", **args, **extra)
    return sent


async def test_each_odd_message_id_is_accepted_back_by_every_tool(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    # example13 is RFC 2822's obsolete-syntax sample with a literal "__" line in its header: its
    # Message-ID is a header field only under the header-end rule "blank_line".
    emulator.set_knobs(header_end="blank_line")
    delivered = {name: emulator.deliver(ME, message_bytes(name)) for name in ODD}
    for name, expected in ODD.items():
        info = delivered[name]
        bare = await shown_id(call, runtime, info.thrid)
        assert bare == expected, name
        message = await ok(call, runtime, "mg_get_message", account="o", message_id=bare)
        assert message["thread_id"] == str(info.thrid) and message["copies"] == 1, name
        for attachment in message["attachments"]:
            saved = await ok(
                call,
                runtime,
                "mg_get_attachment",
                account="o",
                message_id=bare,
                attachment_id=attachment["attachment_id"],
            )
            assert saved["size_bytes"] > 0, name
        await ok(call, runtime, "mg_set_flags", account="o", message_id=bare, flagged=True)
        labelled = await ok(call, runtime, "mg_label_message", account="o", message_ids=[bare], label="Asistent")
        assert labelled["failed"] == 0 and labelled["succeeded"] >= 1, (name, labelled)
        await ok(call, runtime, "mg_unlabel_message", account="o", message_ids=[bare], label="Asistent")
        draft = await ok(
            call, runtime, "mg_save_draft", account="o", to=["petr@partner.example"], body="Ok.", in_reply_to=bare
        )
        saved_draft = emulator.message(ME, draft["message_id"])
        assert saved_draft is not None and f"In-Reply-To: <{bare}>".encode() in saved_draft.raw, name
        after = emulator.messages(ME)
        mine = next(m for m in after if m.msgid == info.msgid)
        assert "\\Flagged" in mine.flags and "Asistent" not in mine.labels, name
        if name == "ruby-mail/rfc2822/example13.eml":  # one send is enough: it takes the id as drafts do
            sent = await send_reply(call, runtime, bare)
            assert sent["message_id"]
            assert any(f"In-Reply-To: <{bare}>".encode() in entry.data for entry in emulator.outbox())
        trashed = await ok(call, runtime, "mg_trash_message", account="o", message_id=bare)
        assert trashed["moved"] is True, name


async def test_one_message_id_on_several_messages_finds_the_newest_and_counts_them(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    infos = [emulator.deliver(ME, message_bytes(name)) for name in SHARING]
    message = await ok(call, runtime, "mg_get_message", account="o", message_id=SHARED)
    assert message["copies"] == len(SHARING)
    assert message["thread_id"] == str(max(infos, key=lambda i: i.msgid).thrid)
    labelled = await ok(call, runtime, "mg_label_message", account="o", message_ids=[f"<{SHARED}>"], label="Asistent")
    assert labelled["failed"] == 0
    newest = max(infos, key=lambda i: i.msgid)
    assert [m.msgid for m in emulator.messages(ME) if "Asistent" in m.labels] == [newest.msgid]  # as mg_get_message


async def test_a_message_without_message_id_is_shown_by_its_gmail_id_and_every_tool_takes_it(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    # MIME-tools' uu-zeegee.msg: no Message-ID, two uuencoded GIFs in a plain text part.
    info = emulator.deliver(ME, message_bytes("mime4j/mimetools-testmsgs/uu-zeegee.msg"))
    thread = await ok(call, runtime, "mg_get_thread", account="o", thread_id=str(info.thrid), bodies="all")
    [listed] = thread["messages"]
    shown = listed["message_id"]
    assert shown == f"gmail-msgid-{info.msgid}" and listed["body"]
    found = await ok(call, runtime, "mg_search_threads", account="o", query="subject:uudecoding")
    assert [t["newest_match"]["message_id"] for t in found["threads"]] == [shown]
    message = await ok(call, runtime, "mg_get_message", account="o", message_id=shown)
    assert message["thread_id"] == str(info.thrid) and message["copies"] == 1
    assert [a["filename"] for a in message["attachments"]] == ["up.gif", "zeegee.gif"]
    for attachment in message["attachments"]:
        saved = await ok(
            call, runtime, "mg_get_attachment", account="o", message_id=shown, attachment_id=attachment["attachment_id"]
        )
        assert Path(saved["path"]).read_bytes()[:6] == b"GIF87a" and saved["decoded"] is True
    await ok(call, runtime, "mg_set_flags", account="o", message_id=shown, flagged=True)
    labelled = await ok(call, runtime, "mg_label_message", account="o", message_ids=[shown], label="Asistent")
    assert labelled["succeeded"] == 1 and labelled["messages"][0]["message_id"] == shown, labelled
    mine = next(m for m in emulator.messages(ME) if m.msgid == info.msgid)
    assert "\\Flagged" in mine.flags and "Asistent" in mine.labels
    await ok(call, runtime, "mg_unlabel_message", account="o", message_ids=[shown], label="Asistent")
    # A reply: the answered message has no id to name, so no In-Reply-To or References is written,
    # and the subject still comes from it.
    draft = await ok(
        call, runtime, "mg_save_draft", account="o", to=["petr@partner.example"], body="Ok.", in_reply_to=shown
    )
    saved_draft = emulator.message(ME, draft["message_id"])
    assert saved_draft is not None and b"In-Reply-To" not in saved_draft.raw and b"References" not in saved_draft.raw
    assert b"Subject: Re: uudecoding" in saved_draft.raw
    # Gmail threads a reply by those headers (Google's threading rules), so it is told, not hidden.
    assert draft["joined_thread"] is False and "no Message-ID" in draft["warning"]
    sent = await send_reply(call, runtime, shown, references=[f"<{SHARED}> {shown}"])
    [entry] = [e for e in emulator.outbox() if sent["message_id"].encode() in e.data]
    assert b"In-Reply-To" not in entry.data and b"Subject: Re: uudecoding" in entry.data
    assert f"References: <{SHARED}>\r\n".encode() in entry.data  # the real id stays, the Gmail one goes
    trashed = await ok(call, runtime, "mg_trash_message", account="o", message_id=shown)
    assert trashed["moved"] is True
    assert next(m for m in emulator.messages(ME) if m.msgid == info.msgid).location == "trash"
    again = await ok(call, runtime, "mg_trash_message", account="o", message_id=shown)
    assert again["moved"] is False and "already in Trash" in again["note"]


async def test_an_id_in_the_gmail_form_that_names_no_message_is_not_found(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    info = emulator.deliver(ME, message_bytes("mime4j/mimetools-testmsgs/uu-zeegee.msg"))
    missing = await error(call, runtime, "mg_get_message", account="o", message_id=f"gmail-msgid-{info.msgid + 1}")
    assert missing["code"] == "not_found"
