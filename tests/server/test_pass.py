"""The pass and labelling against the emulator: nothing unprocessed is ever lost from a window."""

from __future__ import annotations

import email.utils
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from imapclient import IMAPClient
from toolcalls import Call, error, ok

from gmail_emulator import FaultRule, GmailEmulator
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

JANA = "jana.novakova@example.cz"
TYM = "tym@example.com"


def days_ago(days: int) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).date().isoformat()


def ids_of(thread: dict[str, Any]) -> list[str]:
    return [m["message_id"] for m in thread["unprocessed"]]


def reply(to_id: str, sender: str, subject: str, new_id: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = JANA
    msg["Subject"] = subject
    msg["Message-ID"] = f"<{new_id}>"
    msg["In-Reply-To"] = f"<{to_id}>"
    msg["References"] = f"<{to_id}>"
    msg.set_content("Ještě jedna věc.")
    return msg


# ------------------------------------------------------------------ the cycle


async def test_full_cycle_pass_label_pass_and_a_new_reply(
    demo: Runtime, call: Call, emulator_session: GmailEmulator
) -> None:
    since = days_ago(5)
    first = await ok(call, demo, "mg_next_pass", account="osobni", since=since, max_threads=100)
    assert first["window_clear"] is False and first["total_threads"] == len(first["threads"])
    threads = {t["thread_id"]: t for t in first["threads"]}
    chata = next(t for t in threads.values() if ids_of(t) == ["chata-vysocina-09@example.org"])
    assert chata["message_count"] == 9  # the whole thread, though only one message is new
    assert chata["subject"].startswith("Chata na Vysočině")  # the oldest message's subject
    assert chata["classification"] == ["Asistent/akce"]  # from the thread, not the new message
    assert chata["assigned"] is None
    # The forward written a month ago but delivered today is in today's window.
    assert any("fwd-vyuctovani.mn.1@example.cz" in ids_of(t) for t in threads.values())
    # Mark's thread is listed with Jana's sent reply beside his message.
    q4 = next(t for t in threads.values() if "q4-report.mt.1@partner.example" in ids_of(t))
    assert [m["state"] for m in q4["unprocessed"]] == ["received", "sent"]
    assert first["scheduled_in_window"] == 1 and first["drafts_in_window"] == 1

    every_id = [mid for t in threads.values() for mid in ids_of(t)]
    labelled = await ok(
        call, demo, "mg_label_message", account="osobni", message_ids=every_id, label="Asistent", since=since
    )
    assert labelled["failed"] == 0 and labelled["succeeded"] == len(every_id)
    assert labelled["window"]["window_clear"] is True and labelled["window"]["threads_with_work"] == 0

    again = await ok(call, demo, "mg_next_pass", account="osobni", since=since)
    assert again["window_clear"] is True and again["threads"] == [] and again["oldest_unprocessed_at"] is None

    emulator_session.deliver(
        JANA,
        reply(
            "chata-vysocina-09@example.org",
            "Petr <petr@example.com>",
            "Re: Chata na Vysočině – kdy pojedeme?",
            "chata-10@example.com",
        ),
    )
    after = await ok(call, demo, "mg_next_pass", account="osobni", since=since)
    [back] = after["threads"]
    assert back["thread_id"] == chata["thread_id"] and ids_of(back) == ["chata-10@example.com"]
    assert back["message_count"] == 10 and after["window_clear"] is False


async def test_the_pass_takes_no_extra_condition(demo: Runtime, call: Call) -> None:
    """A from: filter would hide the cottage thread (its new message is Lucie's); the pass shows it."""
    search = await ok(
        call, demo, "mg_search_threads", account="osobni", query="from:petr -label:Asistent newer_than:2d"
    )
    assert search["threads"] == []
    work = await ok(call, demo, "mg_next_pass", account="osobni", since=days_ago(2))
    senders = {m["from"]["address"] for t in work["threads"] for m in t["unprocessed"]}
    assert any(addr.startswith("lucie") for addr in senders)


async def test_drafts_and_scheduled_are_pending_never_work(
    demo: Runtime, call: Call, emulator_session: GmailEmulator
) -> None:
    emulator_session.remove_labels(JANA, "besidka-3b.hv.1@zs-lipova.example.cz", ["Asistent"])
    data = await ok(call, demo, "mg_next_pass", account="osobni", since=days_ago(5), max_threads=100)
    besidka = next(t for t in data["threads"] if "besidka-3b.hv.1@zs-lipova.example.cz" in ids_of(t))
    [pending] = besidka["pending_outgoing"]
    assert pending["state"] == "draft" and pending["message_id"] == "besidka-3b.koncept.2@example.cz"
    assert pending["goes_out_at"] is None
    everywhere = [mid for t in data["threads"] for mid in ids_of(t)]
    assert "prani-mama.scheduled@example.cz" not in everywhere
    assert "besidka-3b.koncept.2@example.cz" not in everywhere
    assert data["scheduled_in_window"] == 1 and data["drafts_in_window"] == 1


async def test_inbox_scope_keeps_archived_message_on_the_thread(demo: Runtime, call: Call) -> None:
    data = await ok(call, demo, "mg_next_pass", account="tym", since=days_ago(5), max_threads=100)
    konference = next(t for t in data["threads"] if "jarni-konference.3@example.org" in ids_of(t))
    assert ids_of(konference)[0] == "jarni-konference.1@example.org"
    assert konference["unprocessed"][0]["in_inbox"] is False
    assert data["outside_scope_in_window"] >= 2
    assigned = {ids_of(t)[-1]: t["assigned"] for t in data["threads"]}
    assert assigned["excel-poptavka.2@partner.example"] == "mine"
    assert assigned["brno-presun.2@example.org"] == "mine"  # Anna's own label wins over Beda's
    assert assigned["reklamace-4471.3@partner.example"] == "other"
    assert assigned["jarni-konference.3@example.org"] == "none"  # a project label is nobody's
    assert assigned["dotaz-faktura-0312@beta.example.com"] == "none"
    assert "Projekty/Konference" in konference["user_labels"]


async def test_unread_only_and_no_processed_label(demo: Runtime, call: Call) -> None:
    data = await ok(call, demo, "mg_next_pass", account="automaty", since=days_ago(3), max_threads=100)
    assert data["total_threads"] == 5
    work_ids = {ids_of(t)[-1] for t in data["threads"]}
    assert "build-482.lipova-web@ci.example.com" in work_ids
    assert "novinky-prosinec@cloud.example.com" not in work_ids  # read: out of scope


async def test_stale_index_counts_stale_threads(demo: Runtime, call: Call, emulator_session: GmailEmulator) -> None:
    before = await ok(call, demo, "mg_next_pass", account="osobni", since=days_ago(5), max_threads=100)
    emulator_session.set_knobs(raw_search_lag_s=600)
    # A label written now is visible to FETCH at once, while the search index still says unlabelled.
    emulator_session.add_labels(JANA, "talk-confirm-0417@forum.partner.example", ["Asistent"])
    data = await ok(call, demo, "mg_next_pass", account="osobni", since=days_ago(5), max_threads=100)
    assert all("talk-confirm-0417@forum.partner.example" not in ids_of(t) for t in data["threads"])
    assert data["stale_threads"] == before["stale_threads"] + 1
    assert data["total_threads"] == before["total_threads"] - 1


async def test_all_mailboxes_with_one_failing(demo: Runtime, call: Call, emulator_session: GmailEmulator) -> None:
    emulator_session.add_fault(FaultRule(action="refuse_login:invalid", account=TYM, times=-1))
    data = await ok(call, demo, "mg_next_pass", account="all", since=days_ago(5), max_threads=100)
    assert sorted(data["searched"]) == ["automaty", "osobni"]
    assert [f["account"] for f in data["failures"]] == ["tym"]
    assert data["window_clear"] is False
    times = [t["last_received_at"] for t in data["threads"]]
    assert times == sorted(times, reverse=True)


async def test_since_and_token_refusals(demo: Runtime, call: Call) -> None:
    for bad in ["včera", "2026-13-45", "", "1 OR 1"]:
        body = await error(call, demo, "mg_next_pass", account="osobni", since=bad)
        assert body["code"] == "invalid_input", bad
    token = await error(call, demo, "mg_next_pass", account="osobni", since=days_ago(1), page_token="-1")
    assert token["code"] == "invalid_input"


async def test_since_in_iso_and_rfc_2822_forms_names_the_same_boundary(demo: Runtime, call: Call) -> None:
    # An assistant's notes may hold the boundary in any of these forms (1.5.0 took what JavaScript's Date reads).
    day = datetime.now(UTC).date() - timedelta(days=5)
    at_one_prague = datetime.combine(day, datetime.min.time(), UTC).astimezone(timezone(timedelta(hours=1)))
    forms = [
        f"{day}T00:00:00Z",
        f"{day} 00:00",
        f"{day}T00:00",
        f"{day} 00:00:00",
        f"{day}T01:00+01:00",
        f"{day} 01:00:00+0100",
        f"{day}T00:00:00.000Z",
        email.utils.format_datetime(at_one_prague),  # "Sun, 29 Nov 2026 01:00:00 +0100"
        f"{day.day} {day:%b %Y} 00:00 GMT",
        email.utils.format_datetime(at_one_prague) + " (CET)",
    ]
    expected = await ok(call, demo, "mg_next_pass", account="osobni", since=str(day), max_threads=100)
    assert expected["since"] == f"{day}T00:00:00Z" and expected["threads"]
    for form in forms:
        data = await ok(call, demo, "mg_next_pass", account="osobni", since=form, max_threads=100)
        assert data["since"] == expected["since"], form
        assert [t["thread_id"] for t in data["threads"]] == [t["thread_id"] for t in expected["threads"]], form


async def test_unreadable_since_shows_accepted_examples(demo: Runtime, call: Call) -> None:
    for bad in ["29/11/2026", "Nov 29 26", "29 Nov 2026 08:00 CET", "2026-11-29T08", "Sun, 29 Nov 2026 25:00 +0100"]:
        body = await error(call, demo, "mg_next_pass", account="osobni", since=bad)
        assert body["code"] == "invalid_input", bad
        examples = re.findall(r'"([^"]+)"', body["message"].split("Accepted forms:", 1)[1])
        assert len(examples) == 10, body["message"]
    for example in examples:  # what the message offers is really accepted
        assert (await ok(call, demo, "mg_next_pass", account="osobni", since=example))["since"].startswith("2026-09-30")


async def test_message_count_null_when_thread_vanishes(
    demo: Runtime, call: Call, emulator_session: GmailEmulator
) -> None:
    """Between the window scan and the thread search the thread moves to Trash: count unknown, not guessed."""
    emulator_session.set_latency("UID SEARCH", 0.0)

    def trash_forum_thread() -> None:
        with IMAPClient(
            "127.0.0.1", port=emulator_session.imap_port, ssl_context=emulator_session.client_ssl_context()
        ) as c:
            c.login(JANA, "demoosobniheslox")
            c.select_folder("[Gmail]/All Mail")
            uids = c.gmail_search("rfc822msgid:talk-confirm-0417@forum.partner.example")
            c.move(uids, "[Gmail]/Trash")

    # The move happens when the pass's second search arrives, before the emulator answers it.
    emulator_session.add_fault(
        FaultRule(action="hook", match="UID SEARCH", nth=2, account=JANA, hook=trash_forum_thread)
    )
    result = await ok(call, demo, "mg_next_pass", account="osobni", since=days_ago(1))
    forum = next(t for t in result["threads"] if "talk-confirm-0417@forum.partner.example" in ids_of(t))
    assert forum["message_count"] is None


# ------------------------------------------------------------------ labelling


async def test_accepted_but_not_applied_then_repeat_converges(
    demo: Runtime, call: Call, emulator_session: GmailEmulator
) -> None:
    ids = [
        "talk-confirm-0417@forum.partner.example",
        "issue-142.jn142@weeklybyte.example.com",
        "prihlaska-keramika-204@ddm-lipova.example.cz",
        "faktura-2026-11.202611@rychlynet.example.com",
    ]
    emulator_session.set_knobs(store_not_applied_ids={ids[1], ids[3]})
    first = await ok(call, demo, "mg_label_message", account="osobni", message_ids=ids, label="Asistent")
    outcome = {m["message_id"]: m["outcome"] for m in first["messages"]}
    assert outcome == {ids[0]: "changed", ids[1]: "failed", ids[2]: "changed", ids[3]: "failed"}
    assert first["succeeded"] == 2 and first["failed"] == 2
    assert "read back" in next(m["detail"] for m in first["messages"] if m["outcome"] == "failed")
    second = await ok(call, demo, "mg_label_message", account="osobni", message_ids=ids, label="asistent")
    outcome = {m["message_id"]: m["outcome"] for m in second["messages"]}
    assert outcome == {ids[0]: "already", ids[1]: "changed", ids[2]: "already", ids[3]: "changed"}
    for mid in ids:
        info = emulator_session.message(JANA, mid)
        assert info is not None and "Asistent" in info.labels


async def test_label_reports_unknown_ids_merges_bracketed_duplicates_and_unlabels(
    demo: Runtime, call: Call, emulator_session: GmailEmulator, write_config: Callable[..., Path]
) -> None:
    data = await ok(
        call,
        demo,
        "mg_label_message",
        account="tym",
        message_ids=[
            "<dotaz-faktura-0312@beta.example.com>",
            "nikde@example.org",
            "dotaz-faktura-0312@beta.example.com",
        ],
        label="Miladka/zpracovano",
    )
    assert [m["outcome"] for m in data["messages"]] == ["not_found", "changed"]
    assert data["label_created"] is False
    unlabel = await ok(
        call,
        demo,
        "mg_unlabel_message",
        account="tym",
        message_ids=["dotaz-faktura-0312@beta.example.com"],
        label="Miladka/zpracovano",
    )
    assert unlabel["action"] == "removed" and unlabel["messages"][0]["outcome"] == "changed"


async def test_processed_label_created_when_missing(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    msg = reply("x@example.org", "A <a@example.org>", "Ahoj", "novy@example.org")
    emulator.deliver("osobni@example.cz", msg)
    runtime = make_runtime(
        write_config(
            [
                {
                    "name": "o",
                    "address": "osobni@example.cz",
                    "password": "osobniheslohesla",
                    "processed_label": "Asistent/zpracováno",
                }
            ]
        )
    )
    data = await ok(
        call, runtime, "mg_label_message", account="o", message_ids=["novy@example.org"], label="Asistent/zpracováno"
    )
    assert data["label_created"] is True and data["messages"][0]["outcome"] == "changed"
    assert "Asistent/zpracováno" in emulator.labels("osobni@example.cz")


async def test_classification_swap_in_one_call(demo: Runtime, call: Call, emulator_session: GmailEmulator) -> None:
    search = await ok(call, demo, "mg_search_threads", account="osobni", query="subject:chata")
    thread_id = search["threads"][0]["thread_id"]
    data = await ok(call, demo, "mg_label_thread", account="osobni", thread_id=thread_id, label="asistent/ČEKÁ")
    assert data["label"] == "Asistent/čeká"
    assert data["classification_before"] == ["Asistent/akce"]
    assert data["classification_after"] == ["Asistent/čeká"]
    assert data["replaced"] == ["Asistent/akce"]
    assert data["succeeded"] == 9 and data["failed"] == 0
    for info in emulator_session.messages(JANA):
        if info.thrid == int(thread_id):
            assert "Asistent/čeká" in info.labels and "Asistent/akce" not in info.labels
    off = await ok(call, demo, "mg_unlabel_thread", account="osobni", thread_id=thread_id, label="Asistent/čeká")
    assert off["classification_after"] == [] and off["replaced"] == []


async def test_set_flags_read_back(demo: Runtime, call: Call, emulator_session: GmailEmulator) -> None:
    mid = "talk-confirm-0417@forum.partner.example"
    data = await ok(call, demo, "mg_set_flags", account="osobni", message_id=mid, seen=True, flagged=True)
    assert data["changed"] == ["flagged", "seen"] and data["already_set"] == []
    assert "\\Seen" in data["flags_after"] and "\\Flagged" in data["flags_after"]
    info = emulator_session.message(JANA, mid)
    assert info is not None and "\\Starred" in info.labels  # Gmail's star follows \Flagged
    again = await ok(call, demo, "mg_set_flags", account="osobni", message_id=mid, seen=True, answered=False)
    assert again["changed"] == [] and again["already_set"] == ["answered", "seen"]


@pytest.mark.parametrize(
    ("tool", "args", "code", "words"),
    [
        (
            "mg_label_message",
            {"message_ids": ["chata-vysocina-09@example.org"], "label": "\\Inbox"},
            "label_forbidden",
            "Gmail",
        ),
        (
            "mg_label_message",
            {"message_ids": ["chata-vysocina-09@example.org"], "label": "Asistent/akce"},
            "label_forbidden",
            "mg_label_thread",
        ),
        (
            "mg_label_message",
            {"message_ids": ["chata-vysocina-09@example.org"], "label": "Rodina"},
            "label_forbidden",
            "Asistent",
        ),
        (
            "mg_label_message",
            {"message_ids": ["chata-vysocina-09@example.org"], "label": "  "},
            "invalid_input",
            "empty",
        ),
        (
            "mg_label_message",
            {"message_ids": ["chata-vysocina-09@example.org"], "label": "Asistent", "since": "zítra"},
            "invalid_input",
            "date",
        ),
        ("mg_label_thread", {"thread_id": "1", "label": "Asistent"}, "label_forbidden", "mg_label_message"),
        ("mg_label_thread", {"thread_id": "1", "label": "\\Trash"}, "label_forbidden", "Gmail"),
        ("mg_set_flags", {"message_id": "chata-vysocina-09@example.org"}, "invalid_input", "flag"),
    ],
)
async def test_refusals_touch_nothing(
    demo: Runtime, call: Call, emulator_session: GmailEmulator, tool: str, args: dict[str, Any], code: str, words: str
) -> None:
    before = emulator_session.snapshot()
    emulator_session.reset_counters()
    body = await error(call, demo, tool, account="osobni", **args)
    assert body["code"] == code and words.lower() in body["message"].lower()
    assert emulator_session.snapshot() == before
    assert emulator_session.connections() == 0  # refused before any connection


async def test_label_on_mailbox_without_classifications(demo: Runtime, call: Call) -> None:
    body = await error(call, demo, "mg_label_thread", account="tym", thread_id="1", label="Anna")
    assert body["code"] == "label_forbidden" and "(none configured)" in body["message"]


# ------------------------------------------------------------------ round trips


def _work(emulator: GmailEmulator, threads: int) -> None:
    base = datetime.now(UTC) - timedelta(hours=2)
    for t in range(threads):
        first = reply(f"root-{t}@example.org", f"Odesilatel {t} <o{t}@example.org>", f"Téma {t}", f"t{t}-a@example.org")
        emulator.deliver("osobni@example.cz", first, internaldate=base + timedelta(seconds=t))
        second = reply(f"t{t}-a@example.org", "B <b@example.org>", f"Re: Téma {t}", f"t{t}-b@example.org")
        emulator.deliver("osobni@example.cz", second, internaldate=base + timedelta(seconds=t, milliseconds=500))


def _runtime(write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]) -> Runtime:
    return make_runtime(
        write_config(
            [
                {
                    "name": "o",
                    "address": "osobni@example.cz",
                    "password": "osobniheslohesla",
                    "processed_label": "Asistent",
                }
            ]
        )
    )


@pytest.mark.parametrize("threads", [5, 50])
async def test_pass_command_count_is_flat(
    emulator: GmailEmulator,
    call: Call,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    threads: int,
) -> None:
    _work(emulator, threads)
    runtime = _runtime(write_config, make_runtime)
    emulator.reset_counters()
    data = await ok(call, runtime, "mg_next_pass", account="o", since=days_ago(1), max_threads=100)
    assert data["total_threads"] == threads and all(t["message_count"] == 2 for t in data["threads"])
    names = [c.name for c in emulator.commands()]
    assert len(names) <= 15, names
    # scan, the page's threads, the beginnings of their unprocessed messages (the previews), and the
    # follow-ups: the waiting-replies window (one SEARCH, one FETCH) and the reminder labels (one LIST)
    assert names.count("UID FETCH") == 4 and names.count("UID SEARCH") == 3
    assert names.count("LIST") == 2  # the folder list of a cold server, and the labels under the reminder parent


@pytest.mark.parametrize("messages", [4, 40])
async def test_label_command_count_is_flat(
    emulator: GmailEmulator,
    call: Call,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    messages: int,
) -> None:
    _work(emulator, messages // 2)
    emulator.store  # noqa: B018 - the emulator is up
    runtime = _runtime(write_config, make_runtime)
    ids = [m.header_id for m in emulator.messages("osobni@example.cz")]
    assert len(ids) == messages
    await ok(call, runtime, "mg_label_message", account="o", message_ids=ids[:1], label="Asistent")  # creates it
    emulator.reset_counters()
    data = await ok(call, runtime, "mg_label_message", account="o", message_ids=ids, label="Asistent")
    assert data["succeeded"] == messages
    names = [c.name for c in emulator.commands()]
    assert len(names) <= 10, names
