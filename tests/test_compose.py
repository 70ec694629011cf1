"""Outgoing message composition: headers, alternatives, signature, quote, attachments, Bcc, ids."""

from __future__ import annotations

import base64
import dataclasses
import email
import email.policy
import re
import time
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from email.message import EmailMessage
from typing import Any

import pytest

from mcp_multi_gmail.config.resolved import Signature
from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.gmail.compose import (
    Composed,
    Draft,
    Quote,
    attribution,
    compose,
    content_message_id,
    html_from_text,
    quote_html,
    quote_text,
)
from mcp_multi_gmail.policy import check_recipients
from mcp_multi_gmail.request import Prepared, Request

SENT_AT = datetime(2026, 9, 29, 10, 0, tzinfo=timezone(timedelta(hours=2)))
# 12:05 UTC is 14:05 in Prague (summer time).
ORIGINAL_AT = datetime(2026, 9, 28, 12, 5, tzinfo=UTC)
BLOCKQUOTE = (
    '<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;'
    'border-left:1px solid rgb(204,204,204);padding-left:1ex">'
)
GMAIL_ID = "CAF" + "q7Zx" * 16 + "=+Yw@mail.gmail.com"  # longer than a header line


def make_draft(**changes: Any) -> Draft:
    """A draft from flat field values; each goes where it lives (request, prepared, draft)."""
    fields: dict[str, Any] = {
        "from_address": "ja@example.cz",
        "from_name": None,
        "to": ["petr@example.com"],
        "cc": [],
        "bcc": [],
        "subject": "Schůzka",
        "body": "Ahoj,\nuvidíme se zítra.",
        "html_body": None,
        "in_reply_to": None,
        "references": [],
        "signature": None,
        "quote": None,
        "attachments": [],
    }
    unknown = set(changes) - set(fields)
    assert not unknown, unknown
    fields.update(changes)
    request = Request(
        to=fields["to"],
        cc=fields["cc"],
        bcc=fields["bcc"],
        subject=fields["subject"],
        body=fields["body"],
        html_body=fields["html_body"],
        in_reply_to=fields["in_reply_to"],
        references=fields["references"],
        quote_original=fields["quote"] is not None,
        signature=None,
        from_alias=None,
        attachments=[],
    )
    prepared = Prepared(
        request,
        (fields["from_address"], fields["from_name"]),
        fields["signature"],
        fields["attachments"],
        fields["in_reply_to"],
    )
    return Draft(prepared, fields["subject"], fields["quote"])


def make_quote(**changes: Any) -> Quote:
    base = Quote(
        author_name="Jan Novák",
        author_address="jan@example.com",
        date=ORIGINAL_AT,
        text="Dobrý den,\n\nposílám návrh.",
        html=None,
    )
    return dataclasses.replace(base, **changes)


def build(draft: Draft | None = None, *, locale: str = "cs", message_id: str = "abc123.mg@example.cz") -> Composed:
    return compose(
        draft or make_draft(),
        message_id=message_id,
        date=SENT_AT,
        quote_locale="cs" if locale == "cs" else "en",
    )


def parse(data: bytes) -> EmailMessage:
    msg = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    return msg


def header_block(data: bytes) -> bytes:
    return data.partition(b"\r\n\r\n")[0]


def bodies(data: bytes) -> tuple[str, str]:
    msg = parse(data)
    plain = msg.get_body(("plain",))
    markup = msg.get_body(("html",))
    assert isinstance(plain, EmailMessage) and isinstance(markup, EmailMessage)
    # Text travels in canonical form (CRLF); compare it with LF line ends.
    return plain.get_content().replace("\r\n", "\n"), markup.get_content().replace("\r\n", "\n")


def refused(call: Callable[[], object], *fragments: str) -> MailError:
    with pytest.raises(MailError) as info:
        call()
    assert info.value.code == "invalid_input", info.value.message
    for fragment in fragments:
        assert fragment in info.value.message
    return info.value


@pytest.fixture
def prague(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "Europe/Prague")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


# --- headers ---------------------------------------------------------------------------------


def test_basic_headers() -> None:
    composed = build(make_draft(cc=["eva@example.com"]))
    msg = parse(composed.data)
    assert composed.message_id == "abc123.mg@example.cz"
    assert msg["From"] == "ja@example.cz"
    assert [a.addr_spec for a in msg["To"].addresses] == ["petr@example.com"]
    assert [a.addr_spec for a in msg["Cc"].addresses] == ["eva@example.com"]
    assert msg["Bcc"] is None
    assert msg["Subject"] == "Schůzka"
    assert msg["Date"].datetime == SENT_AT
    assert msg["Message-ID"] == "<abc123.mg@example.cz>"
    assert msg["MIME-Version"] == "1.0"
    assert msg["In-Reply-To"] is None and msg["References"] is None
    assert b"\r\nFrom: ja@example.cz\r\n" in b"\r\n" + header_block(composed.data) + b"\r\n"


def test_from_with_display_name_is_rfc2047_encoded() -> None:
    composed = build(make_draft(from_name="Jana Nováková, ředitelka"))
    raw = header_block(composed.data)
    assert raw.isascii()
    from_line = next(line for line in raw.split(b"\r\n") if line.startswith(b"From:"))
    assert b"=?utf-8?" in from_line
    address = parse(composed.data)["From"].addresses[0]
    assert address.display_name == "Jana Nováková, ředitelka"
    assert address.addr_spec == "ja@example.cz"


def test_ascii_display_name_round_trips() -> None:
    address = parse(build(make_draft(from_name="Office Team")).data)["From"].addresses[0]
    assert (address.display_name, address.addr_spec) == ("Office Team", "ja@example.cz")


def test_non_ascii_subject_is_rfc2047_and_round_trips() -> None:
    subject = "Příliš žluťoučký kůň úpěl ďábelské ódy – a to dost dlouho, aby se hlavička zalomila"
    composed = build(make_draft(subject=subject))
    raw = header_block(composed.data)
    assert raw.isascii()
    assert b"Subject: =?utf-8?" in raw
    assert all(len(line) <= 78 for line in raw.split(b"\r\n") if not line.startswith(b"Content-Type"))
    assert parse(composed.data)["Subject"] == subject


def test_bracketed_message_id_is_returned_bare() -> None:
    composed = build(message_id="<xyz@example.cz>")
    assert composed.message_id == "xyz@example.cz"
    assert parse(composed.data)["Message-ID"] == "<xyz@example.cz>"


@pytest.mark.parametrize("given", ["orig@example.com", "<orig@example.com>", "  <orig@example.com> "])
def test_reply_headers_default_references(given: str) -> None:
    msg = parse(build(make_draft(in_reply_to=given)).data)
    assert msg["In-Reply-To"] == "<orig@example.com>"
    assert msg["References"] == "<orig@example.com>"


def test_given_references_are_normalised() -> None:
    draft = make_draft(in_reply_to="c@x.cz", references=["a@x.cz", "<b@x.cz>", "<a@x.cz>  <c@x.cz>"])
    msg = parse(build(draft).data)
    assert msg["In-Reply-To"] == "<c@x.cz>"
    assert msg["References"] == "<a@x.cz> <b@x.cz> <c@x.cz>"


def test_long_gmail_ids_are_never_encoded() -> None:
    refs = [f"{i}{GMAIL_ID}" for i in range(4)]
    composed = build(make_draft(subject="Re: plain", in_reply_to=refs[-1], references=refs), message_id=GMAIL_ID)
    raw = header_block(composed.data)
    assert b"=?" not in raw
    assert all(len(line) <= 998 for line in raw.split(b"\r\n"))
    msg = parse(composed.data)
    assert msg["Message-ID"] == f"<{GMAIL_ID}>"
    assert msg["In-Reply-To"] == f"<{refs[-1]}>"
    assert msg["References"].split() == [f"<{r}>" for r in refs]
    # Folded between ids, so each continuation line starts with white space then an id.
    refs_block = raw.split(b"References:")[1].split(b"\r\nMIME-Version")[0]
    assert refs_block.count(b"\r\n ") == 3


def test_idn_domain_is_sent_in_its_ascii_form() -> None:
    composed = build(make_draft(to=["info@škola.cz"]))
    assert composed.envelope_recipients == ["info@xn--kola-f6a.cz"]
    assert [a.addr_spec for a in parse(composed.data)["To"].addresses] == ["info@xn--kola-f6a.cz"]


def test_output_uses_crlf_only() -> None:
    draft = make_draft(
        body="řádek jedna\r\nřádek dva\rřádek tři\n" + "dlouhý " * 60,
        signature=Signature("s", "Jan\r\nředitel", None),
        quote=make_quote(text="a\r\nb"),
        attachments=[("a.txt", b"x\r\ny\nz", "text/plain")],
    )
    data = build(draft).data
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert b"\r" not in data.replace(b"\r\n", b"")
    assert all(len(line) <= 998 for line in data.split(b"\r\n"))
    plain, markup = bodies(data)
    assert plain.startswith("řádek jedna\nřádek dva\nřádek tři\n" + "dlouhý " * 60)
    assert "\r" not in plain and "\r" not in markup


def test_only_the_top_level_carries_mime_version() -> None:
    draft = make_draft(attachments=[("a.bin", b"\x00", "application/octet-stream")])
    msg = parse(build(draft).data)
    assert [part["MIME-Version"] for part in msg.walk()][1:] == [None] * 4


# --- bodies ----------------------------------------------------------------------------------


def test_alternative_parts_and_their_content() -> None:
    msg = parse(build().data)
    assert msg.get_content_type() == "multipart/alternative"
    parts = list(msg.iter_parts())
    assert [p.get_content_type() for p in parts] == ["text/plain", "text/html"]
    assert all(p.get_content_charset() == "utf-8" for p in parts)
    assert all(p["Content-Transfer-Encoding"] in ("7bit", "quoted-printable", "base64") for p in parts)
    plain, markup = bodies(build().data)
    assert plain.rstrip("\n") == "Ahoj,\nuvidíme se zítra."
    assert markup.rstrip("\n") == '<div dir="ltr"><div>Ahoj,</div><div>uvidíme se zítra.</div></div>'


def test_html_from_text_shape() -> None:
    text = "Dobrý den,\n\n<b>Tom & Jerry</b> > vše\r\nkonec"
    assert html_from_text(text) == (
        '<div dir="ltr"><div>Dobrý den,</div><div><br></div>'
        "<div>&lt;b&gt;Tom &amp; Jerry&lt;/b&gt; &gt; vše</div><div>konec</div></div>"
    )


def test_html_body_is_used_when_given() -> None:
    draft = make_draft(html_body='<div dir="ltr"><div><b>Ahoj</b></div></div>')
    plain, markup = bodies(build(draft).data)
    assert markup.rstrip("\n") == '<div dir="ltr"><div><b>Ahoj</b></div></div>'
    assert plain.rstrip("\n") == "Ahoj,\nuvidíme se zítra."


@pytest.mark.usefixtures("prague")
def test_signature_goes_above_the_quote_in_both_parts() -> None:
    signature = Signature("plny", "Jan Novák\nředitel", '<div dir="ltr"><b>Jan Novák</b><br>ředitel</div>')
    composed = build(make_draft(signature=signature, quote=make_quote()))
    assert composed.quoted
    plain, markup = bodies(composed.data)
    assert plain.rstrip("\n") == (
        "Ahoj,\nuvidíme se zítra.\n\nJan Novák\nředitel\n\n"
        "Dne po 28. 9. 2026 v 14:05 odesílatel Jan Novák <jan@example.com> napsal:\n"
        "> Dobrý den,\n>\n> posílám návrh."
    )
    body_html = html_from_text("Ahoj,\nuvidíme se zítra.")
    assert markup.startswith(body_html + '<div><br></div><div dir="ltr"><b>Jan Novák</b><br>ředitel</div>')
    assert markup.index("<b>Jan Novák</b>") < markup.index('<div class="gmail_quote">')
    assert markup.rstrip("\n").endswith("</blockquote></div>")


def test_text_only_signature_is_rendered_into_html() -> None:
    signature = Signature("kratky", "Jan <J.N.> & spol.\nředitel", None)
    plain, markup = bodies(build(make_draft(signature=signature)).data)
    assert plain.rstrip("\n") == "Ahoj,\nuvidíme se zítra.\n\nJan <J.N.> & spol.\nředitel"
    assert markup.rstrip("\n").endswith(
        '</div><div><br></div><div dir="ltr">Jan &lt;J.N.&gt; &amp; spol.<br>ředitel</div>'
    )


def test_signature_goes_inside_a_whole_html_document() -> None:
    draft = make_draft(html_body="<html><body><p>Ahoj</p></body></html>", signature=Signature("s", "Jan", None))
    _, markup = bodies(build(draft).data)
    assert markup.rstrip("\n") == '<html><body><p>Ahoj</p><div><br></div><div dir="ltr">Jan</div></body></html>'


def test_lone_surrogate_in_body_is_refused() -> None:
    refused(lambda: build(make_draft(body="bad \ud800 char")), "body")


# --- attribution and quote -------------------------------------------------------------------


@pytest.mark.usefixtures("prague")
def test_attribution_lines() -> None:
    quote = make_quote()
    assert attribution(quote, "cs") == "Dne po 28. 9. 2026 v 14:05 odesílatel Jan Novák <jan@example.com> napsal:"
    assert attribution(quote, "en") == "On Mon, 28 Sep 2026 at 14:05 Jan Novák <jan@example.com> wrote:"
    undated = make_quote(date=None)
    assert attribution(undated, "cs") == "Odesílatel Jan Novák <jan@example.com> napsal:"
    assert attribution(undated, "en") == "Jan Novák <jan@example.com> wrote:"


@pytest.mark.usefixtures("prague")
def test_attribution_single_digit_parts_and_address_only() -> None:
    # 07:05 UTC on Sunday 1 March 2026 is 08:05 in Prague (winter time).
    quote = make_quote(author_name="  ", date=datetime(2026, 3, 1, 7, 5, tzinfo=UTC))
    assert attribution(quote, "cs") == "Dne ne 1. 3. 2026 v 8:05 odesílatel jan@example.com napsal:"
    assert attribution(quote, "en") == "On Sun, 1 Mar 2026 at 08:05 jan@example.com wrote:"


@pytest.mark.usefixtures("prague")
def test_czech_weekday_names() -> None:
    names = [
        attribution(make_quote(date=datetime(2026, 9, 28 + i, 10, 0, tzinfo=UTC)), "cs").split()[1] for i in range(3)
    ] + [attribution(make_quote(date=datetime(2026, 10, 1 + i, 10, 0, tzinfo=UTC)), "cs").split()[1] for i in range(4)]
    assert names == ["po", "út", "st", "čt", "pá", "so", "ne"]


@pytest.mark.usefixtures("prague")
def test_quote_text_prefixes_every_line() -> None:
    quote = make_quote(text="první\r\n\r\n> starší\r\nposlední\r\n")
    assert quote_text(quote, "cs") == (
        "Dne po 28. 9. 2026 v 14:05 odesílatel Jan Novák <jan@example.com> napsal:\n> první\n>\n> > starší\n> poslední"
    )


@pytest.mark.usefixtures("prague")
def test_quote_html_markup_with_mailto_link() -> None:
    quote = make_quote(author_name="Tom & Jerry", text="a < b\nc")
    assert quote_html(quote, "en") == (
        '<div class="gmail_quote"><div dir="ltr" class="gmail_attr">'
        'On Mon, 28 Sep 2026 at 14:05 Tom &amp; Jerry &lt;<a href="mailto:jan@example.com">'
        "jan@example.com</a>&gt; wrote:<br></div>" + BLOCKQUOTE + "a &lt; b<br>c</blockquote></div>"
    )


@pytest.mark.usefixtures("prague")
def test_quote_html_address_only_is_linked() -> None:
    html = quote_html(make_quote(author_name=None, date=None), "cs")
    assert html is not None
    assert 'class="gmail_attr">Odesílatel <a href="mailto:jan@example.com">jan@example.com</a> napsal:<br>' in html


def test_quote_html_takes_the_original_body_content() -> None:
    original = (
        "<html><head><style>p{color:red}</style></head>"
        '<BODY class="x"><p>Hi</p><div>inner </body> text</div></Body ></html>'
    )
    html = quote_html(make_quote(text=None, html=original), "en")
    assert html is not None
    assert BLOCKQUOTE + "<p>Hi</p><div>inner </body> text</div></blockquote>" in html
    fragment = quote_html(make_quote(text=None, html="<p>Only a fragment</p>"), "en")
    assert fragment is not None and BLOCKQUOTE + "<p>Only a fragment</p></blockquote>" in fragment


def test_html_only_original_is_converted_for_the_plain_quote() -> None:
    quote = make_quote(text="", html="<body><div>Ahoj</div><div>světe &amp; ty</div></body>")
    text = quote_text(quote, "cs")
    assert text is not None
    assert text.endswith("\n> Ahoj\n> světe & ty")


@pytest.mark.usefixtures("prague")
def test_windows_1250_czech_quote_survives_as_utf8() -> None:
    original = "Příliš žluťoučký kůň úpěl ďábelské ódy.\nŠťastné Ůterý!"
    decoded = original.encode("cp1250").decode("cp1250")
    composed = build(make_draft(quote=make_quote(author_name="Řehoř Čížek", text=decoded)))
    assert composed.quoted
    plain, markup = bodies(composed.data)
    assert "> Příliš žluťoučký kůň úpěl ďábelské ódy.\n> Šťastné Ůterý!" in plain
    assert "odesílatel Řehoř Čížek <jan@example.com> napsal:" in plain
    assert "Příliš žluťoučký kůň úpěl ďábelské ódy.<br>Šťastné Ůterý!</blockquote>" in markup
    assert all(p.get_content_charset() == "utf-8" for p in parse(composed.data).iter_parts())


@pytest.mark.parametrize(
    ("text", "html"), [(None, None), ("", ""), ("  \r\n ", "\n\t"), (None, "   ")], ids=["none", "empty", "blank", "ws"]
)
def test_no_readable_body_means_no_quote(text: str | None, html: str | None) -> None:
    quote = make_quote(text=text, html=html)
    assert quote_text(quote, "cs") is None
    assert quote_html(quote, "cs") is None
    composed = build(make_draft(quote=quote))
    assert composed.quoted is False
    plain, markup = bodies(composed.data)
    assert "napsal" not in plain and "gmail_quote" not in markup


def test_quote_uses_the_requested_locale() -> None:
    plain, _ = bodies(build(make_draft(quote=make_quote(date=None)), locale="en").data)
    assert "Jan Novák <jan@example.com> wrote:\n> Dobrý den," in plain


# --- attachments -----------------------------------------------------------------------------


def test_attachments_are_mixed_base64_and_exact() -> None:
    pdf = bytes(range(256)) * 40
    files = [
        ("smlouva č. 1 – návrh.pdf", pdf, "application/pdf"),
        ("data.csv", b"a;b\r\n1;2\n", "text/csv"),
        ("neznamy.bin", b"\x00\xff", ""),
        ("divny", b"x", "not a type"),
    ]
    composed = build(make_draft(attachments=files))
    msg = parse(composed.data)
    assert msg.get_content_type() == "multipart/mixed"
    parts = list(msg.iter_parts())
    assert parts[0].get_content_type() == "multipart/alternative"
    attached = list(msg.iter_attachments())
    assert [a.get_filename() for a in attached] == [name for name, _, _ in files]
    assert [a.get_content_type() for a in attached] == [
        "application/pdf",
        "text/csv",
        "application/octet-stream",
        "application/octet-stream",
    ]
    for part, (_, content, _) in zip(attached, files, strict=True):
        assert part["Content-Transfer-Encoding"] == "base64"
        assert part.get_content_disposition() == "attachment"
        assert part.get_payload(decode=True) == content
    assert b"filename*=utf-8''smlouva%20%C4%8D" in composed.data  # RFC 2231 for the non-ASCII name
    payload = attached[0].get_payload()
    assert isinstance(payload, str)
    assert base64.b64decode(payload) == pdf


def test_container_types_are_attached_as_plain_bytes() -> None:
    composed = build(make_draft(attachments=[("puvodni.eml", b"From: x\r\n\r\nhi", "message/rfc822")]))
    (part,) = parse(composed.data).iter_attachments()
    assert part.get_content_type() == "application/octet-stream"
    assert part.get_payload(decode=True) == b"From: x\r\n\r\nhi"


def test_empty_attachment_filename_is_refused() -> None:
    refused(lambda: build(make_draft(attachments=[("  ", b"x", "text/plain")])), "filename")


# --- Bcc and envelope ------------------------------------------------------------------------


def test_bcc_kept_in_data_and_removed_from_smtp_data() -> None:
    bcc = [f"skryty{i}.prijemce.s.dlouhou.adresou@example.com" for i in range(4)]
    composed = build(make_draft(bcc=bcc, cc=["eva@example.com"]))
    data_msg, smtp_msg = parse(composed.data), parse(composed.smtp_data)
    assert [a.addr_spec for a in data_msg["Bcc"].addresses] == bcc
    assert smtp_msg["Bcc"] is None
    assert b"skryty" not in composed.smtp_data
    # The only difference is the Bcc header (folded over several lines here).
    head = header_block(composed.data).split(b"\r\n")
    start = next(i for i, line in enumerate(head) if line.startswith(b"Bcc:"))
    end = start + 1
    while head[end].startswith((b" ", b"\t")):
        end += 1
    assert end - start > 1
    bcc_lines = b"\r\n".join(head[start:end]) + b"\r\n"
    assert composed.data.replace(bcc_lines, b"", 1) == composed.smtp_data
    assert composed.envelope_recipients == ["petr@example.com", "eva@example.com", *bcc]


def test_without_bcc_both_copies_are_identical() -> None:
    composed = build()
    assert composed.data == composed.smtp_data
    assert b"Bcc:" not in composed.data


def test_envelope_recipients_are_deduplicated_case_insensitively() -> None:
    draft = make_draft(
        to=[" Petr@Example.com", "eva@example.com"], cc=["petr@example.com", "ota@example.com"], bcc=["EVA@example.com"]
    )
    composed = build(draft)
    assert composed.envelope_recipients == ["Petr@Example.com", "eva@example.com", "ota@example.com"]


# --- header injection and malformed values ---------------------------------------------------

INJECTIONS = ["x\r\nBcc: evil@example.org", "x\nX-Injected: 1", "x\rY", "x\x00y", "x\u2028y"]


@pytest.mark.parametrize("bad", INJECTIONS)
@pytest.mark.parametrize(
    ("field", "build_call"),
    [
        ("Subject", lambda bad: build(make_draft(subject=bad))),
        ("From display name", lambda bad: build(make_draft(from_name=bad))),
        ("From address", lambda bad: build(make_draft(from_address="ja@example.cz" + bad))),
        ("To address", lambda bad: build(make_draft(to=["petr@example.com" + bad]))),
        ("Cc address", lambda bad: build(make_draft(cc=[bad + "@example.com"]))),
        ("Bcc address", lambda bad: build(make_draft(bcc=["a@example.com" + bad]))),
        ("attachment filename", lambda bad: build(make_draft(attachments=[(bad + ".pdf", b"x", "a/b")]))),
        ("attachment MIME type", lambda bad: build(make_draft(attachments=[("a.pdf", b"x", "text/" + bad)]))),
        ("In-Reply-To", lambda bad: build(make_draft(in_reply_to="<a@b.cz>" + bad))),
        ("References", lambda bad: build(make_draft(in_reply_to="a@b.cz", references=["a@b.cz", bad]))),
        ("Message-ID", lambda bad: build(message_id="id@example.cz" + bad)),
    ],
)
def test_line_breaks_and_controls_in_header_values_are_refused(
    field: str, build_call: Callable[[str], Composed], bad: str
) -> None:
    refused(lambda: build_call(bad), field, "line break or control character")


@pytest.mark.parametrize(
    "address",
    [
        "Petr <petr@example.com>",
        "a@example.com, b@example.com",
        "a@example.com;b@example.com",
        "pe tr@example.com",
        "petr",
        "a@b@example.com",
        "",
        "@example.com",
        "petr@",
        '"a b"@example.com',
        "péťa@example.com",
    ],
)
def test_anything_but_one_plain_address_is_refused(address: str) -> None:
    refused(lambda: build(make_draft(to=[address])), "To address")
    refused(lambda: build(make_draft(from_address=address)), "From address")


# One rule for what an address is: policy (before anything is opened) and composition accept and
# refuse exactly the same recipients, so a recipient policy let through is never refused later.
ADDRESS_RULE = [
    ("petr@example.com", True),
    ("Petr.Novak+tag@Example.COM", True),
    ("a!#$%&*+/=?^_`{|}~-b@example.com", True),
    ("info@škola.cz", True),
    ("petr@[192.0.2.1]", False),  # a domain literal
    ("[petr]@example.com", False),
    ("petr@example.com]", False),
    ("jiří@example.com", False),  # Gmail cannot submit a non-ASCII local part here
    ("petr@example.co\uff4d", False),  # a fullwidth letter that reads like "m"
    ("petr@\u212aexample.com", False),  # the Kelvin sign, which lower-cases to "k"
    ("petr..novak@example.com", False),
    (".petr@example.com", False),
    ("petr@example..com", False),
    ("petr@example.com.", False),
    ('"petr"@example.com', False),
    ("petr(x)@example.com", False),
    ("petr@exa mple.com", False),
    ("petr@@example.com", False),
]


@pytest.mark.parametrize(("address", "plain"), ADDRESS_RULE, ids=[a for a, _ in ADDRESS_RULE])
def test_policy_and_composition_share_one_address_rule(address: str, plain: bool) -> None:
    if plain:
        check_recipients("osobni", None, [address])
        composed = build(make_draft(to=[address], from_address=address))
        assert len(composed.envelope_recipients) == 1
    else:
        refused(lambda: check_recipients("osobni", None, [address]), "Not a plain e-mail address")
        refused(lambda: build(make_draft(to=[address])), "To address")
        refused(lambda: build(make_draft(from_address=address)), "From address")


@pytest.mark.parametrize("bad", ["two ids@example.com", "<a@b.cz> <c@d.cz>", "<>", "a<b@c.cz", "id@příklad.cz"])
def test_malformed_message_ids_are_refused(bad: str) -> None:
    refused(lambda: build(make_draft(in_reply_to=bad)), "In-Reply-To")


def test_bare_string_recipient_list_is_a_programming_error() -> None:
    with pytest.raises(TypeError):
        build(make_draft(to="petr@example.com"))


# --- content-derived Message-ID --------------------------------------------------------------

ID_INPUT: dict[str, Any] = {
    "account": "osobni",
    "sender": "ja@example.cz",
    "to": ["petr@example.com", "Eva@Example.com"],
    "cc": ["ota@example.com"],
    "bcc": [],
    "subject": "Schůzka",
    "body": "Ahoj,\nuvidíme se.",
    "html_body": None,
    "attachments": [("a.pdf", b"%PDF-1")],
    "in_reply_to": "orig@example.com",
    "day": date(2026, 9, 29),
}


def message_id_for(**changes: Any) -> str:
    fields = {**ID_INPUT, **changes}
    draft = make_draft(
        from_address=fields["sender"],
        to=fields["to"],
        cc=fields["cc"],
        bcc=fields["bcc"],
        subject=fields["subject"],
        body=fields["body"],
        html_body=fields["html_body"],
        attachments=[(name, content, "application/pdf") for name, content in fields["attachments"]],
        in_reply_to=fields["in_reply_to"],
    )
    return content_message_id(draft.prepared, account=fields["account"], day=fields["day"])


def test_content_message_id_is_stable_and_shaped() -> None:
    first = message_id_for()
    assert first == message_id_for()
    assert re.fullmatch(r"[0-9a-f]{32}\.mg@example\.cz", first)
    # Line endings, recipient order/case and brackets do not make it another send.
    assert first == message_id_for(
        to=["eva@example.com", " PETR@example.com"],
        body="Ahoj,\r\nuvidíme se.",
        in_reply_to="<orig@example.com>",
        sender="JA@example.cz",
    )


@pytest.mark.parametrize(
    "changes",
    [
        {"account": "tym"},
        {"sender": "jiny@example.cz"},
        {"to": ["petr@example.com"]},
        {"cc": []},
        {"bcc": ["skryty@example.com"]},
        {"to": ["petr@example.com"], "cc": ["ota@example.com", "eva@example.com"]},
        {"subject": "Schůzka!"},
        {"body": "Ahoj,\nuvidíme se!"},
        {"html_body": "<div>Ahoj</div>"},
        {"attachments": []},
        {"attachments": [("b.pdf", b"%PDF-1")]},
        {"attachments": [("a.pdf", b"%PDF-2")]},
        {"in_reply_to": None},
        {"in_reply_to": "other@example.com"},
        {"day": date(2026, 9, 30)},
    ],
    ids=lambda changes: ",".join(changes),
)
def test_content_message_id_changes_with_any_input(changes: dict[str, Any]) -> None:
    assert message_id_for(**changes) != message_id_for()


def test_content_message_id_uses_the_utc_day_of_a_datetime() -> None:
    late = datetime(2026, 9, 30, 1, 30, tzinfo=timezone(timedelta(hours=2)))  # 29 Sep 23:30 UTC
    assert message_id_for(day=late) == message_id_for()


def test_content_message_id_feeds_compose() -> None:
    message_id = message_id_for()
    composed = build(message_id=message_id)
    assert composed.message_id == message_id
    assert parse(composed.data)["Message-ID"] == f"<{message_id}>"
