"""Mailboxes of a thousand threads and more for the sweep and undo tests, loaded fast.

The messages are built once per module (plain bytes) and put straight into the emulator's store
on its loop, a few hundred at a time: over 1 400 deliveries one by one would take most of a
test's time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from gmail_emulator import GmailEmulator

BOX = "osobni@example.cz"
PROCESSED = "Asistent"
ACCOUNTING = "Účetnictví"
BANK = "Banka"
CLASSES = {ACCOUNTING: "Faktury a účty", BANK: "Výpisy z banky"}
START = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Spec:
    tag: str
    subject: str
    sender: str
    labels: tuple[str, ...]
    flags: tuple[str, ...] = ()
    reply_to: str | None = None
    when: datetime = START


@dataclass
class Box:
    specs: list[Spec] = field(default_factory=list)

    def ids(self, *, sender: str | None = None) -> list[str]:
        return [s.tag for s in self.specs if sender is None or s.sender == sender]


def message_id(tag: str) -> str:
    return f"{tag}@banka.example"


def raw(spec: Spec) -> bytes:
    lines = [
        f"From: Banka Lipová <{spec.sender}>",
        f"To: {BOX}",
        f"Subject: {spec.subject}",
        f"Message-ID: <{message_id(spec.tag)}>",
        f"Date: {spec.when.strftime('%a, %d %b %Y %H:%M:%S +0000')}",
    ]
    if spec.reply_to:
        lines += [f"In-Reply-To: <{message_id(spec.reply_to)}>", f"References: <{message_id(spec.reply_to)}>"]
    return ("\r\n".join(lines) + "\r\n\r\nDobrý den, posíláme výpis.\r\n").encode()


def accounting_box(threads: int = 1200, replies: int = 200) -> Box:
    """`threads` statements from the bank, the first `replies` of them with an answer in the same
    thread; every 4th thread is classified Účetnictví already, every 10th Banka (the other
    classification, which a sweep's Účetnictví replaces), every 3rd message processed."""
    box = Box()
    for n in range(threads):
        when = START + timedelta(minutes=n)
        classes: tuple[str, ...] = ()
        if n % 4 == 0:
            classes = (ACCOUNTING,)
        elif n % 10 == 1:
            classes = (BANK,)
        processed = (PROCESSED,) if n % 3 == 0 else ()
        box.specs.append(
            Spec(
                f"vypis-{n}", f"Výpis z účtu {n}", "vypisy@banka.example", ("\\Inbox", *classes, *processed), when=when
            )
        )
        if n < replies:
            box.specs.append(
                Spec(
                    f"odpoved-{n}",
                    f"Re: Výpis z účtu {n}",
                    "podpora@banka.example",
                    ("\\Inbox", *classes),
                    reply_to=f"vypis-{n}",
                    when=when + timedelta(seconds=30),
                )
            )
    return box


def load(emulator: GmailEmulator, specs: Iterable[Spec], labels: Iterable[str] = (PROCESSED, *CLASSES)) -> None:
    """The messages into the mailbox BOX (created here), on the emulator's loop, 400 at a time."""
    names = list(labels)

    def prepare() -> None:
        account = emulator.store.account(BOX)
        if account is None:
            emulator.store.add_account(BOX, "osobniheslohesla", names)
            return
        for name in names:
            account.create_label(name)

    emulator._on_loop(prepare)
    items = [(raw(s), s) for s in specs]
    for start in range(0, len(items), 400):
        chunk = items[start : start + 400]

        def add(chunk: list[tuple[bytes, Spec]] = chunk) -> None:
            account = emulator.store.account(BOX)
            assert account is not None
            for data, spec in chunk:
                account.add_message(data, labels=list(spec.labels), flags=list(spec.flags), internaldate=spec.when)

        emulator._on_loop(add)


def delete(emulator: GmailEmulator, tags: Iterable[str]) -> None:
    """Delete messages for good (as another client emptying Trash would)."""
    wanted = {message_id(t) for t in tags}

    def run() -> None:
        account = emulator.store.account(BOX)
        assert account is not None
        for msg in [m for m in account.messages.values() if m.header_id in wanted]:
            account.remove_message(msg)

    emulator._on_loop(run)


def state(emulator: GmailEmulator) -> dict[str, tuple[frozenset[str], frozenset[str], str]]:
    """Message-ID -> (labels, flags, location) of every message in BOX."""
    return {m.header_id or "": (m.labels, m.flags, m.location) for m in emulator.messages(BOX)}


def config_entry(**extra: object) -> dict[str, object]:
    return {
        "name": "o",
        "address": BOX,
        "password": "osobniheslohesla",
        "processed_label": PROCESSED,
        "classification_labels": CLASSES,
        **extra,
    }
