"""gmail_emulator.imapsearch: standard IMAP SEARCH keys plus the X-GM-* keys."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage

import pytest

from gmail_emulator.imapsearch import (
    SearchContext,
    SearchItem,
    SearchParseError,
    SearchToken,
    parse_search,
    parse_sequence_set,
)
from gmail_emulator.mime import ParsedMessage
from gmail_emulator.rawsearch import SearchView

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
BASE_ID = 1_850_000_000_000_000_000  # above 2**53 like real Gmail ids


@dataclass
class Snapshot:
    parsed: ParsedMessage
    labels: frozenset[str]
    flags: frozenset[str]
    location: str
    internaldate: datetime


@dataclass
class Item:
    uid: int
    seq: int
    parsed: ParsedMessage
    internaldate: datetime
    labels: frozenset[str] = frozenset()
    flags: frozenset[str] = frozenset()
    location: str = "normal"
    msgid: int = 0
    thrid: int = 0
    snapshot: Snapshot | None = None
    not_indexed: bool = False
    size: int = field(init=False)

    def __post_init__(self) -> None:
        self.size = self.parsed.size
        self.msgid = self.msgid or BASE_ID + self.uid
        self.thrid = self.thrid or self.msgid

    @property
    def indexed(self) -> SearchView | None:
        if self.not_indexed:
            return None
        return self.snapshot if self.snapshot is not None else self


def message(
    subject: str,
    *,
    from_: str = "Jane Doe <jane.doe@corp.example.com>",
    to: str = "bob@example.org",
    cc: str | None = None,
    bcc: str | None = None,
    date: str = "Sun, 01 Feb 2026 23:30:00 -0800",
    body: str = "plain body text\n",
    extra: dict[str, str] | None = None,
    attach: bytes | None = None,
) -> ParsedMessage:
    m = EmailMessage()
    m["From"] = from_
    m["To"] = to
    if cc:
        m["Cc"] = cc
    if bcc:
        m["Bcc"] = bcc
    m["Subject"] = subject
    m["Date"] = date
    for k, v in (extra or {}).items():
        m[k] = v
    m.set_content(body)
    if attach is not None:
        m.add_attachment(attach, maintype="application", subtype="octet-stream", filename="blob.bin")
    return ParsedMessage(m.as_bytes())


def mailbox() -> list[Item]:
    items = [
        Item(
            1,
            1,
            message(
                "Zpráva o účtu",
                body="Dobrý den, posílám fakturu.\n",
                extra={"Message-ID": "<one{5}@example.com>", "X-Mailer": "Probe 1.0"},
            ),
            datetime(2026, 2, 1, 23, 30, tzinfo=UTC),
            labels=frozenset({"\\Inbox", "work/project x"}),
            flags=frozenset({"\\Seen"}),
        ),
        Item(
            2,
            2,
            message(
                "Weekly report",
                from_="Alice <alice@example.net>",
                to="team@example.org",
                cc="Carol Cc <carol@example.com>",
                date="Mon, 02 Feb 2026 00:30:00 +0000",
            ),
            datetime(2026, 2, 2, 0, 30, tzinfo=UTC),
            labels=frozenset({"\\Inbox", "\\Important"}),
            flags=frozenset({"\\Flagged", "\\Answered", "$Label1"}),
        ),
        Item(
            3,
            3,
            message("Draft in progress", bcc="hidden@example.org", body="big one", attach=b"x" * 5000),
            datetime(2026, 2, 3, 9, 0, tzinfo=UTC),
            labels=frozenset({"\\Draft"}),
            flags=frozenset({"\\Draft", "\\Seen"}),
            thrid=BASE_ID + 1,
        ),
        Item(
            5,
            4,
            message("Deleted thing", date="garbage"),
            datetime(2026, 2, 4, 9, 0, tzinfo=UTC),
            labels=frozenset({"Work"}),
            flags=frozenset({"\\Deleted"}),
        ),
    ]
    return items


CTX = SearchContext(account_address="jane.doe@corp.example.com", now=NOW, max_uid=5, max_seq=4)


def uids(tokens: list[SearchToken], items: list[Item] | None = None) -> list[int]:
    node = parse_search(tokens)
    box: list[SearchItem] = list(items if items is not None else mailbox())
    return [i.uid for i in box if node.matches(i, CTX)]


# --------------------------------------------------------------------------- simple keys


def test_all_and_flags() -> None:
    assert uids(["ALL"]) == [1, 2, 3, 5]
    assert uids(["SEEN"]) == [1, 3]
    assert uids(["unseen"]) == [2, 5]
    assert uids(["FLAGGED"]) == [2]
    assert uids(["UNFLAGGED"]) == [1, 3, 5]
    assert uids(["ANSWERED"]) == [2]
    assert uids(["UNANSWERED"]) == [1, 3, 5]
    assert uids(["DELETED"]) == [5]
    assert uids(["UNDELETED"]) == [1, 2, 3]
    assert uids(["DRAFT"]) == [3]
    assert uids(["UNDRAFT"]) == [1, 2, 5]
    assert uids(["KEYWORD", "$label1"]) == [2]
    assert uids(["UNKEYWORD", "$Label1"]) == [1, 3, 5]
    assert uids(["RECENT"]) == [] and uids(["NEW"]) == [] and uids(["OLD"]) == [1, 2, 3, 5]


def test_internal_dates_are_utc_days() -> None:
    assert uids(["ON", "1-Feb-2026"]) == [1]
    assert uids(["ON", b"02-FEB-2026"]) == [2]
    assert uids(["SINCE", "2-Feb-2026"]) == [2, 3, 5]
    assert uids(["BEFORE", "2-Feb-2026"]) == [1]
    assert uids(["BEFORE", "1-Jan-2026"]) == []


def test_sent_dates_use_the_date_header() -> None:
    # message 1: Sun, 01 Feb 2026 23:30 -0800 (already 2 Feb in UTC) -> sent on 1 Feb
    assert uids(["SENTON", "1-Feb-2026"]) == [1, 3]
    assert uids(["SENTON", "2-Feb-2026"]) == [2]
    assert uids(["SENTSINCE", "2-Feb-2026"]) == [2]
    assert uids(["SENTBEFORE", "2-Feb-2026"]) == [1, 3]  # 5 has an unparseable Date


def test_address_and_text_keys() -> None:
    assert uids(["FROM", "ANE.DO"]) == [1, 3, 5]
    assert uids(["FROM", b"alice"]) == [2]
    assert uids(["FROM", "Jane Doe"]) == [1, 3, 5]
    assert uids(["TO", "team@"]) == [2]
    assert uids(["CC", "carol cc"]) == [2]
    assert uids(["BCC", "hidden"]) == [3]
    assert uids(["SUBJECT", "report"]) == [2]
    assert uids(["SUBJECT", "účtu".encode()]) == [1]  # CHARSET UTF-8 literal
    assert uids(["SUBJECT", "ÚČTU".encode()]) == [1]
    assert uids(["SUBJECT", "ort"]) == [2]  # substring, unlike X-GM-RAW
    assert uids(["BODY", "FAKTURU"]) == [1]
    assert uids(["BODY", "Weekly"]) == []  # subject is not body
    assert uids(["TEXT", "Weekly"]) == [2]
    assert uids(["TEXT", "faktur"]) == [1]
    assert uids(["TEXT", "probe 1.0"]) == [1]  # any header


def test_header_and_size() -> None:
    assert uids(["HEADER", "x-mailer", "probe"]) == [1]
    assert uids(["HEADER", "X-Mailer", ""]) == [1]  # empty value: header present
    assert uids(["HEADER", "Message-ID", b"{5}"]) == [1]
    assert uids(["HEADER", "X-Nope", ""]) == []
    big = mailbox()[2].size
    assert uids(["LARGER", str(big - 1)]) == [3]
    assert uids(["LARGER", str(big)]) == []
    assert uids(["SMALLER", str(big)]) == [1, 2, 5]


# --------------------------------------------------------------------------- sets and logic


def test_sequence_sets() -> None:
    assert parse_sequence_set("1:3,7,9:*") == ((1, 3), (7, 7), (9, None))
    assert uids(["UID", "2:4"]) == [2, 3]
    assert uids(["UID", "4:2"]) == [2, 3]
    assert uids(["UID", "*"]) == [5]
    assert uids(["UID", "3:*"]) == [3, 5]
    assert uids(["UID", "9:*"]) == [5]  # range reversed: 5..9
    assert uids(["UID", "1,5"]) == [1, 5]
    assert uids(["uid", "4"]) == []
    assert uids(["1:2"]) == [1, 2]
    assert uids(["*"]) == [5]  # seq 4 is uid 5
    assert uids(["2,4:3"]) == [2, 3, 5]


def test_or_not_and_nesting() -> None:
    assert uids(["SEEN", "UNDELETED"]) == [1, 3]
    assert uids(["OR", "FLAGGED", "DELETED"]) == [2, 5]
    assert uids(["NOT", "SEEN"]) == [2, 5]
    assert uids(["NOT", ["SEEN", "DRAFT"]]) == [1, 2, 5]
    assert uids(["OR", ["SEEN", "DRAFT"], ["UID", "5"]]) == [3, 5]
    assert uids(["OR", "OR", "UID", "1", "UID", "2", "UID", "3"]) == [1, 2, 3]
    assert uids([["FROM", "jane"], "NOT", ["OR", "DRAFT", "DELETED"]]) == [1]
    assert uids(["NOT", "NOT", "FLAGGED"]) == [2]
    assert uids([[["UNSEEN"]]]) == [2, 5]


# --------------------------------------------------------------------------- Gmail keys


def test_x_gm_ids() -> None:
    assert uids(["X-GM-MSGID", str(BASE_ID + 2)]) == [2]
    assert uids(["X-GM-THRID", str(BASE_ID + 1)]) == [1, 3]
    assert uids(["x-gm-thrid", "1"]) == []


def test_x_gm_labels_quoted_vs_bare() -> None:
    assert uids(["X-GM-LABELS", b"\\Inbox"]) == [1, 2]
    assert uids(["X-GM-LABELS", b"\\inbox"]) == [1, 2]
    assert uids(["X-GM-LABELS", b"\\Important"]) == [2]
    assert uids(["X-GM-LABELS", b"\\Draft"]) == [3]
    assert uids(["X-GM-LABELS", "work"]) == [5]
    assert uids(["X-GM-LABELS", b"work/project x"]) == [1]
    assert uids(["X-GM-LABELS", b"work-project-x"]) == []  # exact name, not the web spelling
    with pytest.raises(SearchParseError):
        parse_search(["X-GM-LABELS", "\\Inbox"])


def test_x_gm_raw_uses_the_index_view() -> None:
    assert uids(["X-GM-RAW", b"subject:weekly"]) == [2]
    assert uids(["X-GM-RAW", "has:attachment"]) == [3]
    assert uids(["X-GM-RAW", b'subject:"weekly report" -label:done']) == [2]
    assert uids(["X-GM-RAW", b"label:work-project-x"]) == [1]
    assert uids(["X-GM-RAW", b"rfc822msgid:<one{5}@example.com>"]) == [1]
    assert uids(["X-GM-RAW", "účtu".encode()]) == [1]
    assert uids(["UID", "1:3", "X-GM-RAW", b"in:inbox"]) == [1, 2]

    box = mailbox()
    first = box[0]
    first.not_indexed = True  # brand new message the index has not seen yet
    box[1].snapshot = Snapshot(box[1].parsed, frozenset({"\\Inbox"}), frozenset(), "normal", NOW)
    assert uids(["X-GM-RAW", b"label:inbox"], box) == [2]
    assert uids(["X-GM-LABELS", b"\\Inbox"], box) == [1, 2]  # standard keys stay live
    assert uids(["X-GM-RAW", b"is:important"], box) == []  # the index lags behind
    assert uids(["X-GM-RAW", b"is:unread"], box) == [2, 5]


def test_x_gm_raw_trash_exclusion() -> None:
    box = mailbox()
    box[1].snapshot = Snapshot(box[1].parsed, frozenset({"\\Inbox"}), frozenset(), "trash", NOW)
    assert uids(["X-GM-RAW", b"weekly"], box) == []
    assert uids(["X-GM-RAW", b"weekly in:trash"], box) == [2]
    assert uids(["X-GM-RAW", b"weekly in:anywhere"], box) == [2]
    box[1].location = "trash"  # searching inside the Trash folder itself
    assert uids(["X-GM-RAW", b"weekly"], box) == [2]


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "tokens",
    [
        [],
        [[]],
        ["FOO"],
        [b"SEEN"],
        ["SINCE"],
        ["SINCE", "2026-02-01"],
        ["SINCE", "31-Feb-2026"],
        ["ON", "1-Foo-2026"],
        ["SENTON", ["1-Feb-2026"]],
        ["LARGER", "x"],
        ["LARGER", b"10"],
        ["SMALLER"],
        ["UID", "0"],
        ["UID", "1:x"],
        ["UID", b"1"],
        ["UID"],
        ["1:"],
        ["1,,2"],
        ["OR", "SEEN"],
        ["NOT"],
        ["HEADER", "X"],
        ["HEADER", "", "x"],
        ["KEYWORD", ["x"]],
        ["KEYWORD", "\\Seen\\"],
        ["FROM"],
        ["FROM", ["a"]],
        ["X-GM-RAW"],
        ["X-GM-RAW", b'subject:"unbalanced'],
        ["X-GM-RAW", b"(a b"],
        ["X-GM-THRID", "abc"],
        ["X-GM-MSGID", str(2**64)],
        ["X-GM-LABELS", "\\Starred"],
        ["X-GM-LABELS", b""],
        ["X-GM-LABELS"],
        ["CHARSET", "UTF-8", "ALL"],
    ],
)
def test_malformed_criteria(tokens: list[SearchToken]) -> None:
    with pytest.raises(SearchParseError):
        parse_search(tokens)


def test_search_parse_error_is_value_error() -> None:
    assert issubclass(SearchParseError, ValueError)
