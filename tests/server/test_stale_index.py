"""Search and the pass against a search index that answers state from a stale copy (the emulator's
knob raw_search_stale_state: each message's read, star, inbox and label state as it arrived).

Every test runs with the knob on and off: with it off Gmail's index is current and nothing is
dropped; with it on, a hit the live FLAGS and X-GM-LABELS contradict is left out and counted in
`index_stale_hits`, with the same IMAP commands. Other clients change the state through IMAP STORE."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from imapclient import IMAPClient
from toolcalls import Call, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
PASSWORD = "osobniheslohesla"


@pytest.fixture(params=[True, False], ids=["stale-index", "current-index"])
def stale(request: pytest.FixtureRequest, emulator: GmailEmulator) -> bool:
    emulator.set_knobs(raw_search_stale_state=request.param)
    return bool(request.param)


@pytest.fixture
def runtime(write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]) -> Runtime:
    entry = {"name": "o", "address": ME, "password": PASSWORD, "processed_label": "Asistent"}
    return make_runtime(write_config([entry, {**entry, "name": "u", "unread_only": True}]))


def _mail(n: int, thread: int | None = None) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = "Odesílatel <odesilatel@example.org>"
    msg["To"] = ME
    topic = n if thread is None else thread
    msg["Subject"] = f"Zpráva {topic}" if thread is None or n == thread else f"Re: Zpráva {topic}"
    msg["Message-ID"] = f"<m{n}@example.org>"
    if thread is not None and n != thread:
        msg["In-Reply-To"] = msg["References"] = f"<m{thread}@example.org>"
    msg.set_content(f"Text {n}.")
    return msg


def _deliver(emulator: GmailEmulator, count: int, **kwargs: Any) -> None:
    base = datetime.now(UTC) - timedelta(hours=5)
    for n in range(count):
        emulator.deliver(ME, _mail(n), internaldate=base + timedelta(minutes=n), **kwargs)


@contextmanager
def other_client(emulator: GmailEmulator) -> Iterator[tuple[IMAPClient, dict[int, int]]]:
    """Another mail client in All Mail, with the UID of each message m<n>@example.org."""
    with IMAPClient("127.0.0.1", port=emulator.imap_port, ssl_context=emulator.client_ssl_context()) as client:
        client.login(ME, PASSWORD)
        client.select_folder("[Gmail]/All Mail")
        envelopes = client.fetch(client.search(["ALL"]), ["ENVELOPE"])
        uids = {int(e[b"ENVELOPE"].message_id.strip(b"<>").split(b"@")[0][1:]): uid for uid, e in envelopes.items()}
        yield client, uids


async def _search(call: Call, runtime: Runtime, query: str, **args: Any) -> dict[str, Any]:
    found: dict[str, Any] = await ok(
        call, runtime, "mg_search_threads", account="o", query=query, **{"max_results": 50, **args}
    )
    return found


def _subjects(result: dict[str, Any]) -> set[str]:
    return {t["subject"] for t in result["threads"]}


async def test_thirty_unread_twenty_then_read(
    emulator: GmailEmulator, stale: bool, runtime: Runtime, call: Call
) -> None:
    _deliver(emulator, 30)
    with other_client(emulator) as (client, uids):
        client.add_flags([uids[n] for n in range(20)], [b"\\Seen"])
    unread = {f"Zpráva {n}" for n in range(20, 30)}
    for query in ["is:unread", "IS:UNREAD", "-is:read", "NOT is:read", "in:inbox AND is:unread"]:
        emulator.reset_counters()
        found = await _search(call, runtime, query)
        assert _subjects(found) == unread and found["total_threads"] == 10, query
        assert found["index_stale_hits"] == (20 if stale else 0), query
        names = [c.name for c in emulator.commands()]
        # the live state comes with the one FETCH every search makes: no command more
        assert names.count("UID SEARCH") == 1 and names.count("UID FETCH") == 1, names
    # with account "all" the count is summed over the mailboxes (here two entries of one account)
    both = await ok(call, runtime, "mg_search_threads", account="all", query="is:unread", max_results=50)
    assert both["total_threads"] == 20 and both["index_stale_hits"] == (40 if stale else 0)
    # the pass takes read state from FETCH, never from the index: the same whatever the index says
    since = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
    everything = await ok(call, runtime, "mg_next_pass", account="o", since=since, max_threads=50)
    assert everything["total_threads"] == 30 and everything["index_stale_hits"] == 0
    only_unread = await ok(call, runtime, "mg_next_pass", account="u", since=since, max_threads=50)
    assert {t["subject"] for t in only_unread["threads"]} == unread
    assert only_unread["outside_scope_in_window"] == 20 and only_unread["index_stale_hits"] == 0


async def test_an_or_query_is_not_rechecked(emulator: GmailEmulator, stale: bool, runtime: Runtime, call: Call) -> None:
    _deliver(emulator, 30)
    with other_client(emulator) as (client, uids):
        client.add_flags([uids[n] for n in range(20)], [b"\\Seen"])
    for query in ["is:unread OR subject:nothing", "{is:unread subject:nothing}", "(is:unread)", "{is:unread}"]:
        emulator.reset_counters()
        found = await _search(call, runtime, query)
        # what the index returns is shown as it is: all 30 from a stale index, the 10 from a current one
        assert found["total_threads"] == (30 if stale else 10) and found["index_stale_hits"] == 0, query
        # a one-word query goes out as a quoted string: as an atom, ( and { are IMAP syntax
        search = next(c.line for c in emulator.commands() if c.name == "UID SEARCH")
        assert search.endswith(f'X-GM-RAW "{query}"') or search.endswith(f'X-GM-RAW "{query} "'), search


async def test_negations(emulator: GmailEmulator, stale: bool, runtime: Runtime, call: Call) -> None:
    _deliver(emulator, 6, flags=["\\Seen"])  # arrived read
    with other_client(emulator) as (client, uids):
        client.remove_flags([uids[n] for n in range(4)], [b"\\Seen"])  # marked unread again
    still_read = {"Zpráva 4", "Zpráva 5"}
    for query in ["-is:unread", "NOT is:unread", "is:read", "-IS:UNREAD subject:zpráva"]:
        found = await _search(call, runtime, query)
        assert _subjects(found) == still_read, query
        assert found["index_stale_hits"] == (4 if stale else 0), query
    # a stale index does not know the four are unread now: it cannot return them (nothing adds a hit)
    unread = await _search(call, runtime, "is:unread")
    assert unread["total_threads"] == (0 if stale else 4) and unread["index_stale_hits"] == 0


async def test_label_added_and_removed_after_arrival(
    emulator: GmailEmulator, stale: bool, runtime: Runtime, call: Call
) -> None:
    base = datetime.now(UTC) - timedelta(hours=5)
    for n in range(10):
        labels = ["\\Inbox", "Projekty/Letos"] if n < 5 else ["\\Inbox"]
        emulator.deliver(ME, _mail(n), labels=labels, internaldate=base + timedelta(minutes=n))
    with other_client(emulator) as (client, uids):
        client.remove_gmail_labels([uids[n] for n in range(3)], ["Projekty/Letos"])
        client.add_gmail_labels([uids[5], uids[6]], ["Projekty/Letos"])
    labelled = await _search(call, runtime, "label:projekty-letos")
    # stale: the index returns 0-4 (as they arrived), 0-2 no longer carry it; 5 and 6 it does not know
    assert _subjects(labelled) == ({"Zpráva 3", "Zpráva 4"} if stale else {f"Zpráva {n}" for n in (3, 4, 5, 6)})
    assert labelled["index_stale_hits"] == (3 if stale else 0)
    unlabelled = await _search(call, runtime, "-label:Projekty/Letos")
    assert _subjects(unlabelled) == ({"Zpráva 7", "Zpráva 8", "Zpráva 9"} if stale else
                                     {f"Zpráva {n}" for n in (0, 1, 2, 7, 8, 9)})  # fmt: skip
    assert unlabelled["index_stale_hits"] == (2 if stale else 0)
    # spellings whose match is unsure keep what the index returned
    for loose in ["label:projekty", "label:projektyletos"]:
        found = await _search(call, runtime, loose)
        assert found["index_stale_hits"] == 0, loose


async def test_in_inbox_after_archiving(emulator: GmailEmulator, stale: bool, runtime: Runtime, call: Call) -> None:
    _deliver(emulator, 6)
    with other_client(emulator) as (client, uids):
        client.remove_gmail_labels([uids[n] for n in range(4)], ["\\Inbox"])  # archived elsewhere
    inbox = await _search(call, runtime, "in:inbox")
    assert _subjects(inbox) == {"Zpráva 4", "Zpráva 5"} and inbox["index_stale_hits"] == (4 if stale else 0)
    assert all(t["newest_match"]["in_inbox"] for t in inbox["threads"])
    archived = await _search(call, runtime, "-in:inbox")
    assert archived["total_threads"] == (0 if stale else 4) and archived["index_stale_hits"] == 0


async def test_starred(emulator: GmailEmulator, stale: bool, runtime: Runtime, call: Call) -> None:
    _deliver(emulator, 4, flags=["\\Flagged"])
    with other_client(emulator) as (client, uids):
        client.remove_flags([uids[0], uids[1]], [b"\\Flagged"])
    found = await _search(call, runtime, "is:starred")
    assert _subjects(found) == {"Zpráva 2", "Zpráva 3"} and found["index_stale_hits"] == (2 if stale else 0)


async def test_threads_keep_their_live_matches(
    emulator: GmailEmulator, stale: bool, runtime: Runtime, call: Call
) -> None:
    """Thread 0 (three messages) has all of them read later, thread 3 (two) one of them: thread 0
    disappears, thread 3 stays with one match, thread 5 is untouched."""
    base = datetime.now(UTC) - timedelta(hours=5)
    for i, (n, root) in enumerate([(0, 0), (1, 0), (2, 0), (3, 3), (4, 3), (5, None)]):
        emulator.deliver(ME, _mail(n, root), internaldate=base + timedelta(minutes=i))
    with other_client(emulator) as (client, uids):
        client.add_flags([uids[0], uids[1], uids[2], uids[4]], [b"\\Seen"])
    found = await _search(call, runtime, "is:unread")
    matched = {t["subject"]: t["matched_messages"] for t in found["threads"]}
    # thread 3's subject is its newest live match's, not that of the read reply
    assert matched == {"Zpráva 3": 1, "Zpráva 5": 1}
    assert found["index_stale_hits"] == (4 if stale else 0)


@pytest.mark.parametrize(("count", "read_every"), [(30, 3), (240, 8)], ids=["one-fetch", "two-fetches"])
async def test_pages_hold_every_live_match_once(
    emulator: GmailEmulator, stale: bool, runtime: Runtime, call: Call, count: int, read_every: int
) -> None:
    """Read messages sit between the unread ones, so pages built from the index's answer would have
    holes. Past 200 matches the search reads the threads and the page in two FETCHes."""
    many = count > 200
    _deliver(emulator, count)
    read = [n for n in range(count) if (n % 3 != 0 if read_every == 3 else n % read_every == 1)]
    with other_client(emulator) as (client, uids):
        client.add_flags([uids[n] for n in read], [b"\\Seen"])
    unread = [f"Zpráva {n}" for n in reversed(range(count)) if n not in read]
    seen: list[str] = []
    token: str | None = None
    fetches: list[int] = []
    while True:
        emulator.reset_counters()
        args: dict[str, Any] = {"max_results": 50 if many else 4}
        if token is not None:
            args["page_token"] = token
        page = await _search(call, runtime, "is:unread", **args)
        fetches.append([c.name for c in emulator.commands()].count("UID FETCH"))
        assert len(page["threads"]) == (args["max_results"] if page["next_page_token"] else len(page["threads"]))
        assert page["total_threads"] == len(unread)
        assert page["index_stale_hits"] == (len(read) if stale else 0)
        seen.extend(t["subject"] for t in page["threads"])
        token = page["next_page_token"]
        if token is None:
            break
    assert seen == unread  # newest first, none skipped, none twice
    assert set(fetches) == {2 if many else 1}
