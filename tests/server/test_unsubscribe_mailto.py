"""mg_unsubscribe(method="mailto") through the server, over the emulator: the one opt-out message a
signed List-Unsubscribe asks for, sent through the send path (journal, Sent copy), allowed by
can_unsubscribe alone, and neither widening nor widened by allowed_recipients."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import FaultRule, GmailEmulator
from mcp_multi_gmail.mail.subscriptions.unsubscribed import LEFT_FILE
from mcp_multi_gmail.runtime import Runtime
from support.newsletters import Newsletter, deliver

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
LEAVE = "members-request@lists.club.example"
# Mailman's form: a web options page, a mailto to -request, no Post field; the list signs its fields.
CLUB = Newsletter(
    "members@lists.club.example",
    "Club",
    "members.lists.club.example",
    f"<https://lists.club.example/mailman/options/members>,\r\n <mailto:{LEAVE}?subject=unsubscribe>",
    post=False,
    signs=("list-unsubscribe", "list-id"),
)
# Allowed to leave lists, and to send to nobody.
ACCOUNT: dict[str, Any] = {
    "name": "o",
    "address": ME,
    "password": "osobniheslohesla",
    "can_unsubscribe": True,
    "can_send": True,
    "allowed_recipients": ["@partner.example"],
}


@pytest.fixture(autouse=True)
def quick_sent(emulator: GmailEmulator) -> None:
    emulator.set_knobs(sent_filing_delay_s=0.0, raw_search_lag_s=0.0)


def parsed(data: bytes) -> EmailMessage:
    message = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    return message


async def test_the_opt_out_is_exactly_what_the_signed_header_asks_for(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    [newest, older] = deliver(emulator, ME, CLUB, 2)
    runtime = make_runtime(write_config([ACCOUNT]))
    result = await ok(call, runtime, "mg_unsubscribe", account="o", message_id=older, method="mailto")
    assert result["done"] is True and result["remembered"] is True and result["message_id"] == newest
    assert result["contacted"] == f"mailto:{LEAVE}" and result["signed_by"] == "lists.club.example"
    mail = result["mailto"]
    assert (mail["to"], mail["subject"], mail["body"]) == (LEAVE, "unsubscribe", "unsubscribe")
    assert mail["sent_copy"]["saved"] is True
    # What the emulator's SMTP received: to that address alone, from the mailbox itself, nothing else.
    [sent] = emulator.outbox()
    assert sent.account == ME and sent.envelope_from == ME and sent.recipients == [LEAVE]
    message = parsed(sent.data)
    assert message["From"] == ME and message["To"] == LEAVE and message["Subject"] == "unsubscribe"
    assert message["Cc"] is None and message["Bcc"] is None and message["In-Reply-To"] is None
    assert message["Message-ID"] == f"<{mail['message_id']}>"
    # text/plain alone: a list server reads the body as commands, an HTML twin would be noise.
    assert message.get_content_type() == "text/plain" and message.get_content().strip() == "unsubscribe"
    # Its copy in Sent, the same message.
    copies = [m for m in emulator.messages(ME) if m.header_id == mail["message_id"] and "\\Sent" in m.labels]
    assert len(copies) == 1 and parsed(copies[0].raw)["To"] == LEAVE
    # allowed_recipients was not widened: an ordinary message to that address is still refused.
    refused = await error(
        call,
        runtime,
        "mg_send_message",
        account="o",
        to=[LEAVE],
        subject="unsubscribe",
        body="unsubscribe",
        signature=False,
    )
    assert refused["code"] == "send_forbidden" and "allowed_recipients" in refused["message"]
    assert len(emulator.outbox()) == 1


async def test_the_urls_own_subject_and_body_go_out(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    letter = Newsletter(
        "news@town.example",
        "Town",
        None,
        "<mailto:leave@town.example?subject=Odhl%C3%A1sit%20odb%C4%9Br&body=unsubscribe%20town%0D%0Aend>",
        post=False,
    )
    [message_id] = deliver(emulator, ME, letter)
    # can_send off and nobody allowed: the opt-out needs neither.
    account = {**ACCOUNT, "can_send": False, "allowed_recipients": []}
    runtime = make_runtime(write_config([account]))
    plan = await ok(call, runtime, "mg_unsubscribe", account="o", message_id=message_id, method="mailto", dry_run=True)
    assert plan["dry_run"] is True and plan["done"] is False and emulator.outbox() == []
    assert plan["mailto"] == {
        "to": "leave@town.example",
        "subject": "Odhlásit odběr",
        "body": "unsubscribe town\r\nend",
        "message_id": None,
        "sent_copy": None,
    }
    await ok(call, runtime, "mg_unsubscribe", account="o", message_id=message_id, method="mailto")
    [sent] = emulator.outbox()
    message = parsed(sent.data)
    assert sent.recipients == ["leave@town.example"] and message["Subject"] == "Odhlásit odběr"
    body = message.get_body(("plain",))
    assert body is not None and body.get_content().splitlines() == ["unsubscribe town", "end"]


async def test_refused_when_can_unsubscribe_is_false(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    [message_id] = deliver(emulator, ME, CLUB)
    # Sending allowed, and to that very address: can_unsubscribe is still what decides.
    account = {**ACCOUNT, "can_unsubscribe": False, "allowed_recipients": [LEAVE]}
    runtime = make_runtime(write_config([account]))
    for dry_run in (True, False):
        refused = await error(
            call, runtime, "mg_unsubscribe", account="o", message_id=message_id, method="mailto", dry_run=dry_run
        )
        assert refused["code"] == "unsubscribe_refused" and "can_unsubscribe is not enabled" in refused["message"]
    assert emulator.outbox() == []


@pytest.mark.parametrize(
    ("letter", "reason"),
    [
        (
            Newsletter(
                "m@lists.club.example", "C", "c.lists.club.example", f"<mailto:{LEAVE}>", post=False, signs=("list-id",)
            ),
            "the passing DKIM signature does not cover List-Unsubscribe",
        ),
        (
            Newsletter(
                "m@lists.club.example", "C", "c.lists.club.example", f"<mailto:{LEAVE}>", post=False, signed=False
            ),
            "no DKIM result",
        ),
        (
            Newsletter(
                "m@lists.club.example", "C", "c.lists.club.example", f"<mailto:{LEAVE}?cc=boss@x.example>", post=False
            ),
            "the mailto: URL names more than one recipient",
        ),
    ],
    ids=["not-covered", "unsigned", "cc"],
)
async def test_refused_when_the_field_is_not_signed(
    emulator: GmailEmulator,
    call: Call,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    letter: Newsletter,
    reason: str,
) -> None:
    [message_id] = deliver(emulator, ME, letter)
    runtime = make_runtime(write_config([ACCOUNT]))
    refused = await error(call, runtime, "mg_unsubscribe", account="o", message_id=message_id, method="mailto")
    assert refused["code"] == "unsubscribe_refused" and f": {reason}." in refused["message"]
    assert 'mailbox "o"' in refused["message"]
    assert "Nothing was sent" in refused["message"] and emulator.outbox() == []
    assert not (runtime.state_folder() / LEFT_FILE).exists()


async def test_once_per_list_across_restarts_and_force(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    [message_id] = deliver(emulator, ME, CLUB)
    config = write_config([ACCOUNT])
    first = make_runtime(config)
    done = await ok(call, first, "mg_unsubscribe", account="o", message_id=message_id, method="mailto")
    again = await error(call, first, "mg_unsubscribe", account="o", message_id=message_id, method="mailto")
    assert again["code"] == "unsubscribe_refused" and "already left on" in again["message"]
    restarted = make_runtime(config)  # a new process over the same state folder
    assert not restarted.handed_over
    after = await error(call, restarted, "mg_unsubscribe", account="o", message_id=message_id, method="mailto")
    assert after["code"] == "unsubscribe_refused" and f"mailto:{LEAVE}" in after["message"]
    assert len(emulator.outbox()) == 1
    forced = await ok(
        call, restarted, "mg_unsubscribe", account="o", message_id=message_id, method="mailto", force=True
    )
    assert forced["done"] is True and forced["mailto"]["message_id"] != done["mailto"]["message_id"]
    assert len(emulator.outbox()) == 2


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("{not json", "not a file this server wrote"),
        ('{"version": 1, "left": {"o": []}}', "not a record this server wrote"),
        ('{"version": 1, "left": [{"account": "o"}]}', "an entry without account, list, target, method or time"),
    ],
    ids=["not-json", "not-a-list", "incomplete-entry"],
)
async def test_a_damaged_record_is_reported_never_emptied(
    emulator: GmailEmulator,
    call: Call,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    content: str,
    why: str,
) -> None:
    [message_id] = deliver(emulator, ME, CLUB)
    runtime = make_runtime(write_config([ACCOUNT]))
    record = runtime.state_folder() / LEFT_FILE
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(content, encoding="utf-8")
    refused = await error(call, runtime, "mg_unsubscribe", account="o", message_id=message_id, method="mailto")
    assert refused["code"] == "upstream_error" and emulator.outbox() == []
    # Which file, and what is wrong with it: the user is asked to look at it.
    assert f"{record} is damaged ({why})" in refused["message"]
    assert record.read_text(encoding="utf-8") == content
    listed = await ok(call, runtime, "mg_list_subscriptions", account="o")
    assert "damaged" in listed["warning"] and len(listed["subscriptions"]) == 1


async def test_the_newest_message_of_a_list_by_another_poster(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    # A discussion list: each issue From its poster, the List-Id the same; the newest one's header wins.
    [older] = deliver(emulator, ME, CLUB, first_day=5)
    newer = Newsletter(
        "anna@lists.club.example",
        "Anna",
        "members.lists.club.example",
        "<mailto:members-leave@lists.club.example>",
        post=False,
    )
    [newest] = deliver(emulator, ME, newer, first_day=1)
    runtime = make_runtime(write_config([ACCOUNT]))
    plan = await ok(call, runtime, "mg_unsubscribe", account="o", message_id=older, method="mailto", dry_run=True)
    assert plan["message_id"] == newest and plan["mailto"]["to"] == "members-leave@lists.club.example"
    assert plan["note"] == "Dry run: this message would be sent from the mailbox's own address; nothing was sent."


async def test_a_refused_list_id_search_falls_back_to_the_sender(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    # Whether Gmail's HEADER search reads List-Id is not documented: where it is refused, the
    # message's own sender still finds the list's messages, and the named one is always a candidate.
    [older] = deliver(emulator, ME, CLUB, first_day=5)
    other = Newsletter("anna@lists.club.example", "Anna", "members.lists.club.example", "<mailto:x@lists.club.example>")
    deliver(emulator, ME, other, first_day=1)
    runtime = make_runtime(write_config([ACCOUNT]))
    emulator.add_fault(FaultRule("no:[CANNOT] Unsupported search", match="UID SEARCH", nth=3, times=1))
    plan = await ok(call, runtime, "mg_unsubscribe", account="o", message_id=older, method="mailto", dry_run=True)
    header_searches = [c.line for c in emulator.commands(ME) if c.name == "UID SEARCH" and "HEADER List-Id" in c.line]
    searches = [c.line for c in emulator.commands(ME) if c.name == "UID SEARCH"]
    assert "HEADER List-Id" in searches[2], searches  # the third, which the fault refused
    assert len(header_searches) == 1  # asked, refused, and the call went on
    assert plan["message_id"] == older and plan["mailto"]["to"] == LEAVE
