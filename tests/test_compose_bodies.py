"""Outgoing message composition (gmail/compose.py), its content: the plain and HTML alternatives,
the signature, the attribution line and quote of a reply, and the attachments."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from mcp_multi_gmail.config.resolved import Signature
from mcp_multi_gmail.gmail.compose import attribution, html_from_text, quote_html, quote_text
from support.composing import bodies, build, make_draft, make_quote, parse, refused

BLOCKQUOTE = (
    '<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;'
    'border-left:1px solid rgb(204,204,204);padding-left:1ex">'
)


@pytest.fixture
def prague(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "Europe/Prague")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


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
