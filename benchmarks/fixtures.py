"""Generated mailboxes for the benchmark, loaded into a running `GmailEmulator` in bulk.

Delivering 20 000 messages one `deliver()` call at a time would cross threads 20 000 times, so
the messages are added on the emulator's loop in chunks (`emu._on_loop`), straight into the
store, exactly as `deliver()` would add them (labels include ``\\Inbox`` so the peer, which only
looks at INBOX, sees the same messages our server sees in All Mail).

Subjects are chosen so that plain ``SEARCH SUBJECT Invoice`` (substring, the peer) and
``X-GM-RAW subject:Invoice`` (word, ours) select exactly the same messages.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from gmail_emulator import GmailEmulator

PASSWORD = "benchpassword123"
PROCESSED = "Asistent"
DOMAIN = "bench.example"
CHUNK = 1000

# Query words: each appears in exactly the subjects generated for it.
INVOICE = "Invoice"  # 67 matches in every generated mailbox
REPORT = "Report"  # 10 000 matches in the 20 000-message mailbox
THREAD_SUBJECT = "Project Atlas kickoff"
BIG_SUBJECT = "Scanned contract"
FILLER_SUBJECTS = (
    "Team lunch on Friday",
    "Meeting notes",
    "Newsletter: cloud news",
    "Build finished",
    "Holiday plans",
    "Quarterly planning",
    "Question about the offer",
    "Parcel is on its way",
)
_WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "project",
    "schedule",
    "budget",
    "review",
    "customer",
    "partner",
    "release",
    "deadline",
    "meeting",
    "agenda",
    "summary",
    "follow-up",
    "contract",
    "draft",
    "update",
    "status",
    "shipment",
    "payment",
    "figures",
    "quarter",
    "target",
    "risk",
    "issue",
    "ticket",
    "deploy",
    "server",
    "backup",
    "calendar",
    "office",
    "travel",
]


@dataclass(frozen=True)
class Spec:
    """One message to generate."""

    subject: str
    sender: str
    when: datetime
    body: bytes
    message_id: str
    in_reply_to: str | None = None
    labels: tuple[str, ...] = ("\\Inbox",)
    flags: tuple[str, ...] = ("\\Seen",)
    attachment: bytes | None = None


@dataclass
class Mailbox:
    """What the benchmark needs to know about one generated mailbox."""

    name: str  # short account name used by both servers
    address: str
    size: int
    invoice_ids: list[str] = field(default_factory=list)
    thread_ids: list[str] = field(default_factory=list)  # the 10-message thread, oldest first
    big_id: str | None = None  # Message-ID of the 10 MB message
    report_count: int = 0
    work_threads: int = 0
    label_ids: list[str] = field(default_factory=list)  # messages mg_label_message works on
    sweep_ids: list[str] = field(default_factory=list)  # the messages rows s1-s3 sweep
    uid_of: dict[str, int] = field(default_factory=dict)  # Message-ID -> UID in INBOX (the peer's id)
    gm_thread_id: str | None = None  # X-GM-THRID of the 10-message thread (ours)


def _body(rng: random.Random, words: int) -> bytes:
    lines = []
    line: list[str] = []
    for _ in range(words):
        line.append(rng.choice(_WORDS))
        if len(line) == 12:
            lines.append(" ".join(line))
            line = []
    if line:
        lines.append(" ".join(line))
    return ("\r\n".join(lines) + "\r\n").encode()


def render(spec: Spec, to: str) -> bytes:
    head = [
        f"From: {spec.sender.split('@')[0].title()} <{spec.sender}>",
        f"To: Owner <{to}>",
        f"Subject: {spec.subject}",
        f"Date: {format_datetime(spec.when)}",
        f"Message-ID: <{spec.message_id}>",
        "MIME-Version: 1.0",
    ]
    if spec.in_reply_to:
        head += [f"In-Reply-To: <{spec.in_reply_to}>", f"References: <{spec.in_reply_to}>"]
    if spec.attachment is None:
        head += ["Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: 8bit"]
        return ("\r\n".join(head) + "\r\n\r\n").encode() + spec.body
    boundary = "bench-boundary-0001"
    encoded = base64.encodebytes(spec.attachment).replace(b"\n", b"\r\n")
    head.append(f'Content-Type: multipart/mixed; boundary="{boundary}"')
    parts = [
        ("\r\n".join(head) + "\r\n\r\n").encode(),
        f"--{boundary}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n".encode(),
        spec.body,
        (
            f'--{boundary}\r\nContent-Type: application/pdf; name="contract.pdf"\r\n'
            'Content-Disposition: attachment; filename="contract.pdf"\r\n'
            "Content-Transfer-Encoding: base64\r\n\r\n"
        ).encode(),
        encoded,
        f"--{boundary}--\r\n".encode(),
    ]
    return b"".join(parts)


def _spread(rng: random.Random, now: datetime, days: float) -> datetime:
    return (now - timedelta(seconds=rng.uniform(3600, days * 86400))).replace(microsecond=0)


def general_specs(tag: str, size: int, *, reports: int, big: bool, now: datetime, seed: int = 7) -> list[Spec]:
    """A mailbox of `size` messages: 67 invoices, `reports` reports, one 10-message thread,
    optionally one 10 MB message, the rest filler. Dates spread over the last year, oldest first."""
    rng = random.Random(seed)
    specs: list[Spec] = []
    for i in range(67):
        specs.append(
            Spec(
                subject=f"{INVOICE} 2026-{i + 1:04d}",
                sender=f"billing{i % 7}@vendor.example",
                when=_spread(rng, now, 360),
                body=_body(rng, 180),
                message_id=f"inv-{i}.{tag}@{DOMAIN}",
            )
        )
    for i in range(reports):
        specs.append(
            Spec(
                subject=f"Weekly {REPORT} no. {i + 1}",
                sender=f"reports{i % 11}@example.org",
                when=_spread(rng, now, 360),
                body=_body(rng, 120),
                message_id=f"rep-{i}.{tag}@{DOMAIN}",
            )
        )
    # The thread: 10 messages, one a day, ending three days ago.
    start = (now - timedelta(days=12)).replace(microsecond=0)
    parent: str | None = None
    for i in range(10):
        mid = f"atlas-{i}.{tag}@{DOMAIN}"
        specs.append(
            Spec(
                subject=THREAD_SUBJECT if i == 0 else f"Re: {THREAD_SUBJECT}",
                sender=f"colleague{i % 3}@example.org",
                when=start + timedelta(days=i),
                body=_body(rng, 400),
                message_id=mid,
                in_reply_to=parent,
            )
        )
        parent = mid
    if big:
        # ~7.5 MB of attachment -> ~10 MB of base64 on the wire.
        specs.append(
            Spec(
                subject=BIG_SUBJECT,
                sender="scanner@example.org",
                when=(now - timedelta(days=20)).replace(microsecond=0),
                body=_body(rng, 60),
                message_id=f"big.{tag}@{DOMAIN}",
                attachment=random.Random(99).randbytes(7_600_000),
            )
        )
    filler = size - len(specs)
    for i in range(filler):
        specs.append(
            Spec(
                subject=f"{FILLER_SUBJECTS[i % len(FILLER_SUBJECTS)]} #{i + 1}",
                sender=f"person{i % 97}@example.net",
                when=_spread(rng, now, 360),
                body=_body(rng, 150),
                message_id=f"fill-{i}.{tag}@{DOMAIN}",
            )
        )
    specs.sort(key=lambda s: s.when)
    # Replies must arrive after their parent (Gmail threads on arrival); the thread's dates do that.
    return specs


def pass_specs(tag: str, work_threads: int, *, now: datetime, seed: int = 11) -> list[Spec]:
    """A mailbox for mg_next_pass: `work_threads` unprocessed threads of two messages in the last
    few days, plus 300 older processed messages and 20 recent processed ones."""
    rng = random.Random(seed)
    specs: list[Spec] = []
    for i in range(300):
        specs.append(
            Spec(
                subject=f"Old {FILLER_SUBJECTS[i % len(FILLER_SUBJECTS)]} #{i}",
                sender=f"person{i % 31}@example.net",
                when=(now - timedelta(days=30 + rng.uniform(0, 300))).replace(microsecond=0),
                body=_body(rng, 120),
                message_id=f"old-{i}.{tag}@{DOMAIN}",
                labels=("\\Inbox", PROCESSED),
            )
        )
    for i in range(20):
        specs.append(
            Spec(
                subject=f"Done {i}",
                sender=f"person{i % 31}@example.net",
                when=(now - timedelta(hours=rng.uniform(2, 70))).replace(microsecond=0),
                body=_body(rng, 120),
                message_id=f"done-{i}.{tag}@{DOMAIN}",
                labels=("\\Inbox", PROCESSED),
            )
        )
    for t in range(work_threads):
        first = (now - timedelta(hours=rng.uniform(4, 70))).replace(microsecond=0)
        root = f"work-{t}-0.{tag}@{DOMAIN}"
        specs.append(
            Spec(
                subject=f"Request {t}",
                sender=f"client{t}@example.org",
                when=first,
                body=_body(rng, 150),
                message_id=root,
                flags=(),
            )
        )
        specs.append(
            Spec(
                subject=f"Re: Request {t}",
                sender=f"client{t}@example.org",
                when=first + timedelta(minutes=90),
                body=_body(rng, 150),
                message_id=f"work-{t}-1.{tag}@{DOMAIN}",
                in_reply_to=root,
                flags=(),
            )
        )
    specs.sort(key=lambda s: s.when)
    return specs


SWEEP_SENDER = "statements@bank.example"


def sweep_specs(tag: str, size: int, *, now: datetime) -> list[Spec]:
    """`size` one-message threads from one sender, none processed: what rows s1-s3 sweep."""
    return [
        Spec(
            subject=f"Account statement no. {n:05d}",
            sender=f"Bank <{SWEEP_SENDER}>",
            when=now - timedelta(days=400) + timedelta(minutes=n),
            body=b"Your statement is ready.\r\n",
            message_id=f"stmt-{n}.{tag}@{DOMAIN}",
        )
        for n in range(size)
    ]


def load(
    emu: GmailEmulator,
    mailbox: Mailbox,
    specs: list[Spec],
    progress: Callable[[str], None] | None = None,
) -> None:
    """Create the account and add every message on the emulator's loop, CHUNK at a time."""
    emu.add_account(mailbox.address, PASSWORD, [PROCESSED])
    raws = [(render(s, mailbox.address), s) for s in specs]
    for start in range(0, len(raws), CHUNK):
        chunk = raws[start : start + CHUNK]

        def add(chunk: list[tuple[bytes, Spec]] = chunk) -> None:
            account = emu.store.account(mailbox.address)
            assert account is not None
            for raw, spec in chunk:
                account.add_message(raw, labels=list(spec.labels), flags=list(spec.flags), internaldate=spec.when)

        emu._on_loop(add)
        if progress is not None and len(raws) > CHUNK:
            progress(f"  {mailbox.name}: {min(start + CHUNK, len(raws))}/{len(raws)} messages")

    def index() -> tuple[dict[str, int], str | None]:
        account = emu.store.account(mailbox.address)
        assert account is not None
        inbox = account.folder("INBOX")
        assert inbox is not None
        uids = {msg.header_id or "": uid for uid, msg in account.sync(inbox)}
        atlas = next((m for m in account.messages.values() if (m.header_id or "").startswith("atlas-0.")), None)
        return uids, (str(atlas.thrid) if atlas is not None else None)

    mailbox.uid_of, mailbox.gm_thread_id = emu._on_loop(index)
    ids = [s.message_id for s in specs]
    mailbox.invoice_ids = [i for i in ids if i.startswith("inv-")]
    atlas = (i for i in ids if i.startswith("atlas-"))
    mailbox.thread_ids = sorted(atlas, key=lambda i: int(i.split("-")[1].split(".")[0]))
    mailbox.big_id = next((i for i in ids if i.startswith("big.")), None)
    mailbox.report_count = sum(1 for i in ids if i.startswith("rep-"))
    mailbox.work_threads = len({i.split("-")[1] for i in ids if i.startswith("work-")})
    mailbox.label_ids = [i for i in ids if i.startswith("fill-")][:40]
    mailbox.sweep_ids = [i for i in ids if i.startswith("stmt-")]


def unlabel(emu: GmailEmulator, mailbox: Mailbox, message_ids: list[str]) -> None:
    """Take the processed label off again (between mg_label_message calls, outside the timing)."""
    wanted = set(message_ids)

    def run() -> None:
        account = emu.store.account(mailbox.address)
        assert account is not None
        for msg in account.messages.values():
            if msg.header_id in wanted and PROCESSED in msg.labels:
                account.set_labels(msg, msg.labels - {PROCESSED})

    emu._on_loop(run)


def utc_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)
