"""The guided tour (`mcp-multi-gmail demo`): the real server, driven by a real MCP client.

The tour starts the embedded emulator with the demo seed, launches the server as a subprocess
over stdio (exactly as Claude Code would) and walks through one pass: the mailboxes, the pass,
a whole thread, labelling with `since`, the empty window, a search across every mailbox, the
replies the user waits for with a reminder that falls due and is answered, and at last a
`--follow` watcher printing its line when a message arrives (demo/follower.py). Each step
prints a few readable lines on stdout (the tour is for a person, not a server).
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TextIO

from ..layout import project_dir
from .follower import follow_one_delivery
from .setup import DemoSetup, emulator_class, running_demo
from .tour_text import PLURALS, TEXT, Lang

if TYPE_CHECKING:
    from mcp import Client

    from gmail_emulator import GmailEmulator

PASS_DAYS = 5
SEARCH_QUERY = "newer_than:2d"
SHOWN_SEARCH_HITS = 5
SUBJECT_WIDTH = 44
TOUR_TIMEOUT = 180
FOLLOW_ADDRESS = "jana.novakova@example.cz"  # the seed's "osobni"


def pick_language(lang: str | None, environ: Mapping[str, str]) -> Lang:
    """--lang wins; otherwise English when LANG starts with "en"; otherwise Czech."""
    if lang == "en":
        return "en"
    if lang is None and environ.get("LANG", "").lower().startswith("en"):
        return "en"
    return "cs"


class TourError(Exception):
    """A step did not go as the tour expects (the message is already in the tour's language)."""


def _short(text: str | None, width: int = SUBJECT_WIDTH) -> str:
    value = (text or "").strip() or "—"
    return value if len(value) <= width else value[: width - 1] + "…"


def invitation_bytes(now: datetime, message_id: str, subject: str, summary: str) -> bytes:
    """An Apple-shaped invitation to the personal mailbox, in four days at 14:00 Prague time."""
    day = (now + timedelta(days=4)).strftime("%Y%m%d")
    calendar = "\r\n".join(
        [
            "BEGIN:VCALENDAR",
            "METHOD:REQUEST",
            "PRODID:-//Apple Inc.//Mac OS X 14.5//EN",
            "VERSION:2.0",
            "BEGIN:VEVENT",
            f"UID:{message_id}",
            "SEQUENCE:0",
            f"DTSTAMP:{now.strftime('%Y%m%dT%H%M%SZ')}",
            f"DTSTART;TZID=Europe/Prague:{day}T140000",
            f"DTEND;TZID=Europe/Prague:{day}T150000",
            f"SUMMARY:{summary}",
            "LOCATION:Knihovna",
            'ORGANIZER;CN="Lucie Dvořáková":mailto:lucie.dvorakova@example.org',
            "ATTENDEE;CN=Jana Nováková;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:jana.novakova@example.cz",
            "END:VEVENT",
            "END:VCALENDAR",
            "",
        ]
    )
    message = EmailMessage()
    message["From"] = "Lucie Dvořáková <lucie.dvorakova@example.org>"
    message["To"] = FOLLOW_ADDRESS
    message["Subject"] = subject
    message["Message-ID"] = f"<{message_id}>"
    message.set_content(summary)
    message.add_alternative(calendar, subtype="calendar", params={"method": "REQUEST"})
    return message.as_bytes()


def _who(address: Mapping[str, Any] | None) -> str:
    if not address:
        return "?"
    return str(address.get("name") or address.get("address") or "?")


class Tour:
    def __init__(self, lang: Lang, out: IO[str]) -> None:
        self.lang = lang
        self.out = out
        self.step = 0
        self.now = datetime.now(UTC)
        self.unlabelled: set[str] = set()  # mailboxes without a processed label

    def t(self, key: str, **values: object) -> str:
        return TEXT[self.lang][key].format(**values)

    def count(self, n: int, word: str) -> str:
        """`n` with the right plural form ("1 vlákno", "3 vlákna", "9 vláken")."""
        one, few, many = PLURALS[word][self.lang]
        if n == 1:
            return f"{n} {one}"
        if self.lang == "cs" and 2 <= n <= 4:
            return f"{n} {few}"
        return f"{n} {many}"

    def line(self, text: str = "", indent: int = 0) -> None:
        pad = " " * indent
        for part in text.split("\n"):
            self.out.write(pad + part + "\n")
        self.out.flush()

    def heading(self, step: int, text: str) -> None:
        self.step = step
        self.line()
        self.line(text)

    def ago(self, iso: str | None) -> str:
        if not iso:
            return "?"
        when = datetime.fromisoformat(iso.replace("Z", "+00:00"))
        delta = self.now - when
        if delta < timedelta(0):
            return self.t("future")
        minutes = int(delta.total_seconds() // 60)
        if minutes < 120:
            return self.t("minutes", n=max(minutes, 1))
        if minutes < 48 * 60:
            return self.t("hours", n=minutes // 60)
        return self.t("days", n=minutes // (24 * 60))

    def expect(self, condition: bool, what: str) -> None:
        if not condition:
            raise TourError(self.t("unexpected", what=what))

    async def call(self, client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await client.call_tool(tool, args)
        if result.is_error or result.structured_content is None:
            text = " ".join(getattr(block, "text", "") for block in result.content)
            try:  # an error is one text item: {"error": {code, message, retryable}}
                error = json.loads(text).get("error")
            except (ValueError, AttributeError):
                error = None
            if isinstance(error, dict):
                text = f"{error.get('code')}: {error.get('message')}"
            raise TourError(self.t("tool_error", tool=tool, text=_short(text, 300)))
        return dict(result.structured_content)

    # ----------------------------------------------------------------- the steps

    async def run(self, client: Client, setup: DemoSetup | None = None) -> None:
        self.now = datetime.now(UTC)  # the seed's dates follow its load time, just before this
        tools = (await client.list_tools()).tools
        self.line(self.t("intro", tools=len(tools)))
        await self.accounts(client)
        since = (self.now - timedelta(days=PASS_DAYS)).date().isoformat()
        first = await self.first_pass(client, since)
        await self.whole_thread(client, first)
        await self.label_all(client, first, since)
        await self.pass_again(client, since)
        await self.search_all(client)
        if setup is not None:
            await self.new_mail(setup, since)
            await self.invitation(client, setup)
            await self.follow_ups(client, setup, since)

    async def accounts(self, client: Client) -> None:
        self.heading(1, self.t("step1"))
        data = await self.call(client, "mg_list_accounts", {"verify": True})
        accounts: list[dict[str, Any]] = data["accounts"]
        width_name = max(len(a["account"]) for a in accounts) + 2
        width_addr = max(len(a["address"]) for a in accounts) + 2
        for account in accounts:
            facts: list[str] = []
            if account["shared"]:
                facts.append(self.t("shared"))
            if account["work_scope"] == "inbox":
                facts.append(self.t("inbox"))
            if account["unread_only"]:
                facts.append(self.t("unread"))
            label = account["processed_label"]
            if not label:
                self.unlabelled.add(account["account"])
            facts.append(self.t("processed", label=label) if label else self.t("no_processed"))
            if account["classification_labels"]:
                facts.append(self.t("classes", labels=self.count(len(account["classification_labels"]), "label")))
            if account["my_label"]:
                facts.append(self.t("mine", label=account["my_label"]))
            if account["can_send"]:
                facts.append(self.t("can_send"))
            row = account["account"].ljust(width_name) + account["address"].ljust(width_addr) + ", ".join(facts)
            self.line(row, indent=3)
        failures = data["failures"]
        self.expect(not failures, "; ".join(f"{f['account']}: {f['message']}" for f in failures))
        smtp = ", ".join(self.t("smtp_port", account=s["account"], port=s["port"]) for s in data["smtp"])
        self.line(self.t("verified", n=len(accounts), smtp=smtp or self.t("nobody")), indent=3)

    async def first_pass(self, client: Client, since: str) -> dict[str, Any]:
        self.heading(2, self.t("step2", since=since, days=PASS_DAYS))
        data = await self.call(client, "mg_next_pass", {"account": "osobni", "since": since, "max_threads": 100})
        threads: list[dict[str, Any]] = data["threads"]
        self.expect(bool(threads) and data["next_page_token"] is None, "mg_next_pass: no threads / several pages")
        self.expect(data["window_clear"] is False, "mg_next_pass: window_clear should be false")
        self.line(self.t("threads_found", threads=self.count(len(threads), "thread")), indent=3)
        width = min(SUBJECT_WIDTH, max(len(_short(t["subject"])) for t in threads)) + 2
        for thread in threads:
            unprocessed: list[dict[str, Any]] = thread["unprocessed"]
            names: list[str] = []
            for message in unprocessed:
                name = _who(message["from"])
                if message["state"] == "sent":
                    name += f" ({self.t('sent')})"
                if name not in names:
                    names.append(name)
            total = thread["message_count"]
            if total is not None and total > len(unprocessed):
                count = self.t("new_of", new=len(unprocessed), total=total)
            else:
                count = self.t("new_only", new=len(unprocessed))
            parts = [", ".join(names[:2]) + (" …" if len(names) > 2 else ""), count, *thread["classification"]]
            self.line("• " + _short(thread["subject"]).ljust(width) + " · ".join(parts), indent=3)
        self.line(self.t("outgoing", drafts=data["drafts_in_window"], scheduled=data["scheduled_in_window"]), indent=3)
        self.line(self.t("window_open"), indent=3)
        return data

    async def whole_thread(self, client: Client, first: dict[str, Any]) -> None:
        # The thread with the most messages the pass did not show: the cottage thread of the seed.
        threads: list[dict[str, Any]] = first["threads"]
        chosen = max(threads, key=lambda t: (t["message_count"] or 0) - len(t["unprocessed"]))
        self.heading(3, self.t("step3", subject=_short(chosen["subject"], 60)))
        data = await self.call(client, "mg_get_thread", {"account": "osobni", "thread_id": chosen["thread_id"]})
        messages: list[dict[str, Any]] = data["messages"]
        new = [m for m in messages if not m["processed"]]
        self.expect(
            data["message_count"] > len(chosen["unprocessed"]) and len(new) == len(chosen["unprocessed"]),
            f"mg_get_thread: {data['message_count']} messages, {len(new)} unprocessed",
        )
        classes = ", ".join(chosen["classification"]) or "—"
        self.line(
            self.t("more_than_shown", new=self.count(len(new), "new"), total=data["message_count"], classes=classes),
            indent=3,
        )
        names: list[str] = []
        for message in messages:
            name = _who(message["from"])
            if name not in names:
                names.append(name)
        self.line(self.t("participants", names=", ".join(names)), indent=3)
        newest = new[-1]
        self.line(
            self.t(
                "thread_state",
                done=len(messages) - len(new),
                new=len(new),
                who=_who(newest["from"]),
                ago=self.ago(newest["received_at"]),
            ),
            indent=3,
        )

    async def label_all(self, client: Client, first: dict[str, Any], since: str) -> None:
        ids = [m["message_id"] for t in first["threads"] for m in t["unprocessed"] if m["message_id"]]
        self.heading(4, self.t("step4", label="Asistent", messages=self.count(len(ids), "message")))
        data = await self.call(
            client,
            "mg_label_message",
            {"account": "osobni", "message_ids": ids, "label": "Asistent", "since": since},
        )
        outcomes = [m["outcome"] for m in data["messages"]]
        self.line(
            self.t(
                "labelled",
                changed=outcomes.count("changed"),
                already=outcomes.count("already"),
                failed=data["failed"],
            ),
            indent=3,
        )
        window = data.get("window") or {}
        self.expect(data["failed"] == 0 and window.get("window_clear") is True, "mg_label_message: window not clear")
        self.line(self.t("window_clear", at=window["searched_at"]), indent=3)

    async def pass_again(self, client: Client, since: str) -> None:
        self.heading(5, self.t("step5"))
        data = await self.call(client, "mg_next_pass", {"account": "osobni", "since": since})
        self.expect(data["window_clear"] is True and not data["threads"], "mg_next_pass: the window is not empty")
        self.line(
            self.t(
                "empty",
                threads=self.count(len(data["threads"]), "thread"),
                drafts=data["drafts_in_window"],
                scheduled=data["scheduled_in_window"],
            ),
            indent=3,
        )
        self.line(self.t("moved", at=data["searched_at"]), indent=3)

    async def search_all(self, client: Client) -> None:
        self.heading(6, self.t("step6", query=SEARCH_QUERY))
        data = await self.call(
            client, "mg_search_threads", {"account": "all", "query": SEARCH_QUERY, "max_results": 100}
        )
        threads: list[dict[str, Any]] = data["threads"]
        searched: list[str] = data["searched"]
        self.expect(not data["failures"] and len(searched) > 1, "mg_search_threads: not every mailbox answered")
        per = ", ".join(f"{name} {sum(1 for t in threads if t['account'] == name)}" for name in searched)
        self.line(
            self.t(
                "search_total",
                threads=self.count(data["total_threads"], "thread"),
                per=per,
                searched=", ".join(searched),
            ),
            indent=3,
        )
        # A few hits, at most two per mailbox, so every mailbox shows up.
        shown: list[dict[str, Any]] = []
        for name in searched:
            shown.extend([t for t in threads if t["account"] == name][:2])
        for hit in shown[:SHOWN_SEARCH_HITS]:
            newest = hit["newest_match"]
            extra = [_who(newest["from"]), self.ago(newest["received_at"])]
            if hit["unprocessed_matches"] and hit["account"] not in self.unlabelled:
                extra.append(self.t("to_process", n=hit["unprocessed_matches"]))
            self.line(f"[{hit['account']}] " + _short(hit["subject"], 40) + " · " + " · ".join(extra), indent=3)
        if len(threads) > SHOWN_SEARCH_HITS:
            self.line(self.t("search_more", n=len(threads) - SHOWN_SEARCH_HITS), indent=3)
        self.line(self.t("search_note"), indent=3)

    async def new_mail(self, setup: DemoSetup, since: str) -> None:
        import anyio

        self.heading(7, self.t("step7"))
        message = EmailMessage()
        message["From"] = "Petr Malý <petr.maly@example.org>"
        message["To"] = FOLLOW_ADDRESS
        message["Subject"] = self.t("follow_subject")
        message["Message-ID"] = f"<{uuid.uuid4().hex}@example.org>"
        message.set_content(self.t("follow_body"))
        self.line(self.t("follow_started", since=since), indent=3)
        followed = await anyio.to_thread.run_sync(follow_one_delivery, setup, "osobni", FOLLOW_ADDRESS, since, message)
        self.expect(followed.line is not None, "--follow: no line after the delivery")
        took = self.seconds(followed.seconds, 2)
        self.line(self.t("follow_line", subject=message["Subject"], seconds=took), indent=3)
        self.line(f"» {followed.line}", indent=5)
        self.line(self.t("follow_note"), indent=3)
        self.line(self.t("follow_stopped", seconds=self.seconds(followed.stop_seconds)), indent=3)

    async def follow_ups(self, client: Client, setup: DemoSetup, since: str) -> None:
        """Who owes the user an answer; an out-of-office keeps it waiting, a reminder comes due, and a
        reply with a new subject ends the wait and the reminder."""
        self.heading(9, self.t("step9"))
        waiting = await self.call(client, "mg_awaiting_replies", {"account": "all"})
        self.expect(bool(waiting["threads"]), "mg_awaiting_replies: nothing waits in the demo")
        first = waiting["threads"][0]
        thread = await self.call(
            client, "mg_get_thread", {"account": first["account"], "thread_id": first["thread_id"]}
        )
        mine = [m for m in thread["messages"] if m["state"] == "sent"][-1]["message_id"]
        owed = first["owed_by"][0]
        away = self.answer(owed, mine, self.t("away_subject"), away=True)
        setup.emulator.deliver(FOLLOW_ADDRESS, away)
        again = await self.call(client, "mg_awaiting_replies", {"account": "all"})
        same = next(t for t in again["threads"] if t["thread_id"] == first["thread_id"])
        self.expect(same["auto_reply_came"] is True, "mg_awaiting_replies: the out-of-office ended the wait")
        self.waiting_line(same, self.t("away"))
        today = self.now.astimezone().date().isoformat()
        args = {"account": first["account"], "thread_id": first["thread_id"], "on": today}
        reminded = await self.call(client, "mg_remind", args)
        due = await self.call(client, "mg_next_pass", {"account": first["account"], "since": since})
        self.expect(len(due["reminders_due"]) == 1, "mg_next_pass: the reminder is not due")
        overdue = self.count(due["awaiting_overdue"], "thread")
        label = reminded["reminder"]["label"]
        self.line(self.t("due", label=label, on=due["reminders_due"][0]["on"], overdue=overdue), indent=3)
        reply = self.answer(owed, mine, self.t("answer_subject"), away=False)
        setup.emulator.deliver(FOLLOW_ADDRESS, reply)
        answered = await self.call(client, "mg_next_pass", {"account": first["account"], "since": since})
        came = [r for r in answered["reminders_due"] if r["answered"]]
        after = await self.call(client, "mg_awaiting_replies", {"account": "all"})
        gone = all(t["thread_id"] != first["thread_id"] for t in after["threads"])
        self.expect(len(came) == 1 and gone, "an answer with a new subject did not end the wait")
        self.line(self.t("answered", subject=self.t("answer_subject")), indent=3)

    def waiting_line(self, entry: dict[str, Any], note: str) -> None:
        who = _who(entry["owed_by"][0]) if entry["owed_by"] else "?"
        days = self.count(entry["days_waiting"], "day")
        self.line(f"[{entry['account']}] " + _short(entry["subject"], 30) + f" · {who} · {days} · {note}", indent=3)

    def answer(self, owed: dict[str, Any], mine: str, subject: str, *, away: bool) -> EmailMessage:
        message = EmailMessage()
        message["From"] = owed.get("address") or "someone@example.org"
        message["To"] = FOLLOW_ADDRESS
        message["Subject"] = subject
        message["Message-ID"] = f"<{uuid.uuid4().hex}@example.org>"
        message["In-Reply-To"] = message["References"] = f"<{mine}>"
        if away:
            message["Auto-Submitted"] = "auto-replied"
        message.set_content(self.t("away_body" if away else "answer_body"))
        return message

    async def invitation(self, client: Client, setup: DemoSetup) -> None:
        import anyio

        self.heading(8, self.t("step8"))
        message_id = f"{uuid.uuid4().hex}@example.org"
        raw = invitation_bytes(self.now, message_id, self.t("invite_subject"), self.t("invite_summary"))
        await anyio.to_thread.run_sync(lambda: setup.emulator.deliver(FOLLOW_ADDRESS, raw, trace=True))
        data = await self.call(client, "mg_get_message", {"account": "osobni", "message_id": message_id})
        invitation = data.get("invitation") or {}
        self.expect(bool(invitation.get("start")), "mg_get_message: no invitation")
        start, end = invitation["start"]["value"], invitation["end"]["value"]
        self.line(
            self.t(
                "invite_what",
                summary=invitation["summary"],
                day=start[:10],
                start=start[11:16],
                end=end[11:16],
                zone=invitation["start"]["iana"],
                location=invitation["location"],
            ),
            indent=3,
        )
        own = invitation.get("own_answer") or {}
        self.line(self.t("invite_who", organizer=_who(invitation["organizer"]), answer=own.get("answer")), indent=3)
        self.line(self.t("invite_note"), indent=3)

    def seconds(self, value: float, digits: int = 1) -> str:
        return f"{value:.{digits}f}".replace(".", "," if self.lang == "cs" else ".")

    def finish(self, seconds: float) -> None:
        self.line()
        self.line(self.t("done", seconds=self.seconds(seconds)))
        self.line(self.t("claude"))
        repo = project_dir()
        where = str(repo) if (repo / "pyproject.toml").is_file() else self.t("repo_path")
        command = f"claude mcp add multigmail-demo -- uv run --project {where} mcp-multi-gmail --demo"
        self.line(command, indent=3)
        self.line(self.t("readme"))


async def _drive(setup: DemoSetup, tour: Tour, errlog: TextIO) -> None:
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {key: value for key, value in os.environ.items() if key != "MG_CONFIG"}
    env.update(setup.env())
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_multi_gmail", "--config", str(setup.config_path)],
        env=env,
        cwd=setup.folder,
    )
    # The server's own stderr (its start-up lines) goes to a file, shown only when something fails.
    with anyio.fail_after(TOUR_TIMEOUT):
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=60) as client:
            await tour.run(client, setup)


def _server_stderr(errlog: TextIO) -> list[str]:
    errlog.flush()
    errlog.seek(0)
    return [line.rstrip() for line in errlog.read().splitlines() if line.strip()][-15:]


def _exception_text(error: BaseException) -> str:
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return str(error) or type(error).__name__


def _attempt(setup: DemoSetup, tour: Tour, errlog: TextIO) -> str | None:
    """Run the tour against the server; None on success, else the failure line."""
    import anyio

    try:
        anyio.run(_drive, setup, tour, errlog)
    except TourError as error:
        return tour.t("failed", step=tour.step, reason=error)
    except BaseExceptionGroup as group:
        inner = group.subgroup(TourError)
        if inner is not None:
            return tour.t("failed", step=tour.step, reason=_exception_text(inner))
        return _failed(tour, group)
    except Exception as error:  # noqa: BLE001 - whatever breaks a step, the tour reports it and stops
        return _failed(tour, error)
    return None


def _failed(tour: Tour, error: BaseException) -> str:
    key = "failed_start" if tour.step == 0 else "failed"
    return tour.t(key, step=tour.step, reason=_exception_text(error))


def _report(tour: Tour, failure: str, server_lines: list[str]) -> None:
    sys.stderr.write(failure + "\n")
    if server_lines:
        sys.stderr.write(tour.t("server_said") + "\n")
        for line in server_lines:
            sys.stderr.write("   " + line + "\n")
    sys.stderr.flush()


def run_tour(emulator_cls: type[GmailEmulator], lang: Lang, out: IO[str] | None = None) -> int:
    stream = out if out is not None else sys.stdout
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(errors="replace")
    tour = Tour(lang, stream)
    started = time.monotonic()
    tour.line(tour.t("title"))
    try:
        with running_demo(emulator_cls) as setup:
            log_path: Path = setup.folder / "server-stderr.log"
            with log_path.open("w+", encoding="utf-8") as errlog:
                failure = _attempt(setup, tour, errlog)
                if failure is not None:
                    _report(tour, failure, _server_stderr(errlog))
                    return 1
    except KeyboardInterrupt:
        sys.stderr.write(tour.t("interrupted") + "\n")
        return 130
    except Exception as error:  # noqa: BLE001 - the emulator itself did not start, for whatever reason
        _report(tour, tour.t("failed_start", reason=_exception_text(error)), [])
        return 1
    tour.finish(time.monotonic() - started)
    return 0


def tour(lang: str | None) -> int:
    """`mcp-multi-gmail demo [--lang cs|en]`: a guided tour for a person at a terminal."""
    emulator_cls = emulator_class()
    if emulator_cls is None:
        return 1
    return run_tour(emulator_cls, pick_language(lang, os.environ))
