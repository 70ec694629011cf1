"""gmail_emulator.mime: ENVELOPE / BODYSTRUCTURE checked through imapclient's own response parser."""

from __future__ import annotations

import base64
import re
from datetime import UTC, datetime
from email.message import EmailMessage
from email.mime.base import MIMEBase
from email.mime.message import MIMEMessage
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from imapclient.response_parser import parse_fetch_response

from gmail_emulator.imap_codec import imap_nstring
from gmail_emulator.mime import ParsedMessage
from gmail_emulator.mime_text import decode_words, normalize_crlf

_LITERAL = re.compile(rb"\{(\d+)\}\r\n")


def imaplib_records(line: bytes) -> list[Any]:
    """Split one wire response the way imaplib hands it to imapclient: (text ending in {n}, literal)."""
    out: list[Any] = []
    pos = 0
    while True:
        m = _LITERAL.search(line, pos)
        if m is None:
            out.append(line[pos:])
            return out
        n = int(m.group(1))
        out.append((line[pos : m.end() - 2], line[m.end() : m.end() + n]))
        pos = m.end() + n


def fetch(p: ParsedMessage, extended: bool = True) -> dict[bytes, Any]:
    line = b"* 1 FETCH (UID 1 ENVELOPE " + p.envelope() + b" BODYSTRUCTURE " + p.bodystructure(extended) + b")"
    # imaplib strips the "* " and the "FETCH" keyword before imapclient sees the data
    parsed = parse_fetch_response(imaplib_records(line.replace(b"* 1 FETCH ", b"1 ", 1)), normalise_times=False)
    assert list(parsed) == [1]
    result: dict[bytes, Any] = parsed[1]
    return result


def sample_message() -> bytes:
    m = EmailMessage()
    m["Date"] = "Mon, 02 Feb 2026 10:11:12 +0100"
    m["From"] = '"Doe, Jane \\"JD\\"" <jane@example.com>'
    m["To"] = "Bob <bob@example.org>, carol@example.net"
    m["Cc"] = "=?utf-8?q?J=C3=B6rg?= <jorg@example.de>"
    m["Subject"] = "Héllo wörld"  # becomes an RFC 2047 encoded-word
    m["Message-ID"] = "<abc{5}def@mail.example.com>"
    m["In-Reply-To"] = "<parent@example.com>"
    m["References"] = "<root@example.com> <parent@example.com>"
    m.set_content("hello\nworld\n")
    m.add_alternative("<html><body><p>hello <b>world</b></p></body></html>\n", subtype="html")
    m.add_attachment(b"%PDF-1.4 fake pdf\n" * 10, maintype="application", subtype="pdf", filename="r.pdf")
    return m.as_bytes()


# --------------------------------------------------------------------------- ENVELOPE


def test_envelope_parsed_by_imapclient() -> None:
    p = ParsedMessage(sample_message())
    env = fetch(p)[b"ENVELOPE"]
    assert env.date == datetime(2026, 2, 2, 9, 11, 12, tzinfo=UTC)
    assert env.subject == b"=?utf-8?q?H=C3=A9llo_w=C3=B6rld?="  # raw, not decoded
    assert env.from_[0].name == b'Doe, Jane "JD"'
    assert (env.from_[0].mailbox, env.from_[0].host, env.from_[0].route) == (b"jane", b"example.com", None)
    assert env.sender == env.from_
    assert env.reply_to == env.from_
    assert [(a.name, a.mailbox, a.host) for a in env.to] == [
        (b"Bob", b"bob", b"example.org"),
        (None, b"carol", b"example.net"),
    ]
    assert env.cc[0].name == b"=?utf-8?q?J=C3=B6rg?="
    assert env.bcc is None
    assert env.in_reply_to == b"<parent@example.com>"
    assert env.message_id == b"<abc{5}def@mail.example.com>"


def test_envelope_missing_headers_are_nil_and_sender_reply_to_explicit() -> None:
    raw = b"From: a@x.org\r\nSender: s@x.org\r\nReply-To: r@x.org, r2@x.org\r\nSubject:\r\n\r\nbody\r\n"
    env = fetch(ParsedMessage(raw))[b"ENVELOPE"]
    assert env.date is None
    assert env.subject == b""
    assert env.sender[0].mailbox == b"s"
    assert [a.mailbox for a in env.reply_to] == [b"r", b"r2"]
    assert env.to is None and env.cc is None
    assert env.in_reply_to is None and env.message_id is None


def test_envelope_group_syntax() -> None:
    raw = (
        b"From: me@x.org\r\nTo: undisclosed-recipients:;\r\n"
        b"Cc: A group: a@example.com, B <b@example.org>;, solo@example.net\r\n\r\nx"
    )
    env = fetch(ParsedMessage(raw))[b"ENVELOPE"]
    assert [(a.mailbox, a.host) for a in env.to] == [(b"undisclosed-recipients", None), (None, None)]
    assert [(a.name, a.mailbox, a.host) for a in env.cc] == [
        (None, b"A group", None),
        (None, b"a", b"example.com"),
        (b"B", b"b", b"example.org"),
        (None, None, None),
        (None, b"solo", b"example.net"),
    ]


def test_envelope_literals_for_8bit_and_long_values() -> None:
    long_subject = b"x" * 1500
    raw = (
        b"From: =?utf-8?b?w4lsaWU=?= <e@x.org>\r\nTo: \xc3\x89lie Raw <raw@x.org>\r\n"
        b"Subject: " + long_subject + b'\r\nMessage-ID: <a\\b"c@x>\r\n\r\nbody'
    )
    p = ParsedMessage(raw)
    assert b"{1500}\r\n" in p.envelope()
    env = fetch(p)[b"ENVELOPE"]
    assert env.subject == long_subject
    assert env.to[0].name == "Élie Raw".encode()
    assert env.from_[0].name == b"=?utf-8?b?w4lsaWU=?="
    assert env.message_id == b'<a\\b"c@x>'


def test_envelope_folded_subject_is_unfolded() -> None:
    raw = b"Subject: first part\r\n  second part\r\nFrom: a@b.c\r\n\r\nx"
    env = fetch(ParsedMessage(raw))[b"ENVELOPE"]
    assert env.subject == b"first part  second part"


def test_envelope_route_and_empty_angle() -> None:
    raw = b"From: Old <@relay.example,@r2.example:user@example.com>\r\nTo: <>\r\n\r\n"
    env = fetch(ParsedMessage(raw))[b"ENVELOPE"]
    assert env.from_[0].route == b"@relay.example,@r2.example"
    assert (env.from_[0].mailbox, env.from_[0].host) == (b"user", b"example.com")
    assert env.to[0].mailbox == b""


# --------------------------------------------------------------------------- BODYSTRUCTURE


def test_bodystructure_multipart_alternative_with_pdf() -> None:
    p = ParsedMessage(sample_message())
    bs = fetch(p)[b"BODYSTRUCTURE"]
    assert bs.is_multipart
    # Gmail's form: upper-case type words and parameter names, no body location (BEHAVIOURS.md)
    parts, subtype, params, disp, lang = bs
    assert subtype == b"MIXED"
    assert params[0] == b"BOUNDARY" and isinstance(params[1], bytes)
    assert (disp, lang) == (None, None)
    assert len(parts) == 2
    alt, pdf = parts
    assert alt.is_multipart
    (plain, html_part), alt_sub = alt[0], alt[1]
    assert alt_sub == b"ALTERNATIVE"
    assert plain[:6] == (b"TEXT", b"PLAIN", (b"CHARSET", b"utf-8"), None, None, b"7BIT")
    assert plain[6] == len(p.section("1.1") or b"")
    assert plain[7] == 2  # lines
    assert plain[8:] == (None, None, None)
    assert html_part[:2] == (b"TEXT", b"HTML")
    assert html_part[6] == len(p.section("1.2") or b"")
    assert pdf[:6] == (b"APPLICATION", b"PDF", None, None, None, b"BASE64")
    assert pdf[6] == len(p.section("2") or b"")
    md5, pdf_disp, pdf_lang = pdf[7:]
    assert md5 is None and pdf_lang is None
    assert pdf_disp == (b"ATTACHMENT", (b"FILENAME", b"r.pdf"))
    assert isinstance(pdf_disp, tuple)


def test_body_without_extension_data() -> None:
    p = ParsedMessage(sample_message())
    bs = fetch(p, extended=False)[b"BODYSTRUCTURE"]
    parts, subtype = bs[0], bs[1]
    assert len(bs) == 2 and subtype == b"MIXED"
    assert len(parts[1]) == 7  # type subtype params id desc enc size
    assert len(parts[0][0][0]) == 8  # text: + lines


def test_bodystructure_single_part_fields() -> None:
    raw = (
        b'From: a@b.c\r\nContent-Type: text/plain; charset="ISO-8859-2"; format=flowed\r\n'
        b"Content-ID: <cid@x>\r\nContent-Description: a note\r\nContent-Transfer-Encoding: 8bit\r\n"
        b"Content-Language: en, cs\r\nContent-Location: http://x/y\r\n\r\nline1\r\nline2"
    )
    bs = fetch(ParsedMessage(raw))[b"BODYSTRUCTURE"]
    assert tuple(bs) == (
        b"TEXT",
        b"PLAIN",
        (b"CHARSET", b"ISO-8859-2", b"FORMAT", b"flowed"),
        b"<cid@x>",
        b"a note",
        b"8BIT",
        12,
        1,  # Gmail counts line ends; the last line has none
        None,
        None,
        (b"en", b"cs"),
    )


def test_bodystructure_rfc2231_filename_and_inline_disposition() -> None:
    raw = (
        b"Content-Type: multipart/mixed; boundary=b1\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\nhi\r\n"
        b'--b1\r\nContent-Type: image/png; name="a.png"\r\nContent-Disposition: inline\r\n\r\nPNG\r\n'
        b"--b1\r\nContent-Type: application/octet-stream\r\n"
        b"Content-Disposition: attachment; filename*=utf-8''r%C3%A9sum%C3%A9.pdf\r\n\r\nX\r\n--b1--\r\n"
    )
    p = ParsedMessage(raw)
    bs = fetch(p)[b"BODYSTRUCTURE"]
    assert bs[0][0][2] is None  # text/plain without parameters
    assert bs[0][1][2] == (b"NAME", b"a.png")
    assert bs[0][1][8] == (b"INLINE", None)
    assert bs[0][2][8] == (b"ATTACHMENT", (b"FILENAME", "résumé.pdf".encode()))
    assert p.attachment_filenames() == ["a.png", "résumé.pdf"]
    assert p.has_attachment()


def test_nested_message_rfc822() -> None:
    inner = MIMEMultipart()
    inner["From"] = "Inner <inner@example.com>"
    inner["Subject"] = "inner subject"
    inner["Message-ID"] = "<inner@example.com>"
    inner.attach(MIMEText("inner body\n", "plain", "utf-8"))
    inner.attach(MIMEText("<i>x</i>", "html", "utf-8"))
    outer = MIMEMultipart()
    outer["From"] = "outer@example.com"
    outer["Subject"] = "fwd"
    outer.attach(MIMEText("see attached\n", "plain", "us-ascii"))
    outer.attach(MIMEMessage(inner))
    p = ParsedMessage(outer.as_bytes())

    header = p.section("2.HEADER")
    assert header is not None
    assert b"Subject: inner subject\r\n" in header and header.endswith(b"\r\n\r\n")
    assert b"Subject: fwd" not in header
    mime_hdr = p.section("2.MIME")
    assert mime_hdr is not None and mime_hdr.startswith(b"Content-Type: message/rfc822")
    whole = p.section("2")
    text = p.section("2.TEXT")
    assert whole is not None and text is not None and whole == header + text
    assert base64.b64decode(p.section("2.1") or b"") == b"inner body\n"  # transfer encoding kept
    assert p.section("2.2.MIME") is not None
    assert p.section("2.3") is None
    assert p.section("1.HEADER") is None  # not a message/rfc822 part
    assert p.section("2.HEADER.FIELDS (SUBJECT)") == b"Subject: inner subject\r\n\r\n"

    bs = fetch(p)[b"BODYSTRUCTURE"]
    msg_part = bs[0][1]
    assert msg_part[:2] == (b"MESSAGE", b"RFC822")
    assert msg_part[6] == len(whole)
    inner_env = msg_part[7]
    assert inner_env[1] == b"inner subject"
    assert inner_env[2][0] == (b"Inner", None, b"inner", b"example.com")
    inner_bs = msg_part[8]
    assert isinstance(inner_bs[0], tuple) and inner_bs[0][:2] == (b"TEXT", b"PLAIN")
    assert msg_part[9] == whole.count(b"\n") + (0 if whole.endswith(b"\n") else 1)
    assert "inner body" in p.text_content()


def test_digest_defaults_to_message_rfc822() -> None:
    raw = b"Content-Type: multipart/digest; boundary=d\r\n\r\n--d\r\n\r\nSubject: one\r\n\r\nbody one\r\n--d--\r\n"
    p = ParsedMessage(raw)
    bs = fetch(p)[b"BODYSTRUCTURE"]
    assert bs[0][0][:2] == (b"MESSAGE", b"RFC822")
    assert p.section("1.HEADER") == b"Subject: one\r\n\r\n"


# --------------------------------------------------------------------------- sections


def test_sections_of_sample() -> None:
    raw = sample_message()
    p = ParsedMessage(raw)
    assert p.raw == normalize_crlf(raw)
    assert p.size == len(p.raw)
    assert p.section("") == p.raw
    header = p.section("HEADER")
    text = p.section("TEXT")
    assert header is not None and text is not None
    assert header.endswith(b"\r\n\r\n") and header + text == p.raw
    assert p.section("1.1") == b"hello\r\nworld\r\n"
    assert (
        p.section("1.1.MIME") == b'Content-Type: text/plain; charset="utf-8"\r\nContent-Transfer-Encoding: 7bit\r\n\r\n'
    )
    body1 = p.section("1")
    assert body1 is not None and body1.startswith(b"--") and body1.rstrip().endswith(b"--")
    pdf = p.section("2")
    assert pdf is not None and base64.b64decode(pdf) == b"%PDF-1.4 fake pdf\n" * 10
    for missing in ("3", "1.3", "1.1.1", "0", "2.HEADER", "HEADER.FIELDS", "BOGUS", "MIME", "1.MIME.X"):
        assert p.section(missing) is None, missing


def test_header_fields_and_not() -> None:
    raw = (
        b"Subject: folded\r\n subject line\r\nFrom: a@b.c\r\nX-Thing: 1\r\nsubject: second\r\nTo: t@b.c\r\n\r\nbody\r\n"
    )
    p = ParsedMessage(raw)
    assert p.section("HEADER.FIELDS (SUBJECT TO)") == (
        b"Subject: folded\r\n subject line\r\nsubject: second\r\nTo: t@b.c\r\n\r\n"
    )
    assert p.section('header.fields ("x-thing")') == b"X-Thing: 1\r\n\r\n"
    assert p.section("HEADER.FIELDS (NOPE)") == b"\r\n"
    assert p.section("HEADER.FIELDS.NOT (SUBJECT TO)") == b"From: a@b.c\r\nX-Thing: 1\r\n\r\n"


def test_single_part_message_part_one_is_body() -> None:
    p = ParsedMessage(b"Subject: s\nContent-Type: text/plain\n\nline one\nline two\n")
    assert p.raw == b"Subject: s\r\nContent-Type: text/plain\r\n\r\nline one\r\nline two\r\n"
    assert p.size == len(p.raw)
    assert p.section("1") == b"line one\r\nline two\r\n"
    assert p.section("TEXT") == p.section("1")
    assert p.section("1.MIME") == p.section("HEADER")
    assert p.section("2") is None
    bs = fetch(p)[b"BODYSTRUCTURE"]
    assert bs[6] == len(b"line one\r\nline two\r\n") and bs[7] == 2


def test_one_megabyte_attachment() -> None:
    payload = bytes(range(256)) * 4096  # 1 MiB
    m = EmailMessage()
    m["From"] = "a@b.c"
    m["Subject"] = "big"
    m.set_content("see attachment")
    m.add_attachment(payload, maintype="application", subtype="octet-stream", filename="big.bin")
    p = ParsedMessage(m.as_bytes())
    part = p.section("2")
    assert part is not None and base64.b64decode(part) == payload
    bs = fetch(p)[b"BODYSTRUCTURE"]
    assert bs[0][1][6] == len(part)
    assert p.attachment_filenames() == ["big.bin"]


# --------------------------------------------------------------------------- malformed input


def test_missing_closing_boundary() -> None:
    raw = (
        b"From: a@b.c\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\npreamble\r\n--zz\r\n"
        b"Content-Type: text/plain\r\n\r\nfirst\r\n--zz\r\nContent-Type: text/html\r\n\r\n<b>second</b>\r\n"
    )
    p = ParsedMessage(raw)
    bs = fetch(p)[b"BODYSTRUCTURE"]
    assert [x[:2] for x in bs[0]] == [(b"TEXT", b"PLAIN"), (b"TEXT", b"HTML")]
    assert p.section("1") == b"first"
    assert p.section("2") == b"<b>second</b>\r\n"
    assert "first" in p.text_content() and "second" in p.text_content()


def test_no_content_type_and_no_body() -> None:
    p = ParsedMessage(b"From: a@b.c\r\nSubject: plain")
    data = fetch(p)
    assert data[b"ENVELOPE"].subject == b"plain"
    assert tuple(data[b"BODYSTRUCTURE"])[:7] == (b"TEXT", b"PLAIN", None, None, None, b"7BIT", 0)
    assert p.section("TEXT") == b""
    assert p.section("HEADER") == b"From: a@b.c\r\nSubject: plain"


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\r\n",
        b"\r\n\r\njust a body",
        b"no header at all",
        b"\x00\xff\xfe garbage: \x80\r\n\r\n\xff",
        b"Content-Type: multipart/mixed\r\n\r\n--x\r\nno boundary param\r\n",
        b"Content-Type: multipart/mixed; boundary=q\r\n\r\nno delimiter lines at all\r\n",
        b'Content-Type: multipart/alternative; boundary=""\r\n\r\n--\r\n\r\n',
        b"Content-Type: text/plain; charset=x-no-such-charset\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!@@",
        b'Content-Type: text/plain; charset="utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=ZZ=\r\n',
        b"Content-Type: /\r\nContent-Disposition: ;;;\r\n\r\nx",
        b"Content-Type: message/rfc822\r\n\r\n",
        b"Content-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\r\nU3ViamVjdDogeA==",
        b'From: ,,, <<>> "unterminated\r\nTo: group: a@b; ; : ;\r\nCc: (comment (nested) a@b\r\n\r\n',
        b"Subject: " + b"y" * 200_000 + b"\r\n\r\nhuge header",
        b"X:" + b"\r\n x" * 5000 + b"\r\n\r\n",
        b"Content-Type: multipart/mixed; boundary=a\r\n\r\n--a\r\n"
        b"Content-Type: multipart/mixed; boundary=a\r\n\r\n--a--\r\n",
    ],
)
def test_malformed_inputs_do_not_crash(raw: bytes) -> None:
    p = ParsedMessage(raw)
    fetch(p)
    fetch(p, extended=False)
    p.section("")
    p.section("1")
    p.section("1.1")
    p.section("HEADER.FIELDS (SUBJECT)")
    assert isinstance(p.subject, str)
    p.text_content()
    p.attachment_filenames()
    p.has_attachment()
    p.date  # noqa: B018
    for f in ("from", "to", "cc", "bcc"):
        p.addresses(f)


def test_deep_nesting_is_bounded() -> None:
    raw = b"Subject: leaf\r\n\r\nleaf body\r\n"
    for i in range(60):
        raw = b"Content-Type: message/rfc822\r\nSubject: level %d\r\n\r\n" % i + raw
    p = ParsedMessage(raw)
    fetch(p)
    p.text_content()
    raw2 = b"leaf\r\n"
    for i in range(60):
        b = b"b%d" % i
        raw2 = (
            b"Content-Type: multipart/mixed; boundary="
            + b
            + b"\r\n\r\n--"
            + b
            + b"\r\n"
            + raw2
            + b"\r\n--"
            + b
            + b"--\r\n"
        )
    fetch(ParsedMessage(raw2))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from(
            [
                b"Content-Type: multipart/mixed; boundary=b\r\n",
                b"Content-Type: message/rfc822\r\n",
                b"Content-Type: text/html; charset=windows-1250\r\n",
                b'Content-Disposition: attachment; filename="f\\".txt"\r\n',
                b'Subject: =?utf-8?b?AAAA?= \xc3\xa9 "q" \\\r\n',
                b"From: A <a@b>, g: c@d;\r\n",
                b"--b\r\n",
                b"--b--\r\n",
                b"\r\n",
                b"body text {3}\r\n",
                b" folded\r\n",
                b"\n",
                b"\x00\x80",
            ]
        ),
        max_size=25,
    )
)
def test_fuzz_structure_always_parses(chunks: list[bytes]) -> None:
    p = ParsedMessage(b"".join(chunks))
    fetch(p)
    p.text_content()
    p.section("1.HEADER")


# --------------------------------------------------------------------------- search helpers


def test_search_helpers() -> None:
    p = ParsedMessage(sample_message())
    assert p.subject == "Héllo wörld"
    assert p.message_id == "<abc{5}def@mail.example.com>"
    assert p.in_reply_to == "<parent@example.com>"
    assert p.references == ["<root@example.com>", "<parent@example.com>"]
    assert p.date == datetime(2026, 2, 2, 9, 11, 12, tzinfo=UTC)
    assert p.addresses("from") == [('Doe, Jane "JD"', "jane@example.com")]
    assert p.addresses("to") == [("Bob", "bob@example.org"), ("", "carol@example.net")]
    assert p.addresses("cc") == [("Jörg", "jorg@example.de")]
    assert p.addresses("bcc") == []
    assert p.header("subject") == ["Héllo wörld"]
    assert p.header("X-Nope") == []
    text = p.text_content()
    assert "hello\r\nworld" in text
    assert "<b>" not in text and "world" in text
    assert "PDF" not in text
    assert p.attachment_filenames() == ["r.pdf"]
    assert p.has_attachment()


def test_message_id_whitespace_and_missing() -> None:
    p = ParsedMessage(b"Message-ID:\r\n  <a b@c>  \r\nDate: not a date\r\n\r\n")
    assert p.message_id == "<ab@c>"
    assert p.date is None
    q = ParsedMessage(b"Subject: x\r\nDate: Tue, 3 Feb 2026 08:00:00 -0000\r\n\r\n")
    assert q.message_id is None and q.in_reply_to is None and q.references == []
    assert q.date == datetime(2026, 2, 3, 8, tzinfo=UTC)
    assert not q.has_attachment()


def test_central_european_charsets() -> None:
    text_1250 = "Příliš žluťoučký kůň úpěl ďábelské ódy – šťastná"
    text_8859_2 = "Zażółć gęślą jaźń"
    outer = MIMEMultipart()
    outer["Subject"] = "=?iso-8859-2?q?Za=BF=F3=B3=E6?="
    outer.attach(MIMEText(text_1250, "plain", "windows-1250"))
    part2 = MIMEBase("text", "html", charset="iso-8859-2")
    part2.set_payload(("<p>" + text_8859_2 + "</p>").encode("iso-8859-2"))
    part2["Content-Transfer-Encoding"] = "8bit"
    outer.attach(part2)
    p = ParsedMessage(outer.as_bytes())
    content = p.text_content()
    assert text_1250 in content
    assert text_8859_2 in content
    assert p.subject == "Zażółć"


def test_attachment_text_excluded_from_content_and_encoded_filename() -> None:
    m = EmailMessage()
    m.set_content("visible words")
    m.add_attachment("hidden attachment words", filename="Zpráva ÚČET.txt")
    p = ParsedMessage(m.as_bytes())
    assert "visible" in p.text_content() and "hidden" not in p.text_content()
    assert p.attachment_filenames() == ["Zpráva ÚČET.txt"]


def test_decode_words_and_nstring() -> None:
    assert decode_words("=?utf-8?q?a?= =?utf-8?q?b?=") == "ab"
    assert decode_words("x =?UTF-8?B?w6k=?= y") == "x é y"
    assert decode_words("=?bogus-cs?q?abc?=") == "abc"
    assert decode_words("no words =?here") == "no words =?here"
    # a multi-byte character split across two encoded-words
    assert decode_words("=?utf-8?b?w6k=?= =?utf-8?b?w6k=?=") == "éé"
    assert imap_nstring(None) == b"NIL"
    assert imap_nstring(b'a"b\\') == b'"a\\"b\\\\"'
    assert imap_nstring(b"a\r\nb") == b"{4}\r\na\r\nb"
