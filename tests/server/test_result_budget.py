"""Every tool result fits inline in Claude Code: at most 40 000 characters of compact JSON.

Claude Code hands the model `structuredContent` as compact JSON (an error: its text) and saves
anything over 25 000 estimated tokens (characters / 4) or 50 000 characters to a file instead
(docs/en/tools.md, "Result budget"). Each of the first 17 tools is driven here at its schema maximums on a
mailbox built to be large: long bodies, subjects, names and Message-IDs, many recipients, labels
and attachments, more than 100 threads, a 50-message thread, ten mailboxes for "all". Where a
page or a body window is cut by the budget, the continuation it gives must bring the rest.
mg_sweep is measured at 10 000 messages in test_sweep.py; mg_undo lists at most 50 messages (test_sweep_crash.py);
the subscription tools on a mailbox of 120 long lists in test_subscriptions.py.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import TextContent

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.gmail.imap import finish_logouts
from mcp_multi_gmail.mail.core import budget
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.server import build_server
from support import gmail_env, load_runtime

pytestmark = pytest.mark.anyio

BUDGET = 40_000
# Set to measure without failing (the sizes are printed at the end of the module, with -s).
MEASURE_ONLY = os.environ.get("MG_BUDGET_MEASURE") == "1"
BOX = "osobni@example.cz"
PASSWORD = "osobniheslohesla"
NAME = "schranka-s-opravdu-velmi-dlouhym-nazvem-01"
PROCESSED = "Asistent zpracoval tuto zprávu a nechce ji vidět znovu"
CLASSES = {f"Třída {i:02d} s dlouhým názvem štítku pro třídění pošty": f"Význam třídy {i} " * 10 for i in range(8)}
USER_LABELS = [f"Projekt/Podsložka {i:03d} s velmi dlouhým názvem štítku „v uvozovkách“" for i in range(600)]
THREADS = 105  # more than one 100-thread page
PAGES = 3  # pages of search and pass walked (each must continue where the last one ended)
LONG_THREAD = 50
SUBJECT = 'Rozpočet „knihovny“ na rok 2027 — "návrh" s <poznámkami> \\ a dlouhým předmětem, ' * 8
NAME_TEXT = "Jaroslava Nováková-Dvořáková z oddělení pro velmi dlouhá jména a „přezdívky“ " * 2


def message_id(tag: str) -> str:
    return f"{tag}.{'identifikator-zpravy-' * 8}@velka-organizace.example.org"


def body_text(length: int) -> str:
    # Quotes, backslashes, newlines and tabs: each takes two characters in JSON.
    line = 'Řádek s „uvozovkami“, "escapy" \\ a tabulátorem\t a dalším textem, který se opakuje.\n'
    return (line * (length // len(line) + 1))[:length]


def encoded(text: str) -> str:
    """RFC 2047 encoded words, folded: fast to build, and decoded back to exactly `text`."""
    data = text.encode()
    words, start = [], 0
    while start < len(data):
        end = min(start + 45, len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:
            end -= 1  # never split a UTF-8 sequence between two words
        words.append("=?utf-8?b?" + base64.b64encode(data[start:end]).decode() + "?=")
        start = end
    return "\r\n ".join(words)


def address_list(role: str, count: int) -> str:
    return ",\r\n ".join(
        f"{encoded(f'{NAME_TEXT}{role} {i}')} <{role}.{i}.s.dlouhou.adresou@oddeleni-velke-organizace.example.org>"
        for i in range(count)
    )


def mail(
    tag: str,
    subject: str,
    body: str,
    *,
    recipients: int = 2,
    reply_to: str | None = None,
    attachments: int = 0,
    html: bool = False,
) -> bytes:
    headers = [
        f"From: {address_list('odesilatel', 1)}",
        f"To: {address_list('komu', recipients)}",
        f"Cc: {address_list('kopie', recipients)}",
        f"Subject: {encoded(subject)}",
        f"Message-ID: <{message_id(tag)}>",
        "Date: Mon, 30 Nov 2026 08:00:00 +0000",
        "MIME-Version: 1.0",
    ]
    if reply_to:
        headers += [f"In-Reply-To: <{message_id(reply_to)}>", f"References: <{message_id(reply_to)}>"]
    kind = "html" if html else "plain"
    text = "<div>" + body.replace("\n", "</div>\n<div>") + "</div>" if html else body
    part = (
        f"Content-Type: text/{kind}; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        + base64.encodebytes(text.encode()).decode().replace("\n", "\r\n")
    )
    if not attachments:
        return ("\r\n".join(headers) + "\r\n" + part).encode()
    parts = [part]
    for index in range(attachments):
        name = f"příloha {index:03d} s dlouhým názvem souboru, který se jen tak nevejde na řádek.pdf"
        parts.append(
            f'Content-Type: application/pdf\r\nContent-Disposition: attachment; filename="{encoded(name)}"\r\n'
            "Content-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQgdGlueQ==\r\n"
        )
    boundary = "hranice-mezi-castmi"
    mixed = f'Content-Type: multipart/mixed; boundary="{boundary}"'
    body_parts = "".join(f"--{boundary}\r\n{p}\r\n" for p in parts)
    return ("\r\n".join([*headers, mixed]) + "\r\n\r\n" + body_parts + f"--{boundary}--\r\n").encode()


@dataclass
class Big:
    runtime: Runtime
    long_thread: str
    wide_thread: str
    message_ids: list[str] = field(default_factory=list)
    thread_ids: list[str] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)


def seed(emulator: GmailEmulator) -> tuple[str, str, list[str], list[str]]:
    emulator.reset()
    emulator.add_account(BOX, PASSWORD, labels=[*USER_LABELS, PROCESSED, *CLASSES])
    labels = ["\\Inbox", *USER_LABELS[:8], *list(CLASSES)[:2]]
    ids: list[str] = []
    for index in range(THREADS):
        tag = f"vlakno-{index:03d}"
        emulator.deliver(BOX, mail(tag, f"{index:03d} {SUBJECT}", body_text(3_000)), labels=labels)
        ids.append(message_id(tag))
    first = "dlouhe-000"
    for index in range(LONG_THREAD):
        tag = f"dlouhe-{index:03d}"
        subject = ("Re: " if index else "") + "Dlouhé vlákno " + SUBJECT
        emulator.deliver(BOX, mail(tag, subject, body_text(6_000), reply_to=first if index else None), labels=labels)
        ids.append(message_id(tag))
    wide = mail("siroka", "Široká " + SUBJECT * 3, body_text(120_000), recipients=60, attachments=80)
    emulator.deliver(BOX, wide, labels=labels)
    ids.append(message_id("siroka"))
    emulator.deliver(BOX, mail("html", "HTML " + SUBJECT, body_text(80_000), html=True), labels=labels)
    ids.append(message_id("html"))
    for index in range(100):
        draft = mail(
            f"koncept-{index:03d}",
            f"Koncept {index} {SUBJECT}",
            body_text(500),
            recipients=10,
            reply_to=f"chybi-{index}",
        )
        emulator.append(BOX, draft, labels=["\\Draft"], flags=["\\Seen"])
    by_id = {m.header_id: m for m in emulator.messages(BOX)}
    long_thread = str(by_id[message_id(first)].thrid)
    wide_thread = str(by_id[message_id("siroka")].thrid)
    assert sum(1 for m in by_id.values() if str(m.thrid) == long_thread) == LONG_THREAD
    threads = sorted({str(m.thrid) for m in by_id.values()})
    return long_thread, wide_thread, ids, threads


def config(tmp: Path) -> dict[str, Any]:
    attachments = tmp / "prilohy"
    attachments.mkdir(exist_ok=True)
    entries: list[dict[str, Any]] = [
        {
            "name": NAME,
            "address": BOX,
            "password": PASSWORD,
            "processed_label": PROCESSED,
            "can_send": True,
            "classification_labels": CLASSES,
            "assignment_labels": USER_LABELS[:20],
            "my_label": USER_LABELS[0],
            "aliases": [
                {"address": f"alias{i}@example.cz", "name": NAME_TEXT, "purpose": NAME_TEXT * 2} for i in range(5)
            ],
        }
    ]
    # Nine more mailboxes, none of which logs in: ten failures beside one answer.
    for index in range(2, 11):
        entries.append(
            {
                "name": f"schranka-s-opravdu-velmi-dlouhym-nazvem-{index:02d}",
                "address": f"chybi{index}.s.velmi.dlouhou.adresou@example.com",
                "password": "spatneheslospatn",
                "processed_label": PROCESSED,
                "classification_labels": CLASSES,
                "can_send": True,
            }
        )
    return {
        "accounts": entries,
        "download_dir": str(tmp / "stazene"),
        "attachment_dirs": [str(attachments)],
    }


@pytest.fixture(scope="module")
def big(emulator_session: GmailEmulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Big]:
    tmp = tmp_path_factory.mktemp("budget")
    long_thread, wide_thread, ids, threads = seed(emulator_session)
    path = tmp / "multigmail.json"
    path.write_text(json.dumps(config(tmp), ensure_ascii=False), encoding="utf-8")
    runtime = load_runtime(path, gmail_env(emulator_session), state_dir=tmp / "state")
    state = Big(runtime, long_thread, wide_thread, ids, threads)
    yield state
    print("\nlargest result per tool (characters of compact structuredContent or error text):")
    for tool, chars in sorted(state.sizes.items()):
        print(f"  {tool:22} {chars:>9,}")


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def check_cuts(tool: str, result: dict[str, Any]) -> None:
    """Every `cut` entry names a list or string of this result that holds `shown` of `total`."""
    for entry in result["cut"]:
        assert 0 <= entry["shown"] < entry["total"], (tool, entry)
        assert entry["how_to_get_the_rest"], entry
        if "*" in entry["field"]:
            continue  # the entries of one list in many items, added up
        value: Any = result
        for part in entry["field"].split("."):
            value = value[int(part)] if isinstance(value, list) else value[part]
        if isinstance(value, list):
            assert len(value) == entry["shown"], (tool, entry)
        else:
            assert entry["shown"] in (len(value), len(value) - len(budget.CUT_MARK)), (tool, entry, len(value))


def cut_of(result: dict[str, Any], field: str) -> dict[str, Any]:
    entries: list[dict[str, Any]] = [e for e in result["cut"] if e["field"] == field]
    [entry] = entries
    return entry


def maximum(schema: dict[str, Any], argument: str) -> int:
    spec = schema["properties"][argument]
    value = spec.get("maximum", spec.get("le"))
    assert isinstance(value, int), spec
    return value


class Session:
    """One MCP client on the big mailbox; every result's size is checked and recorded."""

    def __init__(self, client: Client, big: Big, schemas: dict[str, dict[str, Any]]) -> None:
        self.client, self.big, self.schemas = client, big, schemas

    async def call(self, tool: str, **args: Any) -> dict[str, Any]:
        result = await self.client.call_tool(tool, args)
        # What the model receives: an error's text, else structuredContent as compact JSON.
        if result.is_error:
            [block] = result.content
            assert isinstance(block, TextContent)
            what = block.text
        else:
            what = compact(result.structured_content)
        self.big.sizes[tool] = max(self.big.sizes.get(tool, 0), len(what))
        assert MEASURE_ONLY or len(what) <= BUDGET, f"{tool}: {len(what)} characters ({args.keys()})"
        if result.is_error:
            data: dict[str, Any] = json.loads(what)
            return data
        content: dict[str, Any] = result.structured_content
        check_cuts(tool, content)
        return content

    def most(self, tool: str, argument: str) -> int:
        return maximum(self.schemas[tool], argument)


async def session(big: Big) -> tuple[Client, Session]:
    client = Client(build_server(big.runtime))
    await client.__aenter__()
    tools = (await client.list_tools()).tools
    return client, Session(client, big, {t.name: t.input_schema for t in tools})


@pytest.fixture
async def mg(big: Big) -> Any:
    client, s = await session(big)
    try:
        yield s
    finally:
        await client.__aexit__(None, None, None)
        await finish_logouts()


# ------------------------------------------------------------------ reading: the big ones first


async def test_search_pages_fit_and_continue(mg: Session) -> None:
    most = mg.most("mg_search_threads", "max_results")
    seen: list[str] = []
    token = None
    for _ in range(PAGES):
        args: dict[str, Any] = {"account": NAME, "query": "Rozpočet", "max_results": most}
        if token:
            args["page_token"] = token
        page = await mg.call("mg_search_threads", **args)
        seen.extend(t["thread_id"] for t in page["threads"])
        token = page["next_page_token"]
        assert page["page_budget_exhausted"] is True and token is not None and len(page["threads"]) < most
        entry = cut_of(page, "threads")
        assert (entry["shown"], entry["total"]) == (len(page["threads"]), page["total_threads"])
        assert "mg_search_threads with page_token" in entry["how_to_get_the_rest"]
    assert len(seen) == len(set(seen)) and page["total_threads"] > most
    everywhere = await mg.call("mg_search_threads", account="all", query="Rozpočet", max_results=most)
    assert len(everywhere["failures"]) == 9 and everywhere["searched"] == [NAME]


async def test_pass_pages_fit_and_continue(mg: Session) -> None:
    most = mg.most("mg_next_pass", "max_threads")
    today = datetime.now(UTC).date().isoformat()
    seen: list[str] = []
    token = None
    for _ in range(PAGES):
        args: dict[str, Any] = {"account": NAME, "since": today, "max_threads": most}
        if token:
            args["page_token"] = token
        page = await mg.call("mg_next_pass", **args)
        seen.extend(t["thread_id"] for t in page["threads"])
        token = page["next_page_token"]
        assert page["page_budget_exhausted"] is True and token is not None
        entry = cut_of(page, "threads")
        assert (entry["shown"], entry["total"]) == (len(page["threads"]), page["total_threads"])
    assert len(seen) == len(set(seen)) and page["total_threads"] > most
    everywhere = await mg.call("mg_next_pass", account="all", since=today, max_threads=most)
    assert len(everywhere["failures"]) == 9 and everywhere["window_clear"] is False


async def test_long_thread_pages_its_messages(mg: Session, big: Big) -> None:
    most = mg.most("mg_get_thread", "max_body_length")
    seen: list[str] = []
    token = None
    for _ in range(LONG_THREAD):
        args: dict[str, Any] = {"account": NAME, "thread_id": big.long_thread, "bodies": "all"}
        args["max_body_length"] = most
        if token:
            args["page_token"] = token
        page = await mg.call("mg_get_thread", **args)
        assert page["message_count"] == LONG_THREAD
        for message in page["messages"]:
            seen.append(message["message_id"])
            # A body is whole, or cut where the window or the budget ends: then it says so.
            assert message["body_truncated"] is (len(message["body"]) < message["body_total_length"])
        token = page.get("next_page_token")
        if page["page_budget_exhausted"]:
            assert (cut_of(page, "messages")["shown"], cut_of(page, "messages")["total"]) == (
                len(page["messages"]),
                LONG_THREAD,
            )
        if token is None:
            break
    assert len(seen) == len(set(seen)) == LONG_THREAD
    plain = await mg.call("mg_get_thread", account=NAME, thread_id=big.long_thread)
    assert plain["message_count"] == LONG_THREAD


async def test_wide_message_and_its_thread(mg: Session, big: Big) -> None:
    wide = message_id("siroka")
    most = mg.most("mg_get_message", "max_body_length")
    message = await mg.call("mg_get_message", account=NAME, message_id=wide, max_body_length=most)
    assert message["body"]
    # The continuation brings the rest of the body, window after window.
    offset, read, exhausted = 0, "", 0
    for _ in range(20):
        window = await mg.call(
            "mg_get_message", account=NAME, message_id=wide, body_offset=offset, max_body_length=most
        )
        assert window["body_offset"] == offset
        if window["body_budget_exhausted"]:  # the budget ended the window: `cut` says where to read on
            exhausted += 1
            entry = cut_of(window, "body")
            assert entry["total"] == window["body_total_length"]
            assert f"body_offset={offset + len(window['body'])} reads on" in entry["how_to_get_the_rest"]
        read += window["body"]
        offset += len(window["body"])
        if not window["body_truncated"]:
            break
    assert read == body_text(120_000) and exhausted > 0
    html = await mg.call(
        "mg_get_message", account=NAME, message_id=message_id("html"), max_body_length=most, raw_html=True
    )
    assert html["body_format"] == "html"
    thread = await mg.call(
        "mg_get_thread",
        account=NAME,
        thread_id=big.wide_thread,
        bodies="all",
        max_body_length=mg.most("mg_get_thread", "max_body_length"),
    )
    assert thread["message_count"] == 1
    # One message too large alone: its body window ends where the budget does, and says where to read on.
    [only] = thread["messages"]
    assert thread["body_budget_exhausted"] is True and only["body_truncated"] is True
    entry = cut_of(thread, "messages.0.body")
    assert f"message_id={wide} and body_offset={len(only['body'])} reads on" in entry["how_to_get_the_rest"]


async def test_labels_drafts_attachment(mg: Session) -> None:
    names: list[str] = []
    page: dict[str, Any] = {"next_page_token": None}
    for _ in range(10):
        token = {"page_token": page["next_page_token"]} if page["next_page_token"] else {}
        page = await mg.call("mg_list_labels", account=NAME, **token)
        names.extend(label["label"] for label in page["labels"])
        if not page["next_page_token"]:
            break
        assert page["page_budget_exhausted"] is True
        assert cut_of(page, "labels")["total"] == page["total_labels"]
    assert set(USER_LABELS) <= set(names) and len(names) == len(set(names)) == page["total_labels"]
    most = mg.most("mg_list_drafts", "max_results")
    drafts: list[str] = []
    page = {"next_page_token": None}
    for _ in range(PAGES):
        token = {"page_token": page["next_page_token"]} if page["next_page_token"] else {}
        page = await mg.call("mg_list_drafts", account=NAME, max_results=most, **token)
        drafts.extend(d["message_id"] for d in page["drafts"])
        assert page["page_budget_exhausted"] is True and page["next_page_token"]
        assert (cut_of(page, "drafts")["shown"], cut_of(page, "drafts")["total"]) == (len(page["drafts"]), 100)
    assert len(drafts) == len(set(drafts)) and page["total_drafts"] == 100
    saved = await mg.call("mg_get_attachment", account=NAME, message_id=message_id("siroka"), attachment_id="2")
    assert Path(saved["path"]).is_file()


async def test_list_accounts_and_reload(mg: Session, big: Big) -> None:
    listed = await mg.call("mg_list_accounts", verify=True)
    assert len(listed["accounts"]) == 10 and len(listed["failures"]) >= 9
    reloaded = await mg.call("mg_reload_config")
    assert reloaded["reloaded"] is True
    # A configuration with a great many errors: the report is cut, never saved to a file.
    path = big.runtime.config.path
    good = path.read_text(encoding="utf-8")
    broken = {"accounts": [{"name": f"ŠPATNĚ {i} " * 5, "address": "x" * 300} for i in range(300)]}
    path.write_text(json.dumps(broken, ensure_ascii=False), encoding="utf-8")
    try:
        refused = await mg.call("mg_reload_config")
    finally:
        path.write_text(good, encoding="utf-8")
    assert refused["error"]["code"] == "config_invalid"


# ------------------------------------------------------------------ writing (changes the mailbox: last)


async def test_label_tools(mg: Session, big: Big) -> None:
    # As many Message-IDs as a call takes, the missing ones as long as a header allows.
    ids = big.message_ids + [f"chybi-{i}-" + "x" * 960 + "@example.org" for i in range(500 - len(big.message_ids))]
    today = datetime.now(UTC).date().isoformat()
    labelled = await mg.call("mg_label_message", account=NAME, message_ids=ids, label=PROCESSED, since=today)
    assert labelled["succeeded"] == len(big.message_ids)
    # Only successes: as many as fit are listed, and the result says how many were left out.
    again = await mg.call("mg_label_message", account=NAME, message_ids=big.message_ids, label=PROCESSED)
    assert again["succeeded"] == len(big.message_ids) == len(again["messages"]) + again["messages_omitted"]
    assert again["messages_omitted"] > 0 and {m["outcome"] for m in again["messages"]} == {"already"}
    omitted = cut_of(again, "messages")
    assert (omitted["shown"], omitted["total"]) == (len(again["messages"]), len(big.message_ids))
    unlabelled = await mg.call("mg_unlabel_message", account=NAME, message_ids=ids, label=PROCESSED)
    assert unlabelled["succeeded"] == len(big.message_ids)
    threads = big.thread_ids[:50] + [str(10**18 + i) for i in range(100 - len(big.thread_ids[:50]))]
    label = list(CLASSES)[3]
    classified = await mg.call("mg_label_thread", account=NAME, label=label, thread_ids=threads)
    assert classified["succeeded"] > 0
    await mg.call("mg_unlabel_thread", account=NAME, label=label, thread_ids=threads)
    await mg.call("mg_label_thread", account=NAME, label=label, thread_id=big.long_thread)
    flags = await mg.call(
        "mg_set_flags", account=NAME, message_id=message_id("siroka"), seen=True, flagged=True, answered=True
    )
    assert flags["changed"]
    # An error listing every bad item of the longest lists the schema takes.
    refused = await mg.call(
        "mg_label_message", account=NAME, message_ids=["<" + "x" * 1001 + ">"] * 1000, label=PROCESSED
    )
    assert refused["error"]["code"] == "invalid_input"


async def test_drafts_sending_trash(mg: Session, big: Big) -> None:
    folder = Path(big.runtime.config.attachment_dirs[0])
    files = []
    for index in range(100):
        path = folder / ((f"{index:03d} " + "dlouhý název souboru s přílohou " * 5)[:150].strip() + ".txt")
        path.write_text("příloha", encoding="utf-8")
        files.append(str(path))
    to = [f"prijemce.{i}.{'a' * 60}@{'dlouha-domena-' * 3}example.org" for i in range(100)]
    common = {"account": NAME, "to": to, "subject": SUBJECT, "body": body_text(50_000), "attachments": files}
    draft = await mg.call("mg_save_draft", **common, in_reply_to=message_id("vlakno-001"))
    assert draft.get("error") is None, draft
    sent = await mg.call("mg_send_message", **common)
    assert sent.get("error") is None, sent
    trashed = await mg.call("mg_trash_message", account=NAME, message_id=message_id("vlakno-002"))
    assert trashed["moved"] is True
    # The longest recipient lists the schema takes, every address too long: one error naming them all.
    refused = await mg.call(
        "mg_send_message", account=NAME, to=["a" * 400 + "@example.org"] * 500, cc=["b" * 400] * 500, body="x"
    )
    assert refused["error"]["code"] == "invalid_input"
