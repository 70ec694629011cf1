"""The demo seed (gmail_emulator/seeds/demo) loads and shows the behaviours its README promises."""

from __future__ import annotations

import email
import email.policy
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import Message as EmailMessage
from email.utils import getaddresses, parsedate_to_datetime
from importlib.resources import as_file, files

import pytest

from gmail_emulator.seed import apply_seed, load_seed
from gmail_emulator.store import Account, Message, Store

PERSONAL = "jana.novakova@example.cz"
TEAM = "tym@example.com"
NOTIFY = "upozorneni@example.com"
PHRASE = "příliš žluťoučký kůň"

_CHATA_DOMAINS = ["cz", "org", "com", "cz", "cz", "org", "com", "cz", "org"]
CHATA = [f"chata-vysocina-{i:02d}@example.{tld}" for i, tld in enumerate(_CHATA_DOMAINS, start=1)]
BRACE_ID = "{a1b2c3d4-e5f6-4789-9abc-def012345678}@email.seznam.example.cz"
CP1250_ID = "000801db3a2c$5e8f1a20$1bad4e60@example.cz"
ISO2_ID = "20-korektura-vizitek.8bit@tiskarna-horak.example.cz"
FORWARD_ID = "fwd-vyuctovani.mn.1@example.cz"
SCHEDULED_ID = "prani-mama.scheduled@example.cz"
DRAFT_ID = "besidka-3b.koncept.2@example.cz"
PDF_ID = "faktura-2026-11.202611@rychlynet.example.com"
REPLIED = ("q4-report.mt.1@partner.example", "q4-report.jana.2@example.cz")
EXAMPLE_DOMAINS = ("example.com", "example.cz", "example.org", "partner.example")

NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture(scope="module")
def store() -> Store:
    st = Store(clock=NOW.timestamp)
    with as_file(files("gmail_emulator.seeds") / "demo" / "seed.json") as path:
        apply_seed(st, load_seed(path, now=NOW))
    return st


def account(store: Store, address: str) -> Account:
    acc = store.account(address)
    assert acc is not None, address
    return acc


def one(acc: Account, bare_id: str) -> Message:
    found = acc.find_by_header_id(bare_id)
    assert len(found) == 1, f"{bare_id}: {len(found)} copies"
    return found[0]


def thread(acc: Account, msg: Message) -> list[Message]:
    return sorted((m for m in acc.messages.values() if m.thrid == msg.thrid), key=lambda m: m.internaldate)


def stdlib(msg: Message) -> EmailMessage:
    return email.message_from_bytes(msg.raw, policy=email.policy.compat32)


def date_header(msg: Message) -> datetime:
    value = stdlib(msg)["Date"]
    assert value, f"{msg.header_id}: no Date header"
    return parsedate_to_datetime(value)


def all_messages(store: Store) -> Iterator[tuple[Account, Message]]:
    for acc in store.accounts.values():
        for msg in acc.messages.values():
            yield acc, msg


# ------------------------------------------------------------------------------ the whole seed


def test_three_accounts_with_distinct_app_passwords(store: Store) -> None:
    assert set(store.accounts) == {PERSONAL, TEAM, NOTIFY}
    passwords = [acc.password for acc in store.accounts.values()]
    assert all(re.fullmatch(r"[a-z]{16}", pw) for pw in passwords)
    assert len(set(passwords)) == 3
    assert 25 <= len(account(store, PERSONAL).messages) <= 35
    assert 10 <= len(account(store, TEAM).messages) <= 15
    assert 8 <= len(account(store, NOTIFY).messages) <= 12


def test_seed_is_reachable_through_importlib_resources() -> None:
    demo = files("gmail_emulator.seeds") / "demo"
    assert (demo / "seed.json").is_file()
    assert (demo / "README.md").is_file()


def test_placeholders_resolved_and_dates_match_internaldate(store: Store) -> None:
    for _acc, msg in all_messages(store):
        assert b"{{DATE" not in msg.raw, msg.header_id
        if msg.header_id == FORWARD_ID:
            continue  # the forward's Date differs from its INTERNALDATE on purpose
        assert abs(date_header(msg) - msg.internaldate) <= timedelta(seconds=60), msg.header_id


def test_message_ids_unique_and_addresses_on_example_domains(store: Store) -> None:
    for acc in store.accounts.values():
        ids = [m.header_id for m in acc.messages.values()]
        assert None not in ids
        assert len(ids) == len(set(ids)), acc.address
    for _acc, msg in all_messages(store):
        parsed = stdlib(msg)
        fields = [v for name in ("From", "To", "Cc") for v in parsed.get_all(name, [])]
        for _name, addr in getaddresses(fields):
            domain = addr.rsplit("@", 1)[-1].lower()
            assert domain.endswith(EXAMPLE_DOMAINS), (msg.header_id, addr)


def test_threads_listed_in_chronological_order(store: Store) -> None:
    for acc in store.accounts.values():
        by_thread: dict[int, list[Message]] = {}
        for msg in sorted(acc.messages.values(), key=lambda m: m.arrival):
            by_thread.setdefault(msg.thrid, []).append(msg)
        for msgs in by_thread.values():
            dates = [m.internaldate for m in msgs]
            assert dates == sorted(dates), [m.header_id for m in msgs]


def test_readme_message_ids_exist(store: Store) -> None:
    readme = (files("gmail_emulator.seeds") / "demo" / "README.md").read_text("utf-8")
    known = {m.header_id for _acc, m in all_messages(store)}
    cited = set(re.findall(r"`<([^<>`\s]+@[^<>`\s]+)>`", readme))
    assert len(cited) > 40
    assert cited <= known, sorted(cited - known)


# ------------------------------------------------------------------------------ personal mailbox


def test_nine_message_thread_with_exactly_one_unprocessed(store: Store) -> None:
    acc = account(store, PERSONAL)
    msgs = [one(acc, mid) for mid in CHATA]
    assert len({m.thrid for m in msgs}) == 1
    assert [m.header_id for m in thread(acc, msgs[0])] == CHATA
    unprocessed = [m for m in msgs if "Asistent" not in m.labels]
    assert [m.header_id for m in unprocessed] == [CHATA[-1]]
    newest = unprocessed[0]
    assert NOW - timedelta(hours=2) <= newest.internaldate <= NOW
    assert newest.internaldate == max(m.internaldate for m in msgs)
    sent = [m for m in msgs if "\\Sent" in m.labels]
    assert len(sent) == 1
    assert stdlib(sent[0])["From"].endswith(f"<{PERSONAL}>")
    senders = {getaddresses([stdlib(m)["From"]])[0][1] for m in msgs}
    assert len(senders) >= 3


def test_reply_already_sent_is_newest(store: Store) -> None:
    acc = account(store, PERSONAL)
    question, reply = (one(acc, mid) for mid in REPLIED)
    msgs = thread(acc, question)
    assert msgs[-1] is reply
    assert reply.thrid == question.thrid
    assert "\\Sent" in reply.labels
    assert "\\Seen" in reply.flags


def test_forward_written_a_month_ago_delivered_today(store: Store) -> None:
    msg = one(account(store, PERSONAL), FORWARD_ID)
    assert NOW - timedelta(hours=4) <= msg.internaldate <= NOW
    gap = msg.internaldate - date_header(msg)
    assert timedelta(days=29) <= gap <= timedelta(days=31)
    assert "\\Inbox" in msg.labels
    assert "Asistent" not in msg.labels


def test_scheduled_message_of_her_own(store: Store) -> None:
    msg = one(account(store, PERSONAL), SCHEDULED_ID)
    assert msg.internaldate > NOW + timedelta(hours=12)
    assert msg.labels == frozenset()
    assert msg.flags == frozenset({"\\Seen"})
    assert getaddresses([stdlib(msg)["From"]])[0][1] == PERSONAL
    assert abs(date_header(msg) - msg.internaldate) <= timedelta(seconds=60)


def test_draft_reply(store: Store) -> None:
    acc = account(store, PERSONAL)
    draft = one(acc, DRAFT_ID)
    assert draft.labels == frozenset({"\\Draft"})
    assert draft.flags == frozenset({"\\Seen"})
    parent_id = stdlib(draft)["In-Reply-To"].strip().strip("<>")
    parent = one(acc, parent_id)
    assert parent.thrid == draft.thrid
    assert f"<{parent_id}>" in stdlib(draft)["References"]


def test_message_id_with_brace(store: Store) -> None:
    msg = one(account(store, PERSONAL), BRACE_ID)
    assert msg.parsed.message_id == f"<{BRACE_ID}>"


@pytest.mark.parametrize(
    ("bare_id", "charset", "encoding"),
    [(CP1250_ID, "windows-1250", "quoted-printable"), (ISO2_ID, "iso-8859-2", "8bit")],
)
def test_legacy_charset_bodies_decode(store: Store, bare_id: str, charset: str, encoding: str) -> None:
    msg = one(account(store, PERSONAL), bare_id)
    part = stdlib(msg)
    assert part.get_content_charset() == charset
    assert part["Content-Transfer-Encoding"].lower() == encoding
    payload = part.get_payload(decode=True)
    assert isinstance(payload, bytes)
    # The bytes are genuinely in the declared charset, not UTF-8.
    assert PHRASE.encode(charset) in payload
    with pytest.raises(UnicodeDecodeError):
        payload.decode("utf-8")
    assert PHRASE in payload.decode(charset)
    assert PHRASE in msg.parsed.text_content()


def test_pdf_attachment(store: Store) -> None:
    msg = one(account(store, PERSONAL), PDF_ID)
    parts = [p for p in stdlib(msg).walk() if p.get_filename() == "faktura-2026-11.pdf"]
    assert len(parts) == 1
    part = parts[0]
    assert part.get_content_type() == "application/pdf"
    assert part.get_content_disposition() == "attachment"
    pdf = part.get_payload(decode=True)
    assert isinstance(pdf, bytes)
    assert pdf.startswith(b"%PDF-1.") and pdf.rstrip().endswith(b"%%EOF")
    # A valid cross-reference table: every in-use entry points at its object.
    startxref = int(pdf.rsplit(b"startxref", 1)[1].split()[0])
    xref = pdf[startxref:].split(b"trailer", 1)[0].splitlines()
    assert xref[0] == b"xref"
    entries = [line.split() for line in xref[2:]]
    for number, (offset, _gen, kind) in enumerate(entries):
        if kind == b"n":
            assert pdf[int(offset) :].startswith(b"%d 0 obj" % number)
    assert "faktura-2026-11.pdf" in msg.parsed.attachment_filenames()


def test_html_only_newsletter_and_spam_and_trash(store: Store) -> None:
    acc = account(store, PERSONAL)
    news = one(acc, "issue-142.jn142@weeklybyte.example.com")
    assert stdlib(news).get_content_type() == "text/html"
    locations = {m.location for m in acc.messages.values()}
    assert locations == {"normal", "spam", "trash"}


def test_personal_mailbox_has_labels_languages_and_work(store: Store) -> None:
    acc = account(store, PERSONAL)
    for label in ("Asistent", "Asistent/akce", "Asistent/čeká", "Asistent/info", "Asistent/hoří", "Rodina", "Faktury"):
        assert label.casefold() in acc.user_labels
    recent = [
        m
        for m in acc.messages.values()
        if m.location == "normal"
        and "Asistent" not in m.labels
        and NOW - timedelta(days=3) <= m.internaldate <= NOW
        and "\\Draft" not in m.labels
    ]
    assert len({m.thrid for m in recent}) >= 6
    processed_old = [
        m for m in acc.messages.values() if "Asistent" in m.labels and m.internaldate < NOW - timedelta(days=5)
    ]
    assert len(processed_old) >= 5
    english = [m for m in acc.messages.values() if m.parsed.subject.isascii() and "Re:" not in m.parsed.subject]
    assert len(english) >= 3


# ------------------------------------------------------------------------------ team and automated


def test_team_mailbox_assignment_labels(store: Store) -> None:
    acc = account(store, TEAM)
    for label in ("Anna", "Beda", "Cyril", "Miladka/zpracovano"):
        assert label.casefold() in acc.user_labels
    threads: dict[int, set[str]] = {}
    for msg in acc.messages.values():
        threads.setdefault(msg.thrid, set()).update(msg.labels)
    inbox_threads = {t: labels for t, labels in threads.items() if "\\Inbox" in labels}
    assigned = {name: [t for t, lbs in inbox_threads.items() if name in lbs] for name in ("Anna", "Beda")}
    assert assigned["Anna"] and assigned["Beda"]
    assert any(not lbs & {"Anna", "Beda", "Cyril"} for lbs in inbox_threads.values())
    # An archived message in a thread that still has inbox work.
    archived = one(acc, "jarni-konference.1@example.org")
    assert "\\Inbox" not in archived.labels
    assert any("\\Inbox" in m.labels and "Miladka/zpracovano" not in m.labels for m in thread(acc, archived))


def test_notifications_mailbox(store: Store) -> None:
    acc = account(store, NOTIFY)
    assert acc.user_labels == {}
    msgs = list(acc.messages.values())
    assert any("\\Seen" in m.flags for m in msgs)
    assert any("\\Seen" not in m.flags and "\\Inbox" in m.labels for m in msgs)
    assert any("\\Inbox" not in m.labels for m in msgs)
    subjects = " ".join(m.parsed.subject for m in msgs)
    for word in ("failed", "Faktura", "Připomínka", "Novinky"):
        assert word in subjects
