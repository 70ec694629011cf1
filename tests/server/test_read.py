"""The read tools against the emulator over TLS: search, thread, message, attachment, labels."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import FaultRule, GmailEmulator, Verdict
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

JANA = "jana.novakova@example.cz"


def flags_of(emulator: GmailEmulator, address: str) -> dict[str | None, frozenset[str]]:
    return {m.header_id: m.flags for m in emulator.messages(address)}


def message(subject: str, body: str, *, sender: str = "Karel <karel@example.org>", **headers: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = JANA
    msg["Subject"] = subject
    msg["Message-ID"] = headers.pop("message_id", f"<{abs(hash(subject))}@example.org>")
    msg["Date"] = headers.pop("date", "Mon, 30 Nov 2026 08:00:00 +0000")
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    msg.set_content(body)
    return msg


# ------------------------------------------------------------------ search


async def test_search_counts_matches_not_thread_size(
    demo: Runtime, call: Call, emulator_session: GmailEmulator
) -> None:
    before = flags_of(emulator_session, JANA)
    data = await ok(call, demo, "mg_search_threads", account="osobni", query="subject:chata is:unread")
    [thread] = data["threads"]
    assert thread["matched_messages"] == 1
    assert thread["unprocessed_matches"] == 1
    assert thread["newest_match"]["message_id"] == "chata-vysocina-09@example.org"
    assert thread["newest_match"]["state"] == "received" and thread["newest_match"]["in_inbox"] is True
    whole = await ok(call, demo, "mg_get_thread", account="osobni", thread_id=thread["thread_id"])
    assert whole["message_count"] == 9 and len(whole["messages"]) == 9
    assert whole["unprocessed_messages"] == 1
    assert whole["messages"][0]["message_id"] == "chata-vysocina-01@example.cz"
    assert whole["subject"].startswith("Chata na Vysočině")
    assert flags_of(emulator_session, JANA) == before, "reading must never set \\Seen"


async def test_search_reads_labels_by_fetch_not_from_the_lagging_index(
    demo: Runtime, call: Call, emulator_session: GmailEmulator
) -> None:
    emulator_session.set_knobs(raw_search_lag_s=600)
    emulator_session.add_labels(JANA, "talk-confirm-0417@forum.partner.example", ["Asistent"])
    data = await ok(call, demo, "mg_search_threads", account="osobni", query="subject:confirm")
    [thread] = data["threads"]
    assert thread["unprocessed_matches"] == 0  # the message itself carries the label
    # the index still says unlabelled, the fetched labels say otherwise: the hit is left out, counted
    data = await ok(call, demo, "mg_search_threads", account="osobni", query="-label:Asistent subject:confirm")
    assert data["threads"] == [] and data["total_threads"] == 0 and data["index_stale_hits"] == 1


async def test_search_paging_and_query_passed_verbatim(demo: Runtime, call: Call) -> None:
    first = await ok(call, demo, "mg_search_threads", account="osobni", query="in:inbox", max_results=3)
    token = first["next_page_token"]
    assert len(first["threads"]) == 3 and token is not None
    second = await ok(
        call, demo, "mg_search_threads", account="osobni", query="in:inbox", max_results=3, page_token=token
    )
    ids = {t["thread_id"] for t in first["threads"]} | {t["thread_id"] for t in second["threads"]}
    assert len(ids) == 6
    times = [t["newest_match"]["received_at"] for t in first["threads"] + second["threads"]]
    assert times == sorted(times, reverse=True)
    czech = await ok(call, demo, "mg_search_threads", account="osobni", query="subject:Vysočině")
    assert czech["total_threads"] == 1


async def test_search_all_mailboxes_survives_one_refusing_login(
    demo: Runtime, call: Call, emulator_session: GmailEmulator
) -> None:
    emulator_session.add_fault(FaultRule(action="refuse_login:invalid", account="tym@example.com", times=-1))
    data = await ok(call, demo, "mg_search_threads", account="all", query="newer_than:3d")
    assert sorted(data["searched"]) == ["automaty", "osobni"]
    [failure] = data["failures"]
    assert failure["account"] == "tym" and failure["code"] == "auth_failed"
    assert {t["account"] for t in data["threads"]} == {"automaty", "osobni"}
    times = [t["newest_match"]["received_at"] for t in data["threads"]]
    assert times == sorted(times, reverse=True)


async def test_search_refuses_bad_input(demo: Runtime, call: Call) -> None:
    assert (await error(call, demo, "mg_search_threads", account="osobni", query="  "))["code"] == "invalid_input"
    bad = await error(call, demo, "mg_search_threads", account="osobni", query="a\r\nb")
    assert bad["code"] == "invalid_input"
    token = await error(call, demo, "mg_search_threads", account="osobni", query="x", page_token="abc")
    assert token["code"] == "invalid_input"
    unknown = await error(call, demo, "mg_search_threads", account="nikdo", query="x")
    assert unknown["code"] == "account_unknown" and "osobni" in unknown["message"]


async def test_search_too_broad(
    emulator: GmailEmulator, write_config: Callable[..., Path], call: Call, make_runtime: Callable[[Path], Runtime]
) -> None:
    raw = message("Hromadná", "tělo").as_bytes()
    for i in range(5001):
        emulator.deliver("osobni@example.cz", raw.replace(b"@example.org>", f"-{i}@example.org>".encode(), 1))
    runtime = make_runtime(
        write_config([{"name": "o", "address": "osobni@example.cz", "password": "osobniheslohesla"}])
    )
    body = await error(call, runtime, "mg_search_threads", account="o", query="subject:Hromadná")
    assert body["code"] == "query_too_broad" and "5001" in body["message"]


# ------------------------------------------------------------------ message


async def test_forwarded_message_keeps_both_times(demo: Runtime, call: Call) -> None:
    data = await ok(call, demo, "mg_get_message", account="osobni", message_id="<fwd-vyuctovani.mn.1@example.cz>")
    received = datetime.fromisoformat(data["received_at"])
    written = datetime.fromisoformat(data["date_header"])
    assert timedelta(days=29) < received - written < timedelta(days=31)
    assert data["message_id"] == "fwd-vyuctovani.mn.1@example.cz" and data["copies"] == 1


async def test_scheduled_and_draft_states(demo: Runtime, call: Call) -> None:
    scheduled = await ok(call, demo, "mg_get_message", account="osobni", message_id="prani-mama.scheduled@example.cz")
    assert scheduled["state"] == "scheduled"
    draft = await ok(call, demo, "mg_get_message", account="osobni", message_id="besidka-3b.koncept.2@example.cz")
    assert draft["state"] == "draft"
    sent = await ok(call, demo, "mg_get_message", account="osobni", message_id="q4-report.jana.2@example.cz")
    assert sent["state"] == "sent" and sent["authentication"]["unchecked"] is True


@pytest.mark.parametrize(
    "message_id",
    ["000801db3a2c$5e8f1a20$1bad4e60@example.cz", "20-korektura-vizitek.8bit@tiskarna-horak.example.cz"],
)
async def test_legacy_czech_charsets_keep_diacritics(demo: Runtime, call: Call, message_id: str) -> None:
    data = await ok(call, demo, "mg_get_message", account="osobni", message_id=message_id)
    assert data["body_format"] == "text"
    assert "příliš žluťoučký kůň úpěl ďábelské ódy" in data["body"]


async def test_html_only_message_comes_as_text_and_raw_on_request(demo: Runtime, call: Call) -> None:
    newsletter = "issue-142.jn142@weeklybyte.example.com"
    data = await ok(call, demo, "mg_get_message", account="osobni", message_id=newsletter)
    assert data["body_format"] == "html_as_text" and "<" not in data["body"]
    assert "- Why your router needs an update" in data["body"] and data["hidden_text_chars"] == 0
    raw = await ok(call, demo, "mg_get_message", account="osobni", message_id=newsletter, raw_html=True)
    assert raw["body_format"] == "html" and raw["body"].lstrip().startswith("<!DOCTYPE html>")


async def test_message_id_with_brace(demo: Runtime, call: Call) -> None:
    mid = "<{a1b2c3d4-e5f6-4789-9abc-def012345678}@email.seznam.example.cz>"
    data = await ok(call, demo, "mg_get_message", account="osobni", message_id=mid)
    assert data["message_id"] == mid.strip("<>")
    assert data["body"]


async def test_body_window_in_the_middle(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    text = "".join(f"řádek {i:05d}\n" for i in range(3000))
    emulator.deliver("osobni@example.cz", message("Dlouhý", text, message_id="<dlouhy@example.org>"))
    runtime = make_runtime(
        write_config([{"name": "o", "address": "osobni@example.cz", "password": "osobniheslohesla"}])
    )
    data = await ok(
        call,
        runtime,
        "mg_get_message",
        account="o",
        message_id="dlouhy@example.org",
        body_offset=12000,
        max_body_length=120,
    )
    assert data["body_total_length"] == len(text)
    assert data["body"] == text[12000:12120]
    assert data["body_offset"] == 12000 and data["body_truncated"] is True
    tail = await ok(
        call, runtime, "mg_get_message", account="o", message_id="dlouhy@example.org", body_offset=len(text) - 10
    )
    assert tail["body"] == text[-10:] and tail["body_truncated"] is False


async def test_not_found_and_bad_ids(demo: Runtime, call: Call) -> None:
    missing = await error(call, demo, "mg_get_message", account="osobni", message_id="<nikde@example.org>")
    assert missing["code"] == "not_found"
    empty = await error(call, demo, "mg_get_message", account="osobni", message_id="<>")
    assert empty["code"] == "invalid_input"
    thread = await error(call, demo, "mg_get_thread", account="osobni", thread_id="12 OR 1")
    assert thread["code"] == "invalid_input"
    no_thread = await error(call, demo, "mg_get_thread", account="osobni", thread_id="123")
    assert no_thread["code"] == "not_found"


# ------------------------------------------------------------------ authentication


async def test_forged_authentication_results_are_ignored(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    msg = EmailMessage()
    msg["Authentication-Results"] = "evil.example; spf=pass; dkim=pass header.i=@bank.example; dmarc=pass"
    msg["From"] = "Banka <info@bank.example>"
    msg["To"] = "osobni@example.cz"
    msg["Subject"] = "Ověřte účet"
    msg["Message-ID"] = "<forged@bank.example>"
    msg.set_content("klikněte")
    # Gmail adds its trace and verdict on top; the forged one sits below it, written by the sender.
    raw = msg.as_bytes()
    emulator.deliver("osobni@example.cz", raw, trace=Verdict(spf="softfail", dkim="none", dmarc="fail"))
    runtime = make_runtime(
        write_config([{"name": "o", "address": "osobni@example.cz", "password": "osobniheslohesla"}])
    )
    data = await ok(call, runtime, "mg_get_message", account="o", message_id="forged@bank.example")
    auth = data["authentication"]
    assert auth["spf"] == "softfail" and auth["dmarc"] == "fail"
    assert auth["other_reports"] == 1 and auth["unchecked"] is False


# ------------------------------------------------------------------ attachments


async def test_pdf_attachment_listed_and_saved(demo: Runtime, call: Call, tmp_path: Path) -> None:
    data = await ok(
        call, demo, "mg_get_message", account="osobni", message_id="faktura-2026-11.202611@rychlynet.example.com"
    )
    [pdf] = data["attachments"]
    assert pdf["filename"] == "faktura-2026-11.pdf" and pdf["mime_type"] == "application/pdf"
    assert pdf["inline"] is False
    saved = await ok(
        call,
        demo,
        "mg_get_attachment",
        account="osobni",
        message_id="faktura-2026-11.202611@rychlynet.example.com",
        attachment_id=pdf["attachment_id"],
    )
    path = Path(saved["path"])
    assert path.parent == (tmp_path / "downloads").resolve()
    assert path.read_bytes().startswith(b"%PDF") and saved["size_bytes"] == path.stat().st_size


@pytest.mark.parametrize(
    "given", ["<faktura-2026-11.202611@rychlynet.example.com>", " faktura-2026-11.202611@rychlynet.example.com "]
)
async def test_attachment_result_names_the_bare_message_id(demo: Runtime, call: Call, given: str) -> None:
    # Ids are bare everywhere, whatever form the caller used (1.5.0 echoed the input as given).
    saved = await ok(call, demo, "mg_get_attachment", account="osobni", message_id=given, attachment_id="2")
    assert saved["message_id"] == "faktura-2026-11.202611@rychlynet.example.com"


@pytest.mark.parametrize(
    ("hostile", "expected"),
    [
        ("../../etc/passwd", "passwd"),
        ("C:\\x\\y.pdf", "y.pdf"),
        ("zlý\x01soubor\x1f.txt", "zlý_soubor_.txt"),
        ("..", "part-2.bin"),
    ],
)
async def test_hostile_attachment_names_stay_in_download_dir(
    emulator: GmailEmulator,
    call: Call,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    tmp_path: Path,
    hostile: str,
    expected: str,
) -> None:
    msg = message("Příloha", "viz příloha", message_id="<priloha@example.org>")
    msg.add_attachment(b"obsah", maintype="application", subtype="octet-stream")
    payload = msg.get_payload()
    assert isinstance(payload, list)
    part = payload[1]
    assert isinstance(part, EmailMessage)
    part.replace_header("Content-Disposition", "attachment")
    part.set_param("filename", hostile, header="Content-Disposition")
    emulator.deliver("osobni@example.cz", msg.as_bytes())
    downloads = tmp_path / "dl"
    runtime = make_runtime(
        write_config(
            [{"name": "o", "address": "osobni@example.cz", "password": "osobniheslohesla"}], download_dir=str(downloads)
        )
    )
    saved = await ok(
        call, runtime, "mg_get_attachment", account="o", message_id="priloha@example.org", attachment_id="2"
    )
    assert saved["filename"] == expected
    assert Path(saved["path"]) == downloads.resolve() / expected
    assert Path(saved["path"]).read_bytes() == b"obsah"
    assert sorted(p.name for p in downloads.iterdir()) == [expected]


async def test_unknown_attachment_id(demo: Runtime, call: Call) -> None:
    body = await error(
        call,
        demo,
        "mg_get_attachment",
        account="osobni",
        message_id="faktura-2026-11.202611@rychlynet.example.com",
        attachment_id="7",
    )
    assert body["code"] == "not_found"
    bad = await error(
        call,
        demo,
        "mg_get_attachment",
        account="osobni",
        message_id="faktura-2026-11.202611@rychlynet.example.com",
        attachment_id="../1",
    )
    assert bad["code"] == "invalid_input"


async def test_big_attachment_is_not_transferred_when_reading_the_message(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    msg = message("Velká příloha", "Krátký text.", message_id="<velka@example.org>")
    msg.add_attachment(bytes(range(256)) * (5 * 1024 * 4), maintype="application", subtype="zip", filename="data.zip")
    emulator.deliver("osobni@example.cz", msg.as_bytes())
    runtime = make_runtime(
        write_config([{"name": "o", "address": "osobni@example.cz", "password": "osobniheslohesla"}])
    )
    emulator.reset_counters()
    data = await ok(call, runtime, "mg_get_message", account="o", message_id="velka@example.org")
    assert data["body"].startswith("Krátký text.")
    assert data["attachments"][0]["size_bytes"] > 5 * 1024 * 1024
    transferred = emulator.observer.wire_bytes("s", "imap")
    assert transferred < 200 * 1024, transferred


# ------------------------------------------------------------------ labels


async def test_list_labels(demo: Runtime, call: Call) -> None:
    data = await ok(call, demo, "mg_list_labels", account="osobni")
    labels = {entry["label"]: entry["system"] for entry in data["labels"]}
    assert labels["INBOX"] is True and labels["[Gmail]/All Mail"] is True
    assert labels["Asistent/čeká"] is False and labels["Rodina"] is False
    assert "[Gmail]" not in labels


# ------------------------------------------------------------------ round trips


def _threads(emulator: GmailEmulator, count: int, per_thread: int = 1) -> None:
    base = datetime(2026, 11, 1, tzinfo=UTC)
    for t in range(count):
        for i in range(per_thread):
            msg = message(f"Vlákno {t}", f"zpráva {i}", message_id=f"<t{t}-m{i}@example.org>")
            if i:
                msg["In-Reply-To"] = f"<t{t}-m0@example.org>"
                msg["References"] = f"<t{t}-m0@example.org>"
            emulator.deliver("osobni@example.cz", msg, internaldate=base + timedelta(hours=t, minutes=i))


async def _commands_for(emulator: GmailEmulator, call: Call, runtime: Runtime, tool: str, **args: Any) -> int:
    emulator.reset_counters()
    await ok(call, runtime, tool, **args)
    return len(emulator.commands())


@pytest.mark.parametrize("threads", [5, 40])
async def test_search_command_count_is_flat(
    emulator: GmailEmulator,
    call: Call,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    threads: int,
) -> None:
    _threads(emulator, threads, per_thread=2)
    runtime = make_runtime(
        write_config([{"name": "o", "address": "osobni@example.cz", "password": "osobniheslohesla"}])
    )
    count = await _commands_for(
        emulator, call, runtime, "mg_search_threads", account="o", query="subject:Vlákno", max_results=100
    )
    assert count == 6  # LOGIN LIST EXAMINE SEARCH FETCH LOGOUT, whatever the number of threads
    # A warm server remembers where All Mail is: no LIST on the next call.
    again = await _commands_for(
        emulator, call, runtime, "mg_search_threads", account="o", query="subject:Vlákno", max_results=100
    )
    assert again == 5


@pytest.mark.parametrize("messages", [2, 20])
async def test_thread_command_count_is_flat(
    emulator: GmailEmulator,
    call: Call,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    messages: int,
) -> None:
    _threads(emulator, 1, per_thread=messages)
    runtime = make_runtime(
        write_config([{"name": "o", "address": "osobni@example.cz", "password": "osobniheslohesla"}])
    )
    thread_id = str(emulator.messages("osobni@example.cz")[0].thrid)
    count = await _commands_for(emulator, call, runtime, "mg_get_thread", account="o", thread_id=thread_id)
    assert count == 7  # LOGIN LIST EXAMINE SEARCH FETCH, FETCH of the previews, LOGOUT (no CAPABILITY)
    data = await ok(call, runtime, "mg_get_thread", account="o", thread_id=thread_id)
    assert data["message_count"] == messages
    assert all(m["preview"] for m in data["messages"])


async def test_mail_strings_lose_invisible_characters(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    sneaky = "Faktura\u202egnp.exe\u200b zaplaťte"
    emulator.deliver("osobni@example.cz", message(sneaky, "tělo\u2066skryté\u2069", message_id="<skryte@example.org>"))
    runtime = make_runtime(
        write_config([{"name": "o", "address": "osobni@example.cz", "password": "osobniheslohesla"}])
    )
    data = await ok(call, runtime, "mg_get_message", account="o", message_id="skryte@example.org")
    assert data["subject"] == "Fakturagnp.exe zaplaťte"
    assert "\u2066" not in data["body"] and "skryté" in data["body"]


# ------------------------------------------------------------------ folders found by flag, never by name


def _account_with_folders(emulator: GmailEmulator, folders: dict[str, str]) -> None:
    emulator.set_knobs(folder_names=folders)
    emulator.add_account("jiny@example.cz", "jinyhesloheslox")
    emulator.deliver("jiny@example.cz", message("Grüße", "Hallo", message_id="<gruss@example.org>"))


async def test_localised_folder_names_are_found_by_flag(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    from gmail_emulator.knobs import GERMAN_FOLDERS

    _account_with_folders(emulator, dict(GERMAN_FOLDERS))
    runtime = make_runtime(write_config([{"name": "j", "address": "jiny@example.cz", "password": "jinyhesloheslox"}]))
    data = await ok(call, runtime, "mg_search_threads", account="j", query="subject:Grüße")
    assert data["total_threads"] == 1
    names = [c.line for c in emulator.commands() if c.name == "EXAMINE"]
    assert names and "Alle Nachrichten" in names[-1]


async def test_missing_all_mail_is_provider_unsupported(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    from gmail_emulator.knobs import ENGLISH_FOLDERS

    _account_with_folders(emulator, {k: v for k, v in ENGLISH_FOLDERS.items() if k != "\\All"})
    runtime = make_runtime(write_config([{"name": "j", "address": "jiny@example.cz", "password": "jinyhesloheslox"}]))
    body = await error(call, runtime, "mg_get_thread", account="j", thread_id="1")
    assert body["code"] == "provider_unsupported" and "all-mail" in body["message"]


async def test_remembered_folder_that_vanished_is_looked_up_again(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    from gmail_emulator.knobs import GERMAN_FOLDERS

    emulator.deliver("osobni@example.cz", message("První", "a", message_id="<prvni@example.org>"))
    runtime = make_runtime(
        write_config([{"name": "o", "address": "osobni@example.cz", "password": "osobniheslohesla"}])
    )
    await ok(call, runtime, "mg_search_threads", account="o", query="subject:První")  # remembers [Gmail]/All Mail
    emulator.reset()
    emulator.set_knobs(folder_names=dict(GERMAN_FOLDERS))  # the account now shows localised names
    emulator.add_account("osobni@example.cz", "osobniheslohesla")
    emulator.deliver("osobni@example.cz", message("Druhý", "b", message_id="<druhy@example.org>"))
    data = await ok(call, runtime, "mg_search_threads", account="o", query="subject:Druhý")
    assert data["total_threads"] == 1
