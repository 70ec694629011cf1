"""A list is its list, not its URL (issue 41): mg_unsubscribe remembers a list by what the overview
groups it by (its List-Id, else its sender) and by the domain that signed its header; the lookup of a
list already left and the record of leaving it are one step under the state folder's lock; and when
the request went out but the record could not be written, the result says that the unsubscribe was
made. Over the emulator and a local HTTPS stand-in of the lists' endpoint."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.mail.subscriptions import unsubscribed
from mcp_multi_gmail.mail.subscriptions.unsubscribed import LEFT_FILE
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.statefile import write_atomically
from support import gmail_env, load_runtime
from support.newsletters import Newsletter, deliver, newsletter
from support.waiting import wait_until_async
from support.web_standin import Answer, WebStandIn
from tool_results import error_body

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
ACCOUNT = {"name": "o", "address": ME, "password": "osobniheslohesla", "can_unsubscribe": True, "can_send": True}
# Two lists of one mailing service: one endpoint, told apart by the query alone.
DEALS = Newsletter(
    "deals@shop.example",
    "Deals",
    "deals.shop.example",
    "<https://news.example/unsubscribe?list=deals&u=7f3a>, <mailto:leave@shop.example>",
)
TIPS = Newsletter(
    "tips@garden.example",
    "Tips",
    "tips.garden.example",
    "<https://news.example/unsubscribe?list=tips&u=9c1d>, <mailto:leave@garden.example>",
)


@pytest.fixture(scope="module")
def standin_once(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebStandIn]:
    with WebStandIn(tmp_path_factory.mktemp("web")) as server:
        yield server


@pytest.fixture
def standin(standin_once: WebStandIn) -> Iterator[WebStandIn]:
    standin_once.settled()
    standin_once.answer = Answer.OK
    standin_once.release.clear()
    standin_once.waiting.clear()
    standin_once.connections.clear()
    yield standin_once
    standin_once.release.set()


@pytest.fixture(autouse=True)
def quick_sent(emulator: GmailEmulator) -> None:
    emulator.set_knobs(sent_filing_delay_s=0.0, raw_search_lag_s=0.0)


@pytest.fixture
def web_runtime(
    emulator: GmailEmulator, standin: WebStandIn, write_config: Callable[..., Path], tmp_path: Path
) -> Callable[..., Runtime]:
    """A fresh server process over the test's one state folder, whose web request reaches only the stand-in."""

    def make(extra: tuple[str, ...] = ()) -> Runtime:
        environ = {**gmail_env(emulator), **standin.environ("news.example", extra=extra)}
        return load_runtime(write_config([ACCOUNT]), environ, state_dir=tmp_path / "state")

    return make


def record(tmp_path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tmp_path / "state" / LEFT_FILE).read_text(encoding="utf-8"))
    return data


# --- a list is its list --------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["one_click", "mailto"])
async def test_two_lists_of_one_endpoint_are_two_lists(
    emulator: GmailEmulator,
    standin: WebStandIn,
    call: Call,
    web_runtime: Callable[..., Runtime],
    tmp_path: Path,
    method: str,
) -> None:
    [deals] = deliver(emulator, ME, DEALS)
    [tips] = deliver(emulator, ME, TIPS)
    runtime = web_runtime()
    first = await ok(call, runtime, "mg_unsubscribe", account="o", message_id=deals, method="one_click")
    assert first["done"] is True and first["contacted"] == "https://news.example/unsubscribe"
    second = await ok(call, runtime, "mg_unsubscribe", account="o", message_id=tips, method=method)
    assert second["done"] is True and second["remembered"] is True
    assert len(standin.settled()) == (2 if method == "one_click" else 1)
    listed = await ok(call, runtime, "mg_list_subscriptions", account="o")
    assert {s["list_id"]: s["left_at"] is not None for s in listed["subscriptions"]} == {
        "deals.shop.example": True,
        "tips.garden.example": True,
    }
    # Each list is still left once.
    again = await error(call, web_runtime(), "mg_unsubscribe", account="o", message_id=tips, method="one_click")
    assert again["code"] == "unsubscribe_refused" and "already left" in again["message"]
    entries = record(tmp_path)["left"]
    assert [(e["list"], e["signer"]) for e in entries] == [
        ("list:deals.shop.example", "shop.example"),
        ("list:tips.garden.example", "garden.example"),
    ]


async def test_a_list_of_the_same_list_id_signed_by_another_domain_is_another_list(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime]
) -> None:
    """Anyone can write a List-Id: leaving a look-alike signed by someone else leaves nothing of the real list."""
    forged = Newsletter("deals@evil.example", "Deals", "deals.shop.example", "<https://news.example/unsubscribe?x=1>")
    [fake] = deliver(emulator, ME, forged, first_day=4)
    runtime = web_runtime()
    await ok(call, runtime, "mg_unsubscribe", account="o", message_id=fake, method="one_click")
    [real] = deliver(emulator, ME, DEALS, first_day=1)
    done = await ok(call, runtime, "mg_unsubscribe", account="o", message_id=real, method="one_click")
    assert done["done"] is True and done["signed_by"] == "shop.example" and len(standin.settled()) == 2


async def test_a_record_of_the_first_format_is_read_by_its_list(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    """A record written before the signer was kept (version 1 without `signer`) names its list by the
    group alone: that list stays left, whoever signs it; a list that only shares its URL does not."""
    [deals] = deliver(emulator, ME, DEALS)
    [tips] = deliver(emulator, ME, TIPS)
    old = {
        "account": "o",
        "list": "list:deals.shop.example",
        "target": "https://news.example/unsubscribe",
        "method": "one_click",
        "at": "2026-01-05T10:00:00Z",
        "status": 200,
    }
    (tmp_path / "state").mkdir(parents=True, exist_ok=True)
    (tmp_path / "state" / LEFT_FILE).write_text(json.dumps({"version": 1, "left": [old]}), encoding="utf-8")
    runtime = web_runtime()
    listed = await ok(call, runtime, "mg_list_subscriptions", account="o")
    assert {s["list_id"]: s["left_at"] for s in listed["subscriptions"]} == {
        "deals.shop.example": "2026-01-05T10:00:00Z",
        "tips.garden.example": None,
    }
    refused = await error(call, runtime, "mg_unsubscribe", account="o", message_id=deals, method="mailto")
    assert refused["code"] == "unsubscribe_refused" and "2026-01-05T10:00:00Z" in refused["message"]
    done = await ok(call, runtime, "mg_unsubscribe", account="o", message_id=tips, method="one_click")
    assert done["done"] is True and len(standin.settled()) == 1
    assert record(tmp_path)["left"][0] == old  # the old entry is kept as it was


# --- one request, however many calls ----------------------------------------------------------------------


@pytest.mark.parametrize("runtimes", [1, 2], ids=["one-runtime", "two-runtimes-one-state-folder"])
async def test_two_calls_at_once_make_one_request(
    emulator: GmailEmulator,
    standin: WebStandIn,
    call: Call,
    web_runtime: Callable[..., Runtime],
    tmp_path: Path,
    runtimes: int,
) -> None:
    [deals] = deliver(emulator, ME, DEALS)
    standin.answer = Answer.SLOW  # the first request waits at the endpoint until the test releases it
    first_runtime = web_runtime()
    second_runtime = first_runtime if runtimes == 1 else web_runtime()
    args = {"account": "o", "message_id": deals, "method": "one_click"}
    first = asyncio.ensure_future(call(first_runtime, "mg_unsubscribe", args))
    await wait_until_async(standin.waiting.is_set, what="the first request at the endpoint")
    second = asyncio.ensure_future(call(second_runtime, "mg_unsubscribe", args))
    await wait_until_async(lambda: second.done() or len(standin.connections) > 1, what="the second call")
    standin.release.set()
    results = await asyncio.gather(first, second)
    assert len(standin.settled()) == 1
    assert results[0].is_error is False and results[0].structured_content["done"] is True
    assert results[1].is_error is True
    refusal = error_body(results[1])
    assert refusal["code"] == "unsubscribe_refused" and "force: true" in refusal["message"]
    assert "Nothing was contacted" in refusal["message"] and "outcome is not recorded" in refusal["message"]
    [entry] = record(tmp_path)["left"]
    assert entry["status"] == 200 and not entry.get("pending")


async def test_a_claim_of_another_process_after_the_look_refuses_the_call(
    emulator: GmailEmulator,
    standin: WebStandIn,
    call: Call,
    web_runtime: Callable[..., Runtime],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Another server process claims the list between this call's look for an earlier record and its
    own claim: the claim, made under the file lock, finds the other's, and this call contacts nobody."""
    [deals] = deliver(emulator, ME, DEALS)
    look = unsubscribed.LeftLists.find

    def look_then_another_claims(
        self: unsubscribed.LeftLists, account: str, group: str, signer: str
    ) -> unsubscribed.Left | None:
        found = look(self, account, group, signer)
        other = unsubscribed.Left(
            account, group, "https://news.example/unsubscribe", "one_click", "2026-12-06T10:00:00Z", None, signer, True
        )
        assert unsubscribed.LeftLists(self.path.parent).claim(other, force=False) is None
        return found

    monkeypatch.setattr(unsubscribed.LeftLists, "find", look_then_another_claims)
    refused = await error(call, web_runtime(), "mg_unsubscribe", account="o", message_id=deals, method="one_click")
    assert refused["code"] == "unsubscribe_refused" and "outcome is not recorded" in refused["message"]
    assert standin.connections == [] and [e["pending"] for e in record(tmp_path)["left"]] == [True]


# --- what went out is said, whatever the record --------------------------------------------------------------


@pytest.mark.parametrize("method", ["one_click", "mailto"])
async def test_an_unwritable_record_after_the_request_still_says_it_was_made(
    emulator: GmailEmulator,
    standin: WebStandIn,
    call: Call,
    web_runtime: Callable[..., Runtime],
    monkeypatch: pytest.MonkeyPatch,
    method: str,
) -> None:
    [deals] = deliver(emulator, ME, DEALS)

    def disk_full_once_it_went_out(path: Path, text: str) -> None:
        if standin.connections or emulator.outbox():
            raise OSError(errno.ENOSPC, "No space left on device")
        write_atomically(path, text)

    monkeypatch.setattr(unsubscribed, "write_atomically", disk_full_once_it_went_out)
    runtime = web_runtime()
    result = await ok(call, runtime, "mg_unsubscribe", account="o", message_id=deals, method=method)
    assert result["done"] is True and result["remembered"] is False
    note = result["note"]
    assert "The unsubscribe was made" in note and "No space left on device" in note
    assert "do not call mg_unsubscribe for this list again" in note
    assert len(standin.settled()) + len(emulator.outbox()) == 1
    # The record still holds the call as begun: a second call is refused, not made again.
    monkeypatch.setattr(unsubscribed, "write_atomically", write_atomically)
    again = await error(call, runtime, "mg_unsubscribe", account="o", message_id=deals, method=method)
    assert again["code"] == "unsubscribe_refused" and len(standin.settled()) + len(emulator.outbox()) == 1


async def test_a_failed_cleanup_never_hides_the_first_error(
    emulator: GmailEmulator,
    standin: WebStandIn,
    call: Call,
    web_runtime: Callable[..., Runtime],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The request never went out (nothing listens where the host points); taking the call's mark
    back off the record fails too: the caller gets the request's own failure, the log the other."""
    closed = Newsletter("n@closed.example", "Closed", "l.closed.example", "<https://closed.example/u?x=1>")
    [message_id] = deliver(emulator, ME, closed)
    writes: list[str] = []

    def second_write_fails(path: Path, text: str) -> None:
        writes.append(text)
        if len(writes) > 1:
            raise OSError(errno.EIO, "Input/output error")
        write_atomically(path, text)

    monkeypatch.setattr(unsubscribed, "write_atomically", second_write_fails)
    runtime = web_runtime(extra=("closed.example=127.0.0.1:9",))  # the discard port: nothing listens there
    with caplog.at_level(logging.ERROR, logger="mcp_multi_gmail"):
        failed = await error(call, runtime, "mg_unsubscribe", account="o", message_id=message_id, method="one_click")
    assert failed["code"] == "upstream_error" and "Nothing was sent" in failed["message"]
    assert "Input/output error" not in failed["message"]
    assert any("Input/output error" in r.getMessage() or "Input/output" in str(r.exc_info) for r in caplog.records)


async def test_a_message_of_no_list_and_no_sender_is_left_once_however_its_id_is_written(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    """A signed message with no List-Id and no sender address is a list of its own, remembered by its
    Message-ID as the message carries it: named again in other letter case (Message-IDs are found
    regardless of case), it is still the list already left, and nothing is sent twice."""
    letter = Newsletter("news@nobody.example", "Nobody", None, "<https://news.example/unsubscribe?who=n>")
    raw, message_id = newsletter(letter, ME, 7, datetime.now(UTC).replace(microsecond=0) - timedelta(days=1))
    emulator.deliver(ME, raw.replace(b'From: "Nobody" <news@nobody.example>', b"From: Nobody <undisclosed>"))
    runtime = web_runtime()
    done = await ok(call, runtime, "mg_unsubscribe", account="o", message_id=message_id, method="one_click")
    assert done["done"] is True and done["list_id"] is None
    again = await error(call, runtime, "mg_unsubscribe", account="o", message_id=message_id.upper(), method="one_click")
    assert again["code"] == "unsubscribe_refused" and "already left" in again["message"]
    assert len(standin.settled()) == 1
    assert [e["list"] for e in record(tmp_path)["left"]] == [f"message:{message_id}"]
