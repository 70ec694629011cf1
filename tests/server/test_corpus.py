"""Real messages from public test suites (tests/corpus, SOURCES.md) read through the server as the
assistant reads them, and compared with Python's `email` package.

The corpus is loaded into an emulator of its own once per run. Each message is found with
mg_search_threads (`rfc822msgid:`), read with mg_get_thread (bodies "all"), mg_get_message
(the default and the largest window) and mg_get_attachment for every attachment listed; every
result is validated against its output schema (tests/conftest.py). What differs from the
reference must be in tests/corpus/differences.toml with its reason: a new difference fails, and so
does a recorded one that is gone (the file stays the reviewed truth).
"""

from __future__ import annotations

import asyncio
import json
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from gmail_emulator import GmailEmulator, Knobs
from gmail_emulator.mime import ParsedMessage
from mcp_multi_gmail.gmail.imap import finish_logouts
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.server import build_server
from support import gmail_env, load_runtime
from support.corpus import DIFFERENCES, Expected, Seen, corpus_files, differences, message_bytes, reference
from tool_results import error_body

pytestmark = pytest.mark.anyio

ADDRESS = "korpus@example.com"
PASSWORD = "korpusheslohesla"
START = datetime(2020, 1, 1, tzinfo=UTC)
WINDOW = 30_000  # the largest body window
DEFAULT_WINDOW = 8000  # mg_get_message's default
PARALLEL = 4  # calls in flight at once: the corpus reads in a few seconds, as several assistants would


@dataclass
class Loaded:
    emulator: GmailEmulator
    runtime: Runtime
    threads: dict[str, int]  # corpus file → Gmail thread id
    msgids: dict[str, int]  # corpus file → Gmail message id
    received: dict[str, str]  # corpus file → received_at as the server shows it
    expected: dict[str, Expected]
    rule: str  # "" under the default header-end rule; else its name, which marks the recorded keys
    saving: asyncio.Lock = field(default_factory=asyncio.Lock)


def _read_alike(raw: bytes) -> bool:
    """Whether both header-end rules give the message the same structure and envelope."""
    first, other = ParsedMessage(raw, "non_field"), ParsedMessage(raw, "blank_line")
    return first.bodystructure() == other.bodystructure() and first.envelope() == other.envelope()


def _shards() -> list[tuple[str, str]]:
    """(header-end rule, source) pairs, each read in a test of its own so that the xdist workers
    share the corpus: every source under the default rule, and under the other rule the messages
    it reads differently, together (a few of them)."""
    sources = sorted({name.split("/", 1)[0] for name in corpus_files()})
    default: str = Knobs().header_end
    return [(default, source) for source in sources] + [("blank_line", "")]


@pytest.fixture(scope="module", params=_shards(), ids=lambda shard: "-".join(filter(None, shard)))
def corpus(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loaded]:
    """One shard of the corpus in an emulator of its own, under one header-end rule (BEHAVIOURS.md,
    knob `header_end`): the default one source by source, the other with the messages it reads
    differently."""
    header_end, source = request.param
    workdir = tmp_path_factory.mktemp("corpus")
    knobs = Knobs(sent_filing_delay_s=0.0, raw_search_lag_s=0.0, header_end=header_end)
    names = [name for name in corpus_files() if not source or name.startswith(f"{source}/")]
    if header_end != Knobs().header_end:
        names = [name for name in names if not _read_alike(message_bytes(name))]
    with GmailEmulator(workdir=workdir / "emulator", knobs=knobs) as emulator:
        emulator.add_account(ADDRESS, PASSWORD)
        threads: dict[str, int] = {}
        msgids: dict[str, int] = {}
        received: dict[str, str] = {}
        expected: dict[str, Expected] = {}
        for index, name in enumerate(names):
            raw = message_bytes(name)
            when = START + timedelta(minutes=index)
            info = emulator.deliver(ADDRESS, raw, internaldate=when)
            threads[name] = info.thrid
            msgids[name] = info.msgid
            received[name] = when.isoformat().replace("+00:00", "Z")
            expected[name] = reference(raw)
        config = workdir / "multigmail.json"
        config.write_text(
            json.dumps(
                {
                    "accounts": [{"name": "k", "address": ADDRESS, "password": PASSWORD}],
                    "download_dir": str(workdir / "downloads"),
                }
            ),
            encoding="utf-8",
        )
        runtime = load_runtime(config, gmail_env(emulator), state_dir=workdir / "state")
        yield Loaded(
            emulator,
            runtime,
            threads,
            msgids,
            received,
            expected,
            "" if header_end == Knobs().header_end else header_end,
        )


async def _ok(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    if result.is_error:
        raise AssertionError(f"{tool}: {error_body(result)}")
    data: dict[str, Any] = result.structured_content
    return data


async def read_one(client: Client, loaded: Loaded, name: str) -> Seen:
    """One corpus message read as the assistant reads it."""
    seen = Seen(gmail_id=f"gmail-msgid-{loaded.msgids[name]}")
    wanted = loaded.expected[name].message_id
    thread_id = str(loaded.threads[name])
    try:
        if wanted:
            found = await _ok(client, "mg_search_threads", account="k", query=f"rfc822msgid:{wanted}")
            seen.thread_found = any(t["thread_id"] == thread_id for t in found["threads"])
        else:
            seen.thread_found = True  # nothing to search by: the thread comes from its delivery
        thread = await _ok(
            client, "mg_get_thread", account="k", thread_id=thread_id, bodies="all", max_body_length=WINDOW
        )
        mine = [m for m in thread["messages"] if m["received_at"] == loaded.received[name]]
        seen.thread_message = mine[0] if mine else None
        shown_id = seen.thread_message["message_id"] if seen.thread_message else None
        if shown_id is None:
            return seen
        seen.largest = await _ok(client, "mg_get_message", account="k", message_id=shown_id, max_body_length=WINDOW)
        if seen.largest["body_total_length"] > DEFAULT_WINDOW:  # else the default window is the same call
            seen.message = await _ok(client, "mg_get_message", account="k", message_id=shown_id)
        if seen.largest["received_at"] != loaded.received[name]:
            seen.largest = None  # a later copy with the same Message-ID answers: compared by its own file
            return seen
        for attachment in seen.largest["attachments"]:
            async with loaded.saving:  # two messages' "part-2.bin" are one file in the download folder
                saved = await _ok(
                    client,
                    "mg_get_attachment",
                    account="k",
                    message_id=shown_id,
                    attachment_id=attachment["attachment_id"],
                )
                seen.saved[attachment["attachment_id"]] = (saved, Path(saved["path"]).read_bytes())
    except AssertionError as failed:
        seen.errors.append(str(failed)[:300])
    return seen


def recorded() -> dict[str, dict[str, str]]:
    return tomllib.loads(DIFFERENCES.read_text(encoding="utf-8")) if DIFFERENCES.exists() else {}


async def read_all(loaded: Loaded) -> dict[str, dict[str, str]]:
    gate = asyncio.Semaphore(PARALLEL)
    async with Client(build_server(loaded.runtime)) as client:

        async def one(name: str) -> tuple[str, dict[str, str]]:
            async with gate:
                seen = await read_one(client, loaded, name)
            found = differences(loaded.expected[name], seen)
            return name, {f"{key}@{loaded.rule}" if loaded.rule else key: why for key, why in found.items()}

        found = dict(await asyncio.gather(*(one(name) for name in loaded.expected)))
    await finish_logouts()
    return found


async def test_every_corpus_message_reads_like_the_reference_or_its_difference_is_known(corpus: Loaded) -> None:
    found = await read_all(corpus)
    mine = (lambda key: key.endswith(f"@{corpus.rule}")) if corpus.rule else (lambda key: "@" not in key)
    known = {name: {k: v for k, v in keys.items() if mine(k)} for name, keys in recorded().items() if name in found}
    new = {
        f"{name} [{key}]: {detail}"
        for name, keys in found.items()
        for key, detail in keys.items()
        if key not in known.get(name, {})
    }
    gone = {f"{name} [{key}]" for name, keys in known.items() for key in keys if key not in found.get(name, {})}
    assert len(found) >= 10
    unexplained = [f"{name} [{key}]" for name, keys in known.items() for key, why in keys.items() if len(why) < 20]
    assert not unexplained, "recorded differences without a reason: " + ", ".join(unexplained)
    assert not new, "differences not in tests/corpus/differences.toml:\n" + "\n".join(sorted(new))
    assert not gone, "recorded differences that no longer occur (remove them):\n" + "\n".join(sorted(gone))


def test_the_corpus_holds_at_least_300_messages_from_at_least_4_sources() -> None:
    names = corpus_files()
    assert len(names) >= 300 and len({name.split("/", 1)[0] for name in names}) >= 4
    assert {name for name in recorded()} <= set(names), "differences recorded for files not in the corpus"
