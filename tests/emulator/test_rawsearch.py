"""gmail_emulator.rawquery and rawsearch: the X-GM-RAW subset listed in BEHAVIOURS.md."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage

import pytest

from gmail_emulator.mime import ParsedMessage
from gmail_emulator.rawquery import parse_raw
from gmail_emulator.rawsearch import (
    And,
    MatchAll,
    Not,
    Or,
    RawContext,
    RawQueryError,
    SearchView,
    Term,
    mentions_trash_or_spam,
)

NOW = datetime(2026, 3, 15, 12, 0, tzinfo=UTC)
CTX = RawContext(account_address="Me@Gmail.example", now=NOW)


@dataclass
class View:
    parsed: ParsedMessage
    labels: frozenset[str] = frozenset()
    flags: frozenset[str] = frozenset()
    location: str = "normal"
    internaldate: datetime = field(default_factory=lambda: NOW - timedelta(days=1))


def make(
    *,
    subject: str = "Weekly report for Q1",
    from_: str = '"Jane Doe" <jane.doe@corp.example.com>',
    to: str = "Bob Builder <bob@builders.example.org>",
    cc: str | None = "carol@cc.example.net",
    bcc: str | None = "secret@bcc.example.net",
    body: str = "Hello team, the budget numbers are attached.\n",
    html: str | None = "<p>Quarterly <b>synergy</b> update</p>",
    attachment: str | None = "Budget-2026.PDF",
    message_id: str = "<abc{5}def@mail.example.com>",
) -> ParsedMessage:
    m = EmailMessage()
    m["From"] = from_
    m["To"] = to
    if cc:
        m["Cc"] = cc
    if bcc:
        m["Bcc"] = bcc
    m["Subject"] = subject
    m["Message-ID"] = message_id
    m.set_content(body)
    if html is not None:
        m.add_alternative(html, subtype="html")
    if attachment is not None:
        m.add_attachment(b"%PDF-1.4", maintype="application", subtype="pdf", filename=attachment)
    return ParsedMessage(m.as_bytes())


MSG = make()


def view(**kw: object) -> View:
    v = View(parsed=MSG)
    for k, val in kw.items():
        setattr(v, k, val)
    return v


def hit(query: str, v: SearchView | None = None, ctx: RawContext = CTX) -> bool:
    return parse_raw(query).matches(v if v is not None else view(), ctx)


# --------------------------------------------------------------------------- parsing


def test_parse_shapes() -> None:
    assert parse_raw("") == MatchAll()
    assert parse_raw("a b") == And((Term(None, "a"), Term(None, "b")))
    assert parse_raw("a AND b") == parse_raw("a b")
    assert parse_raw("a OR b") == Or((Term(None, "a"), Term(None, "b")))
    assert parse_raw("a b OR c") == Or((And((Term(None, "a"), Term(None, "b"))), Term(None, "c")))
    assert parse_raw("a or b") == And((Term(None, "a"), Term(None, "or"), Term(None, "b")))
    assert parse_raw("-a") == Not(Term(None, "a"))
    assert parse_raw("NOT a") == Not(Term(None, "a"))
    assert parse_raw("not a") == And((Term(None, "not"), Term(None, "a")))
    assert parse_raw("{a b}") == Or((Term(None, "a"), Term(None, "b")))
    assert parse_raw("(a OR b) c") == And((Or((Term(None, "a"), Term(None, "b"))), Term(None, "c")))
    assert parse_raw("Subject:x") == Term("subject", "x")
    assert parse_raw('subject:"weekly report"') == Term("subject", "weekly report")
    assert parse_raw("subject:(a b)") == And((Term("subject", "a"), Term("subject", "b")))
    assert parse_raw("from:{a b}") == Or((Term("from", "a"), Term("from", "b")))
    assert parse_raw("(-a)") == Not(Term(None, "a"))
    assert parse_raw('-"x y"') == Not(Term(None, "x y"))
    assert parse_raw('"say \\"hi\\""') == Term(None, 'say "hi"')
    assert parse_raw("+exact") == Term(None, "exact")
    assert parse_raw("semi-colon") == Term(None, "semi-colon")
    assert parse_raw("rfc822msgid:<a{5}b@x>") == Term("rfc822msgid", "<a{5}b@x>")
    assert parse_raw("(rfc822msgid:<a@x>)") == Term("rfc822msgid", "<a@x>")
    assert parse_raw("{rfc822msgid:<a@x>}") == Or((Term("rfc822msgid", "<a@x>"),))


@pytest.mark.parametrize("bad", ['"unterminated', 'subject:"x', "(a b", "a b)", "{a b", "a}", "((a)", "(a}"])
def test_unbalanced_queries_raise(bad: str) -> None:
    with pytest.raises(RawQueryError):
        parse_raw(bad)


def test_rawqueryerror_is_valueerror() -> None:
    assert issubclass(RawQueryError, ValueError)


# --------------------------------------------------------------------------- address fields


def test_from_matches_address_domain_and_name_words() -> None:
    for q in (
        "from:jane.doe@corp.example.com",
        "from:JANE.DOE@CORP.EXAMPLE.COM",
        "from:corp.example.com",
        "from:example.com",
        "from:jane",
        "from:Doe",
        'from:"jane doe"',
        "from:(jane doe)",
    ):
        assert hit(q), q
    for q in ("from:jan", "from:bob", "from:example.org", 'from:"doe jane"', "from:me"):
        assert not hit(q), q


def test_to_also_matches_cc_and_bcc() -> None:
    assert hit("to:bob@builders.example.org")
    assert hit("to:builder")
    assert hit("to:carol@cc.example.net")
    assert hit("to:secret@bcc.example.net")
    assert hit("cc:carol") and not hit("cc:bob")
    assert hit("bcc:bcc.example.net") and not hit("bcc:carol")
    assert not hit("to:jane")


def test_me_is_the_account_address() -> None:
    mine = make(from_="Me <me@gmail.example>", to="other@x.example")
    assert hit("from:me", view(parsed=mine))
    assert not hit("to:me", view(parsed=mine))
    to_me = make(to="me@gmail.example")
    assert hit("to:me", view(parsed=to_me))


# --------------------------------------------------------------------------- subject & words


def test_subject_word_and_phrase() -> None:
    assert hit("subject:weekly")
    assert hit("subject:REPORT")
    assert hit('subject:"weekly report"')
    assert hit("subject:(report weekly)")
    assert not hit('subject:"report weekly"')
    assert not hit("subject:week")  # whole words only
    assert not hit("subject:hello")  # body word, not subject
    encoded = make(subject="Zpráva o účtu")
    assert hit("subject:účtu", view(parsed=encoded))
    assert hit("subject:ÚČTU", view(parsed=encoded))


def test_plain_words_and_phrases() -> None:
    for q in (
        "budget",  # body
        "Weekly",  # subject
        "jane",  # from name
        "builders",  # to address
        "carol@cc.example.net",  # cc address as a whole
        "synergy",  # html part, tags stripped
        "budget-2026",  # attachment filename
        "pdf",
        '"budget numbers"',
        '"the budget numbers are attached"',
    ):
        assert hit(q), q
    for q in ("budg", '"numbers budget"', "secret", "b", "PDF-1", "quarterly synergy update extra"):
        assert not hit(q), q


def test_boolean_operators() -> None:
    assert hit("budget synergy")
    assert not hit("budget nonexistentword")
    assert hit("nonexistentword OR budget")
    assert hit("budget AND synergy")
    assert not hit("nonexistentword or budget")  # lower-case "or" is a plain word
    assert hit("-nonexistentword")
    assert not hit("-budget")
    assert hit("NOT nonexistentword")
    assert not hit("NOT budget")
    assert hit("{nonexistentword budget}")
    assert not hit("{nonexistentword otherword}")
    assert hit("(nonexistentword OR jane) -(bob nope)")
    assert not hit("-(budget OR nope)")
    assert hit("subject:{nope weekly}")
    assert not hit("subject:(nope weekly)")
    assert hit("-{nope nada} subject:report")


# --------------------------------------------------------------------------- labels & folders


def test_label_spelling() -> None:
    v = view(labels=frozenset({"work/project x", "Été", "\\Inbox", "\\Important"}))
    for q in (
        "label:work-project-x",
        "label:Work/Project-X",
        'label:"work/project x"',
        "label:été",
        "label:inbox",
        "label:IMPORTANT",
    ):
        assert hit(q, v), q
    for q in ("label:work", "label:project-x", "label:starred", "label:sent"):
        assert not hit(q, v), q
    assert hit("-label:Done", v)
    assert not hit("-label:work-project-x", v)
    assert hit("label:starred", view(labels=frozenset({"\\Starred"})))
    assert hit("label:sent", view(labels=frozenset({"\\Sent"})))
    assert hit("label:draft", view(labels=frozenset({"\\Draft"})))


def test_in_operator() -> None:
    inbox = view(labels=frozenset({"\\Inbox"}))
    assert hit("in:inbox", inbox) and not hit("in:sent", inbox)
    assert hit("in:sent", view(labels=frozenset({"\\Sent"})))
    assert hit("in:drafts", view(labels=frozenset({"\\Draft"})))
    assert hit("in:draft", view(labels=frozenset({"\\Draft"})))
    assert hit("in:starred", view(labels=frozenset({"\\Starred"})))
    assert hit("in:starred", view(flags=frozenset({"\\Flagged"})))
    assert hit("in:important", view(labels=frozenset({"\\Important"})))
    assert hit("in:work-project-x", view(labels=frozenset({"work/project x"})))
    trashed = view(labels=frozenset({"\\Inbox", "keep"}), location="trash")
    assert hit("in:trash", trashed) and not hit("in:trash", inbox)
    assert not hit("in:inbox", trashed)  # Trash is not the inbox any more
    assert hit("in:trash label:keep", trashed)
    assert hit("in:spam", view(location="spam")) and not hit("in:spam", trashed)
    assert hit("in:anywhere", trashed) and hit("in:anywhere", inbox)


def test_mentions_trash_or_spam() -> None:
    assert mentions_trash_or_spam(parse_raw("in:trash"))
    assert mentions_trash_or_spam(parse_raw("foo (bar OR IN:Spam)"))
    assert mentions_trash_or_spam(parse_raw("-in:anywhere"))
    assert mentions_trash_or_spam(parse_raw('{a in:"trash"}'))
    assert not mentions_trash_or_spam(parse_raw("in:inbox label:trash trash"))
    assert not mentions_trash_or_spam(parse_raw(""))


def test_is_operator() -> None:
    assert hit("is:unread") and not hit("is:read")
    seen = view(flags=frozenset({"\\Seen"}))
    assert hit("is:read", seen) and not hit("is:unread", seen)
    assert hit("is:starred", view(labels=frozenset({"\\Starred"})))
    assert hit("is:starred", view(flags=frozenset({"\\Flagged"})))
    assert not hit("is:starred")
    assert hit("is:important", view(labels=frozenset({"\\Important"}))) and not hit("is:important")
    assert not hit("is:snoozed")


def test_has_attachment_and_filename() -> None:
    plain = view(parsed=make(attachment=None, html=None))
    assert hit("has:attachment") and not hit("has:attachment", plain)
    assert hit("-has:attachment", plain)
    assert hit("filename:pdf") and hit("filename:budget") and hit("filename:Budget-2026.pdf")
    assert hit("filename:.PDF") and hit('filename:"budget-2026"')
    assert not hit("filename:docx") and not hit("filename:pdf", plain)
    assert hit("has:nouserlabels") and not hit("has:userlabels")
    assert hit("has:userlabels", view(labels=frozenset({"x", "\\Inbox"})))


# --------------------------------------------------------------------------- dates


def at(dt: datetime) -> View:
    return view(internaldate=dt)


def test_after_before_are_pacific_midnight() -> None:
    # 2026-02-01 00:00 PST == 08:00 UTC
    just_before = at(datetime(2026, 2, 1, 7, 59, 59, tzinfo=UTC))
    midnight = at(datetime(2026, 2, 1, 8, 0, tzinfo=UTC))
    for spelling in ("2026/02/01", "2026-02-01", "02/01/2026", "2026/2/1"):
        assert not hit(f"after:{spelling}", just_before), spelling
        assert hit(f"after:{spelling}", midnight), spelling  # inclusive
        assert hit(f"before:{spelling}", just_before), spelling
        assert not hit(f"before:{spelling}", midnight), spelling  # exclusive
    # summer time: midnight PDT == 07:00 UTC
    assert hit("after:2026/07/01", at(datetime(2026, 7, 1, 7, 0, tzinfo=UTC)))
    assert not hit("after:2026/07/01", at(datetime(2026, 7, 1, 6, 59, tzinfo=UTC)))
    assert hit("newer:2026/01/31 older:2026/02/02", midnight)


def test_epoch_seconds_and_bad_dates() -> None:
    t = datetime(2026, 2, 1, 12, 0, tzinfo=UTC)
    epoch = int(t.timestamp())
    assert hit(f"after:{epoch}", at(t)) and not hit(f"before:{epoch}", at(t))
    assert hit(f"before:{epoch + 1}", at(t)) and not hit(f"after:{epoch + 1}", at(t))
    assert not hit("after:2026/13/45", at(t)) and not hit("before:yesterday", at(t))


def test_newer_than_older_than() -> None:
    cases = [
        (timedelta(hours=2), "newer_than:3h", True),
        (timedelta(hours=4), "newer_than:3h", False),
        (timedelta(days=1), "newer_than:2d", True),
        (timedelta(days=3), "older_than:2d", True),
        (timedelta(days=1), "older_than:2d", False),
        (timedelta(days=29), "newer_than:1m", True),
        (timedelta(days=31), "older_than:1m", True),
        (timedelta(days=364), "newer_than:1y", True),
        (timedelta(days=366), "older_than:1Y", True),
    ]
    for age, q, expected in cases:
        assert hit(q, at(NOW - age)) is expected, (age, q)
    assert not hit("newer_than:soon") and not hit("older_than:5w")


# --------------------------------------------------------------------------- message-id, misc


def test_rfc822msgid_with_brace() -> None:
    for q in (
        "rfc822msgid:<abc{5}def@mail.example.com>",
        "rfc822msgid:abc{5}def@mail.example.com",
        'rfc822msgid:"<abc{5}def@mail.example.com>"',
        "(rfc822msgid:<abc{5}def@mail.example.com> OR nothing)",
        "{nothing rfc822msgid:abc{5}def@mail.example.com}",
    ):
        assert hit(q), q
    assert not hit("rfc822msgid:<ABC{5}DEF@mail.example.com>")  # case-sensitive id
    assert not hit("rfc822msgid:abc{5}def")
    spaced = view(parsed=ParsedMessage(b"Message-ID:\r\n <x y@z>\r\n\r\nbody"))
    assert hit("rfc822msgid:<xy@z>", spaced)
    assert not hit("rfc822msgid:anything", view(parsed=ParsedMessage(b"Subject: none\r\n\r\n")))


def test_unknown_operators_match_nothing() -> None:
    assert not hit("category:promotions")
    assert not hit("list:info@example.com")
    assert hit("-category:promotions")
    assert hit("subject:")  # an empty value is ignored


def test_size_operators() -> None:
    assert hit("larger:10") and not hit("larger:10M")
    assert hit("smaller:1M") and not hit("smaller:10")
    assert hit("size:1k")


def test_non_ascii_query_words() -> None:
    cz = make(body="Příliš žluťoučký kůň úpěl", html=None, attachment=None)
    assert hit("žluťoučký", view(parsed=cz))
    assert hit('"ŽLUŤOUČKÝ KŮŇ"', view(parsed=cz))
    assert not hit("zlutoucky", view(parsed=cz))
