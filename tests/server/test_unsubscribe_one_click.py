"""mg_unsubscribe(method="one_click") through the server, over the emulator, against a local HTTPS
stand-in of the list's endpoint (tests/support/web_standin.py): exactly one POST as RFC 8058 says,
every refusal before any connection, a list left once across restarts, nothing the endpoint wrote
in any result."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC
from ipaddress import ip_address
from pathlib import Path
from typing import Any

import pytest
from imapclient import IMAPClient
from toolcalls import Call, error, ok

from gmail_emulator import FaultRule, GmailEmulator
from mcp_multi_gmail import deadline
from mcp_multi_gmail.mail.subscriptions.unsubscribed import LEFT_FILE, LeftLists
from mcp_multi_gmail.runtime import Runtime
from support import gmail_env, load_runtime
from support.newsletters import Newsletter, deliver
from support.waiting import wait_until
from support.web_standin import INJECTION, OK_BODY, Answer, WebStandIn

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
PASSWORD = "osobniheslohesla"
ACCOUNT = {"name": "o", "address": ME, "password": PASSWORD, "can_unsubscribe": True}
URL = "https://news.example/unsubscribe?u=1&id=ab"
NEWS = Newsletter("editor@news.example", "News", "weekly.news.example", f"<{URL}>, <mailto:leave@news.example>")
# Hosts that MG_WEB_RESOLVE points at addresses no request may ever go to.
FORBIDDEN = {
    "private.example": "10.0.0.1",
    "metadata.example": "169.254.169.254",
    "loopback6.example": "[::1]",
    "mapped.example": "[::ffff:127.0.0.1]",
    "cgnat.example": "100.64.0.1",
}


@pytest.fixture(scope="module")
def standin_once(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebStandIn]:
    with WebStandIn(tmp_path_factory.mktemp("web")) as server:
        yield server


@pytest.fixture
def standin(standin_once: WebStandIn) -> Iterator[WebStandIn]:
    """The module's stand-in, answering 200 and with no connection recorded yet."""
    standin_once.settled()  # the previous test's handlers are done
    standin_once.answer = Answer.OK
    standin_once.release.clear()
    standin_once.waiting.clear()
    standin_once.connections.clear()
    yield standin_once
    standin_once.release.set()


@pytest.fixture
def web_runtime(
    emulator: GmailEmulator, standin: WebStandIn, write_config: Callable[..., Path], tmp_path: Path
) -> Callable[..., Runtime]:
    """A runtime (a fresh server process) whose web request reaches only the stand-in; the state
    folder is the test's, shared by every runtime it makes."""

    def make(account: dict[str, Any] | None = None, call_timeout_s: float | None = None) -> Runtime:
        extra = tuple(f"{host}={address}:443" for host, address in FORBIDDEN.items())
        environ = {**gmail_env(emulator), **standin.environ("news.example", extra=extra)}
        config = write_config([account or ACCOUNT])
        return load_runtime(config, environ, state_dir=tmp_path / "state", call_timeout_s=call_timeout_s)

    return make


def everything(result: dict[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False)


async def test_one_click_sends_one_post_exactly_as_rfc_8058_says(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    [newest, older] = deliver(emulator, ME, NEWS, 2)
    runtime = web_runtime()
    result = await ok(call, runtime, "mg_unsubscribe", account="o", message_id=older, method="one_click")
    [connection] = standin.settled()
    request = connection.request
    assert request is not None and connection.server_name == "news.example"
    assert request.request_line == b"POST /unsubscribe?u=1&id=ab HTTP/1.1"
    headers = {name.decode().lower(): value.decode() for name, value in request.headers}
    assert headers["host"] == "news.example"
    assert headers["content-type"] == "application/x-www-form-urlencoded"
    assert headers["content-length"] == "26"
    assert not {"cookie", "authorization", "referer", "proxy-authorization"} & set(headers)
    assert request.body == b"List-Unsubscribe=One-Click" and request.after == b""
    assert result["message_id"] == newest  # the newest issue of the list, whichever was named
    assert result["done"] is True and result["remembered"] is True and result["signed_by"] == "news.example"
    assert result["note"] is None  # a success needs no word
    assert result["one_click"] == {"status": 200, "redirect": False, "host": "news.example", "address": "127.0.0.1"}
    assert result["contacted"] == "https://news.example/unsubscribe" and result["list_id"] == "weekly.news.example"
    assert result["list_name"] == "News" and result["sender"] == {"name": "News", "address": "editor@news.example"}
    assert OK_BODY.decode() not in everything(result)
    # Remembered: the overview shows it, a second call is refused, and so after a restart.
    listed = await ok(call, runtime, "mg_list_subscriptions", account="o")
    [entry] = listed["subscriptions"]
    assert entry["left_at"] is not None and entry["left_at"].endswith("Z")
    again = await error(call, runtime, "mg_unsubscribe", account="o", message_id=newest, method="one_click")
    assert again["code"] == "unsubscribe_refused" and entry["left_at"] in again["message"]
    assert "force: true" in again["message"] and "answered 200" in again["message"]
    # A dry run checks that too: it would be refused.
    plan = await error(call, runtime, "mg_unsubscribe", account="o", message_id=older, method="one_click", dry_run=True)
    assert plan["code"] == "unsubscribe_refused" and "already left" in plan["message"]
    restarted = web_runtime()
    assert restarted is not runtime and (tmp_path / "state" / LEFT_FILE).is_file()
    after_restart = await error(call, restarted, "mg_unsubscribe", account="o", message_id=newest, method="mailto")
    assert after_restart["code"] == "unsubscribe_refused" and entry["left_at"] in after_restart["message"]
    assert len(standin.connections) == 1 and emulator.outbox() == []
    forced = await ok(call, restarted, "mg_unsubscribe", account="o", message_id=newest, method="one_click", force=True)
    assert forced["done"] is True and len(standin.settled()) == 2


@pytest.mark.parametrize(
    ("letter", "reason"),
    [
        (Newsletter("e@news.example", "N", "l.news.example", f"<{URL}>", post=False), "no List-Unsubscribe-Post field"),
        (
            Newsletter("e@news.example", "N", "l.news.example", "<http://news.example/u>"),
            "only an http: URI, not https:",
        ),
        (
            Newsletter("e@news.example", "N", "l.news.example", "<https://news.example:8443/u>"),
            "the URL names port 8443, not 443",
        ),
        (
            Newsletter("e@news.example", "N", "l.news.example", "<https://me:secret@news.example/u>"),
            "the URL carries a user name or password",
        ),
        (
            Newsletter("e@news.example", "N", "l.news.example", f"<{URL}>", signs=("list-unsubscribe",)),
            "the passing DKIM signature does not cover List-Unsubscribe-Post",
        ),
        (
            Newsletter("e@news.example", "N", "l.news.example", f"<{URL}>", authserv="mx.news.example"),
            "no DKIM verdict of Gmail's own (mx.google.com)",
        ),
        (Newsletter("e@news.example", "N", "l.news.example", f"<{URL}>", dkim="fail"), "DKIM did not pass (dkim=fail)"),
        *(
            (
                Newsletter(f"e@{host}", "N", f"l.{host}", f"<https://{host}/u>"),
                f"its host {host} resolves to {ip_address(address.strip('[]'))}",
            )
            for host, address in FORBIDDEN.items()
        ),
    ],
    ids=["no-post", "http", "port-8443", "userinfo", "post-unsigned", "other-authserv", "dkim-fail", *FORBIDDEN],
)
async def test_refused_before_any_connection(
    emulator: GmailEmulator,
    standin: WebStandIn,
    call: Call,
    web_runtime: Callable[..., Runtime],
    tmp_path: Path,
    letter: Newsletter,
    reason: str,
) -> None:
    [message_id] = deliver(emulator, ME, letter)
    runtime = web_runtime()
    for dry_run in (True, False):
        refused = await error(
            call, runtime, "mg_unsubscribe", account="o", message_id=message_id, method="one_click", dry_run=dry_run
        )
        assert refused["code"] == "unsubscribe_refused" and reason in refused["message"], refused
        assert "Nothing was contacted" in refused["message"]
        # A rule of the header names the mailbox; a host's own lookup is a later step, at the request.
        assert 'mailbox "o"' in refused["message"] or "resolves to" in reason
    assert standin.connections == []  # no request made, not even a connection
    # Nothing remembered: the call's claim on the list was taken back.
    assert LeftLists(tmp_path / "state").of_account("o") == []


async def test_can_unsubscribe_off_refuses_before_anything(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime]
) -> None:
    [message_id] = deliver(emulator, ME, NEWS)
    runtime = web_runtime({**ACCOUNT, "can_unsubscribe": False, "can_send": True})
    emulator.reset_counters()
    refused = await error(call, runtime, "mg_unsubscribe", account="o", message_id=message_id, method="one_click")
    assert refused["code"] == "unsubscribe_refused" and "can_unsubscribe" in refused["message"]
    assert 'Mailbox "o"' in refused["message"]
    assert standin.connections == [] and emulator.commands(ME) == []  # not even the mailbox was opened


async def test_dry_run_checks_everything_and_contacts_nobody(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    [message_id] = deliver(emulator, ME, NEWS)
    runtime = web_runtime()
    plan = await ok(
        call, runtime, "mg_unsubscribe", account="o", message_id=message_id, method="one_click", dry_run=True
    )
    assert plan["dry_run"] is True and plan["done"] is False and plan["remembered"] is False
    assert plan["one_click"] == {"status": None, "redirect": False, "host": "news.example", "address": "127.0.0.1"}
    assert plan["contacted"] == "https://news.example/unsubscribe"
    assert standin.connections == [] and not (tmp_path / "state" / LEFT_FILE).exists()
    done = await ok(call, runtime, "mg_unsubscribe", account="o", message_id=message_id, method="one_click")
    assert done["done"] is True and len(standin.settled()) == 1


async def test_a_redirect_is_reported_and_never_followed(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime]
) -> None:
    standin.answer = Answer.REDIRECT
    [message_id] = deliver(emulator, ME, NEWS)
    result = await ok(call, web_runtime(), "mg_unsubscribe", account="o", message_id=message_id, method="one_click")
    assert result["one_click"] == {"status": 302, "redirect": True, "host": "news.example", "address": "127.0.0.1"}
    assert result["done"] is False and result["remembered"] is True and "not followed" in result["note"]
    [connection] = standin.settled()  # one request; the Location was never asked for
    assert connection.request is not None and connection.request.after == b""
    assert standin.location not in everything(result) and "confirm" not in everything(result)


@pytest.mark.parametrize(
    ("status", "redirect", "said"),
    [(300, True, "a redirect"), (399, True, "a redirect"), (400, False, "not a success"), (299, False, None)],
)
async def test_what_an_answer_s_status_means(
    emulator: GmailEmulator,
    standin: WebStandIn,
    call: Call,
    web_runtime: Callable[..., Runtime],
    status: int,
    redirect: bool,
    said: str | None,
) -> None:
    """2xx is done; 3xx is a redirect, never followed; anything else is not a success. Each is remembered."""
    standin.answer = Answer.RAW
    standin.raw_answer = f"HTTP/1.1 {status} Whatever\r\nContent-Length: 0\r\n\r\n".encode()
    [message_id] = deliver(emulator, ME, NEWS)
    result = await ok(call, web_runtime(), "mg_unsubscribe", account="o", message_id=message_id, method="one_click")
    assert result["one_click"]["status"] == status and result["one_click"]["redirect"] is redirect
    assert result["done"] is (said is None) and result["remembered"] is True
    assert (result["note"] is None) if said is None else (said in result["note"])


async def test_an_endpoint_that_takes_its_time_within_the_deadline_is_waited_for(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime]
) -> None:
    """The request may take what the call has left (here about 8 s): an answer after 1.5 s is a success."""
    standin.answer = Answer.SLOW
    [message_id] = deliver(emulator, ME, NEWS)
    answer_later = threading.Timer(1.5, standin.release.set)  # the endpoint's own pace, not a wait of the test
    answer_later.start()
    try:
        result = await ok(
            call, web_runtime(call_timeout_s=10.0), "mg_unsubscribe", account="o", message_id=message_id,
            method="one_click",
        )  # fmt: skip
    finally:
        answer_later.cancel()
    assert result["done"] is True and result["one_click"]["status"] == 200


async def test_a_slow_endpoint_ends_at_the_deadline(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    standin.answer = Answer.SLOW
    [message_id] = deliver(emulator, ME, NEWS)
    runtime = web_runtime(call_timeout_s=3.0)  # the web request gets what the call has left, at most 10 s
    failed = await error(call, runtime, "mg_unsubscribe", account="o", message_id=message_id, method="one_click")
    standin.release.set()
    assert failed["code"] == "upstream_error" and "deadline" in failed["message"]
    assert "recorded as left" in failed["message"] and "force: true" in failed["message"]
    [connection] = standin.settled()
    assert connection.request is not None and connection.request.body == b"List-Unsubscribe=One-Click"
    # It reached the endpoint, which may have acted on it: remembered.
    assert (tmp_path / "state" / LEFT_FILE).is_file()
    again = await error(call, web_runtime(), "mg_unsubscribe", account="o", message_id=message_id, method="one_click")
    assert again["code"] == "unsubscribe_refused" and "already left" in again["message"]


async def test_an_endpoint_that_hangs_up_after_the_request_is_recorded_as_left(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    """The POST went out and no answer came: the endpoint may have acted on it, so the list is
    remembered as left (no longer pending, with the time), and the next call is refused."""
    standin.answer = Answer.HANG_UP
    [message_id] = deliver(emulator, ME, NEWS)
    failed = await error(call, web_runtime(), "mg_unsubscribe", account="o", message_id=message_id, method="one_click")
    assert failed["code"] == "upstream_error" and "closed the connection without answering" in failed["message"]
    assert "So this list is recorded as left" in failed["message"] and "force: true" in failed["message"]
    [entry] = json.loads((tmp_path / "state" / LEFT_FILE).read_text(encoding="utf-8"))["left"]
    assert entry["list"] == "list:weekly.news.example" and "pending" not in entry and entry["at"].endswith("Z")
    again = await error(call, web_runtime(), "mg_unsubscribe", account="o", message_id=message_id, method="one_click")
    assert again["code"] == "unsubscribe_refused" and "already left" in again["message"]
    assert len(standin.settled()) == 1


async def test_nothing_the_endpoint_wrote_reaches_a_result(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime]
) -> None:
    standin.answer = Answer.INJECTION
    [message_id] = deliver(emulator, ME, NEWS)
    runtime = web_runtime()
    result = await call(runtime, "mg_unsubscribe", {"account": "o", "message_id": message_id, "method": "one_click"})
    texts = [item.text for item in result.content]
    structured = result.structured_content
    assert structured["done"] is True and structured["one_click"]["status"] == 200
    for text in [*texts, everything(structured)]:
        assert "IGNORE ALL PREVIOUS" not in text and "attacker" not in text and INJECTION[:30] not in text
    later = await call(runtime, "mg_list_subscriptions", {"account": "o"})
    assert "IGNORE ALL PREVIOUS" not in later.content[0].text


async def test_a_forged_issue_of_the_list_signed_by_another_domain_redirects_nothing(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    """Anyone can write a List-Id and sign their own mail. A newer "issue" of the list from another
    signer, with its own URL and a mailto to a third party, is not taken for the list's newest: the
    unsubscribe still goes where the named message's signer said, and the forgery's own opt-out, to an
    address outside its signer's domain, is refused."""
    [legit] = deliver(emulator, ME, NEWS, first_day=3)
    forged = Newsletter(
        "editor@evil.example",
        "News",
        "weekly.news.example",  # the same List-Id, signed (and passed by Gmail) for evil.example
        "<https://evil.example/collect?who=you>, <mailto:boss@company.example?subject=I%20quit&body=bye>",
    )
    [newer] = deliver(emulator, ME, forged, first_day=1)
    runtime = web_runtime()
    result = await ok(call, runtime, "mg_unsubscribe", account="o", message_id=legit, method="one_click")
    assert result["message_id"] == legit and result["signed_by"] == "news.example"
    assert result["contacted"] == "https://news.example/unsubscribe" and result["done"] is True
    [connection] = standin.settled()
    assert connection.request is not None and connection.request.request_line.startswith(b"POST /unsubscribe?")
    # Named directly, the forgery's mailto would write to a third party in the user's name: refused.
    refused = await error(call, runtime, "mg_unsubscribe", account="o", message_id=newer, method="mailto")
    assert refused["code"] == "unsubscribe_refused"
    assert "outside the domain that signed the header (evil.example)" in refused["message"]
    assert emulator.outbox() == [] and len(standin.connections) == 1


def arrived(emulator: GmailEmulator, message_id: str) -> str:
    """When Gmail received a message (its INTERNALDATE), as the results write a moment."""
    info = emulator.message(ME, message_id)
    assert info is not None
    return info.internaldate.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


async def test_whichever_issue_is_named_the_newest_is_acted_on(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime]
) -> None:
    """The result shows the issue whose header was used: the newest of the list, with its own date."""
    issues = deliver(emulator, ME, NEWS, 4)  # newest first
    runtime = web_runtime()
    for named in issues:
        plan = await ok(
            call, runtime, "mg_unsubscribe", account="o", message_id=named, method="one_click", dry_run=True
        )
        assert (plan["message_id"], plan["received_at"]) == (issues[0], arrived(emulator, issues[0])), named
    assert standin.connections == []


async def test_an_unknown_message_is_not_found_in_its_mailbox(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime]
) -> None:
    deliver(emulator, ME, NEWS)
    missing = await error(
        call, web_runtime(), "mg_unsubscribe", account="o", message_id="nobody@news.example", method="one_click"
    )
    assert missing["code"] == "not_found" and 'mailbox "o"' in missing["message"]
    assert "nobody@news.example" in missing["message"] and standin.connections == []


def trash_it(emulator: GmailEmulator, message_id: str) -> Callable[[], None]:
    """Another client's move of the message to Trash, which takes it out of All Mail."""

    def move() -> None:
        with IMAPClient("127.0.0.1", port=emulator.imap_port, ssl_context=emulator.client_ssl_context()) as other:
            other.login(ME, PASSWORD)
            other.select_folder("[Gmail]/All Mail")
            other.move(other.gmail_search(f"rfc822msgid:{message_id}"), "[Gmail]/Trash")

    return move


async def test_a_message_that_goes_while_it_is_read_is_not_found(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    """Found by its Message-ID, then moved to Trash (elsewhere) before its header is read: not
    found, and nothing contacted."""
    [message_id] = deliver(emulator, ME, NEWS)
    # The move happens when the header's FETCH arrives, before the emulator answers it.
    emulator.add_fault(FaultRule("hook", match="UID FETCH", nth=1, account=ME, hook=trash_it(emulator, message_id)))
    gone = await error(call, web_runtime(), "mg_unsubscribe", account="o", message_id=message_id, method="one_click")
    assert gone["code"] == "not_found" and "disappeared" in gone["message"]
    assert message_id in gone["message"] and 'mailbox "o"' in gone["message"]
    assert standin.connections == [] and not (tmp_path / "state" / LEFT_FILE).exists()


async def test_a_message_that_goes_once_its_header_was_read_still_leaves_its_list(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime]
) -> None:
    """Moved to Trash (another client's filter, say) while its list's other issues are looked for:
    the signed header already read still says how to leave, and the list is left."""
    [message_id] = deliver(emulator, ME, NEWS)
    # The second FETCH is the one that groups the candidates of the list.
    emulator.add_fault(FaultRule("hook", match="UID FETCH", nth=2, account=ME, hook=trash_it(emulator, message_id)))
    result = await ok(call, web_runtime(), "mg_unsubscribe", account="o", message_id=message_id, method="one_click")
    assert result["done"] is True and result["message_id"] == message_id and len(standin.settled()) == 1
    info = emulator.message(ME, message_id)
    assert info is not None and info.location == "trash"


@pytest.mark.parametrize(
    "letter",
    [
        Newsletter(
            "editor@news.example",
            "News",
            "weekly.news.example",
            f"<{URL}>",
            cosigned=("esp.example", ("list-unsubscribe",)),
        ),
        Newsletter(
            "editor@news.example",
            "News",
            "weekly.news.example",
            f"<{URL}>",
            signs=("list-unsubscribe", "list-unsubscribe-post", "list-unsubscribe-post"),
            extra=("List-Unsubscribe-Post: List-Unsubscribe=One-Click",),
            cosigned=("esp.example", ("list-unsubscribe", "list-unsubscribe-post")),
        ),
    ],
    ids=["service-signs-no-post", "service-signs-one-of-two-posts"],
)
async def test_one_click_names_the_signature_that_covers_its_post_field(
    emulator: GmailEmulator,
    standin: WebStandIn,
    call: Call,
    web_runtime: Callable[..., Runtime],
    letter: Newsletter,
) -> None:
    """Two signatures Gmail passed, the mailing service's above the sender's: one-click rests on the
    one that covers List-Unsubscribe-Post (every instance of it) too, and that is the one named."""
    [message_id] = deliver(emulator, ME, letter)
    result = await ok(call, web_runtime(), "mg_unsubscribe", account="o", message_id=message_id, method="one_click")
    assert result["done"] is True and result["signed_by"] == "news.example"
    assert len(standin.settled()) == 1


async def test_a_sender_address_that_is_not_plain_is_never_searched_for(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, web_runtime: Callable[..., Runtime]
) -> None:
    """A quoted local part ("weekly news"@...) is not written into a Gmail search, whose syntax its
    quotes and space would become: the list's newest issue is found by its List-Id."""
    letter = Newsletter('"weekly news"@news.example', "News", "weekly.news.example", f"<{URL}>")
    [newest, older] = deliver(emulator, ME, letter, 2)
    emulator.reset_counters()
    plan = await ok(
        call, web_runtime(), "mg_unsubscribe", account="o", message_id=older, method="one_click", dry_run=True
    )
    assert plan["message_id"] == newest and plan["sender"]["address"] == '"weekly news"@news.example'
    searches = [c.line for c in emulator.commands(ME) if c.name == "UID SEARCH"]
    assert searches and not any("from:" in line.lower() for line in searches), searches


async def test_a_request_made_with_under_a_second_left_gets_what_is_left(
    emulator: GmailEmulator,
    standin: WebStandIn,
    call: Call,
    web_runtime: Callable[..., Runtime],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """The mailbox was slow and the call has under a second left when the POST goes out: the request
    still goes, gets what is left but the margin (a fraction of a second, not nothing and not more
    than the call has), and when the endpoint does not answer in that time the call says so itself,
    before its deadline: the request reached the endpoint, so the list is recorded as left."""
    standin.answer = Answer.SLOW
    [message_id] = deliver(emulator, ME, NEWS)
    calls: list[deadline.CallProgress] = []
    scope = deadline.call_scope

    @contextmanager
    def watched(timeout_s: float) -> Iterator[deadline.CallProgress]:
        with scope(timeout_s) as progress:
            calls.append(progress)
            yield progress

    monkeypatch.setattr(deadline, "call_scope", watched)

    def slow_mailbox() -> None:
        wait_until(lambda: calls[-1].remaining() <= 0.95, what="the call to have under a second left")

    # The last read of the mailbox (the FETCH that groups the list's candidates) answers that late.
    emulator.add_fault(FaultRule("hook", match="UID FETCH", nth=2, account=ME, hook=slow_mailbox))
    runtime = web_runtime(call_timeout_s=2.0)
    failed = await error(call, runtime, "mg_unsubscribe", account="o", message_id=message_id, method="one_click")
    standin.release.set()
    assert failed["code"] == "upstream_error" and "no answer within the deadline of 0." in failed["message"]
    assert "The request reached the endpoint. So this list is recorded as left" in failed["message"]
    [connection] = standin.settled()
    assert connection.request is not None and connection.request.body == b"List-Unsubscribe=One-Click"
    [entry] = json.loads((tmp_path / "state" / LEFT_FILE).read_text(encoding="utf-8"))["left"]
    assert "pending" not in entry
