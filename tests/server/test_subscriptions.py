"""mg_list_subscriptions over the emulator: a mailbox of 40 newsletters from 12 lists (some with
List-Id, some grouped by sender, some with a mailto only), read from header fields alone."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.mail.subscriptions import overview as subscriptions
from mcp_multi_gmail.runtime import Runtime
from support.newsletters import Newsletter, deliver

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
ACCOUNT = {"name": "o", "address": ME, "password": "osobniheslohesla", "can_unsubscribe": True}


def one_click(domain: str) -> str:
    return f"<https://{domain}/unsubscribe?u=1&id=ab>, <mailto:leave@{domain}?subject=unsubscribe>"


# (list, issues): 40 messages from 12 lists.
LISTS: list[tuple[Newsletter, int]] = [
    # one-click lists with a List-Id (ESP form: https and a mailto, the Post field, both fields signed)
    (Newsletter("news@shop.example", "Shop", "weekly.shop.example", one_click("shop.example")), 6),
    (Newsletter("hello@travel.example", "Travel", "deals.travel.example", one_click("travel.example")), 5),
    (Newsletter("digest@forum.example", "Forum", "digest.forum.example", one_click("forum.example")), 4),
    # the same sender writing two lists: two groups by List-Id
    (Newsletter("info@bank.example", "Bank news", "news.bank.example", one_click("bank.example")), 3),
    (Newsletter("info@bank.example", "Bank offers", "offers.bank.example", one_click("bank.example")), 2),
    # no List-Id: grouped by sender
    (Newsletter("promo@cinema.example", "Cinema", None, one_click("cinema.example")), 4),
    (Newsletter("noreply@gym.example", "Gym", None, "<https://gym.example/optout>", post=False), 3),
    # Mailman: a web options page and a mailto to -request, no Post field
    (
        Newsletter(
            "members@lists.club.example",
            "Club",
            "members.lists.club.example",
            "<https://lists.club.example/mailman/options/members>,\r\n"
            " <mailto:members-request@lists.club.example?subject=unsubscribe>",
            post=False,
            signs=("list-unsubscribe", "list-id"),
        ),
        4,
    ),
    # mailto only
    (
        Newsletter("bulletin@town.example", "Town", "bulletin.town.example", "<mailto:leave@town.example>", post=False),
        3,
    ),
    (Newsletter("updates@school.example", "School", None, "<mailto:off@school.example?subject=stop>", post=False), 2),
    # a List-Id and no List-Unsubscribe at all: listed, with no way out offered
    (Newsletter("team@chat.example", "Chat", "team.chat.example", None), 2),
    # signed only over List-Unsubscribe: no one-click
    (
        Newsletter(
            "news@paper.example",
            "Paper",
            "daily.paper.example",
            one_click("paper.example"),
            signs=("list-unsubscribe",),
        ),
        2,
    ),
]


def seed(emulator: GmailEmulator) -> dict[str, list[str]]:
    ids: dict[str, list[str]] = {}
    for day, (letter, issues) in enumerate(LISTS):
        ids[letter.list_id or letter.sender] = deliver(emulator, ME, letter, issues, first_day=day + 1)
    # Mail that is no list: counted by nobody.
    emulator.deliver(
        ME, b"From: petr@partner.example\r\nTo: osobni@example.cz\r\nSubject: Hi\r\nMessage-ID: <p1@x>\r\n\r\nHi\r\n"
    )
    return ids


async def test_forty_newsletters_twelve_lists(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    ids = seed(emulator)
    runtime = make_runtime(write_config([ACCOUNT]))
    emulator.reset_counters()
    result = await ok(call, runtime, "mg_list_subscriptions", account="o")
    lists = result["subscriptions"]
    assert result["total_lists"] == 12 and len(lists) == 12 and result["next_page_token"] is None
    assert result["messages_scanned"] == 41 and result["query"] == "newer_than:90d" and result["cut"] == []
    assert sum(entry["messages"] for entry in lists) == 40
    by_key = {entry["list_id"] or entry["sender"]["address"]: entry for entry in lists}
    assert {key: entry["messages"] for key, entry in by_key.items()} == {
        (letter.list_id or letter.sender): issues for letter, issues in LISTS
    }
    # Newest first (each list's newest issue is a day older than the one before).
    assert [entry["list_id"] or entry["sender"]["address"] for entry in lists] == [
        letter.list_id or letter.sender for letter, _ in LISTS
    ]
    shop = by_key["weekly.shop.example"]
    assert shop["message_id"] == ids["weekly.shop.example"][0]  # the newest issue
    assert shop["one_click"] is True and shop["why_not_one_click"] is None and shop["signed_by"] == "shop.example"
    assert shop["web_link"] == "https://shop.example/unsubscribe?u=1&id=ab"
    assert shop["mailto"] == {"address": "leave@shop.example", "subject": "unsubscribe"}
    assert shop["list_name"] == "Shop" and shop["sender"] == {"name": "Shop", "address": "news@shop.example"}
    assert shop["left_at"] is None
    assert by_key["promo@cinema.example"]["list_id"] is None and by_key["promo@cinema.example"]["one_click"]
    assert by_key["noreply@gym.example"]["why_not_one_click"] == "no List-Unsubscribe-Post field"
    club = by_key["members.lists.club.example"]
    assert club["one_click"] is False and club["why_not_one_click"] == "no List-Unsubscribe-Post field"
    assert club["mailto"] == {"address": "members-request@lists.club.example", "subject": "unsubscribe"}
    assert club["why_not_mailto"] is None and club["web_link"] == "https://lists.club.example/mailman/options/members"
    town = by_key["bulletin.town.example"]
    assert town["why_not_one_click"] == "no https: URI in List-Unsubscribe" and town["web_link"] is None
    assert town["mailto"] == {"address": "leave@town.example", "subject": "unsubscribe"}
    assert by_key["updates@school.example"]["mailto"] == {"address": "off@school.example", "subject": "stop"}
    chat = by_key["team.chat.example"]
    assert chat["why_not_one_click"] == "no List-Unsubscribe field" and chat["mailto"] is None
    assert chat["message_id"] is not None  # no issue offers a way out: the newest is shown
    paper = by_key["daily.paper.example"]
    assert paper["why_not_one_click"] == "the passing DKIM signature does not cover List-Unsubscribe-Post"
    assert paper["why_not_mailto"] is None and paper["signed_by"] == "paper.example"
    # Header fields only, never a body; one SEARCH and two FETCHes, whatever the number of lists.
    fetches = [c.line for c in emulator.commands(ME) if c.name == "UID FETCH"]
    assert len(fetches) == 2 and all("HEADER.FIELDS" in line for line in fetches)
    assert not any(
        item in line
        for line in fetches
        for item in ("BODY[]", "BODY.PEEK[]", "RFC822", "BODY.PEEK[1", "BODY.PEEK[TEXT")
    )
    assert [c.name for c in emulator.commands(ME) if "SEARCH" in c.name] == ["UID SEARCH"]


async def test_pages_continue_where_the_last_ended(
    emulator: GmailEmulator,
    call: Call,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seed(emulator)
    monkeypatch.setattr(subscriptions, "PAGE_LISTS", 5)
    runtime = make_runtime(write_config([ACCOUNT]))
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        args: dict[str, Any] = {"account": "o", **({"page_token": token} if token else {})}
        page = await ok(call, runtime, "mg_list_subscriptions", **args)
        pages += 1
        seen += [entry["list_id"] or entry["sender"]["address"] for entry in page["subscriptions"]]
        token = page["next_page_token"]
        if token is None:
            assert page["cut"] == []
            break
        assert page["cut"] == [
            {
                "field": "subscriptions",
                "shown": 5,
                "total": 12,
                "how_to_get_the_rest": "call again with page_token = next_page_token",
            }
        ]
    assert pages == 3 and seen == [letter.list_id or letter.sender for letter, _ in LISTS]
    other = await error(
        call, runtime, "mg_list_subscriptions", account="o", query="newer_than:7d", page_token=token or "c1.x"
    )
    assert other["code"] == "invalid_input"


async def test_a_query_narrows_and_the_scan_cap_is_reported(
    emulator: GmailEmulator,
    call: Call,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seed(emulator)
    runtime = make_runtime(write_config([ACCOUNT]))
    narrow = await ok(call, runtime, "mg_list_subscriptions", account="o", query="from:shop.example")
    assert [e["list_id"] for e in narrow["subscriptions"]] == ["weekly.shop.example"] and narrow["total_lists"] == 1
    monkeypatch.setattr(subscriptions, "MAX_SCANNED", 10)
    capped = await ok(call, runtime, "mg_list_subscriptions", account="o")
    assert capped["messages_scanned"] == 10
    assert capped["cut"][-1]["field"] == "messages_scanned" and capped["cut"][-1]["total"] == 41
    # The ten that arrived last: the personal message (delivered last) and nine newsletters.
    assert sum(e["messages"] for e in capped["subscriptions"]) == 9


async def test_forged_and_failed_verdicts_are_shown_as_unsigned(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    deliver(
        emulator,
        ME,
        Newsletter(
            "a@forged.example", "Forged", "f.forged.example", one_click("forged.example"), authserv="mx.forged.example"
        ),
    )
    deliver(
        emulator,
        ME,
        Newsletter("a@failed.example", "Failed", "f.failed.example", one_click("failed.example"), dkim="fail"),
        first_day=2,
    )
    deliver(
        emulator,
        ME,
        Newsletter("a@bare.example", "Bare", "f.bare.example", one_click("bare.example"), signed=False),
        first_day=3,
    )
    runtime = make_runtime(write_config([ACCOUNT]))
    result = await ok(call, runtime, "mg_list_subscriptions", account="o")
    reasons = {
        e["list_id"]: (e["why_not_one_click"], e["why_not_mailto"], e["signed_by"]) for e in result["subscriptions"]
    }
    assert reasons == {
        "f.forged.example": ("no DKIM verdict of Gmail's own (mx.google.com)",) * 2 + (None,),
        "f.failed.example": ("DKIM did not pass (dkim=fail)",) * 2 + (None,),
        "f.bare.example": ("no DKIM result",) * 2 + (None,),
    }


async def test_long_lists_fit_the_budget_and_every_page_continues(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    # 120 lists whose names, senders and links are as long as a header allows.
    long = "velmi-dlouhy-nazev-seznamu-" * 12
    for number in range(120):
        domain = f"{long[: 150 - len(str(number))]}{number}.example"
        url = f"https://{domain}/odhlasit?" + "&".join(f"p{i}={'x' * 60}" for i in range(25))
        name = f"Zpravodaj „{number}“ s \\dlouhým\\ jménem " * 6
        letter = Newsletter(f"zpravodaj@{domain}", name, f"seznam{number}.{domain}", f"<{url}>, <mailto:pryc@{domain}>")
        deliver(emulator, ME, letter, first_day=1 + number % 80)
    runtime = make_runtime(write_config([ACCOUNT]))
    seen = 0
    token = None
    for _ in range(20):
        result = await call(
            runtime, "mg_list_subscriptions", {"account": "o", **({"page_token": token} if token else {})}
        )
        page = result.structured_content
        assert len(result.content[0].text) <= 40_000
        seen += len(page["subscriptions"])
        token = page["next_page_token"]
        if token is None:
            break
        assert page["page_budget_exhausted"] is True and page["cut"][0]["field"] == "subscriptions"
    assert seen == 120 and page["total_lists"] == 120
